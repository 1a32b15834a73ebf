"""`seqpairs align` on the CPU: the Numba passes (score and end, start, window traceback)
against the plain reference (tests/reference_align.py) and parasail, and the command."""
import gzip
import itertools
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import parasail
import pytest

import reference_align
from seqpairs.backends import cpu
from seqpairs.backends.alignments import WINDOW_OPS
from seqpairs.backends.common import concatenate
from seqpairs.errors import UserError
from seqpairs.pairs import align as engine
from seqpairs.scoring import LocalScheme
from seqpairs.scoring.local import MODES

SCHEMES = {
    "blastn": LocalScheme.dna(2, -3, 5, 2),
    "linear": LocalScheme.dna(1, -1, 0, 1),
    "cheap gaps": LocalScheme.dna(5, -4, 1, 1),  # gapped paths win often
    "blosum62": LocalScheme.from_matrix("BLOSUM62", 11, 1),
    # no symmetry: catches query and target swapped
    "asymmetric": LocalScheme("ACGT", ((3, -2, -5, -1), (-4, 2, -1, -6), (-6, 0, 1, -3),
                                       (-2, -5, -4, 4)), 2, 1),
}
# parasail's functions by mode: sg_dx frees both ends of its second sequence (the target)
PARASAIL = {"local": parasail.sw_trace_scan_32, "global": parasail.nw_trace_scan_32,
            "semiglobal": parasail.sg_dx_trace_scan_32}


def run_passes(scheme, mode, queries, targets):
    """(score, qstart, qend, tstart, tend) per pair and the traced runs, through the engine."""
    codes, offsets = concatenate(queries + targets)
    pairs = np.arange(len(queries))
    hits = engine.align(cpu.BACKEND, scheme, mode, codes, offsets,
                        [(pairs, pairs + len(queries))], threads=2, trace=True)
    return hits


def runs_of(hits, k):
    runs = hits.runs
    return [(WINDOW_OPS[runs.ops[r]], int(runs.lengths[r]))
            for r in range(runs.offsets[k], runs.offsets[k + 1])]


def check_against_reference(scheme, mode, queries, targets):
    hits = run_passes(scheme, mode, queries, targets)
    assert list(hits.pair) == list(range(len(queries)))
    for k, (q, t) in enumerate(zip(queries, targets)):
        got = tuple(int(getattr(hits, f)[k]) for f in ("score", "qstart", "qend", "tstart",
                                                         "tend"))
        expected = reference_align.align(q, t, scheme, mode)
        assert got == expected, (k, q.tolist(), t.tolist())
        # the traced alignment spans the coordinates and scores the score
        score, qstop, tstop = reference_align.rescore(q, t, (max(got[1], 1), max(got[3], 1)),
                                                      runs_of(hits, k), scheme)
        assert score == got[0]
        assert (qstop, tstop) == ((got[2], got[4]) if runs_of(hits, k) else (0, 0))
        assert hits.runs.matches[k] == sum(n for op, n in runs_of(hits, k) if op == "=")


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_random_pairs_match_the_reference(name, mode):
    """Short sequences over two letters (many ties) and the whole alphabet."""
    scheme = SCHEMES[name]
    rng = np.random.default_rng(len(name) * 7 + len(mode))
    for letters in (2, len(scheme.alphabet)):
        queries = [rng.integers(0, letters, rng.integers(1, 10)).astype(np.uint8)
                   for _ in range(120)]
        targets = [rng.integers(0, letters, rng.integers(1, 10)).astype(np.uint8)
                   for _ in range(120)]
        check_against_reference(scheme, MODES[mode], queries, targets)


@pytest.mark.parametrize("mode", list(MODES))
def test_adversarial_pairs_match_the_reference(mode):
    """Homopolymers, one letter against many, very different lengths, repeats (ties of
    end and start), and a query that aligns only against gaps."""
    scheme = SCHEMES["blastn"]
    enc = [scheme.encode(s, "test") for s in (
        "A", "AAAAAAAAAAAA", "C", "ACACACACAC", "ACGTACGT", "TTTTTTTTTTTTTTTTTTTTA", "GATTACA",
        "CCCCCCCCCCCCCCCCCCCCCCCCCCCCC", "ACGT", "TGCA")]
    pairs = list(itertools.product(enc, repeat=2))
    check_against_reference(scheme, MODES[mode], [a for a, _ in pairs], [b for _, b in pairs])


def floored_reverse_start(q, t, scheme, score, qend, tend):
    """The start as align.cu's two-pairs-a-thread reverse pass finds it: local recurrence
    (floor at 0) over the reversed prefixes, the first cell in row-major order (rows: the
    target) reaching the score."""
    H = reference_align.matrices(q[:qend][::-1], t[:tend][::-1], scheme, True, False)
    i, j = next((i, j) for i in range(1, tend + 1) for j in range(1, qend + 1)
                if H[i][j] == score)
    return qend - j + 1, tend - i + 1


def test_the_floored_reverse_pass_finds_the_anchored_start():
    """align.cu's 16-bit reverse pass floors at 0 (docs in align.cu: the optimal
    alignments' suffixes score above 0, a fresh start reaching the score would be an
    earlier end): on pairs full of ties it finds the reference's start."""
    scheme = SCHEMES["blastn"]
    rng = np.random.default_rng(17)
    words = ["A", "AAAAAAAAAAAA", "ACACACACAC", "TTTTTTTTTTTTTTTTTTTTA", "GATTACA", "ACGT"]
    pairs = [(scheme.encode(a, "q"), scheme.encode(b, "t"))
             for a, b in itertools.product(words, repeat=2)]
    pairs += [(rng.integers(0, k, rng.integers(1, 14)), rng.integers(0, k, rng.integers(1, 14)))
              for k in (2, 2, 4) for _ in range(150)]
    checked = 0
    for q, t in pairs:
        q, t = list(map(int, q)), list(map(int, t))
        score, qstart, qend, tstart, tend = reference_align.align(q, t, scheme, MODES["local"])
        if score:
            assert floored_reverse_start(q, t, scheme, score, qend, tend) == (qstart, tstart)
            checked += 1
    assert checked > 400


def random_dna(rng, n):
    return "".join(rng.choice(list("ACGT"), n))


def mutated(rng, seq, rate=0.15):
    out = []
    for c in seq:
        r = rng.random()
        if r < rate / 3:
            continue
        out.append(c if r > rate else rng.choice(list("ACGT")))
        if rate / 3 <= r < 2 * rate / 3:
            out.append(random_dna(rng, int(rng.integers(1, 4))))
    return "".join(out)


def check_against_parasail(scheme, matrix, mode, queries, targets):
    hits = run_passes(scheme, MODES[mode],
                      [scheme.encode(q, "q") for q in queries],
                      [scheme.encode(t, "t") for t in targets])
    opening = scheme.gap_open + scheme.gap_extend  # parasail: a gap of k costs open + (k-1) ext
    compared = 0
    for k, (q, t) in enumerate(zip(queries, targets)):
        result = PARASAIL[mode](q, t, opening, scheme.gap_extend, matrix)
        assert hits.score[k] == result.score, k
        if (mode == "local" and result.score == 0) or (mode == "semiglobal" and
                                                       hits.tstart[k] == 0):
            continue  # no letter aligned: parasail still names a cell
        assert (hits.qend[k], hits.tend[k]) == (result.end_query + 1, result.end_ref + 1), k
        # parasail's traceback and ours may pick different alignments of one score: ours,
        # between our coordinates, scores parasail's score
        compared += 1
        mine = runs_of(hits, k)
        assert reference_align.rescore(q, t, (max(hits.qstart[k], 1), max(hits.tstart[k], 1)),
                                       mine, scheme)[0] == result.score
    return compared


@pytest.mark.parametrize("mode", list(MODES))
def test_dna_against_parasail(mode):
    rng = np.random.default_rng(11)
    queries, targets = [], []
    for _ in range(150):
        ref = random_dna(rng, int(rng.integers(20, 200)))
        queries.append(mutated(rng, ref[int(rng.integers(0, 10)):]))
        targets.append(random_dna(rng, int(rng.integers(0, 30))) + ref +
                       random_dna(rng, int(rng.integers(0, 30))))
    for scheme, matrix in ((SCHEMES["blastn"], parasail.matrix_create("ACGT", 2, -3)),
                           (SCHEMES["cheap gaps"], parasail.matrix_create("ACGT", 5, -4))):
        assert check_against_parasail(scheme, matrix, mode, queries, targets) > 100


@pytest.mark.parametrize("mode", list(MODES))
def test_protein_against_parasail(mode):
    """Families of related proteins, unrelated ones, low-complexity runs and B, Z, X."""
    from proteins import proteins

    seqs = proteins(seed=5, n=300, max_len=300)
    queries, targets = seqs[0::2][:120], seqs[1::2][:120]
    scheme = SCHEMES["blosum62"]
    assert check_against_parasail(scheme, parasail.blosum62, mode, queries, targets) > 60


# The background amino-acid frequencies BLAST scores BLOSUM62 against (Robinson and
# Robinson 1991), in AMINO_ACIDS' order ARNDCQEGHILKMFPSTWYV.
BLOSUM62_BACKGROUND = (0.07805, 0.05129, 0.04487, 0.05364, 0.01925, 0.04264, 0.06295,
                       0.07377, 0.02199, 0.05142, 0.09019, 0.05744, 0.02243, 0.03856,
                       0.05203, 0.07120, 0.05841, 0.01330, 0.03216, 0.06441)


@pytest.mark.parametrize("mode", list(MODES))
def test_random_proteins_of_blosum62s_background_against_parasail(mode):
    """Random proteins drawn from BLOSUM62's background, each query a mutated piece of its
    target (or unrelated), against parasail with BLOSUM62."""
    from seqpairs.scoring.alphabet import AMINO_ACIDS

    rng = np.random.default_rng(19)
    letters = np.array(list(AMINO_ACIDS))
    weights = np.array(BLOSUM62_BACKGROUND) / sum(BLOSUM62_BACKGROUND)

    def draw(n):
        return "".join(rng.choice(letters, n, p=weights))

    queries, targets = [], []
    for k in range(150):
        target = draw(int(rng.integers(30, 300)))
        lo = int(rng.integers(0, len(target) // 2))
        piece = list(target[lo:lo + int(rng.integers(20, 200))])
        for x in np.flatnonzero(rng.random(len(piece)) < 0.2):
            piece[x] = draw(1)
        queries.append("".join(piece) if k % 4 else draw(int(rng.integers(10, 200))))
        targets.append(target)
    scheme = SCHEMES["blosum62"]
    assert check_against_parasail(scheme, parasail.blosum62, mode, queries, targets) > 100


def test_real_16s_reads_against_parasail(shared_data):
    """454 reads of C005 against each other: scores and ends equal parasail's."""
    from Bio import SeqIO

    with gzip.open(shared_data / "C005_454.fa.gz", "rt") as fh:
        reads = [str(r.seq).upper() for r, _ in zip(SeqIO.parse(fh, "fasta"), range(80))]
    reads = [r for r in reads if set(r) <= set("ACGT")]
    queries, targets = reads[::2][:30], reads[1::2][:30]
    matrix = parasail.matrix_create("ACGT", 2, -3)
    for mode in MODES:
        assert check_against_parasail(SCHEMES["blastn"], matrix, mode, queries,
                                      targets) == len(queries)


def test_free_gaps_are_refused():
    with pytest.raises(UserError, match="gap must cost"):
        engine.align(cpu.BACKEND, LocalScheme.dna(1, -1, 0, 0), MODES["local"],
                     *concatenate([np.zeros(3, np.uint8)] * 2),
                     [(np.array([0]), np.array([1]))])


def test_best_per_query_keeps_the_top_scores_and_earlier_pairs_on_ties():
    query = np.array([0, 0, 0, 1, 1, 0])
    score = np.array([5, 9, 5, 1, 1, 9])
    pair = np.arange(6)
    assert engine.best_per_query(query, score, pair, 2).tolist() == [1, 5, 3, 4]
    assert engine.best_per_query(query, score, pair, 3).tolist() == [1, 5, 0, 3, 4]


# the command

def write_fasta(path, records):
    path.write_text("".join(f">{name}\n{seq}\n" for name, seq in records))
    return path


@pytest.fixture
def fastas(tmp_path):
    rng = np.random.default_rng(3)
    refs = [random_dna(rng, int(n)) for n in rng.integers(60, 120, 6)]
    queries = [(f"q{k}", mutated(rng, r[10:50])) for k, r in enumerate(refs[:4])]
    targets = [(f"t{k}", r) for k, r in enumerate(refs)]
    return (write_fasta(tmp_path / "q.fa", queries), write_fasta(tmp_path / "t.fa", targets),
            dict(queries), dict(targets))


def read(path):
    return pd.read_csv(path, sep="\t", keep_default_na=False)


@pytest.mark.parametrize("mode", list(MODES))
def test_database_mode_is_every_query_against_every_target(cli, fastas, tmp_path, mode):
    q, t, queries, targets = fastas
    out = tmp_path / "hits.tsv"
    code, _, err = cli("align", "-q", q, "-t", t, "--mode", mode, "-o", out, "--threads", 2,
                       "--columns", "qseqid,sseqid,score,qstart,qend,sstart,send,cigar,qaln,"
                       "saln,length,nident,pident,qlen,slen")
    assert code == 0, err
    table = read(out)
    assert list(zip(table.qseqid, table.sseqid)) == list(itertools.product(queries, targets))
    scheme = SCHEMES["blastn"]
    for row in table.itertuples():
        qs, ts = queries[row.qseqid], targets[row.sseqid]
        assert (row.score, row.qstart, row.qend, row.sstart, row.send) == \
            reference_align.align(qs, ts, scheme, MODES[mode])
        assert row.qaln.replace("-", "") == qs[row.qstart - 1:row.qend]
        assert row.saln.replace("-", "") == ts[row.sstart - 1:row.send]
        assert len(row.qaln) == len(row.saln) == row.length
        assert row.nident == sum(a == b for a, b in zip(row.qaln, row.saln))
        assert row.pident == round(100 * row.nident / row.length, 3)
        assert (row.qlen, row.slen) == (len(qs), len(ts))


def test_top_and_min_score_keep_the_best_targets_of_each_query(cli, fastas, tmp_path):
    q, t, queries, targets = fastas
    every, best = tmp_path / "every.tsv", tmp_path / "best.tsv"
    assert cli("align", "-q", q, "-t", t, "-o", every)[0] == 0
    assert cli("align", "-q", q, "-t", t, "-o", best, "--top", 2, "--min-score", 20)[0] == 0
    every, best = read(every), read(best)
    every["order"] = range(len(every))
    expected = (every[every.score >= 20]
                .sort_values(["qseqid", "score", "order"], ascending=[True, False, True])
                .groupby("qseqid").head(2))
    assert len(expected) >= 4
    assert best.equals(expected.drop(columns="order").reset_index(drop=True))


def test_one_to_one_all_pairs_and_a_pair_list(cli, fastas, tmp_path):
    q, t, queries, targets = fastas
    first4 = write_fasta(tmp_path / "t4.fa", list(targets.items())[:4])
    out = tmp_path / "o.tsv"
    assert cli("align", "-q", q, "-t", first4, "--one-to-one", "-o", out)[0] == 0
    assert list(zip(read(out).qseqid, read(out).sseqid)) == list(zip(queries, list(targets)[:4]))
    assert cli("align", "-q", t, "-o", out)[0] == 0  # all pairs of one file
    assert list(zip(read(out).qseqid, read(out).sseqid)) == \
        list(itertools.combinations(targets, 2))
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("query\ttarget\nq3\tt5\nq0\tt0\nq3\tt5\n")
    assert cli("align", "-q", q, "-t", t, "--pairs", pairs, "-o", out)[0] == 0
    assert list(zip(read(out).qseqid, read(out).sseqid)) == [("q3", "t5"), ("q0", "t0"),
                                                             ("q3", "t5")]


def test_blast6_has_blasts_twelve_columns(cli, fastas, tmp_path):
    q, t, *_ = fastas
    out = tmp_path / "b.tsv"
    assert cli("align", "-q", q, "-t", t, "--columns", "blast6", "-o", out)[0] == 0
    table = pd.read_csv(out, sep="\t")
    assert list(table.columns) == ["qseqid", "sseqid", "pident", "length", "mismatch",
                                   "gapopen", "qstart", "qend", "sstart", "send", "evalue",
                                   "bitscore"]
    assert table.evalue.isna().all() and (table.length >= table.mismatch).all()


@pytest.mark.parametrize("argv, message", [
    (["--one-to-one"], "has 4 records"),
    (["--columns", "qseqid,bogus"], "unknown column bogus"),
    (["--one-to-one", "--top", "1"], "--top keeps the best targets"),
    (["--pairs", "PAIRS"], "PAIRS:3: target 'nope' is not in"),
    (["--gap-open", "0", "--gap-extend", "0"], "gap must cost"),
])
def test_bad_requests_are_one_line(cli, fastas, tmp_path, argv, message):
    q, t, *_ = fastas
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("query\ttarget\nq0\tt0\nq1\tnope\n")
    argv = [str(pairs) if a == "PAIRS" else a for a in argv]
    message = message.replace("PAIRS", str(pairs))
    code, out, err = cli("align", "-q", q, "-t", t, "-o", tmp_path / "x.tsv", *argv)
    assert code != 0
    lines = [line for line in err.splitlines() if line.startswith("seqpairs: error:")]
    assert len(lines) == 1 and message in lines[0], err
    assert "Traceback" not in err


# EMBOSS water (local) and needle (global, end gaps paid as interior ones), one pair per
# run: the same scores. EMBOSS's gap of length k costs gapopen + (k - 1) gapextend.
EMBOSS = shutil.which("water") and shutil.which("needle")


def emboss_score(tmp_path, tool, query, target, scheme, datafile):
    (tmp_path / "a.fa").write_text(f">a\n{query}\n")
    (tmp_path / "b.fa").write_text(f">b\n{target}\n")
    opening = str(scheme.gap_open + scheme.gap_extend)
    extend = str(scheme.gap_extend)
    argv = [tool, "-asequence", tmp_path / "a.fa", "-bsequence", tmp_path / "b.fa",
            "-gapopen", opening, "-gapextend", extend, "-datafile", datafile,
            "-outfile", tmp_path / "out.txt", "-auto"]
    if tool == "needle":
        argv += ["-endweight", "-endopen", opening, "-endextend", extend]
    kind = "protein" if len(scheme.alphabet) > 4 else "nucleotide"  # EMBOSS guesses else
    argv += [f"-s{kind}1", f"-s{kind}2"]
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "out.txt").read_text()
    return float(re.search(r"^# Score: (\S+)", text, re.M).group(1))


@pytest.mark.skipif(not EMBOSS, reason="EMBOSS not found (apt-get install emboss)")
@pytest.mark.parametrize("kind", ["dna", "protein"])
def test_scores_equal_emboss_water_and_needle(tmp_path, kind):
    from proteins import proteins

    rng = np.random.default_rng(21)
    if kind == "dna":
        scheme = SCHEMES["blastn"]
        datafile = tmp_path / "matrix"  # EMBOSS's matrix format, the scheme's scores
        datafile.write_text("   A  C  G  T\n" + "".join(
            f"{a} " + " ".join(f"{scheme.subst[i][j]:2d}" for j in range(4)) + "\n"
            for i, a in enumerate("ACGT")))
        seqs = []
        for _ in range(12):
            ref = random_dna(rng, int(rng.integers(30, 150)))
            seqs += [mutated(rng, ref[int(rng.integers(0, 10)):]), random_dna(rng, 8) + ref]
    else:
        scheme, datafile = SCHEMES["blosum62"], "EBLOSUM62"
        seqs = [s for s in proteins(seed=3, n=40, max_len=150) if len(s) > 1][:24]
    queries, targets = seqs[0::2], seqs[1::2]
    for mode, tool in (("local", "water"), ("global", "needle")):
        hits = run_passes(scheme, MODES[mode], [scheme.encode(q, "q") for q in queries],
                          [scheme.encode(t, "t") for t in targets])
        theirs = [emboss_score(tmp_path, tool, q, t, scheme, datafile)
                  for q, t in zip(queries, targets)]
        assert hits.score.tolist() == theirs, mode
