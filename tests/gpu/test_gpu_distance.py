"""GPU SeqDist kernel against the CPU backend: FP64 equal to the last bit, counts equal.

Marked `gpu`; skipped where CuPy sees no CUDA device.
"""
import gzip

import numpy as np
import pytest
from Bio.SeqIO.FastaIO import SimpleFastaParser
from Bio.SeqIO.QualityIO import FastqGeneralIterator

import reference
from seqpairs import backends, parallel, scoring
from seqpairs.backends import gpu
from seqpairs.backends.gpu import launch
from seqpairs.backends.gpu import seqdist as gpu_seqdist
from seqpairs.scoring.alphabet import encode_all as encode

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.available(), reason="no CUDA GPU visible to CuPy"),
]
CPU = backends.select("cpu")
SEQDIST = scoring.get("seqdist")


def cpu_align(codes, offsets, pa, pb):
    """The CPU backend's SeqDist kernel: cost, length, matches, aligned, leading."""
    return CPU.seqdist(codes, offsets, SEQDIST)(pa, pb)


def compare(seqs, pa, pb, max_batch=None):
    codes, offsets = encode(seqs)
    want = cpu_align(codes, offsets, pa, pb)
    got = gpu_seqdist.aligner(codes, offsets, SEQDIST, max_batch=max_batch)(pa, pb)
    assert np.array_equal(got[0].view(np.int64), want[0].view(np.int64)), "cost bits differ"
    for name, g, w in zip(("length", "matches", "aligned", "leading"), got[1:], want[1:]):
        assert np.array_equal(g, w), f"{name} differs"


def compare_screen(seqs, pa, pb, max_batch=None, traced=200):
    """The screen's cost and length equal the CPU's to the bit, its matches too; its aligned
    pairs equal the reference traceback's on `traced` pairs of at most 300 x 300 bp and lie
    between matches and the CPU's aligned columns on all."""
    codes, offsets = encode(seqs)
    cost, length, matches, aligned, _ = cpu_align(codes, offsets, pa, pb)
    got = gpu_seqdist.screener(codes, offsets, SEQDIST, max_batch=max_batch)(pa, pb)
    assert np.array_equal(got[0].view(np.int64), cost.view(np.int64)), "cost bits differ"
    assert np.array_equal(got[1], length) and np.array_equal(got[2], matches)
    pairs = got[3]
    assert np.all((matches <= pairs) & (pairs <= aligned))
    small = np.flatnonzero(np.diff(offsets)[pa] * np.diff(offsets)[pb] <= 300 * 300)
    for k in small[:traced]:
        cols = reference.seqdist(seqs[pa[k]], seqs[pb[k]])[3]
        assert pairs[k] == sum(x != "-" != y for x, y in cols), k


def compare_dense(seqs, pa, pb, max_batch=None):
    """The dense kernel (the screen without matches): cost and length, the CPU's bits."""
    codes, offsets = encode(seqs)
    cost, length, *_ = cpu_align(codes, offsets, pa, pb)
    got = gpu_seqdist.dense_aligner(codes, offsets, SEQDIST, max_batch=max_batch)(pa, pb)
    assert len(got) == 2
    assert np.array_equal(got[0].view(np.int64), cost.view(np.int64)), "cost bits differ"
    assert np.array_equal(got[1], length), "length differs"


def random_pairs(rng, n_seqs, n_pairs):
    pa = rng.integers(0, n_seqs, n_pairs)
    pb = rng.integers(0, n_seqs, n_pairs)
    return pa, pb


def test_mixed_lengths_1_to_3000():
    rng = np.random.default_rng(11)
    lengths = np.concatenate([np.arange(1, 40), rng.integers(40, 3001, 120)])
    base = "".join(rng.choice(list("ACGT"), 3000))
    seqs = []
    for n in lengths:  # half related to one another, half random
        s = base[:n] if rng.random() < 0.5 else "".join(rng.choice(list("ACGT"), n))
        seqs.append(s)
    pa, pb = random_pairs(rng, len(seqs), 4000)
    compare(seqs, pa, pb)
    compare_screen(seqs, pa, pb)
    compare_dense(seqs, pa, pb)


def test_several_launches_and_homopolymers():
    rng = np.random.default_rng(12)
    seqs = ["".join(rng.choice(list("AT"), int(n))) for n in rng.integers(1, 300, 200)]
    pa, pb = random_pairs(rng, len(seqs), 3000)
    compare(seqs, pa, pb, max_batch=256)  # forces 12 launches
    compare_screen(seqs, pa, pb, max_batch=256)
    compare_dense(seqs, pa, pb, max_batch=256)


@pytest.fixture
def pool_limit():
    """Set a cap on CuPy's memory pool for one test (restored after)."""
    import cupy

    pool = cupy.get_default_memory_pool()
    before = pool.get_limit()
    # The cap only stops new device allocations: drop the blocks cached by earlier tests.
    pool.free_all_blocks()
    yield lambda size: pool.set_limit(size=size)
    pool.free_all_blocks()
    pool.set_limit(size=before)


def test_out_of_memory_shrinks_the_batch(pool_limit, monkeypatch):
    import cupy

    rng = np.random.default_rng(14)
    seqs = ["".join(rng.choice(list("ACGT"), int(n))) for n in rng.integers(1000, 1500, 100)]
    pa, pb = random_pairs(rng, len(seqs), 6000)
    # The batch is sized from the device's free memory (tens of GiB); the pool allows 48 MiB,
    # about 1,800 pairs of 1,500 bp, so one launch of all 6,000 pairs runs out of memory.
    pool_limit(48 << 20)
    with pytest.raises(cupy.cuda.memory.OutOfMemoryError):
        cupy.empty(1500 * 6000, dtype=cupy.float64)  # that launch's cost column alone
    warnings = []
    monkeypatch.setattr(launch.log, "warning", lambda msg, *args: warnings.append(msg % args))
    compare(seqs, pa, pb)
    assert warnings and all(w.startswith("GPU out of memory at") for w in warnings)


def test_out_of_memory_for_one_block_is_a_clear_error(pool_limit):
    from seqpairs.errors import UserError

    seqs = ["ACGT" * 750] * 4
    pool_limit(1 << 20)  # one block of 128 pairs of 3,000 bp needs ~6.5 MB
    with pytest.raises(UserError, match="GPU out of memory even for 128 pairs of up to 3000 bp"):
        gpu_seqdist.aligner(*encode(seqs), SEQDIST)(np.zeros(128, dtype=np.int64),
                                                    np.ones(128, dtype=np.int64))


def read_acgt(path, limit):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        first = fh.read(1)
        fh.seek(0)
        records = SimpleFastaParser(fh) if first == ">" else (
            (t, s) for t, s, _ in FastqGeneralIterator(fh))
        seqs = [s.upper() for _, s in records]
    return [s for s in seqs if set(s) <= set("ACGT")][:limit]


@pytest.mark.parametrize("name", ["C005_454.fa.gz", "sam1F.fastq.gz", "samPB.fastq.gz",
                                  "ten_16s.100.fa.gz"])
def test_real_datasets(shared_data, name):
    seqs = read_acgt(shared_data / name, 400)
    rng = np.random.default_rng(13)
    pa, pb = random_pairs(rng, len(seqs), 1500)
    compare(seqs, pa, pb)
    compare_screen(seqs, pa, pb, traced=20)


def c005_tiles(shared_data):
    """300 reads of C005 as a SequenceSet, its bins and tiles."""
    from seqpairs.formats.fasta import SequenceSet
    from seqpairs.pairs import tiling as binning

    seqs = read_acgt(shared_data / "C005_454.fa.gz", 300)
    codes, offsets = encode(seqs)
    seqset = SequenceSet([str(k) for k in range(len(seqs))], seqs, np.ones(len(seqs)), codes, offsets)
    bins = binning.make_bins(seqset.lengths, 10)
    return seqset, bins, binning.make_tiles(seqset.lengths, bins, 5000)


def test_dense_only_gpu_equals_cpu(shared_data):
    """A dense output alone takes every distance from the screen kernel: the same bits as
    the CPU's full kernel."""
    from seqpairs.pairs import distance

    seqset, bins, tiles = c005_tiles(shared_data)
    edges, gd = distance.compute(seqset, bins, tiles, backend=backends.select("gpu"),
                                 scheme=SEQDIST, dense=True, edges=False)
    _, cd = distance.compute(seqset, bins, tiles, backend=CPU, scheme=SEQDIST, dense=True)
    assert edges is None and not np.isnan(cd).any()
    assert np.array_equal(gd.view(np.int64), cd.view(np.int64))


@pytest.mark.parametrize("options", [
    dict(max_distance=0.5, dense=True),  # screened
    dict(dense=True),  # every pair kept: one pass
    *(dict(max_distance=0.2, candidate_identity=0.95, iddef=iddef) for iddef in range(5)),
])
def test_distance_stage_gpu_equals_cpu(shared_data, options):
    from seqpairs.pairs import distance

    seqset, bins, tiles = c005_tiles(shared_data)
    g, gd = distance.compute(seqset, bins, tiles, backend=backends.select("gpu"),
                             scheme=SEQDIST, **options)
    c, cd = distance.compute(seqset, bins, tiles, backend=CPU, scheme=SEQDIST, **options)
    if options.get("dense"):
        assert np.array_equal(gd.view(np.int64), cd.view(np.int64))
    assert np.array_equal(g.i, c.i) and np.array_equal(g.j, c.j)
    assert np.array_equal(g.cost.view(np.int64), c.cost.view(np.int64))


@pytest.mark.parametrize("scheme, options", [
    ("seqdist", dict(max_distance=0.2, candidate_identity=0.95, dense=True)),
    ("seqdist", dict(max_distance=0.05)),  # pruned
    ("vsearch", dict(max_distance=0.05)),
])
def test_hybrid_gives_the_pairs_of_the_gpu(shared_data, scheme, options, caplog,
                                           monkeypatch):
    """--backend hybrid: the GPU and the CPU cores beside it take tiles from one queue;
    the kept pairs and dense distances are the GPU's alone, bit for bit (the cores join
    here however slow they are beside the GPU)."""
    import logging
    import re

    from seqpairs.pairs import distance

    monkeypatch.setattr(distance, "HELPER_LEAST_SHARE", 0.0)
    monkeypatch.setattr(distance, "HELPER_CELLS_PER_SECOND", 1e15)  # it takes its probe
    monkeypatch.setattr(parallel.WorkQueue, "LEAST_SECONDS", 0.0)

    seqset, bins, tiles = c005_tiles(shared_data)
    results = {}
    for name in ("gpu", "hybrid"):
        batches = []
        with caplog.at_level(logging.INFO, logger="seqpairs"):
            _, dense = distance.compute(
                seqset, bins, tiles, backend=backends.select(name), scheme=scoring.get(scheme),
                threads=4, kept=lambda *columns: batches.append(columns), **options)
        columns = [np.concatenate(column) for column in zip(*batches)]
        order = np.lexsort((columns[1], columns[0]))
        results[name] = [c[order] for c in columns], dense
    (g, gd), (h, hd) = results["gpu"], results["hybrid"]
    assert len(g[0]) > 100
    for a, b in zip(g, h, strict=True):
        assert np.array_equal(a.view(np.int64) if a.dtype == np.float64 else a,
                              b.view(np.int64) if b.dtype == np.float64 else b)
    if options.get("dense"):
        assert np.array_equal(gd.view(np.int64), hd.view(np.int64))
    lists = dict(re.findall(r"work lists of the (\w+ \w+): (\d+)", caplog.text))
    assert int(lists["gpu backend"]) > 0, caplog.text
    assert int(lists["cpu helper"]) > 0, caplog.text


def test_hybrid_edge_list_is_the_gpus_bytes(shared_data, tmp_path):
    from seqpairs.cli import main

    seqs = read_acgt(shared_data / "C005_454.fa.gz", 400)
    fasta = tmp_path / "reads.fasta"
    fasta.write_text("".join(f">r{k}\n{s}\n" for k, s in enumerate(seqs)))
    for name in ("gpu", "hybrid"):
        assert main(["-q", "binning", "-i", str(fasta), "--bins", str(tmp_path / "b.tsv"),
                     "--tiles", str(tmp_path / "t.tsv"), "--tile-pairs", "2000"]) == 0
        assert main(["-q", "distance", "-i", str(fasta), "--bins", str(tmp_path / "b.tsv"),
                     "--tiles", str(tmp_path / "t.tsv"), "--backend", name, "--max-distance",
                     "0.1", "--candidate-identity", "0.97", "--edges",
                     str(tmp_path / f"{name}.npz")]) == 0
    assert (tmp_path / "gpu.npz").read_bytes() == (tmp_path / "hybrid.npz").read_bytes()
