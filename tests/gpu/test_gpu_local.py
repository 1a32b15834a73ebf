"""GPU PSSE engine (gpu_kernels/local.cu) against the Numba engine: every score equal.

Marked `gpu`; skipped where CuPy sees no CUDA device.
"""
import numpy as np
import pytest

from seqpairs.backends import gpu
from seqpairs.backends.cpu import local as cpu_local
from seqpairs.backends.gpu import kernels
from seqpairs.backends.gpu import local as gpu_local
from seqpairs.errors import UserError
from seqpairs.scoring import LocalScheme

from .test_gpu_distance import read_acgt

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.available(), reason="no CUDA GPU visible to CuPy"),
]

SCHEMES = {
    "dna": LocalScheme.dna(2, -3, 5, 2),  # word profile, 16-bit lanes
    "blosum62": LocalScheme.from_matrix("BLOSUM62", 11, 1),  # int8 profile, 16-bit lanes
}


def sequences(rng, scheme, lengths):
    """Half of them prefixes of one root, with 10% substitutions (related pairs score high
    and take gapless and gapped paths), half random; standard letters only."""
    k = min(len(scheme.alphabet), 20)
    root = rng.integers(0, k, max(lengths))
    out = []
    for n in lengths:
        s = root[:n].copy() if rng.random() < 0.5 else rng.integers(0, k, n)
        hit = rng.random(n) < 0.1
        s[hit] = rng.integers(0, k, hit.sum())
        out.append(s.astype(np.uint8))
    return out


def pairs_of(rng, scheme, lengths):
    """(queries, targets) of these lengths, the targets' lengths in reverse order."""
    seqs = sequences(rng, scheme, np.concatenate([lengths, lengths[::-1]]))
    return seqs[:len(lengths)], seqs[len(lengths):]


def compare(scheme, queries, targets, shuffles, seed=7, keys=None, pairs=None, **options):
    """Both engines on pairs (query k, target k) with target keys 3k + 5 by default, or on
    `pairs` of the two lists; options (profiles too) go to both or the GPU's tuning."""
    if pairs is None:
        pairs = np.column_stack([np.arange(len(queries))] * 2)
    keys = np.arange(len(targets)) * 3 + 5 if keys is None else keys
    profiles = options.pop("profiles", None)
    want = cpu_local.local_scores(scheme, queries, targets, pairs, keys, shuffles, seed,
                                  profiles=profiles)
    got = gpu_local.local_scores(scheme, queries, targets, pairs, keys, shuffles, seed,
                                 profiles=profiles, **options)
    assert got[0].dtype == got[1].dtype == np.int32 and got[1].shape == want[1].shape
    assert np.array_equal(got[0], want[0]), "real scores differ"
    assert np.array_equal(got[1], want[1]), "shuffled scores differ"
    return got


@pytest.mark.parametrize("name", list(SCHEMES))
def test_mixed_lengths_1_to_3000(name):
    scheme = SCHEMES[name]
    rng = np.random.default_rng(31)
    lengths = np.concatenate([np.arange(1, 13), rng.integers(13, 3001, 36)])
    real, shuffled = compare(scheme, *pairs_of(rng, scheme, lengths), shuffles=9)
    # the test sees real work: related pairs, and shuffles that score differently
    assert real.max() > 1000 and (shuffled.min(axis=1) < shuffled.max(axis=1)).sum() > 20


@pytest.mark.parametrize("name", list(SCHEMES))
@pytest.mark.parametrize("shuffles", [0, 1, 300])
def test_shuffle_counts_and_several_blocks_per_pair(name, shuffles):
    # 300 shuffles: 301 slots, two blocks of 128 threads per pair, the last lane idle
    scheme = SCHEMES[name]
    rng = np.random.default_rng(32)
    lengths = rng.integers(1, 300, 8)
    compare(scheme, *pairs_of(rng, scheme, lengths), shuffles, seed=2**64 - 1,
            keys=np.array([0, 1, 2**40, 7, 2**63 - 1, 9, 11, 13]))


def test_scores_at_and_past_the_16_bit_limit():
    # 16-bit lanes hold scores up to 65535 - max(open + 2 extend, 128): identical sequences
    # of 3000 score 63,000 in them (match 21); 66,000 (match 22) needs the 32-bit kernel,
    # as do HOXD70 pairs of 700 (largest score 100) and PAM250 pairs of 4000 (17); the
    # short pairs of each call run in 16-bit lanes, so one call runs both kernels
    rng = np.random.default_rng(33)
    seq = rng.integers(0, 4, 3000).astype(np.uint8)
    for match, want in ((21, 63_000), (22, 66_000)):
        scheme = LocalScheme.dna(match, -9, 5, 2)
        assert list(gpu_local.fits_16_bits(scheme, np.array([3000, 40]), 3000)) == [
            match == 21, True]
        real, _ = compare(scheme, [seq, seq[:40]], [seq, seq[:50]], 3)
        assert real[0] == want
    for name, alphabet, lengths in (("HOXD70", "dna", [700, 1000, 40, 699]),
                                    ("PAM250", "protein", [4000, 30, 4100])):
        scheme = LocalScheme.from_matrix(name, 10, 1, alphabet=alphabet)
        lengths = np.array(lengths)
        fits = gpu_local.fits_16_bits(scheme, lengths, lengths)
        assert not fits.all() and fits.any()
        compare(scheme, *pairs_of(rng, scheme, lengths), 5)


@pytest.mark.parametrize("options", [dict(max_batch_bytes=1), dict(max_batch_bytes=2_000_000),
                                     dict(strip=16, block=64), dict(strip=48, max_registers=None)])
def test_batches_strips_and_blocks(options):
    scheme = SCHEMES["blosum62"]
    rng = np.random.default_rng(34)
    lengths = rng.integers(1, 700, 24)
    compare(scheme, *pairs_of(rng, scheme, lengths), 20, **options)


@pytest.mark.parametrize("scheme, word_profile", [
    (LocalScheme.dna(2, -3, 5, 2), False),
    (LocalScheme.from_matrix("NUC.4.4", 10, 1, alphabet="dna"), None),  # 15 letters: int8 profile
    (LocalScheme.dna(1, -1, 0, 1), None),  # linear gaps
    (LocalScheme("ACGT", ((3, -2, -5, -1), (-4, 2, -1, -6), (-6, 0, 1, -3), (-2, -5, -4, 4)),
                 2, 1), None),  # asymmetric: query and target must not swap
])
def test_profiles_and_schemes(scheme, word_profile):
    rng = np.random.default_rng(35)
    lengths = rng.integers(1, 500, 16)
    queries, targets = pairs_of(rng, scheme, lengths)
    queries[0] = rng.integers(0, len(scheme.alphabet), 300).astype(np.uint8)  # every letter
    compare(scheme, queries, targets, 16, word_profile=word_profile)


def test_real_reads(shared_data):
    scheme = LocalScheme.dna(1, -2, 3, 1)
    seqs = [scheme.encode(s, "read") for s in read_acgt(shared_data / "C005_454.fa.gz", 64)]
    compare(scheme, seqs[:32], seqs[32:], 50)


def test_unwritten_scores_are_caught(monkeypatch):
    # every variant's compiled kernel does nothing
    monkeypatch.setattr(kernels.Variant, "function_handle", lambda self: lambda *a, **k: None)
    seq = np.array([0, 1, 2], np.uint8)
    with pytest.raises(RuntimeError, match="left 6 of 6 scores unwritten"):
        gpu_local.local_scores(SCHEMES["dna"], [seq, seq], [seq, seq], [[0, 0], [1, 1]], [0, 1],
                               2, 1)


def test_scores_outside_int8_are_refused():
    seq = np.array([0, 1, 2], np.uint8)
    with pytest.raises(UserError, match="between -128 and 127"):
        gpu_local.local_scores(LocalScheme.dna(200, -3, 5, 2), [seq], [seq], [[0, 0]], [0], 2, 1)
    with pytest.raises(UserError, match="between -128 and 127"):
        gpu_local.local_scores(SCHEMES["dna"], [seq], [seq], [[0, 0]], [0], 2, 1,
                               profiles=[np.full((3, 4), -129)])


@pytest.mark.parametrize("group_pairs", [1, 3, 16])
@pytest.mark.parametrize("name", list(SCHEMES))
def test_queries_sharing_targets(name, group_pairs):
    # 40 queries against 5 targets, every pair but some: groups of a target's queries,
    # split at group_pairs, 300 shuffles (two blocks a group)
    scheme = SCHEMES[name]
    rng = np.random.default_rng(36)
    seqs = sequences(rng, scheme, rng.integers(1, 600, 45))
    pairs = np.array([(q, t) for q in range(40) for t in range(5) if (q * 7 + t) % 5])
    rng.shuffle(pairs)
    compare(scheme, seqs[:40], seqs[40:], 300, pairs=pairs, group_pairs=group_pairs,
            keys=np.array([2**63 - 1, 0, 17, 5, 2**40]))


@pytest.mark.parametrize("scheme, lengths", [
    (SCHEMES["dna"], [1, 5, 300, 999]),  # word profile
    (SCHEMES["blosum62"], [1, 5, 300, 999]),  # int8 profile
    (LocalScheme.from_matrix("HOXD70", 10, 1, alphabet="dna"), [700, 40, 1000]),  # 32 bits too
])
def test_position_specific_profiles(scheme, lengths):
    rng = np.random.default_rng(37)
    queries, targets = pairs_of(rng, scheme, np.array(lengths))
    k = len(scheme.alphabet)
    top = max(map(max, scheme.subst))
    profiles = [np.clip(scheme.matrix()[q] + rng.integers(-4, 5, (len(q), k)), -128, top)
                for q in queries]
    pairs = np.array([(q, t) for q in range(len(queries)) for t in range(len(targets))])
    compare(scheme, queries, targets, 40, pairs=pairs, profiles=profiles)


def test_a_few_pairs_of_many_sequences():
    # a work list's pairs name few of the input's sequences, repeated and out of order
    scheme = SCHEMES["dna"]
    rng = np.random.default_rng(38)
    seqs = sequences(rng, scheme, rng.integers(1, 400, 300))
    queries, targets = seqs[:150], seqs[150:]
    profiles = [np.clip(scheme.matrix()[q] + rng.integers(-4, 5, (len(q), 4)), -128, 2)
                for q in queries]
    pairs = np.array([(149, 3), (7, 140), (149, 140), (60, 3), (7, 3), (0, 149)])
    compare(scheme, queries, targets, 70, pairs=pairs, keys=np.arange(150) * 11 + 2)
    compare(scheme, queries, targets, 70, pairs=pairs, profiles=profiles)
