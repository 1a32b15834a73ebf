"""`seqpairs filter --scoring vsearch` against vsearch's `--allpairs_global`, and its traceback
(backends/cpu/trace_affine.py) against the plain reference (reference_affine.vsearch_traceback)
and the affine score kernel.

The tests that run vsearch are skipped when it is not installed (.ci/run installs it);
the hand-made pairs carry vsearch 2.22.1's own output and run everywhere.
"""
import gzip
import itertools
import random
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from Bio import SeqIO
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import squareform

import reference_affine
from seqpairs import backends, scoring
from seqpairs.backends import gpu as gpu_backend
from seqpairs.backends.alignments import COUNTS
from seqpairs.backends.common import AFFINE_COUNTS
from seqpairs.backends.cpu.affine import aligner
from seqpairs.backends.cpu.trace_affine import trace_pairs
from seqpairs.cli import main
from seqpairs.formats.distances import read_edges
from seqpairs.formats.fasta import SequenceSet
from seqpairs.pairs import filter as seqfilter
from seqpairs.pairs.identity import IDDEFS, vsearch_percent
from seqpairs.scoring import AffineScheme
from seqpairs.scoring.alphabet import DNA
from seqpairs.scoring.alphabet import encode_all as encode
from test_filter import mutate

VSEARCH_BIN = shutil.which("vsearch")
needs_vsearch = pytest.mark.skipif(VSEARCH_BIN is None,
                                   reason="vsearch not installed (apt-get install vsearch)")
# vsearch's userout fields, in the order of seqpairs filter's columns (raw for distance)
FIELDS = ["query", "target", "id", "alnlen", "mism", "opens", "gaps", "ids", "qilo", "qihi",
          "tilo", "tihi", "ql", "tl", "caln", "raw", "id0", "id1", "id2", "id3", "id4"]
PERCENT = ["id", "id0", "id1", "id2", "id3", "id4"]
VSEARCH = scoring.get("vsearch")
CPU = backends.select("cpu")
SCHEMES = {
    "vsearch": VSEARCH,
    # any substitution matrix (trace_affine's general loop), end gaps dearer than inside;
    # rows and columns A, C, G, T
    "asymmetric": AffineScheme(DNA, ((3, -2, -1, -5), (-4, 2, -6, -1), (-2, -5, 4, -4),
                                     (-6, 0, -3, 1)), 4, 1, 6, 2),
    "linear": AffineScheme.dna(2, -3, 0, 3),
    "ties": AffineScheme.dna(1, -2, 0, 1),  # a mismatch costs as much as two gaps
    "zero": AffineScheme.dna(0, 0, 0, 0),  # every path ties: the tie rules alone decide
    "free_ends": AffineScheme.dna(2, -4, 5, 2, end_open=0, end_extend=0),
}


# ---------------------------------------------------------------- helpers


def random_sequence(rng, n):
    return "".join(rng.choice("ACGT") for _ in range(n))


def random_sequences(seed, n, max_len=50):
    """Unrelated, homopolymer-rich and mutated-copy sequences of 1..max_len letters."""
    rng = random.Random(seed)
    seqs = []
    for _ in range(n):
        kind = rng.randrange(3)
        if kind == 0 or not seqs:
            s = random_sequence(rng, rng.randint(1, max_len))
        elif kind == 1:
            s = "".join(rng.choice("ACGT") * rng.randint(1, 5) for _ in range(max_len // 3))
        else:
            s = mutate(rng, seqs[-1], rng.choice((0.03, 0.1, 0.3)))
        seqs.append(s[:max_len])
    return seqs


def random_pairs(seed, n):
    seqs = random_sequences(seed, 2 * n)
    return list(zip(seqs[::2], seqs[1::2]))


def align_pairs(codes, offsets, pa, pb, scheme):
    """(score, length) of the pairs (pa[k] as A, pb[k] as B) on the CPU affine kernel."""
    return aligner(codes, offsets, scheme)(pa, pb)


def cigar(cols):
    """vsearch's CIGAR of reference columns (D: A's letter against a gap, I: B's)."""
    ops = ["I" if x == "-" else "D" if y == "-" else "M" for x, y in cols]
    return "".join(f"{n if n > 1 else ''}{op}"
                   for op, n in ((op, len(list(g))) for op, g in itertools.groupby(ops)))


def vsearch_counts(a, b, cols):
    """alignments.COUNTS of reference columns, terminal gaps trimmed as vsearch's align_trim."""
    ops = ["I" if x == "-" else "D" if y == "-" else "M" for x, y in cols]
    runs = [(op, len(list(g))) for op, g in itertools.groupby(ops)]
    trim = {"q_left": 0, "t_left": 0, "q_right": 0, "t_right": 0}
    if runs[0][0] != "M":
        trim["q_left" if runs[0][0] == "D" else "t_left"] = runs[0][1]
    if len(runs) > 1 and runs[-1][0] != "M":
        trim["q_right" if runs[-1][0] == "D" else "t_right"] = runs[-1][1]
    gap_runs = [op for op, _ in runs if op != "M"]
    return {
        "matches": sum(x == y for x, y in cols),
        "mismatches": sum(op == "M" and x != y for op, (x, y) in zip(ops, cols)),
        "gaps": ops.count("D") + ops.count("I"),
        "openings": len(gap_runs),
        "columns": len(cols),
        "terminal_gaps": sum(trim.values()),
        "terminal_openings": (trim["q_left"] + trim["t_left"] > 0)
        + (trim["q_right"] + trim["t_right"] > 0),
        "qlo": trim["q_left"] + 1, "qhi": len(a) - trim["q_right"],
        "tlo": trim["t_left"] + 1, "thi": len(b) - trim["t_right"],
    }


def check_against_reference(pairs, scheme):
    """Traceback of each (A, B): the reference's path, score and counts; the kernel's score."""
    codes, offsets = encode([s for pair in pairs for s in pair])
    idx = np.arange(len(pairs))
    al = trace_pairs(codes, offsets, 2 * idx, 2 * idx + 1, scheme)
    score, _ = align_pairs(codes, offsets, 2 * idx, 2 * idx + 1, scheme)
    assert np.array_equal(al.score, score)
    for k, (a, b) in enumerate(pairs):
        ref_score, cols = reference_affine.vsearch_traceback(a, b, scheme)
        assert al.score[k] == ref_score == reference_affine.column_score(cols, scheme), (a, b)
        assert al.cigar(k) == ("=" if a == b else cigar(cols)), (a, b)
        assert {name: int(al[name][k]) for name in COUNTS} == vsearch_counts(a, b, cols), (a, b)


def check_counts(pairs, scheme):
    """The CPU's affine_counts against the reference traceback's counts."""
    codes, offsets = encode([s for pair in pairs for s in pair])
    idx = np.arange(len(pairs))
    got = CPU.affine_counts(codes, offsets, scheme)(2 * idx, 2 * idx + 1)
    assert len(got) == len(AFFINE_COUNTS) and all(c.dtype == np.int32 for c in got)
    for k, (a, b) in enumerate(pairs):
        score, cols = reference_affine.vsearch_traceback(a, b, scheme)
        want = {"score": score, **vsearch_counts(a, b, cols)}
        want = {name: want[name] for name in AFFINE_COUNTS}
        assert {name: int(c[k]) for name, c in zip(AFFINE_COUNTS, got)} == want, (a, b)

def write_fasta(path, seqs, prefix="s"):
    path.write_text("".join(f">{prefix}{k}\n{s}\n" for k, s in enumerate(seqs)))
    return str(path)


def seqpairs_table(tmp_path, fasta, identity, iddef=2):
    out = tmp_path / "kept.tsv"
    assert main(["-q", "filter", "-i", fasta, "--scoring", "vsearch", "--identity",
                 str(identity), "--iddef", str(iddef), "--threads", "2", "-o", str(out)]) == 0
    return pd.read_csv(out, sep="\t", dtype={"query": str, "target": str})


def vsearch_table(tmp_path, fasta, *options):
    out = tmp_path / "vsearch.tsv"
    subprocess.run([VSEARCH_BIN, "--allpairs_global", fasta, "--userout", str(out),
                    "--userfields", "+".join(FIELDS), "--threads", "2", "--quiet", *options],
                   check=True)
    return pd.read_csv(out, sep="\t", header=None, names=FIELDS,
                       dtype={**{f: str for f in PERCENT}, "query": str, "target": str})


def as_printed(table):
    """Our table as vsearch prints it: percentages with one decimal, "=" as nM."""
    table = table.rename(columns={"distance": "raw"}).copy()
    for f in PERCENT:
        table[f] = [f"{x:.1f}" for x in table[f]]
    table["caln"] = table["caln"].where(table["caln"] != "=", table["ql"].map("{}M".format))
    return table[FIELDS]


def vsearch_version():
    run = subprocess.run([VSEARCH_BIN, "--version"], capture_output=True, text=True)
    return next(line for line in (run.stderr + run.stdout).splitlines() + ["vsearch ?"]
                if line.startswith("vsearch"))


# ---------------------------------------------------------------- the preset


def test_preset_is_vsearch_defaults():
    # vsearch: --match 2 --mismatch -4 --gapopen 20I/2E --gapext 2I/1E, a gap of k columns
    # costing open + (k - 1) * extend; AffineScheme: open + k * extend
    assert VSEARCH == AffineScheme.dna(2, -4, 18, 2, end_open=1, end_extend=1)
    assert VSEARCH == AffineScheme.usearch(2, -4, 20, 2, 2, 1)
    with pytest.raises(Exception, match="at least the extension"):
        AffineScheme.usearch(2, -4, 1, 2, 2, 1)


# vsearch 2.22.1's userout for hand-made pairs (--allpairs_global --acceptall --minseqlength 1):
# interior gaps of 1, 2 and 4 columns (raw 54, 50, 42: 20 + 2 (k - 1)), end gaps of 3 and 1
# (2 + (k - 1)), a mismatch tying with gaps (D wins), gaps beating a mismatch, a homopolymer
# deletion (vsearch puts it first in the run), an overlap alignment and a rounding case.
HAND = [
    ("ACGTACGTTGCAAGCTTAGCCGATCGATTGCAGTCAGG", "ACGTACGTTGCAAGCTTACCGATCGATTGCAGTCAGG",
     "97.4 38 0 1 1 37 1 38 1 37 38 37 18MD19M 54 100.0 97.4 97.4 97.4 97.4"),
    ("ACGTACGTTGCAAGCTTAGCCGATCGATTGCAGTCAGG", "ACGTACGTTGCAAGCTTCCGATCGATTGCAGTCAGG",
     "94.7 38 0 1 2 36 1 38 1 36 38 36 17M2D19M 50 100.0 94.7 94.7 97.4 94.7"),
    ("ACGTACGTTGCAAGCTTAGCCGATCGATTGCAGTCAGG", "ACGTACGTTGCAAGCTTGATCGATTGCAGTCAGG",
     "89.5 38 0 1 4 34 1 38 1 34 38 34 17M4D17M 42 100.0 89.5 89.5 97.4 89.5"),
    ("ACGTACGTTGCAAGCTTAGCCGATCGATTGCAGTCAGG", "TACGTTGCAAGCTTAGCCGATCGATTGCAGTCAG",
     "100.0 34 0 0 0 34 4 37 1 34 38 34 3D34MD 62 100.0 89.5 100.0 94.7 89.5"),
    ("A", "C", "0.0 1 1 0 0 0 1 1 1 1 1 1 M -4 0.0 0.0 0.0 0.0 0.0"),
    ("A", "CC", "0.0 0 0 0 0 0 1 0 3 2 1 2 2ID -5 0.0 0.0 0.0 0.0 0.0"),
    ("GATTACAAAACCGT", "GATTACAAACCGT",
     "92.9 14 0 1 1 13 1 14 1 13 14 13 6MD7M 6 100.0 92.9 92.9 92.9 92.9"),
    ("ACGTTTTGCA", "ACGTTGCAA", "62.5 8 3 0 0 5 3 10 1 8 10 9 2D8MI -7 55.6 45.5 62.5 50.0 45.5"),
    # 49 / 80 = 61.25 exactly in vsearch's 100.0 * 49 / 80, printed 61.2 (round half to
    # even); 100 * (49 / 80) would be 61.25000000000001, printed 61.3
    ("CAGATTTTCATATTATGCAGAAAATCTACTTCGCCTGATACGAGTCGGT",
     "CAGATTTTCATATTATGCAGAAAATCTACTTATCTTCGGATACTGTATAGTCCCACCTGGTTCGCCTGATACGAGTCGGT",
     "61.2 80 0 1 31 49 1 49 1 80 49 80 29M31I20M 18 100.0 61.2 61.2 98.8 61.2"),
]


def test_hand_made_pairs_equal_vsearch_output(tmp_path):
    fasta = tmp_path / "hand.fasta"
    fasta.write_text("".join(f">a{k}\n{a}\n>b{k}\n{b}\n" for k, (a, b, _) in enumerate(HAND)))
    table = as_printed(seqpairs_table(tmp_path, str(fasta), 0.0)).astype(str)
    rows = {(q, t): row for q, t, *row in table.itertuples(index=False)}
    for k, (_, _, expected) in enumerate(HAND):
        assert rows[f"a{k}", f"b{k}"] == expected.split(), k


def test_gap_costs_of_the_hand_made_pairs():
    """The raw scores above follow from the preset's costs alone (reference, no kernel)."""
    for a, b, expected in HAND:
        score, cols = reference_affine.vsearch_traceback(a, b, VSEARCH)
        raw, caln = int(expected.split()[13]), expected.split()[12]
        assert (score, cigar(cols)) == (raw, caln)
        assert reference_affine.column_score(cols, VSEARCH) == raw


# ---------------------------------------------------------------- traceback vs reference


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_traceback_matches_reference(name):
    pairs = random_pairs(seed=3, n=150)
    check_against_reference(pairs + [(b, a) for a, b in pairs], SCHEMES[name])


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_one_letter_sequences(name):
    short = ["".join(t) for n in (1, 2, 3) for t in itertools.product("ACGT", repeat=n)]
    pairs = [(x, s) for x in "ACGT" for s in short + ["ACGTTGCAAC", "TTTTTTTTTTTTTTTTTT"]]
    check_against_reference(pairs + [(b, a) for a, b in pairs], SCHEMES[name])


@settings(max_examples=150, deadline=None)
@given(st.text("ACGT", min_size=1, max_size=40), st.text("ACGT", min_size=1, max_size=40),
       st.sampled_from(sorted(SCHEMES)))
def test_property_traceback_equals_reference(a, b, name):
    check_against_reference([(a, b), (b, a)], SCHEMES[name])


@settings(max_examples=100, deadline=None)
@given(st.text("AT", min_size=1, max_size=30), st.text("AT", min_size=1, max_size=30))
def test_property_homopolymer_rich(a, b):
    check_against_reference([(a, b)], VSEARCH)



# ------------------------------------------- the traced alignment's counts (affine_counts)


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_counts_equal_the_reference_traceback(name):
    pairs = random_pairs(seed=5, n=120)
    short = ["".join(t) for n in (1, 2) for t in itertools.product("ACGT", repeat=n)]
    pairs += [(x, s) for x in "ACGT" for s in short + ["TTTTTTTTTTTT", "ACGTTGCAAC"]]
    check_counts(pairs + [(b, a) for a, b in pairs], SCHEMES[name])


@settings(max_examples=150, deadline=None)
@given(st.text("AC", min_size=1, max_size=25), st.text("AC", min_size=1, max_size=25),
       st.sampled_from(sorted(SCHEMES)))
def test_property_counts_on_two_letters(a, b, name):
    # two letters: long homopolymers and many equal-scoring paths
    check_counts([(a, b), (b, a)], SCHEMES[name])


def c005_unique(shared_data, n=None):
    """The distinct reads of C005 in file order (the first n)."""
    with gzip.open(shared_data / "C005_454.fa.gz", "rt") as fh:
        seqs = list(dict.fromkeys(str(r.seq) for r in SeqIO.parse(fh, "fasta")))
    return seqs[:n]


def test_c005_pairs_match_reference_and_score_kernel(shared_data):
    seqs = c005_unique(shared_data, 40)
    rng = random.Random(2)
    check_against_reference([tuple(rng.sample(seqs, 2)) for _ in range(4)], VSEARCH)
    # many pairs: the traceback's score equals the score kernel's
    codes, offsets = encode(seqs)
    i, j = np.triu_indices(len(seqs), 1)
    assert np.array_equal(trace_pairs(codes, offsets, i, j, VSEARCH).score,
                          align_pairs(codes, offsets, i, j, VSEARCH)[0])


# ---------------------------------------------------------------- against vsearch itself


@needs_vsearch
def test_random_pairs_equal_vsearch(tmp_path):
    """Every pair of 70 short sequences (2,415 pairs, many ties): every field equal."""
    fasta = write_fasta(tmp_path / "r.fasta", random_sequences(seed=8, n=70))
    ours = as_printed(seqpairs_table(tmp_path, fasta, 0.0))
    theirs = vsearch_table(tmp_path, fasta, "--acceptall", "--minseqlength", "1")
    theirs = theirs.sort_values(["query", "target"], key=lambda s: s.str[1:].astype(int))
    assert len(ours) == len(theirs) == 70 * 69 // 2
    mismatched = ours.reset_index(drop=True).compare(theirs.reset_index(drop=True))
    assert mismatched.empty, (vsearch_version(), mismatched.head())


@needs_vsearch
@pytest.mark.parametrize("identity, iddef", [(0.97, 2), (0.9, 2), (0.9, 0), (0.9, 1),
                                             (0.97, 3)])
def test_c005_kept_pairs_equal_vsearch(tmp_path, shared_data, identity, iddef):
    """The first 250 distinct C005 reads: the issue's bar (Jaccard >= 0.995, >= 99% of the
    shared pairs with vsearch's printed identity) and equal scores."""
    seqs = c005_unique(shared_data, 250)
    fasta = write_fasta(tmp_path / "c005.fasta", seqs)
    ours = as_printed(seqpairs_table(tmp_path, fasta, identity, iddef))
    theirs = vsearch_table(tmp_path, fasta, "--id", str(identity), "--iddef", str(iddef))
    kept = set(zip(ours["query"], ours["target"]))
    expected = set(zip(theirs["query"], theirs["target"]))
    assert len(expected) > 500
    jaccard = len(kept & expected) / len(kept | expected)
    shared = ours.merge(theirs, on=["query", "target"], suffixes=("", "_v"))
    agree = (shared["id"] == shared["id_v"]).mean()
    assert jaccard >= 0.995 and agree >= 0.99, (vsearch_version(), jaccard, agree)
    assert (shared["raw"] == shared["raw_v"]).all()  # scores do not depend on tie rules


# ---------------------------------------------------------------- the filter


def sequence_set(seqs):
    ids = [f"s{k}" for k in range(len(seqs))]
    codes, offsets = encode(seqs, ids=ids)
    return SequenceSet(ids, list(seqs), np.ones(len(seqs), dtype=np.int64), codes, offsets)


def length_boundary_sequences():
    """Pairs right at the length-ratio bound: s + k letters against s, ratio 100/(100+k)."""
    rng = random.Random(4)
    base = random_sequence(rng, 97)
    # 97/100 = 0.97 exactly: kept at 0.97 by iddef 1 (97 matches in 100 columns)
    return [base, base + "GAT", base + "GA", base + "GATT", mutate(rng, base, 0.05)] + \
        random_sequences(seed=5, n=25, max_len=110)


@pytest.mark.parametrize("iddef", IDDEFS)
@pytest.mark.parametrize("identity", [0.97, 0.9])
def test_skipped_pairs_cannot_pass(iddef, identity):
    """filter_affine (length-ratio skip for iddef 1 and 4, blocks) equals tracing every pair."""
    s = sequence_set(length_boundary_sequences())
    q, t = np.triu_indices(s.n, 1)
    every = seqfilter.affine_table(s, CPU.trace_affine(s.codes, s.offsets, VSEARCH), q, t,
                                   identity, iddef)
    assert len(every) > 0
    for block_pairs in (7, seqfilter.BLOCK_PAIRS):
        pd.testing.assert_frame_equal(
            seqfilter.filter_affine(s, VSEARCH, CPU, identity, iddef,
                                    block_pairs=block_pairs), every)


def test_boundary_pair_is_kept_by_iddef_1():
    s = sequence_set(length_boundary_sequences())
    table = seqfilter.filter_affine(s, VSEARCH, CPU, 0.97, 1)
    row = table[(table["query"] == "s0") & (table["target"] == "s1")]
    assert row[["id", "caln"]].values.tolist() == [[97.0, "97M3I"]]


@pytest.mark.parametrize("n, block_pairs", [(2, 1), (5, 1), (6, 4), (9, 100), (30, 50)])
def test_all_pairs_blocks(n, block_pairs):
    blocks = list(seqfilter.all_pairs(n, block_pairs))
    q = np.concatenate([b[0] for b in blocks])
    t = np.concatenate([b[1] for b in blocks])
    assert list(zip(q.tolist(), t.tolist())) == list(itertools.combinations(range(n), 2))
    # a block is whole queries, at most block_pairs unless one query alone has more
    assert all(len(b[0]) <= max(block_pairs, n - 1) for b in blocks)


def test_cli_table(tmp_path):
    fasta = write_fasta(tmp_path / "u.fasta", random_sequences(seed=6, n=30, max_len=80))
    table = seqpairs_table(tmp_path, fasta, 0.5)
    assert list(table.columns) == seqfilter.AFFINE_COLUMNS and len(table) > 0
    order = [(int(q[1:]), int(t[1:])) for q, t in zip(table["query"], table["target"])]
    assert all(q < t for q, t in order) and order == sorted(order)  # query: the earlier one
    assert (table["id"] >= 50).all() and (table["id"] == table["id2"]).all()


def test_cli_refuses_an_edge_list_of_another_scheme(tmp_path, capsys):
    fasta = write_fasta(tmp_path / "u.fasta", random_sequences(seed=7, n=10))
    for made, used in (("seqdist", "vsearch"), ("vsearch", "seqdist")):
        npz = str(tmp_path / f"{made}.npz")
        assert main(["-q", "distance", "-i", fasta, "--edges", npz, "--scoring", made]) == 0
        capsys.readouterr()
        assert main(["-q", "filter", "-i", fasta, "--distances", npz, "--scoring", used,
                     "--identity", "0.97", "-o", str(tmp_path / "k.tsv")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("seqpairs: error: ") and err.count("\n") == 1, err
        assert f"made under --scoring {made}" in err and not (tmp_path / "k.tsv").exists()


# ---------------------------------------------------------------- the distance stage


def distance_edges(tmp_path, fasta, *options):
    npz = tmp_path / "e.npz"
    assert main(["-q", "distance", "-i", str(fasta), "--scoring", "vsearch", "--backend",
                 "cpu", "--edges", str(npz), *map(str, options)]) == 0
    return read_edges(npz)


def traced(seqs, q, t):
    """The traceback's counts and vsearch percent of each iddef for the pairs (q, t)."""
    s = sequence_set(seqs)
    al = CPU.trace_affine(s.codes, s.offsets, VSEARCH)(q, t)
    c = {name: al[name] for name in COUNTS}
    percent = {k: vsearch_percent(k, c["matches"], c["mismatches"], c["columns"],
                                  c["terminal_gaps"], c["openings"], al.la, al.lb)
               for k in IDDEFS}
    return al, percent


@pytest.mark.parametrize("iddef", IDDEFS)
def test_edge_list_holds_the_traced_counts(tmp_path, iddef):
    """Every pair (no limit): the counts of the traceback of j (the earlier) against i,
    and distance 1 - identity by iddef; the filter's table is the pairs reaching it."""
    seqs = length_boundary_sequences()
    edges = distance_edges(tmp_path, write_fasta(tmp_path / "u.fasta", seqs),
                           "--iddef", iddef)
    n = len(seqs)
    assert len(edges) == n * (n - 1) // 2 and edges.scoring == "vsearch"
    al, percent = traced(seqs, edges.j, edges.i)
    for name in AFFINE_COUNTS:
        want = al.score if name == "score" else al[name]
        assert np.array_equal(edges.values[name], want), name
    assert np.array_equal(edges.distance, 1.0 - percent[iddef] / 100.0)
    table = seqfilter.filter_affine(sequence_set(seqs), VSEARCH, CPU, 0.9, iddef)
    reach = percent[iddef] >= 90.0
    assert len(table) == reach.sum() > 0
    assert list(table["ids"]) == list(edges.matches[reach][np.lexsort((edges.i[reach],
                                                                        edges.j[reach]))])


@pytest.mark.parametrize("options, keeps", [
    (("--max-distance", 0, "--candidate-identity", 0.9), lambda d, p: (d <= 0) | (p >= 90.0)),
    (("--max-distance", 0.2), lambda d, p: d <= 0.2),
    (("--max-distance", 0.05, "--candidate-identity", 0.8),
     lambda d, p: (d <= 0.05) | (p >= 80.0)),
])
def test_edge_list_keeps_by_identity_or_distance(tmp_path, options, keeps):
    seqs = random_sequences(seed=11, n=60)
    every = distance_edges(tmp_path, write_fasta(tmp_path / "u.fasta", seqs))
    _, percent = traced(seqs, every.j, every.i)
    want = keeps(every.distance, percent[2])
    assert 0 < want.sum() < len(every)
    kept = distance_edges(tmp_path, tmp_path / "u.fasta", *options)
    assert np.array_equal(kept.i, every.i[want]) and np.array_equal(kept.j, every.j[want])
    for name in ("distance", *AFFINE_COUNTS):
        assert np.array_equal(kept.values[name], every.values[name][want]), name


@pytest.mark.parametrize("iddef", [2, 1])
def test_filter_from_an_edge_list_equals_all_pairs(tmp_path, iddef):
    """The filter keeps the same rows from distance's edge list as aligning every pair."""
    seqs = length_boundary_sequences() + random_sequences(seed=12, n=40)
    fasta = write_fasta(tmp_path / "u.fasta", seqs)
    edges = distance_edges(tmp_path, fasta, "--max-distance", 0, "--candidate-identity", 0.9,
                           "--iddef", iddef)
    s = sequence_set(seqs)
    every = seqfilter.filter_affine(s, VSEARCH, CPU, 0.9, iddef)
    assert len(every) > 10
    for block_pairs in (3, seqfilter.BLOCK_PAIRS):
        pd.testing.assert_frame_equal(
            seqfilter.filter_affine_edges(s, edges, 0.9, iddef, VSEARCH, CPU,
                                          block_pairs=block_pairs), every)
    out = tmp_path / "k.tsv"
    assert main(["-q", "filter", "-i", fasta, "--distances", str(tmp_path / "e.npz"),
                 "--scoring", "vsearch", "--identity", "0.9", "--iddef", str(iddef),
                 "-o", str(out)]) == 0
    assert len(pd.read_csv(out, sep="\t")) == len(every)


def test_edge_list_too_loose_for_the_filter(tmp_path, capsys):
    fasta = write_fasta(tmp_path / "u.fasta", random_sequences(seed=13, n=12))
    distance_edges(tmp_path, fasta, "--max-distance", 0, "--candidate-identity", 0.95)
    assert main(["-q", "filter", "-i", fasta, "--distances", str(tmp_path / "e.npz"),
                 "--scoring", "vsearch", "--identity", "0.9", "-o",
                 str(tmp_path / "k.tsv")]) == 2
    assert "may lack pairs that reach 0.9" in capsys.readouterr().err


def test_dense_outputs_and_shards_under_vsearch(tmp_path):
    """The condensed matrix holds every pair's distance (the edge list's); shards merge
    into the whole edge list's bytes; a spilled edge list is the same bytes."""
    seqs = random_sequences(seed=14, n=40)
    fasta = write_fasta(tmp_path / "u.fasta", seqs)
    whole = distance_edges(tmp_path, fasta)
    condensed = tmp_path / "c.npy"
    assert main(["-q", "distance", "-i", fasta, "--scoring", "vsearch", "--backend", "cpu",
                 "--condensed", str(condensed), "--mothur", str(tmp_path / "m.dist"),
                 "--max-distance", "0.3"]) == 0
    d = squareform(np.load(condensed))
    assert np.array_equal(d[whole.i, whole.j], whole.distance)
    mothur = pd.read_csv(tmp_path / "m.dist", sep=" ", header=None)
    assert len(mothur) == (whole.distance <= 0.3).sum() > 0
    shards = []
    for k in range(3):
        shards.append(tmp_path / f"s{k}.npz")
        assert main(["-q", "distance", "-i", fasta, "--scoring", "vsearch", "--backend",
                     "cpu", "--shard", f"{k}/3", "--edges", str(shards[-1])]) == 0
    assert main(["-q", "merge", "-i", *map(str, shards), "--edges",
                 str(tmp_path / "m.npz")]) == 0
    assert (tmp_path / "m.npz").read_bytes() == (tmp_path / "e.npz").read_bytes()
    assert main(["-q", "distance", "-i", fasta, "--scoring", "vsearch", "--backend", "cpu",
                 "--edges", str(tmp_path / "spilled.npz"), "--memory", "1"]) == 0
    assert (tmp_path / "spilled.npz").read_bytes() == (tmp_path / "e.npz").read_bytes()


@needs_vsearch
def test_c005_edge_list_is_vsearch_allpairs(tmp_path, shared_data):
    """`seqpairs distance --scoring vsearch --candidate-identity 0.97` keeps vsearch's pairs
    with the identity vsearch prints."""
    seqs = c005_unique(shared_data, 250)
    fasta = write_fasta(tmp_path / "c005.fasta", seqs)
    edges = distance_edges(tmp_path, fasta, "--max-distance", 0, "--candidate-identity", 0.97)
    theirs = vsearch_table(tmp_path, fasta, "--id", "0.97")
    ids = np.asarray([f"s{k}" for k in range(len(seqs))])
    ours = pd.DataFrame({"query": ids[edges.j], "target": ids[edges.i],
                         "id": 100.0 * (1.0 - edges.distance), "raw": edges.score})
    merged = ours.merge(theirs, on=["query", "target"], how="outer", suffixes=("", "_v"),
                        indicator=True)
    assert len(theirs) > 500 and (merged["_merge"] == "both").all(), vsearch_version()
    assert (merged["raw"] == merged["raw_v"]).all()
    assert (np.abs(merged["id"] - merged["id_v"].astype(float)) <= 0.05 + 1e-9).all()


@pytest.mark.skipif(gpu_backend.available(), reason="a GPU is visible: --backend gpu runs")
def test_cli_gpu_backend_without_a_gpu(tmp_path, capsys):
    fasta = write_fasta(tmp_path / "u.fasta", random_sequences(seed=7, n=10))
    assert main(["-q", "filter", "-i", fasta, "--scoring", "vsearch", "--backend", "gpu",
                 "--identity", "0.97", "-o", str(tmp_path / "k.tsv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("seqpairs: error: ") and err.count("\n") == 1, err
    assert "no CUDA GPU" in err and not (tmp_path / "k.tsv").exists()


def test_cigars_at_once_equal_one_by_one():
    """Alignments.cigars (every pair's text in one buffer) writes what cigar(k) writes:
    runs of 1 to 5 digits, identical pairs ("="), any selection."""
    rng = random.Random(9)
    long_a = random_sequence(rng, 12000)
    seqs = random_sequences(seed=15, n=40, max_len=120) + [
        long_a, long_a[:9000] + long_a[9050:], long_a[:5], "A", "A" * 150]
    seqs += [seqs[3]]  # identical to an earlier one: "="
    n = len(seqs)
    q, t = np.triu_indices(n, 1)
    codes, offsets = encode(seqs)
    al = trace_pairs(codes, offsets, q, t, VSEARCH)
    one_by_one = [al.cigar(k) for k in range(len(al))]
    assert al.cigars() == one_by_one and "=" in one_by_one
    assert any(len(c) > 6 and c[:5].isdigit() for c in one_by_one)  # a 5-digit run
    picks = np.array([7, 2, 2, len(al) - 1])
    assert al.cigars(picks) == [one_by_one[k] for k in picks]
    mask = np.arange(len(al)) % 3 == 1
    assert al.cigars(mask) == [c for c, m in zip(one_by_one, mask) if m]
    assert al.cigars(np.zeros(len(al), dtype=bool)) == []


@pytest.mark.parametrize("iddef", IDDEFS)
def test_the_filters_screen_keeps_its_table(iddef):
    """filter_affine on a backend with an affine screen (the GPU's; here the reference's
    beside the CPU's counts, as on the GPU) gives the same table as every pair counted,
    the screen asked for every pair the length test leaves and none with prune=False."""
    import dataclasses

    seqs = length_boundary_sequences() + random_sequences(seed=14, n=30, max_len=40)
    s = sequence_set(seqs)
    every = seqfilter.filter_affine(s, VSEARCH, CPU, 0.9, iddef)
    assert 0 < len(every) < len(seqs) * (len(seqs) - 1) // 2
    screened = []
    backend = dataclasses.replace(CPU, affine_counts_traced=False,
                                  affine_screen=reference_affine.screener(seqs, screened))
    pd.testing.assert_frame_equal(seqfilter.filter_affine(s, VSEARCH, backend, 0.9, iddef),
                                  every)
    assert len(screened) > len(every)
    screened.clear()
    pd.testing.assert_frame_equal(
        seqfilter.filter_affine(s, VSEARCH, backend, 0.9, iddef, prune=False), every)
    assert not screened
