"""A backend with a helper (--backend hybrid: the CPU cores beside a GPU) in the distance
stage: both take tiles from one WorkQueue, and the kept pairs and dense distances are
those of one backend alone. The GPU's part is in tests/gpu; here the CPU backend plays
both workers, and a slowed helper shows that a slow worker retires."""
from __future__ import annotations

import dataclasses
import math
import threading
import time

import numpy as np
import pytest

from seqpairs import backends, parallel, scoring
from seqpairs.backends import cpu
from seqpairs.errors import UserError
from seqpairs.formats.fasta import SequenceSet
from seqpairs.pairs import distance, tiling
from seqpairs.scoring.alphabet import encode_all

CPU = cpu.BACKEND


@pytest.fixture(autouse=True)
def helper_always_pays(monkeypatch):
    """The CPU plays both workers here: a helper as fast as its backend always joins, and
    lists have no least length, so that the backend leaves work for it in a small job."""
    monkeypatch.setattr(distance, "HELPER_LEAST_SHARE", 0.0)
    monkeypatch.setattr(parallel.WorkQueue, "LEAST_SECONDS", 0.0)


def family_set(n: int, length: int, seed: int) -> SequenceSet:
    """n variants (up to 8% substitutions, a few indels) of one random sequence."""
    rng = np.random.default_rng(seed)
    base = rng.choice(list("ACGT"), length)
    seqs = []
    for _ in range(n):
        s = base.copy()
        s[rng.integers(0, length, rng.integers(0, length * 8 // 100))] = rng.choice(list("ACGT"))
        s = np.delete(s, rng.integers(0, length, rng.integers(0, 4)))
        seqs.append("".join(s))
    ids = [f"s{k}" for k in range(n)]
    codes, offsets = encode_all(seqs, "ACGT", "family", ids)
    return SequenceSet(ids, seqs, np.ones(n), codes, offsets)


def kept_pairs(seqs, backend, scheme="seqdist", threads=2, **options):
    bins = tiling.make_bins(seqs.lengths, 5)
    tiles = tiling.make_tiles(seqs.lengths, bins, 500)
    batches = []
    _, dense = distance.compute(seqs, bins, tiles, backend=backend,
                                scheme=scoring.get(scheme), threads=threads,
                                kept=lambda *columns: batches.append(columns), **options)
    columns = [np.concatenate(column) for column in zip(*batches)]
    order = np.lexsort((columns[1], columns[0]))
    return [column[order] for column in columns], dense


def same(a, b) -> bool:
    return all(np.array_equal(x.view(np.int64) if x.dtype == np.float64 else x,
                              y.view(np.int64) if y.dtype == np.float64 else y)
               for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("scheme, options", [
    ("seqdist", dict(max_distance=0.06)),  # pruned
    ("seqdist", dict(max_distance=0.1, candidate_identity=0.95, prune=False, dense=True)),
    ("vsearch", dict(max_distance=0.05, dense=True)),
])
def test_helper_gives_the_pairs_of_one_backend(scheme, options):
    seqs = family_set(160, 120, seed=1)
    alone, dense_alone = kept_pairs(seqs, CPU, scheme, **options)
    counted = {"helper": 0}
    kernel_of = getattr(CPU, "affine_counts" if scheme == "vsearch" else "seqdist")

    def counting(*args):  # how many pairs the helper aligned in full
        kernel = kernel_of(*args)

        def align(pa, pb, *rest):
            counted["helper"] += len(pa)
            return kernel(pa, pb, *rest)
        return align

    name = "affine_counts" if scheme == "vsearch" else "seqdist"
    helper = dataclasses.replace(CPU, **{name: counting})
    both, dense_both = kept_pairs(seqs, dataclasses.replace(CPU, helper=helper), scheme,
                                  **options)
    assert len(alone[0]) > 20 and same(alone, both)
    if options.get("dense"):
        assert np.array_equal(dense_alone.view(np.int64), dense_both.view(np.int64))
    if scheme == "vsearch" or not options.get("prune", True):  # pruned: few full alignments
        assert counted["helper"] > 0  # the helper did take work


def slowed(factor: float, calls: list):
    """The CPU backend with its SeqDist kernel `factor` times slower; each call's pair
    count goes to `calls`."""
    def slow(*args):
        kernel = CPU.seqdist(*args)

        def align(pa, pb):
            started = time.perf_counter()
            out = kernel(pa, pb)
            time.sleep((factor - 1) * (time.perf_counter() - started))
            calls.append(len(pa))
            return out
        return align

    return dataclasses.replace(CPU, seqdist=slow)


def test_slow_helper_retires_and_loses_no_tile():
    """A helper 1,000 times slower than the backend gets its probe (the cheapest tile
    after the backend's own probe) and then nothing: it never holds the end up, and its
    tile is not lost."""
    seqs = family_set(200, 150, seed=2)
    alone, _ = kept_pairs(seqs, CPU, max_distance=0.1, prune=False)
    calls = []
    helper = slowed(1000, calls)
    both, _ = kept_pairs(seqs, dataclasses.replace(CPU, helper=helper), max_distance=0.1,
                         prune=False)
    assert same(alone, both)
    tiles = tiling.make_tiles(seqs.lengths, tiling.make_bins(seqs.lengths, 5), 500)
    by_cost = np.lexsort((np.arange(len(tiles)), -tiles["cells"]))
    assert len(tiles) > 20 and sum(calls) == tiles["pairs"][by_cost[-2]]


def test_failing_helper_fails_the_stage():
    def failing(*args):
        def align(pa, pb):
            raise UserError("the helper's disk is full")
        return align

    helper = dataclasses.replace(CPU, seqdist=failing)
    with pytest.raises(UserError, match="helper's disk"):
        kept_pairs(family_set(200, 150, seed=3), dataclasses.replace(CPU, helper=helper),
                   max_distance=0.1, prune=False)
    assert not [t for t in threading.enumerate() if t.name == "seqpairs-helper"]


def test_no_spare_core_means_no_helper():
    backend = dataclasses.replace(CPU, helper=CPU)
    assert distance.helper_of(backend, 1) == (None, None)
    assert distance.helper_of(backend, 4) == (CPU, 3)
    assert distance.helper_of(CPU, 4) == (None, None)


def test_helper_needs_a_kept_function():
    seqs = family_set(20, 50, seed=4)
    bins = tiling.make_bins(seqs.lengths, 5)
    with pytest.raises(ValueError, match="helper"):
        distance.compute(seqs, bins, tiling.make_tiles(seqs.lengths, bins, 50),
                         backend=dataclasses.replace(CPU, helper=CPU), threads=2,
                         scheme=scoring.get("seqdist"), max_distance=math.inf)


def test_hybrid_without_a_gpu_is_one_line(cli, tmp_path):
    from seqpairs.backends import gpu

    if gpu.available():
        pytest.skip("a GPU is visible: tests/gpu runs --backend hybrid")
    fasta = tmp_path / "in.fasta"
    fasta.write_text(">a\nACGTACGT\n>b\nACGTACGA\n")
    code, _, err = cli("-q", "distance", "-i", fasta, "--backend", "hybrid", "--edges",
                       tmp_path / "e.npz")
    assert (code, err) == (2, "seqpairs: error: --backend hybrid: no CUDA GPU visible to "
                              "CuPy (is cupy installed?)\n")
    with pytest.raises(UserError, match="one of auto, cpu, gpu, hybrid"):
        backends.select("tpu")


@pytest.mark.parametrize("guess, probes", [(1e3, 0), (1e12, 1)])
def test_helper_too_slow_to_pay_stays_out_or_leaves(monkeypatch, caplog, guess, probes):
    """Under HELPER_LEAST_SHARE of the backend's speed a helper costs the backend more
    than it adds: guessed so, it stays out; measured so after its probe, it leaves."""
    import logging

    monkeypatch.setattr(distance, "HELPER_LEAST_SHARE", 0.5)
    monkeypatch.setattr(distance, "HELPER_CELLS_PER_SECOND", guess)
    seqs = family_set(200, 150, seed=2)
    alone, _ = kept_pairs(seqs, CPU, max_distance=0.1, prune=False)
    calls = []
    helper = slowed(100, calls)  # under a hundredth of the backend's speed
    with caplog.at_level(logging.INFO, logger="seqpairs"):
        both, _ = kept_pairs(seqs, dataclasses.replace(CPU, helper=helper), max_distance=0.1,
                             prune=False)
    assert same(alone, both)
    assert len(calls) == probes  # measured: no list after the probe
    # (it leaves, or retires as the WorkQueue's slow worker, or finds nothing left)
    assert ("stays out" in caplog.text) == (probes == 0)


def test_several_work_lists_set_each_worker_up_once(monkeypatch, caplog):
    """Under MPI a rank's tiles come as several pulled lists: each worker's pass is made
    once, later lists start from the rates learnt (no probes again), and a helper out in
    one list is out for the rest."""
    import logging

    seqs = family_set(200, 150, seed=5)
    bins = tiling.make_bins(seqs.lengths, 5)
    tiles = tiling.make_tiles(seqs.lengths, bins, 500)
    lists = np.array_split(np.arange(len(tiles)), 4)
    alone, _ = kept_pairs(seqs, CPU, max_distance=0.1, prune=False)
    for guess, stays_out in ((1e12, 0), (1e3, 1)):
        monkeypatch.setattr(distance, "HELPER_LEAST_SHARE", 0.5 if stays_out else 0.0)
        monkeypatch.setattr(distance, "HELPER_CELLS_PER_SECOND", guess)
        made = {"backend": 0, "helper": 0}

        def counted(name):
            def factory(*args):
                made[name] += 1
                return CPU.seqdist(*args)
            return factory

        backend = dataclasses.replace(CPU, seqdist=counted("backend"),
                                      helper=dataclasses.replace(CPU, seqdist=counted("helper")))
        batches = []
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="seqpairs"):
            distance.compute(seqs, bins, tiles, backend=backend, scheme=scoring.get("seqdist"),
                             threads=2, max_distance=0.1, prune=False, work=lists,
                             kept=lambda *columns: batches.append(columns))
        columns = [np.concatenate(column) for column in zip(*batches)]
        order = np.lexsort((columns[1], columns[0]))
        assert same(alone, [column[order] for column in columns])
        assert made["backend"] == 1 and made["helper"] == 1 - stays_out
        assert caplog.text.count("stays out") == stays_out
        assert caplog.text.count("work lists of the cpu helper") == 4 - 3 * stays_out
