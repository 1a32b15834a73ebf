"""`seqpairs align`'s GPU passes (gpu_kernels/align.cu) against the CPU's (Numba, which
tests/test_align.py pins to the plain reference and parasail): every score, end and start
equal, in every mode, for both score fetches (byte permute, shared table) and both
layouts (two local pairs a thread in 16 bits, one pair in 32 bits).

Marked `gpu`; skipped where CuPy sees no CUDA device.
"""
import numpy as np
import pytest

from seqpairs.backends import gpu
from seqpairs.backends.common import concatenate
from seqpairs.backends.cpu import align as cpu_align
from seqpairs.backends.gpu import align as gpu_align
from seqpairs.backends.gpu import kernels
from seqpairs.scoring import LocalScheme
from seqpairs.scoring.local import MODES

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.available(), reason="no CUDA GPU visible to CuPy"),
]

SCHEMES = {
    "blastn": LocalScheme.dna(2, -3, 5, 2),  # byte permute
    "adept dna": LocalScheme.dna(6, -4, 3, 1),
    "linear": LocalScheme.dna(1, -1, 0, 1),
    "blosum62": LocalScheme.from_matrix("BLOSUM62", 11, 1),  # shared table
    "nuc44": LocalScheme.from_matrix("NUC.4.4", 3, 2, alphabet="dna"),  # >4 letters: table
    # local scores past 2^15: one pair a thread in 32 bits, not two in 16-bit halves
    "big scores": LocalScheme.dna(100, -90, 40, 30),
}


def related(rng, letters, lengths, root_share=0.6):
    """Sequences of these lengths: most pieces of one root with 10% substitutions and a few
    indels (alignments with gaps, ends and starts inside), the rest random."""
    root = rng.integers(0, letters, 2 * max(lengths) + 10)
    out = []
    for n in lengths:
        if rng.random() < root_share:
            lo = int(rng.integers(0, max(lengths) + 10))
            s = root[lo:lo + n].copy()
            hit = rng.random(len(s)) < 0.1
            s[hit] = rng.integers(0, letters, hit.sum())
            s = np.delete(s, np.flatnonzero(rng.random(len(s)) < 0.02))
        else:
            s = rng.integers(0, letters, n)
        out.append((s if len(s) else rng.integers(0, letters, 1)).astype(np.uint8))
    return out


def compare(scheme, mode, queries, targets, long_from=gpu_align.LONG_FROM, fill_pairs=0):
    """GPU = CPU; by default a thread a pair for the short pairs, however few they are."""
    codes, offsets = concatenate(queries + targets)
    pa = np.arange(len(queries))
    pb = pa + len(queries)
    want = cpu_align.ends(codes, offsets, scheme, mode)(pa, pb)
    choice = {"long_from": long_from, "fill_pairs": fill_pairs}
    got = gpu_align.ends(codes, offsets, scheme, mode, **choice)(pa, pb)
    for name, w, g in zip(("score", "query end", "target end"), want, got):
        assert np.array_equal(w, g), f"{name}s differ at {np.flatnonzero(w != g)[:5]}"
    want_starts = cpu_align.starts(codes, offsets, scheme, mode)(pa, pb, *want)
    got_starts = gpu_align.starts(codes, offsets, scheme, mode, **choice)(pa, pb, *want)
    for name, w, g in zip(("query start", "target start"), want_starts, got_starts):
        assert np.array_equal(w, g), f"{name}s differ at {np.flatnonzero(w != g)[:5]}"
    return want


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_lengths_across_strips(name, mode):
    """1 to 700 letters, strip edges (31, 32, 33, 64, 65) included, both ways round."""
    scheme = SCHEMES[name]
    rng = np.random.default_rng(len(name) + 3 * len(mode))
    letters = 4 if scheme.alphabet.startswith("ACGT") else 20  # standard letters
    lengths = np.concatenate([[1, 2, 31, 32, 33, 63, 64, 65, 96, 97],
                              rng.integers(1, 700, 300)])
    queries = related(rng, letters, lengths)
    targets = related(rng, letters, rng.permutation(lengths))
    score = compare(scheme, MODES[mode], queries, targets)[0]
    assert len(set(score.tolist())) > 20  # many different alignments, not all trivial


@pytest.mark.parametrize("count", [1, 3, 129, 257])
@pytest.mark.parametrize("name,layout", [("blastn", "pairs"), ("blosum62", "pairs_profile")])
def test_odd_pair_counts_share_threads_rightly(count, name, layout):
    """Two local pairs a thread (16-bit halves; a per-thread profile for protein), both
    passes: the last thread of an odd count has one."""
    scheme = SCHEMES[name]
    for reverse, name in ((False, "ends"), (True, "starts")):
        assert gpu_align.variant(scheme, reverse, MODES["local"], 700, 700) == \
            kernels.VARIANTS[f"align_{name}_{layout}"]
        assert gpu_align.variant(SCHEMES["big scores"], reverse, MODES["local"], 700, 700) == \
            kernels.VARIANTS[f"align_{name}_word"]
    letters = 4 if layout == "pairs" else 20
    rng = np.random.default_rng(count)
    lengths = rng.integers(1, 300, count)
    compare(scheme, MODES["local"], related(rng, letters, lengths),
            related(rng, letters, rng.permutation(lengths)))


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", ["blastn", "blosum62", "big scores"])
def test_a_warp_a_pair_gives_the_same_results(name, mode):
    """align_long (a warp a pair, tiles of 32 lanes x 8 columns) forced on every pair:
    lengths across a lane's columns and the tiles (7, 8, 9, 255, 256, 257, 513)."""
    scheme = SCHEMES[name]
    rng = np.random.default_rng(len(name) + 5 * len(mode))
    letters = 4 if scheme.alphabet.startswith("ACGT") else 20
    lengths = np.concatenate([[1, 7, 8, 9, 255, 256, 257, 513], rng.integers(1, 700, 60)])
    queries = related(rng, letters, lengths)
    targets = related(rng, letters, rng.permutation(lengths))
    compare(scheme, MODES[mode], queries, targets, long_from=0)


@pytest.mark.parametrize("mode", list(MODES))
def test_long_pairs_take_a_warp_each(mode):
    """Pairs past LONG_FROM letters go to align_long, beside short ones a thread each; with
    the default FILL_PAIRS, all of these few pairs go to align_long."""
    scheme = SCHEMES["adept dna"]
    rng = np.random.default_rng(21)
    lengths = np.array([gpu_align.LONG_FROM, gpu_align.LONG_FROM + 700, 300, 40, 5000])
    queries = related(rng, 4, lengths, 0.9)
    targets = related(rng, 4, rng.permutation(lengths), 0.9)
    compare(scheme, MODES[mode], queries, targets)
    compare(scheme, MODES[mode], queries, targets, fill_pairs=gpu_align.FILL_PAIRS)


@pytest.mark.parametrize("long_from", [gpu_align.LONG_FROM, 0])
@pytest.mark.parametrize("mode", list(MODES))
def test_ties_and_homopolymers(mode, long_from):
    """Two-letter and one-letter sequences: many cells tie for the best score and the
    start; the tie rules must agree."""
    scheme = SCHEMES["blastn"]
    rng = np.random.default_rng(9)
    queries = [rng.integers(0, 2, int(n)).astype(np.uint8) for n in rng.integers(1, 120, 300)]
    targets = [np.full(int(n), int(rng.integers(0, 2)), np.uint8) if k % 3 == 0 else
               rng.integers(0, 2, int(n)).astype(np.uint8)
               for k, n in enumerate(rng.integers(1, 120, 300))]
    compare(scheme, MODES[mode], queries, targets, long_from)


def test_the_stage_on_the_gpu_writes_the_cpus_bytes(tmp_path):
    from seqpairs.cli import main

    rng = np.random.default_rng(4)
    seqs = related(rng, 4, rng.integers(40, 400, 60))
    fasta = tmp_path / "s.fa"
    fasta.write_text("".join(f">s{k}\n{''.join('ACGT'[c] for c in s)}\n"
                             for k, s in enumerate(seqs)))
    outs = []
    for backend in ("cpu", "gpu"):
        out = tmp_path / f"{backend}.tsv"
        assert main(["align", "-q", str(fasta), "--mode", "local", "--top", "3",
                     "--columns", "qseqid,sseqid,score,qstart,qend,sstart,send,cigar",
                     "--backend", backend, "-o", str(out)]) == 0
        outs.append(out.read_bytes())
    # all pairs a < b: sequence k is the query of 59 - k of them
    assert outs[0] == outs[1] and outs[0].count(b"\n") == 1 + 3 * 57 + 2 + 1


@pytest.mark.parametrize("size", [0, 1, 999, 1000, 1001, 4321])
def test_uploads_through_pinned_chunks_arrive_whole(size):
    from seqpairs.backends.gpu import launch

    host = np.random.default_rng(size).integers(0, 256, size).astype(np.uint8)
    assert np.array_equal(launch.to_device(host, chunk_bytes=1000).get(), host)


def test_the_passes_share_one_upload_of_the_same_sequences():
    rng = np.random.default_rng(8)
    codes, offsets = concatenate(related(rng, 4, rng.integers(1, 50, 20)))
    first = gpu_align._sequences(codes, offsets)
    assert gpu_align._sequences(codes, offsets) is first
    assert gpu_align._sequences(codes.copy(), offsets) is not first


# which windows get a thread block (trace_long) and which a thread (align_trace)
BY = {"block": {}, "thread": {"fill_pairs": 0, "long_from": 1 << 30},
      "both": {"fill_pairs": 0, "long_from": 200}}


@pytest.mark.parametrize("by", list(BY))
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", ["blastn", "blosum62", "big scores", "linear"])
def test_the_windows_tracebacks_are_the_cpus(name, mode, by):
    """align_trace (a thread a window) and trace_long (a block a window) against
    backends/cpu/align.py's trace_windows on the windows the passes find: runs, counts and
    scores equal, ties included (two-letter sequences), and the empty windows of score-0
    local pairs and query-only semi-global ones."""
    scheme = SCHEMES[name]
    rng = np.random.default_rng(len(name) * 3 + len(mode))
    letters = 4 if scheme.alphabet.startswith("ACGT") else 20
    lengths = rng.integers(1, 400, 150)
    queries = related(rng, letters, lengths) + \
        [rng.integers(0, 2, int(n)).astype(np.uint8) for n in rng.integers(1, 60, 100)]
    targets = related(rng, letters, rng.permutation(lengths)) + \
        [rng.integers(0, 2, int(n)).astype(np.uint8) for n in rng.integers(1, 60, 100)]
    codes, offsets = concatenate(queries + targets)
    pa = np.arange(len(queries))
    pb = pa + len(queries)
    mode = MODES[mode]
    score, qend, tend = cpu_align.ends(codes, offsets, scheme, mode)(pa, pb)
    qstart, tstart = cpu_align.starts(codes, offsets, scheme, mode)(pa, pb, score, qend, tend)
    tend = np.where(tstart == 0, 0, tend)  # as the engine gives them
    window = (pa, pb, qstart, qend, tstart, tend, scheme)
    want = cpu_align.trace_windows(codes, offsets, *window)
    got = gpu_align.trace_windows(codes, offsets, *window, **BY[by])
    names = ("run offsets", "ops", "lengths", "matches", "mismatches", "openings", "scores")
    for label, w, g in zip(names, want, got):
        assert np.array_equal(w, g), f"{label} differ at {np.flatnonzero(w != g)[:5]}"
    assert want[1].size > 300 and np.array_equal(want[6][score > 0], score[score > 0])


@pytest.mark.parametrize("name", ["blastn", "blosum62"])
def test_long_windows_by_block_are_the_cpus(name):
    """trace_long's warps and rounds: windows of 1 to 9,000 query columns in one launch
    (18 tiles of 512: 16 warps, two rounds, narrow windows leaving warps idle), global
    windows of related and of unrelated sequences."""
    scheme = SCHEMES[name]
    rng = np.random.default_rng(len(name))
    letters = 4 if scheme.alphabet.startswith("ACGT") else 20
    lengths = np.array([1, 2, 511, 512, 513, 1500, 9000, 300])
    queries = related(rng, letters, lengths)
    targets = related(rng, letters, lengths[::-1]) + [queries[6][100:8500].copy()]
    queries.append(queries[6])
    codes, offsets = concatenate(queries + targets)
    pa = np.arange(len(queries))
    pb = pa + len(queries)
    one = np.ones(len(pa), np.int64)
    window = (pa, pb, one, np.diff(offsets)[pa], one, np.diff(offsets)[pb], scheme)
    want = cpu_align.trace_windows(codes, offsets, *window)
    got = gpu_align.trace_windows(codes, offsets, *window)
    names = ("run offsets", "ops", "lengths", "matches", "mismatches", "openings", "scores")
    for label, w, g in zip(names, want, got):
        assert np.array_equal(w, g), f"{label} differ at {np.flatnonzero(w != g)[:5]}"
    assert want[3][-1] > 8000  # the last window aligns its shared stretch
