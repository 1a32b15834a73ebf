"""GPU rows of `seqpairs scan` (align.cu's scan_rows) against the CPU's: every row key
equal, and the hits through the engine equal.

Marked `gpu`; skipped where CuPy sees no CUDA device.
"""
import numpy as np
import pytest

from reference_scan import planted
from seqpairs.backends import gpu, select
from seqpairs.backends.common import concatenate
from seqpairs.backends.cpu import scan as cpu_scan
from seqpairs.backends.gpu import scan as gpu_scan
from seqpairs.pairs import scan
from seqpairs.scoring import LocalScheme

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.available(), reason="no CUDA GPU visible to CuPy"),
]

SCHEMES = {
    "ssca1": LocalScheme.dna(5, -3, 8, 1),  # word scores
    "blosum62": LocalScheme.from_matrix("BLOSUM62", 11, 1),  # shared table
    "asymmetric": LocalScheme("ACGT", ((3, -2, -5, -1), (-4, 2, -1, -6), (-6, 0, 1, -3),
                                       (-2, -5, -4, 4)), 2, 1),
    "costly gaps": LocalScheme.dna(2, -3, 300, 1),  # padding must not count (opening > 128)
    # scores past 32-bit keys (1,100 x 200 >= 2^17): 64-bit keys, scores from the table
    "big scores": LocalScheme.dna(200, -150, 300, 20),
}


# rounds of 512-column tiles for the longest query (3 tiles): 3, 2 (the last half idle), 1
@pytest.mark.parametrize("anchored", [False, True])
@pytest.mark.parametrize("warps", [1, 2, 16])
@pytest.mark.parametrize("name", list(SCHEMES))
def test_row_keys_equal_the_cpu(name, warps, anchored):
    scheme = SCHEMES[name]
    rng = np.random.default_rng(41)
    k = min(len(scheme.alphabet), 20)
    # 1 to 3 tiles of 512 columns, a query of one letter, targets of 1 to 5,000 rows
    queries = [rng.integers(0, k, m).astype(np.uint8) for m in (1, 31, 512, 513, 700, 1100)]
    targets = [planted(rng, k, queries[4], 5000, 4), rng.integers(0, k, 1).astype(np.uint8),
               planted(rng, k, queries[2], 900, 2)]
    blocks = scan.plan_blocks([len(q) for q in queries], [len(t) for t in targets], scheme,
                              None, 400)
    args = (*concatenate(queries), *concatenate(targets), blocks, scheme)
    want = cpu_scan.rows(*args, anchored=anchored)
    got = gpu_scan.rows(*args, anchored=anchored, scan_warps=warps).get()
    assert got.dtype == (np.int64 if name == "big scores" else np.uint32)
    assert np.array_equal(got.astype(np.int64), want)
    if anchored:  # rows whose best cell is below 0 (key of score 0), and some above
        assert (want >> 15 == 0).any() and (want >> 15).max() > 0
        assert not np.array_equal(want, cpu_scan.rows(*args))
    else:
        assert (want >> 15).max() > 200  # the planted copies score


def test_rows_of_some_blocks_equal_the_cpu():
    """A call given some blocks of several targets (as a rank's work list is) uploads only
    the stretch they read: its keys equal the CPU's for those blocks, whichever blocks,
    the first and last target's included."""
    scheme = SCHEMES["ssca1"]
    rng = np.random.default_rng(44)
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in (40, 300)]
    targets = [planted(rng, 4, queries[1], 6000, 4), rng.integers(0, 4, 7).astype(np.uint8),
               planted(rng, 4, queries[0], 9000, 6)]
    blocks = scan.plan_blocks([len(q) for q in queries], [len(t) for t in targets], scheme,
                              None, 700)
    coded = (*concatenate(queries), *concatenate(targets))
    for some in (np.arange(3, 9), np.array([len(blocks["lo"]) - 1]), np.array([0, 1]),
                 rng.choice(len(blocks["lo"]), 7, replace=False)):
        part = {key: values[some] for key, values in blocks.items()}
        want = cpu_scan.rows(*coded, part, scheme)
        assert np.array_equal(gpu_scan.rows(*coded, part, scheme).get().astype(np.int64),
                              want)


def test_hits_equal_the_cpus():
    scheme = SCHEMES["ssca1"]
    rng = np.random.default_rng(42)
    # 300 letters: a warp a block; 1,300: three tiles, four warps (one idle)
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in (300, 1300)]
    target = planted(rng, 4, queries[0], 200_000, 20)
    target[:60_000] = planted(rng, 4, queries[1], 60_000, 12)
    for options in ({}, {"half": 50, "block_rows": 3000}):
        cpu = scan.scan(select("cpu"), scheme, queries, [target], 30, trace=True, **options)
        gpu_hits = scan.scan(select("gpu"), scheme, queries, [target], 30, trace=True,
                             **options)
        assert (cpu.qend - cpu.qstart).max() > 1000  # the long query's copies are hits
        for field in ("score", "qstart", "qend", "tstart", "tend"):
            assert np.array_equal(getattr(cpu, field), getattr(gpu_hits, field)), field
        assert np.array_equal(cpu.runs.ops, gpu_hits.runs.ops)


@pytest.mark.parametrize("min_score", [1, 40])
@pytest.mark.parametrize("half", [0, 1, 7, 300, None])
def test_peaks_equal_the_cpus(half, min_score):
    """scan_peaks.cu's window maxima against the CPU's sliding window on the same keys:
    ties in a window (tandem repeats, a homopolymer), windows clipped at both ends of a
    target, blocks of a few rows, no window (half 0), a target shorter than its window."""
    scheme = SCHEMES["ssca1"]
    rng = np.random.default_rng(43 if half is None else half)
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in (20, 300)]
    targets = [planted(rng, 4, queries[1], 20_000, 8), np.tile(queries[0], 40),
               np.zeros(500, np.uint8), rng.integers(0, 4, 3).astype(np.uint8)]
    blocks = scan.plan(scheme, queries, targets, half, 1500, 50, min_score)
    keys = gpu_scan.rows(*concatenate(queries), *concatenate(targets), blocks, scheme)
    want = cpu_scan.peaks(keys.get(), blocks, 50, min_score)
    got = gpu_scan.peaks(keys, blocks, 50, min_score)
    assert np.array_equal(want[3], got[3])
    assert want[3].sum() > 10
    for k, kept in enumerate(want[3]):  # each block's peaks, in any order
        triples = [sorted(zip(*(found[k][:kept].tolist() for found in side[:3])))
                   for side in (want, got)]
        assert triples[0] == triples[1], k


def test_a_query_past_other_stages_limit():
    """A query of 20,000 letters (40 tiles: 16 warps in three rounds, tile edges through
    global memory; windows of about 20,000 x 20,000 cells traced a block each): hits and
    alignments equal to the CPU's."""
    scheme = SCHEMES["ssca1"]
    rng = np.random.default_rng(44)
    query = rng.integers(0, 4, 20_000).astype(np.uint8)
    target = planted(rng, 4, query, 60_000, 2)
    cpu = scan.scan(select("cpu"), scheme, [query], [target], 5, trace=True)
    gpu_hits = scan.scan(select("gpu"), scheme, [query], [target], 5, trace=True)
    for field in ("score", "qstart", "qend", "tstart", "tend"):
        assert np.array_equal(getattr(cpu, field), getattr(gpu_hits, field)), field
    for field in ("offsets", "ops", "lengths", "matches"):
        assert np.array_equal(getattr(cpu.runs, field), getattr(gpu_hits.runs, field)), field
    assert cpu.score.max() > 5 * 15_000  # the planted copies are hits
