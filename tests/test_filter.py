"""Traceback exactness against tests/reference.py, and the filter's safety: the bound-pruned
filter keeps exactly the pairs that tracing back every pair keeps."""
import gzip
import itertools
import random
import re

import numpy as np
import pandas as pd
import pytest
from Bio import SeqIO
from hypothesis import given, settings
from hypothesis import strategies as st

import reference
from seqpairs import backends, scoring
from seqpairs.backends.alignments import COUNTS
from seqpairs.backends.cpu import trace_seqdist
from seqpairs.cli import main
from seqpairs.formats.fasta import SequenceSet
from seqpairs.pairs import distance
from seqpairs.pairs import filter as seqfilter
from seqpairs.pairs import tiling as binning
from seqpairs.pairs.identity import IDDEFS
from seqpairs.scoring.alphabet import encode_all as encode

THRESHOLDS = (0.9, 0.97)
CPU = backends.select("cpu")
SEQDIST = scoring.get("seqdist")


def trace_pairs(codes, offsets, pa, pb):
    """SeqDist tracebacks of the pairs (pa[k] as A, pb[k] as B) under the registered scheme."""
    return trace_seqdist.trace_pairs(codes, offsets, pa, pb, SEQDIST)


def compute_every(s):
    """Every pair's edge (max_distance inf) with the default binning, on the CPU backend."""
    bins = binning.make_bins(s.lengths, 25)
    every, _ = distance.compute(s, bins, binning.make_tiles(s.lengths, bins, 250_000),
                                backend=CPU, scheme=SEQDIST)
    return every


# ---------------------------------------------------------------- sequences


def random_seq(rng, n):
    return "".join(rng.choice("ACGT") for _ in range(n))


def homopolymer_seq(rng, n):
    """Runs of 1-6 equal letters, cut to n letters."""
    s = ""
    while len(s) < n:
        s += rng.choice("ACGT") * rng.randint(1, 6)
    return s[:n]


def mutate(rng, s, rate):
    """Substitutions, insertions, deletions and homopolymer length changes at `rate` per letter."""
    out = []
    for c in s:
        r = rng.random()
        if r < rate / 4:
            out.append(rng.choice("ACGT"))
        elif r < rate / 2:
            out.append(c + rng.choice("ACGT"))
        elif r < 3 * rate / 4:
            continue
        elif r < rate:
            out.append(c * 2)
        else:
            out.append(c)
    return "".join(out) or s


def random_pair(rng, max_len=40):
    """A random pair of 1..max_len letters: unrelated, near-identical or homopolymer-rich."""
    kind = rng.randrange(3)
    if kind == 0:
        return random_seq(rng, rng.randint(1, max_len)), random_seq(rng, rng.randint(1, max_len))
    make = random_seq if kind == 1 else homopolymer_seq
    a = make(rng, rng.randint(1, max_len))
    return a, mutate(rng, a, rng.choice((0.0, 0.03, 0.1, 0.3)))[:max_len]


def families(rng, n=60, n_families=4):
    """~n sequences of ~60-120 bp in a few families, identities spread around 0.9-1."""
    roots = [homopolymer_seq(rng, rng.randint(70, 110)) if f % 2 else
             random_seq(rng, rng.randint(70, 110)) for f in range(n_families)]
    return [mutate(rng, rng.choice(roots), rng.uniform(0.0, 0.12)) for _ in range(n)]


def sequence_set(seqs) -> SequenceSet:
    ids = [f"s{k}" for k in range(len(seqs))]
    codes, offsets = encode(seqs, ids=ids)
    return SequenceSet(ids, list(seqs), np.ones(len(seqs), dtype=np.int64), codes, offsets)


def c005(shared_data, n, seed):
    with gzip.open(shared_data / "C005_454.fa.gz", "rt") as fh:
        seqs = [str(r.seq) for r in SeqIO.parse(fh, "fasta")]
    return random.Random(seed).sample(seqs, n)


def write_fasta(path, seqs):
    path.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs)))
    return str(path)


# ---------------------------------------------------------------- the reference's view


def ref_ops(cols):
    """CIGAR letter of each reference column: D = gap in B (the target), I = gap in A."""
    return ["D" if y == "-" else "I" if x == "-" else "M" for x, y in cols]


def ref_cigar(a, b, cols):
    if a == b:
        return "="
    runs = [(op, len(list(g))) for op, g in itertools.groupby(ref_ops(cols))]
    return "".join(f"{n if n > 1 else ''}{op}" for op, n in runs)


def ref_counts(cols):
    """alignments.COUNTS computed from the reference's columns."""
    ops = ref_ops(cols)
    aligned = [k for k, op in enumerate(ops) if op == "M"]
    first, last = (aligned[0], aligned[-1]) if aligned else (len(cols), -1)
    terminal = [k < first or k > last for k in range(len(cols))]
    runs, k = [], 0  # gap runs as (start, op)
    for op, g in itertools.groupby(ops):
        if op != "M":
            runs.append(k)
        k += len(list(g))

    def residues(upto, side):  # residues of A (side 0) or B (side 1) in cols[:upto]
        return sum(c[side] != "-" for c in cols[:upto])

    return {
        "matches": sum(x == y for x, y in cols),
        "mismatches": sum(op == "M" and x != y for op, (x, y) in zip(ops, cols)),
        "gaps": sum(op != "M" for op in ops),
        "openings": len(runs),
        "columns": len(cols),
        "terminal_gaps": sum(terminal),
        "terminal_openings": sum(terminal[k] for k in runs),
        "qlo": residues(first + 1, 0) if aligned else 0,
        "qhi": residues(last + 1, 0) if aligned else 0,
        "tlo": residues(first + 1, 1) if aligned else 0,
        "thi": residues(last + 1, 1) if aligned else 0,
    }


def ref_identities(a, b, cols):
    """vsearch's five identities (fractions), from the reference's columns alone."""
    c = ref_counts(cols)
    inner = c["columns"] - c["terminal_gaps"]
    m = c["matches"]
    return {0: m / min(len(a), len(b)),
            1: m / c["columns"],
            2: m / inner if inner else 0.0,
            3: 1.0 - (c["mismatches"] + c["openings"]) / max(len(a), len(b)),
            4: m / c["columns"]}


def expand(cigar, a, b):
    """The columns that a CIGAR of A=a against B=b stands for (reference.columns' format)."""
    cols, x, y = [], 0, 0
    for n, op in re.findall(r"(\d*)([MDI=])", cigar):
        for _ in range(len(a) if op == "=" else int(n or 1)):
            if op in "M=":
                cols.append((a[x], b[y]))
                x, y = x + 1, y + 1
            elif op == "D":
                cols.append((a[x], "-"))
                x += 1
            else:
                cols.append(("-", b[y]))
                y += 1
    assert (x, y) == (len(a), len(b)), cigar
    return cols


def check_pairs(pairs):
    """Traceback of each (A, B) equals the reference's alignment, column for column."""
    seqs = [s for pair in pairs for s in pair]
    codes, offsets = encode(seqs)
    idx = np.arange(len(pairs))
    al = trace_pairs(codes, offsets, 2 * idx, 2 * idx + 1)
    for k, (a, b) in enumerate(pairs):
        _, _, _, cols = reference.seqdist(a, b)
        assert expand(al.cigar(k), a, b) == cols, (a, b)
        assert al.cigar(k) == ref_cigar(a, b, cols), (a, b)
        assert {name: int(al[name][k]) for name in COUNTS} == ref_counts(cols), (a, b)


# ---------------------------------------------------------------- traceback


def test_cigar_convention():
    # D: a query (A) residue against a gap in the target; I: the other way round
    pairs = {("ACGTACGTACGT", "ACGTACGACGT"): "7MD4M", ("ACGTACGACGT", "ACGTACGTACGT"): "7MI4M",
             ("ACGTAA", "ACGT"): "4M2D", ("ACGT", "ACGTAA"): "4M2I", ("ACGT", "ACGT"): "=",
             ("A", "C"): "M"}
    codes, offsets = encode([s for pair in pairs for s in pair])
    idx = np.arange(len(pairs))
    assert trace_pairs(codes, offsets, 2 * idx, 2 * idx + 1).cigars() == list(pairs.values())
    check_pairs(list(pairs) + [("A", "AAAAAAA"), ("GATTACA", "TTTTGGGGCCCCAAAA")])


def test_traceback_seeded_random():
    rng = random.Random(7)
    check_pairs([random_pair(rng) for _ in range(600)])


@st.composite
def pairs_strategy(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    return [random_pair(rng) for _ in range(draw(st.integers(1, 8)))]


@given(pairs_strategy(), st.lists(st.tuples(st.text("ACGT", min_size=1, max_size=40),
                                            st.text("ACGT", min_size=1, max_size=40)),
                                  max_size=4))
@settings(max_examples=150, deadline=None)
def test_traceback_property(generated, drawn):
    check_pairs(generated + drawn)


def test_traceback_c005(shared_data):
    seqs = c005(shared_data, 200, seed=3)
    check_pairs(list(zip(seqs[:100], seqs[100:])))


def test_identities_match_reference():
    rng = random.Random(11)
    seqs = families(rng, 30) + [random_pair(rng)[0] for _ in range(10)]
    s = sequence_set(seqs)
    i, j = np.tril_indices(s.n, -1)
    table = seqfilter.filter_pairs(s, i, j, np.zeros(len(i)), 0.0, 2, SEQDIST, CPU)
    table = table.set_index(["query", "target"])
    assert len(table) == len(i)
    for x, y in zip(i.tolist(), j.tolist()):
        row = table.loc[(f"s{x}", f"s{y}")]
        _, _, _, cols = reference.seqdist(seqs[x], seqs[y])
        expected = ref_identities(seqs[x], seqs[y], cols)
        for k in IDDEFS:
            assert row[f"id{k}"] == 100 * expected[k]
        c = ref_counts(cols)
        assert row["id"] == row["id2"]
        assert row["alnlen"] == c["columns"] - c["terminal_gaps"]
        assert row["gaps"] == c["gaps"] - c["terminal_gaps"]
        assert row["opens"] == c["openings"] - c["terminal_openings"]
        assert (row["ql"], row["tl"]) == (len(seqs[x]), len(seqs[y]))
        assert row["caln"] == ref_cigar(seqs[x], seqs[y], cols)


# ---------------------------------------------------------------- safety of the bound


def check_safety(seqs, full_tables=False):
    """For every iddef and threshold, the filter on the bound's candidates keeps exactly the
    pairs that tracing back every pair keeps (with full_tables, the same table).
    Returns the fraction of pairs that the bound pruned."""
    s = sequence_set(seqs)
    every = compute_every(s)
    assert len(every) == s.n * (s.n - 1) // 2  # max_distance inf: every pair
    traced = trace_pairs(s.codes, s.offsets, every.i, every.j)
    pruned = {}
    for iddef in IDDEFS:
        exact = seqfilter.exact_identities(traced, iddef)
        for t in THRESHOLDS:
            bounded = seqfilter.filter_edges(s, every, t, iddef, SEQDIST, CPU)
            kept = exact >= t
            assert 0 < kept.sum() < len(every)
            assert sorted(zip(bounded["query"], bounded["target"])) == \
                sorted((f"s{x}", f"s{y}") for x, y in zip(every.i[kept], every.j[kept]))
            if full_tables:
                full = seqfilter.filter_pairs(s, every.i, every.j, every.distance, t, iddef,
                                              SEQDIST, CPU)
                pd.testing.assert_frame_equal(bounded, full)
            pruned[iddef, t] = 1 - seqfilter.candidates(every, s.lengths, t, iddef).mean()
    # iddef 3's bound, 1 - (at most 3 events) / longer, prunes little: it is >= 0.9 for
    # any pair of >= 30 bp
    assert all(pruned[k, t] > 0.2 for k in (0, 1, 2, 4) for t in THRESHOLDS), pruned
    return pruned


def test_safety_families():
    pruned = check_safety(families(random.Random(5), 60), full_tables=True)
    assert pruned[3, 0.97] > 0, pruned


@pytest.mark.slow
def test_safety_c005(shared_data):
    check_safety(c005(shared_data, 150, seed=1))


def test_candidate_edges_are_the_bound_candidates():
    rng = random.Random(9)
    s = sequence_set(families(rng, 40))
    every = compute_every(s)
    for iddef in IDDEFS:
        edges = distance.candidate_edges(s, 0.97, iddef, backend=CPU, scheme=SEQDIST)
        mask = seqfilter.candidates(every, s.lengths, 0.97, iddef)
        assert sorted(zip(edges.i.tolist(), edges.j.tolist())) == \
            sorted(zip(every.i[mask].tolist(), every.j[mask].tolist()))


# ---------------------------------------------------------------- CLI


@pytest.fixture
def fasta(tmp_path):
    return write_fasta(tmp_path / "u.fasta", families(random.Random(2), 50))


def test_cli_with_and_without_distances(tmp_path, fasta):
    out = {name: tmp_path / f"{name}.tsv" for name in ("direct", "candidates", "every")}
    assert main(["-q", "filter", "-i", fasta, "--identity", "0.97", "-o", str(out["direct"])]) == 0
    npz = {name: str(tmp_path / f"{name}.npz") for name in ("candidates", "every")}
    assert main(["-q", "distance", "-i", fasta, "--edges", npz["candidates"], "--max-distance",
                 "0.1", "--candidate-identity", "0.95", "--iddef", "2"]) == 0
    assert main(["-q", "distance", "-i", fasta, "--edges", npz["every"]]) == 0
    for name in ("candidates", "every"):
        assert main(["-q", "filter", "-i", fasta, "--distances", npz[name], "--identity", "0.97",
                     "-o", str(out[name])]) == 0
        assert out[name].read_bytes() == out["direct"].read_bytes()
    table = pd.read_csv(out["direct"], sep="\t")
    assert list(table.columns) == seqfilter.COLUMNS and len(table) > 0
    assert (table["id"] >= 97).all() and (table["id"] <= 100).all()


@pytest.mark.parametrize("made_with", [["--candidate-identity", "0.99", "--iddef", "2"],
                                       ["--candidate-identity", "0.9", "--iddef", "0"],
                                       []])
def test_cli_incompatible_edge_list(tmp_path, fasta, capsys, made_with):
    npz = str(tmp_path / "e.npz")
    assert main(["-q", "distance", "-i", fasta, "--edges", npz, "--max-distance", "0.5",
                 *made_with]) == 0
    capsys.readouterr()
    assert main(["-q", "filter", "-i", fasta, "--distances", npz, "--identity", "0.97",
                 "-o", str(tmp_path / "k.tsv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("seqpairs: error: ") and err.count("\n") == 1, err
    assert "--candidate-identity 0.97 --iddef 2" in err
    assert not (tmp_path / "k.tsv").exists()


def test_cli_edge_list_of_other_sequences(tmp_path, fasta, capsys):
    other = write_fasta(tmp_path / "o.fasta", families(random.Random(3), 20))
    npz = str(tmp_path / "o.npz")
    assert main(["-q", "distance", "-i", other, "--edges", npz]) == 0
    capsys.readouterr()
    assert main(["-q", "filter", "-i", fasta, "--distances", npz, "--identity", "0.97",
                 "-o", str(tmp_path / "k.tsv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("seqpairs: error: ") and err.count("\n") == 1, err


def test_filter_reads_ingest_style_fasta(tmp_path):
    path = tmp_path / "u.fasta"
    path.write_text(">a;size=3\nACGTACGTAC\n>b;size=1\nACGTACGTAC\n>c;size=2\nACGAACGTAC\n")
    assert main(["-q", "filter", "-i", str(path), "--identity", "0.95", "-o",
                 str(tmp_path / "k.tsv")]) == 0
    table = pd.read_csv(tmp_path / "k.tsv", sep="\t")
    assert table[["query", "target", "caln"]].values.tolist() == [["b", "a", "="]]
    assert table["id"][0] == 100.0
