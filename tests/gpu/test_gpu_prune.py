"""Exact pruning on the GPU against the CPU: the banded kernel's certificate, bounds and
counts to the bit, the q-gram counts, the pruner's pairs and values, and the distance
stage's edge list against the CPU's without pruning.

Marked `gpu`; skipped where CuPy sees no CUDA device.
"""
import math

import numpy as np
import pytest

from seqpairs import backends, scoring
from seqpairs.backends import gpu
from seqpairs.pairs import prune
from test_prune import ODD, TIES, adversarial, all_pairs, community, kept_by_full, same
from test_prune import sequence_set as cpu_set

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.available(), reason="no CUDA GPU visible to CuPy"),
]
CPU = backends.select("cpu")
SEQDIST = scoring.get("seqdist")


def sets():
    rng = np.random.default_rng(11)
    long_root = "".join(rng.choice(list("ACGT"), 700))
    yield cpu_set(adversarial(1))
    yield cpu_set(adversarial(2) + [long_root, long_root[:400], "C" * 3 + long_root[100:]])
    yield cpu_set(community(3, 6, 4, 400, 0.1))


@pytest.mark.parametrize("scheme", [SEQDIST, TIES, ODD], ids=["seqdist", "ties", "odd"])
def test_band_kernel_is_the_cpu_kernel(scheme):
    from seqpairs.backends.gpu.band import BANDS

    gpu_backend = backends.select("gpu")
    for seqs in sets():
        pa, pb = all_pairs(seqs.n)
        cpu_band = CPU.seqdist_band(seqs.codes, seqs.offsets, scheme)
        gpu_band = gpu_backend.seqdist_band(seqs.codes, seqs.offsets, scheme)
        for width, lower in BANDS:
            want = cpu_band(pa, pb, width, lower)
            got = gpu_band(pa, pb, width, lower)
            exact = want[0]
            assert np.array_equal(got[0], exact), (width, lower)
            assert same(got[1], want[1]) and same(got[6], want[6]), (width, lower)
            for g, w in zip(got[2:6], want[2:6]):
                assert np.array_equal(g[exact], w[exact]), (width, lower)


@pytest.mark.parametrize("scheme", [SEQDIST, TIES, ODD], ids=["seqdist", "ties", "odd"])
def test_upper_kernel_is_the_cpu_kernel(scheme):
    from seqpairs.backends.gpu.band import UPPER_WIDTHS

    gpu_backend = backends.select("gpu")
    for seqs in sets():
        pa, pb = all_pairs(seqs.n)
        for width in UPPER_WIDTHS:
            want = CPU.seqdist_upper(seqs.codes, seqs.offsets, scheme)(pa, pb, width)
            got = gpu_backend.seqdist_upper(seqs.codes, seqs.offsets, scheme)(pa, pb, width)
            assert same(got, want), width


@pytest.mark.parametrize("bits", [16, 12, 7])
def test_qgram_counts_are_the_cpu_counts(bits):
    gpu_backend = backends.select("gpu")
    for seqs in sets():
        pa, pb = all_pairs(seqs.n)
        want = CPU.qgram_shared(seqs.codes, seqs.offsets, 8, bits)(pa, pb)
        got = gpu_backend.qgram_shared(seqs.codes, seqs.offsets, 8, bits)(pa, pb)
        assert np.array_equal(got, want)


@pytest.mark.parametrize("bits", [16, 7])
def test_densest_windows_are_the_cpus(bits):
    """The windowed filter's densest runs bit for bit, runs of at least 1 position to more
    than a sequence has, at the density of identity 0.97 and at a binary fraction."""
    rng = np.random.default_rng(bits)
    gpu_backend = backends.select("gpu")
    for seqs in sets():
        pa, pb = all_pairs(seqs.n)
        least = rng.integers(1, int(seqs.lengths.max()) + 8, len(pa))
        for density in (0.75, prune.identity_window(np.ones(1), 0.0, 0.97, 4.0)[1]):
            want = CPU.qgram_shared(seqs.codes, seqs.offsets, 8, bits).densest(
                pa, pb, least, density)
            got = gpu_backend.qgram_shared(seqs.codes, seqs.offsets, 8, bits).densest(
                pa, pb, least, density)
            assert np.isneginf(want).any() and np.isfinite(want).any()
            assert same(got, want)


@pytest.mark.parametrize("bits", [16, 12, 7])
def test_qgram_counts_in_runs_of_one_sequence(bits):
    """Runs of pairs that hold one sequence, on either side, longer than a block (the
    counts' kernel keeps the bitsets of a block's one or two sequences in shared memory)
    and shorter (three in a block), between shuffled pairs (none shared): the counts and
    the densest runs."""
    rng = np.random.default_rng(bits)
    gpu_backend = backends.select("gpu")
    for seqs in sets():
        runs = [(np.full(size, c), rng.integers(0, seqs.n, size))
                for c in range(seqs.n) for size in (300, 50)]
        pa, pb = (np.concatenate(x) for x in zip(*runs))
        swap = rng.random(len(pa)) < 0.5
        pa, pb = np.where(swap, pb, pa), np.where(swap, pa, pb)
        shuffled = rng.permutation(len(pa))[: len(pa) // 4]
        pa, pb = np.concatenate([pa, pa[shuffled]]), np.concatenate([pb, pb[shuffled]])
        cpu_counts = CPU.qgram_shared(seqs.codes, seqs.offsets, 8, bits)
        gpu_counts = gpu_backend.qgram_shared(seqs.codes, seqs.offsets, 8, bits)
        assert np.array_equal(gpu_counts(pa, pb), cpu_counts(pa, pb))
        least = rng.integers(1, int(seqs.lengths.max()) + 8, len(pa))
        want = cpu_counts.densest(pa, pb, least, 0.75)
        assert np.isfinite(want).any()
        assert same(gpu_counts.densest(pa, pb, least, 0.75), want)


@pytest.mark.parametrize("max_distance,identity,iddef",
                         [(0.1, 0.97, 2), (0.1, None, 2), (-math.inf, 0.97, 2), (0.1, 0.97, 1)])
def test_gpu_pruner_keeps_every_kept_pair_exactly(max_distance, identity, iddef):
    import cupy

    gpu_backend = backends.select("gpu")
    for seqs in sets():
        pa, pb = all_pairs(seqs.n)
        keep, full = kept_by_full(seqs, SEQDIST, max_distance, identity, iddef, pa, pb)
        pruner = prune.Pruner(gpu_backend, seqs, SEQDIST, None, max_distance, identity, iddef)
        positions, *values = (cupy.asnumpy(a) for a in pruner(cupy.asarray(pa), cupy.asarray(pb)))
        assert np.all(np.isin(np.nonzero(keep)[0], positions))
        for got, want in zip(values, full):
            assert same(got, want[positions])


def test_gpu_edge_list_is_the_unpruned_cpu_one(tmp_path, cli):
    seqs = adversarial(4) + community(5, 8, 6, 300, 0.12)
    fasta = tmp_path / "u.fasta"
    fasta.write_text("".join(f">s{k};size={len(seqs) - k}\n{s}\n" for k, s in enumerate(seqs)))
    for backend, flag in (("gpu", []), ("cpu", ["--no-prune"])):
        code, _, err = cli("distance", "-i", fasta, "--backend", backend, "--max-distance", "0.1",
                           "--candidate-identity", "0.97", "--edges", tmp_path / f"{backend}.npz",
                           *flag)
        assert code == 0, err
    assert (tmp_path / "gpu.npz").read_bytes() == (tmp_path / "cpu.npz").read_bytes()
