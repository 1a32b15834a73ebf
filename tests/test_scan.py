"""`seqpairs scan` (pairs/scan.py, backends/cpu/scan.py): the hits of queries along long
targets against the plain reference (tests/reference_scan.py), blocks against one block,
kernel 2's alignments rescored and against parasail, and the command."""
import numpy as np
import pandas as pd
import parasail
import pytest

import reference_scan
from reference_align import rescore
from reference_scan import planted
from seqpairs.backends import select
from seqpairs.pairs import scan
from seqpairs.scoring import LocalScheme

SCHEMES = {
    "ssca1": LocalScheme.dna(5, -3, 8, 1),
    "blastn": LocalScheme.dna(2, -3, 5, 2),
    "blosum62": LocalScheme.from_matrix("BLOSUM62", 11, 1),
    # no symmetry: catches query and target swapped
    "asymmetric": LocalScheme("ACGT", ((3, -2, -5, -1), (-4, 2, -1, -6), (-6, 0, 1, -3),
                                       (-2, -5, -4, 4)), 2, 1),
}
CPU = select("cpu")


def engine_hits(scheme, queries, targets, top, **options):
    hits = scan.scan(CPU, scheme, queries, targets, top, threads=2, **options)
    return [(int(q), int(t), int(s), int(a), int(b), int(c), int(d)) for q, t, s, a, b, c, d in
            zip(hits.query, hits.target, hits.score, hits.qstart, hits.qend, hits.tstart,
                hits.tend)]


def reference_hits(scheme, queries, targets, top, **options):
    return [(k, r, *hit) for k, q in enumerate(queries) for r, t in enumerate(targets)
            for hit in reference_scan.hits(q, t, scheme, top, **options)]


@pytest.mark.parametrize("name", list(SCHEMES))
def test_hits_equal_the_reference(name):
    scheme = SCHEMES[name]
    rng = np.random.default_rng(1)
    k = min(len(scheme.alphabet), 20)
    queries = [rng.integers(0, k, m).astype(np.uint8) for m in (12, 25)]
    targets = [planted(rng, k, queries[0], 180, 3), planted(rng, k, queries[1], 150, 2),
               rng.integers(0, k, 7).astype(np.uint8)]
    for top, options in ((5, {}), (40, {"half": 3}), (3, {"min_score": 20}), (8, {"half": 0})):
        want = reference_hits(scheme, queries, targets, top, **options)
        assert engine_hits(scheme, queries, targets, top, **options) == want, (top, options)
        # blocks of a few rows: the same hits (the span bound keeps every row exact)
        assert engine_hits(scheme, queries, targets, top, block_rows=4, **options) == want
    # the planted copies are found: the first target's best hit holds most of its query
    best = [h for h in want if h[:2] == (0, 0)][0]
    assert best[4] - best[3] >= 7


def test_adversarial_targets():
    """Tandem repeats (many equal scores: the earlier end wins), homopolymers, a target
    shorter than the query, a single letter, and gaps of any length costing the same
    (no span bound: one block)."""
    rng = np.random.default_rng(2)
    unit = rng.integers(0, 4, 9).astype(np.uint8)
    cases = [
        (SCHEMES["ssca1"], unit, np.tile(unit, 30)),
        (SCHEMES["ssca1"], np.r_[unit, unit], np.tile(unit, 30)),
        (SCHEMES["blastn"], np.zeros(10, np.uint8), np.r_[np.zeros(40, np.uint8),
                                                           np.ones(5, np.uint8),
                                                           np.zeros(25, np.uint8)]),
        (SCHEMES["asymmetric"], rng.integers(0, 4, 30).astype(np.uint8),
         rng.integers(0, 4, 12).astype(np.uint8)),
        (SCHEMES["ssca1"], unit, unit[:1]),
        (LocalScheme.dna(3, -2, 4, 0), unit, planted(rng, 4, unit, 120, 4)),
    ]
    for scheme, query, target in cases:
        want = reference_hits(scheme, [query], [target], 50)
        assert engine_hits(scheme, [query], [target], 50) == want
        assert engine_hits(scheme, [query], [target], 50, block_rows=3) == want
        assert engine_hits(scheme, [query], [target], 50, half=1) == \
            reference_hits(scheme, [query], [target], 50, half=1)


def test_span_bound_is_the_longest_positive_alignment():
    # m best pairs with one gap in the query: the longest target span still scoring >= 1
    for scheme, m in ((SCHEMES["ssca1"], 4), (SCHEMES["blastn"], 9), (SCHEMES["blosum62"], 5)):
        best = max(map(max, scheme.subst))
        span = scan.span_bound(m, scheme)
        gap = span - m  # target letters against the gap
        assert best * m - (scheme.gap_open + gap * scheme.gap_extend) >= 1
        assert best * m - (scheme.gap_open + (gap + 1) * scheme.gap_extend) < 1
    assert scan.span_bound(3, LocalScheme.dna(1, -1, 5, 0)) == 3  # no gap can pay
    assert scan.span_bound(30, LocalScheme.dna(1, -1, 5, 0)) is None  # gap_extend 0


@pytest.mark.parametrize("name", ["ssca1", "blosum62"])
def test_alignments_rescore_and_equal_parasail(name):
    scheme = SCHEMES[name]
    rng = np.random.default_rng(3)
    k = min(len(scheme.alphabet), 20)
    query = rng.integers(0, k, 40).astype(np.uint8)
    target = planted(rng, k, query, 3000, 6)
    hits = scan.scan(CPU, scheme, [query], [target], 10, threads=2, trace=True,
                     block_rows=500)
    letters = np.array(list(scheme.alphabet))
    q, t = "".join(letters[query]), "".join(letters[target])
    matrix = parasail.matrix_create(scheme.alphabet, 0, 0)
    for a in range(len(scheme.alphabet)):
        for b in range(len(scheme.alphabet)):
            matrix.set_value(a, b, scheme.subst[a][b])
    runs = hits.runs
    for h in range(len(hits.score)):
        ops = [("=XID"[runs.ops[r]], int(runs.lengths[r]))
               for r in range(runs.offsets[h], runs.offsets[h + 1])]
        total, i, j = rescore(q, t, (hits.qstart[h], hits.tstart[h]), ops, scheme)
        assert (total, i, j) == (hits.score[h], hits.qend[h], hits.tend[h])
        window = t[hits.tstart[h] - 1:hits.tend[h]]
        assert parasail.sw(q[hits.qstart[h] - 1:hits.qend[h]], window,
                           scheme.gap_open + scheme.gap_extend, scheme.gap_extend,
                           matrix).score == hits.score[h]
    assert len(hits.score) == 10 and hits.score[0] > 100


def test_cli(tmp_path, cli):
    rng = np.random.default_rng(4)
    query = rng.integers(0, 4, 50).astype(np.uint8)
    long_target = planted(rng, 4, query, 40_000, 3)  # past the pair kernels' 16,383
    letters = np.array(list("ACGT"))
    (tmp_path / "q.fa").write_text(f">q1 a query\n{''.join(letters[query])}\n")
    (tmp_path / "t.fa").write_text(f">chr1\n{''.join(letters[long_target])}\n"
                                   f">chr2\n{''.join(letters[long_target[:900]])}\n")
    out = tmp_path / "hits.tsv"
    code, _, err = cli("-q", "scan", "-q", tmp_path / "q.fa", "-t", tmp_path / "t.fa", "-o",
                       out, "--preset", "ssca1", "--top", "4", "--threads", "2", "--columns",
                       "qseqid,sseqid,score,qstart,qend,sstart,send,cigar")
    assert code == 0, err
    table = pd.read_csv(out, sep="\t")
    want = reference_hits(SCHEMES["ssca1"], [query], [long_target[:900]], 4)
    chr2 = table[table["sseqid"] == "chr2"]
    assert [tuple(r) for r in chr2[["score", "qstart", "qend", "sstart", "send"]].to_numpy()] \
        == [w[2:] for w in want]
    chr1 = table[table["sseqid"] == "chr1"]
    assert len(chr1) == 4 and chr1["score"].is_monotonic_decreasing
    assert chr1["score"].iloc[0] > 150
    # gap and mismatch options beside the preset win
    code, _, err = cli("-q", "scan", "-q", tmp_path / "q.fa", "-t", tmp_path / "t.fa", "-o",
                       out, "--preset", "ssca1", "--mismatch", "-4", "--top", "1")
    assert code == 0, err
    assert len(pd.read_csv(out, sep="\t")) == 2


@pytest.mark.parametrize("argv, message", [
    (["--preset", "ssca1", "--alphabet", "protein"], "--preset ssca1 scores DNA"),
    (["--top", "0"], "--top"),
    (["--gap-open", "0", "--gap-extend", "0"], "a gap must cost something"),
])
def test_cli_refusals(tmp_path, cli, argv, message):
    (tmp_path / "q.fa").write_text(">q\nACGTACGT\n")
    (tmp_path / "t.fa").write_text(">t\nACGTACGTAAAA\n")
    code, _, err = cli("scan", "-q", tmp_path / "q.fa", "-t", tmp_path / "t.fa", "-o",
                       tmp_path / "o.tsv", *argv)
    assert code == 2 and message in err and "Traceback" not in err


def test_query_past_the_limit_is_one_line(tmp_path, cli):
    (tmp_path / "q.fa").write_text(">q\n" + "A" * 32_768 + "\n")
    (tmp_path / "t.fa").write_text(">t\nACGT\n")
    code, _, err = cli("scan", "-q", tmp_path / "q.fa", "-t", tmp_path / "t.fa", "-o",
                       tmp_path / "o.tsv")
    assert code == 2 and "32768 letters, more than the kernels' limit of 32767" in err


def test_queries_past_other_stages_limit(tmp_path, cli):
    """A query of 20,000 letters (other stages stop at 16,383): its copy in the target found
    whole, from its start, aligned letter for letter (query letters A and C, the flanks G
    and T, so that no alignment reaches past the copy)."""
    rng = np.random.default_rng(20)
    query = "".join(np.array(list("AC"))[rng.integers(0, 2, 20_000)])
    flank = ["".join(np.array(list("GT"))[rng.integers(0, 2, 500)]) for _ in range(2)]
    target = flank[0] + query[100:19_900] + flank[1]
    (tmp_path / "q.fa").write_text(f">q\n{query}\n")
    (tmp_path / "t.fa").write_text(f">t\n{target}\n")
    code, _, err = cli("scan", "-q", tmp_path / "q.fa", "-t", tmp_path / "t.fa", "-o",
                       tmp_path / "o.tsv", "--preset", "ssca1", "--top", "1", "--threads",
                       "2", "--columns", "score,qstart,qend,sstart,send,cigar")
    assert code == 0, err
    table = pd.read_csv(tmp_path / "o.tsv", sep="\t")
    assert table.iloc[0].tolist() == [5 * 19_800, 101, 19_900, 501, 20_300, "19800="]


def test_any_rank_count_gives_the_same_bytes(tmp_path):
    """Under MPI the ranks pull blocks of the targets; rank 0 writes the same table."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    from test_mpi import MPIEXEC, run_seqpairs

    if MPIEXEC is None:
        pytest.skip("mpiexec not found (apt-get install openmpi-bin)")
    rng = np.random.default_rng(5)
    query = rng.integers(0, 4, 40).astype(np.uint8)
    target = planted(rng, 4, query, 300_000, 12)  # 5 blocks of 65,536 rows
    letters = np.array(list("ACGT"))
    (tmp_path / "q.fa").write_text(f">q1\n{''.join(letters[query])}\n>q2\n"
                                   f"{''.join(letters[query[::-1]])}\n")
    (tmp_path / "t.fa").write_text(f">chr1\n{''.join(letters[target])}\n")

    def output(ranks):
        out = tmp_path / f"ranks{ranks}.tsv"
        proc = run_seqpairs("scan", ["--backend", "cpu", "--threads", "1", "-q",
                                     tmp_path / "q.fa", "-t", tmp_path / "t.fa", "-o", out,
                                     "--preset", "ssca1", "--top", "30", "--columns",
                                     "qseqid,sseqid,score,qstart,qend,sstart,send,cigar"],
                            ranks)
        assert proc.returncode == 0, proc.stderr
        return out.read_bytes()

    single = output(None)
    assert single.count(b"\n") == 1 + 60
    for ranks in (2, 3):
        assert output(ranks) == single, f"{ranks} ranks differ"


def test_concatenate_copies_only_what_is_not_end_to_end():
    """common.concatenate: views lying end to end in one array come back as a view of it
    (a genome is not copied), empty ones anywhere (numpy gives them any address); others
    are copied; the codes and offsets are the same either way."""
    from seqpairs.backends.common import concatenate

    base = np.arange(100, dtype=np.uint8)
    cases = {
        "end to end": ([base[0:10], base[10:30], base[30:30], base[30:50]], True),
        "empty first": ([base[5:5], base[40:50], base[50:51]], True),
        "one sequence": ([base[3:90]], True),
        "a gap between": ([base[0:10], base[11:30]], False),
        "out of order": ([base[10:20], base[0:10]], False),
        "two arrays": ([base[0:10], base[10:20].copy()], False),
        "reversed": ([base[20:10:-1]], False),
        "all empty": ([base[3:3], base[7:7]], False),
    }
    for name, (seqs, shared) in cases.items():
        codes, offsets = concatenate(seqs)
        assert np.array_equal(codes, np.concatenate(seqs).astype(np.uint8)), name
        assert offsets.tolist() == np.r_[0, np.cumsum([len(s) for s in seqs])].tolist(), name
        assert np.shares_memory(codes, base) == shared, name


@pytest.mark.parametrize("slots", [1, 2, 7, 264])
def test_planned_blocks_report_every_row_once(slots):
    """Blocks sized for whole waves of `slots` (any target length, even shorter than the
    slots, and calls of a few rows): each target's reported rows are 1..n, once each, and
    every block starts early enough (half + span rows before its first reported row)."""
    scheme = SCHEMES["ssca1"]
    targets = [1, 5, 263, 1000, 123_457]
    for per_call in (np.inf, 3_000):
        blocks = scan.plan_blocks([40], targets, scheme, None, None, slots, per_call)
        warm = 40 + scan.span_bound(40, scheme)
        for r, n in enumerate(targets):
            mine = blocks["target"] == r
            lo, a, b = (blocks[key][mine] for key in ("lo", "report_lo", "report_hi"))
            assert a[0] == 1 and b[-1] == n and np.array_equal(a[1:], b[:-1] + 1)
            assert np.all(lo == np.maximum(0, a - warm))
            if per_call == np.inf:  # whole waves where the rows allow
                assert mine.sum() <= max(slots, 1) * scan.MAX_WAVES


@pytest.mark.parametrize("count, slots", [(0, 4), (1, 4), (10, 4), (12, 4), (12, 1), (5, 264)])
@pytest.mark.parametrize("rows_per_call", [np.inf, 250, 850])
def test_work_lists_come_in_whole_waves(count, slots, rows_per_call):
    """scan.in_waves: the executor is given one cost per wave (the sum of its blocks'), and
    each list of waves it hands out comes back as calls of whole waves, as many as a call's
    rows hold (at least one), which together are exactly that list's blocks, in order;
    every block once, only the target's last wave short."""
    blocks = {"cost": np.arange(1, count + 1, dtype=np.int64) * 10,
              "lo": np.zeros(count, np.int64), "hi": np.full(count, 100, np.int64)}
    handed = []

    def pull(costs):  # lists of waves in an order a queue might hand them out
        handed.append(np.asarray(costs))
        waves = np.arange(len(costs))
        for part in (np.sort(waves[1::2]), np.sort(waves[0::2])):
            if len(part):
                yield part

    calls = list(scan.in_waves(blocks, slots, pull, rows_per_call))
    waves = -(-count // slots)
    assert np.array_equal(handed[0], [blocks["cost"][w * slots:(w + 1) * slots].sum()
                                      for w in range(waves)])
    per_call = max(1, int(min(rows_per_call / 100, count) // slots))
    for items in calls:
        first = items[items % slots == 0]  # each call's waves, by their first block
        assert len(items) == sum(min(slots, count - w) for w in first)
        assert 1 <= len(first) <= per_call and np.all(np.diff(items) > 0)
    expected = [b for part in (range(1, waves, 2), range(0, waves, 2)) for w in part
                for b in range(w * slots, min(w * slots + slots, count))]
    assert (np.concatenate(calls).tolist() if calls else []) == expected
    assert sorted(expected) == list(range(count))


def test_a_call_covers_exactly_the_letters_its_blocks_read():
    """backends/gpu/scan.covered (what a GPU call uploads of the targets): from the first
    letter any block reads to the last, over several targets back to back and blocks
    taken in any order; nothing for no blocks."""
    from seqpairs.backends.common import concatenate
    from seqpairs.backends.gpu.scan import covered

    rng = np.random.default_rng(7)
    targets = [rng.integers(0, 4, n).astype(np.uint8) for n in (5000, 0, 37, 12_000)]
    _, offsets = concatenate(targets)
    blocks = scan.plan_blocks([40], [len(t) for t in targets], SCHEMES["ssca1"], None, 900)
    for _ in range(20):
        some = rng.choice(len(blocks["lo"]), rng.integers(1, 6), replace=False)
        part = {key: values[some] for key, values in blocks.items()}
        read = np.concatenate([offsets[r] + np.arange(lo, hi) for r, lo, hi in
                               zip(part["target"], part["lo"], part["hi"])])
        if len(read):
            assert covered(offsets, part) == (read.min(), read.max() + 1)
    none = {key: values[:0] for key, values in blocks.items()}
    assert covered(offsets, none) == (0, 0)
