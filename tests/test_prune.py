"""Exact pruning (pairs/prune.py, docs/pruning.md) against the full computation: the banded
kernel's certificate and bounds, the q-gram counts, the bounds' lemmas, and the kept pairs
with their values, on adversarial pairs (homopolymers, length differences, free trailing
gaps, ties) and on the real datasets; the CLI's outputs with and without --no-prune."""
import dataclasses
import gzip
import math

import numpy as np
import pytest
from Bio import SeqIO

from seqpairs import backends, scoring
from seqpairs.backends.cpu import band as band_kernels
from seqpairs.formats.fasta import SequenceSet
from seqpairs.pairs import prune
from seqpairs.pairs.identity import upper_bound
from seqpairs.scoring.alphabet import encode_all as encode
from seqpairs.scoring.seqdist import LOWER_UNITS, SeqDistScheme

CPU = backends.select("cpu")
WORTH_PRUNING = prune.worth_pruning  # the gate itself (conftest.py's fixture replaces it)
SEQDIST = scoring.get("seqdist")
# Every cost 4: ties everywhere, so the tie rule decides most cells.
TIES = SeqDistScheme("ACGT", tuple(tuple(0.0 if a == b else 4.0 for b in range(4))
                                   for a in range(4)), gap=4.0, homopolymer_gap=4.0)
# Gap costs that are not binary fractions, cheaper than mismatches.
ODD = SeqDistScheme("ACGT", tuple(tuple(0.0 if a == b else 9.3 for b in range(4))
                                  for a in range(4)), gap=3.1, homopolymer_gap=0.7)


def mutate(rng, seq, rate, indel_rate=None):
    """seq with substitutions at `rate`, single insertions and deletions each at
    `indel_rate` (default: `rate`)."""
    indel_rate = rate if indel_rate is None else indel_rate
    out = []
    for c in seq:
        r = rng.random()
        if r < rate:
            out.append("ACGT"[rng.integers(4)])
        elif r < rate + indel_rate:
            continue
        elif r < rate + 2 * indel_rate:
            out.extend((c, "ACGT"[rng.integers(4)]))
        else:
            out.append(c)
    return "".join(out) or "A"


def substituted(rng, seq, count):
    """seq with `count` letters, at distinct positions, each changed to another letter."""
    read = list(seq)
    for k in rng.choice(len(seq), count, replace=False):
        read[k] = "ACGT"[("ACGT".index(read[k]) + 1 + rng.integers(3)) % 4]
    return "".join(read)


def homopolymers(rng, runs):
    return "".join("ACGT"[rng.integers(4)] * int(rng.integers(1, 9)) for _ in range(runs))


def adversarial(seed=0):
    """Sequences whose pairs are hard for banding and counting: close and far relatives,
    homopolymer runs, prefixes and extensions (free trailing gaps), large length
    differences, tiny and unrelated sequences."""
    rng = np.random.default_rng(seed)
    root = "".join(rng.choice(list("ACGT"), 120))
    hom = homopolymers(rng, 30)
    seqs = [root, root[:60], root[30:], root + "".join(rng.choice(list("ACGT"), 80)),
            "T" * 40 + root, root[::-1], hom, hom[:-5], "A" * 50, "A" * 53 + "C",
            "ACGT" * 20, "G" + "A" * 30, "G" + "C" * 30, "C", "GA", "ACGTACGT"]
    for rate in (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.4):
        seqs += [mutate(rng, root, rate), mutate(rng, hom, rate)]
    seqs += ["".join(rng.choice(list("ACGT"), n)) for n in (10, 80, 150)]
    return seqs


def sequence_set(seqs):
    codes, offsets = encode(seqs)
    return SequenceSet([f"s{k}" for k in range(len(seqs))], list(seqs),
                       np.ones(len(seqs), np.int64), codes, offsets)


def all_pairs(n):
    pa, pb = np.tril_indices(n, -1)
    return pa.astype(np.int64), pb.astype(np.int64)


def same(a, b):
    return np.array_equal(np.asarray(a).view(np.int64) if np.asarray(a).dtype == np.float64
                          else a, np.asarray(b).view(np.int64) if np.asarray(b).dtype ==
                          np.float64 else b)


@pytest.mark.parametrize("scheme", [SEQDIST, TIES, ODD], ids=["seqdist", "ties", "odd"])
def test_band_certificate_is_the_full_kernel(scheme):
    seqs = sequence_set(adversarial(1))
    pa, pb = all_pairs(seqs.n)
    full = CPU.seqdist(seqs.codes, seqs.offsets, scheme)(pa, pb)
    band = CPU.seqdist_band(seqs.codes, seqs.offsets, scheme)
    certified = 0
    for width, lower in ((0, 0), (1, 0), (2, 0), (5, 0), (16, 0), (200, 0), (0, 3), (2, 9),
                         (5, 40), (16, 48)):
        exact, cost, *counts, upper = band(pa, pb, width, lower)
        assert same(cost[exact], full[0][exact]), (width, lower)
        for got, want in zip(counts, full[1:]):
            assert np.array_equal(got[exact], want[exact]), (width, lower)
        assert np.all(cost[~exact] <= full[0][~exact]), (width, lower)  # lower bounds
        assert np.all(upper >= full[0]), (width, lower)
        certified += int(exact.sum())
        if width == 200:  # a band wider than every sequence is the full matrix
            assert exact.all()
    assert certified > len(pa)  # the narrow bands certify pairs too


@pytest.mark.parametrize("scheme", [SEQDIST, TIES, ODD], ids=["seqdist", "ties", "odd"])
def test_upper_bounds_are_above_the_cost(scheme):
    seqs = sequence_set(adversarial(7))
    pa, pb = all_pairs(seqs.n)
    cost = CPU.seqdist(seqs.codes, seqs.offsets, scheme)(pa, pb)[0]
    upper = CPU.seqdist_upper(seqs.codes, seqs.offsets, scheme)
    # each move's weight rounds up to the next 1/64 (upper_weights)
    slack = (seqs.lengths[pa] + seqs.lengths[pb]) / LOWER_UNITS
    for width in (0, 2, 8, 40):
        bound = upper(pa, pb, width)
        assert np.all(bound >= cost), width
        assert np.any(bound <= cost + slack), width  # tight where the band holds the path
    if scheme is TIES:  # one gap cost: a band over the whole matrix is the recurrence, on
        subst, (gap, _) = scheme.upper_weights  # the weights in units (exact sums)
        in_units = SeqDistScheme("ACGT", tuple(tuple(c / LOWER_UNITS for c in row)
                                               for row in subst),
                                 gap=gap / LOWER_UNITS, homopolymer_gap=gap / LOWER_UNITS)
        want = CPU.seqdist(seqs.codes, seqs.offsets, in_units)(pa, pb)[0]
        assert np.array_equal(upper(pa, pb, 500), want)


def plain_upper(a, b, subst, gap, dearest_gap, width):
    """seqdist_upper's definition cell by cell (docs/pruning.md, section 2): the cheapest
    path through the band |j - i| <= width, the last row and the last column, with every
    paid gap at dearest_gap; the minimum of the same three sums in the same order."""
    la, lb = len(a), len(b)

    def inside(i, j):
        return i == 0 or j == 0 or i == la or j == lb or abs(j - i) <= width

    def cell(i, j):
        return u[i, j] if inside(i, j) else math.inf

    u = {(0, j): gap * j for j in range(lb + 1)}
    for i in range(1, la + 1):
        u[i, 0] = gap * i
        for j in range(1, lb + 1):
            if not inside(i, j):
                continue
            u[i, j] = min(cell(i - 1, j - 1) + subst[a[i - 1], b[j - 1]],
                          cell(i, j - 1) + dearest_gap * (0.0 if i == la else 1.0),
                          cell(i - 1, j) + dearest_gap * (0.0 if j == lb else 1.0))
    return u[la, lb]


@pytest.mark.parametrize("scheme", [SEQDIST, ODD], ids=["seqdist", "odd"])
def test_upper_kernel_is_its_definition(scheme):
    """The CPU kernel (neighbours read without a test, INF just outside the band) against
    the cell-by-cell definition, bit for bit: close and unrelated pairs, one sequence far
    longer than the other (bands that end before the last row), one letter, every width
    from 0."""
    rng = np.random.default_rng(8)
    seqs = adversarial(8)[::3] + ["A", "ACGTTGCA" * 9, "C" * 3]
    seqs = [s[:70] for s in seqs]
    codes = [encode([s])[0] for s in seqs]
    data = sequence_set(seqs)
    pa, pb = all_pairs(data.n)
    pick = rng.choice(len(pa), min(len(pa), 300), replace=False)
    pa, pb = pa[pick], pb[pick]
    upper = CPU.seqdist_upper(data.codes, data.offsets, scheme)
    subst, (gap, dear) = scheme.upper_weights  # integer units of 1 / LOWER_UNITS
    subst = np.array(subst)
    for width in (0, 1, 3, 8, 12):
        want = [plain_upper(codes[x], codes[y], subst, gap, dear, width) / LOWER_UNITS
                for x, y in zip(pa, pb)]
        assert same(upper(pa, pb, width), np.array(want)), width  # float32 sums
        assert same(upper(pa, pb, width, dtype=np.float64), np.array(want)), width


def test_upper_sums_beyond_float32_go_in_float64():
    """Pairs whose unit sums can pass 2^24 (band.exact_lower) get their upper bounds in
    float64: 3,000 letters a side at costs of 200 (12,801 units) reach 7.7e7 units, where
    float32 rounds to multiples of 8."""
    rng = np.random.default_rng(13)
    big = SeqDistScheme("ACGT", tuple(tuple(0.0 if a == b else 200.0 for b in range(4))
                                      for a in range(4)), gap=200.0, homopolymer_gap=100.0)
    seqs = sequence_set(["".join(rng.choice(list("ACGT"), 3000)) for _ in range(3)])
    pa, pb = all_pairs(seqs.n)
    upper = CPU.seqdist_upper(seqs.codes, seqs.offsets, big)
    cost = CPU.seqdist(seqs.codes, seqs.offsets, big)(pa, pb)[0]
    bound = upper(pa, pb, 4)
    assert same(bound, upper(pa, pb, 4, dtype=np.float64)) and np.all(bound >= cost)
    assert not same(bound, upper(pa, pb, 4, dtype=np.float32))  # float32 would round


def test_upper_lanes_do_not_depend_on_their_group():
    """The CPU kernel aligns pairs with A of one length in groups of LANES: each pair's
    bound is the same alone (its group's other lanes repeat it) as among others of other
    B lengths, on groups cut where A's length changes and every LANES pairs."""
    rng = np.random.default_rng(11)
    lengths = [30] * 90 + [31] * 5 + list(range(1, 40))
    seqs = sequence_set(["".join(rng.choice(list("ACGT"), n)) for n in lengths])
    pa = np.repeat(np.arange(95), 3)  # A of length 30 or 31, more than LANES pairs of 30
    pb = rng.integers(0, seqs.n, len(pa))
    upper = CPU.seqdist_upper(seqs.codes, seqs.offsets, SEQDIST)
    for width in (0, 4, 8):
        together = upper(pa, pb, width)
        alone = np.array([upper(pa[k:k + 1], pb[k:k + 1], width)[0] for k in range(len(pa))])
        assert same(together, alone), width
    la = np.sort(seqs.lengths[pa])
    starts = band_kernels.lane_groups(la)
    assert starts[0] == 0 and starts[-1] == len(la)
    sizes = np.diff(starts)
    assert np.all(sizes <= band_kernels.LANES) and sizes.max() == band_kernels.LANES
    assert all(la[a] == la[b - 1] for a, b in zip(starts[:-1], starts[1:]))
    assert len(starts) - 1 == sum(-(-np.count_nonzero(la == v) // band_kernels.LANES)
                                  for v in np.unique(la))


def test_band_widens_monotonically():
    seqs = sequence_set(adversarial(2))
    pa, pb = all_pairs(seqs.n)
    band = CPU.seqdist_band(seqs.codes, seqs.offsets, SEQDIST)
    previous = np.zeros(len(pa), bool)
    for width in (0, 4, 8, 16, 32, 64):
        exact = band(pa, pb, width)[0]
        assert np.all(exact >= previous)  # a wider band loses no certificate
        previous = exact


def test_band_certifies_pairs_a_homopolymer_indel_apart():
    """A read against itself with one letter fewer in a homopolymer run (costs 4 to 15,
    far below the width-8 band's 4 (8 + 1)): a gap's cost depends on the move of its left
    neighbour, and the cells between the band's inexact edge and the path know which gap
    costs their moves give although not their own costs. Cell by cell exactness (the
    moves of inexact cells unknown) certified 0.3-5% of these pairs."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        root = homopolymers(rng, 100)
        seqs = sequence_set([root] + [root[:k] + root[k + 1:] for k in range(1, len(root))
                                      if root[k] == root[k - 1]])
        pa = np.zeros(seqs.n - 1, np.int64)  # the longer read as A, the rows
        pb = np.arange(1, seqs.n, dtype=np.int64)
        full = CPU.seqdist(seqs.codes, seqs.offsets, SEQDIST)(pa, pb)
        exact, cost, *counts, _ = CPU.seqdist_band(seqs.codes, seqs.offsets, SEQDIST)(
            pa, pb, 8)
        assert full[0].max() < 4 * (8 + 1) and exact.mean() > 0.9, seed
        assert same(cost[exact], full[0][exact])
        for got, want in zip(counts, full[1:]):
            assert np.array_equal(got[exact], want[exact])


def test_a_lower_band_certifies_reads_two_percent_apart():
    """Reads 8 substitutions apart (costs 69-95): the cells outside a width-8 band bounded
    only by the gaps a path needs to reach them (4 a diagonal) cannot certify a cost above
    about 4 (8 + 1); a lower band of half-width 24, which adds the substitutions of its
    shifted diagonals, certifies nearly all."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        root = "".join(rng.choice(list("ACGT"), 400))
        seqs = sequence_set([root] + [substituted(rng, root, 8) for _ in range(40)])
        pa = np.zeros(seqs.n - 1, np.int64)
        pb = np.arange(1, seqs.n, dtype=np.int64)
        full = CPU.seqdist(seqs.codes, seqs.offsets, SEQDIST)(pa, pb)
        band = CPU.seqdist_band(seqs.codes, seqs.offsets, SEQDIST)
        assert not band(pa, pb, 8)[0].any() and full[0].min() > 4 * (8 + 1)
        exact, cost, *counts, upper = band(pa, pb, 8, 24)
        assert exact.mean() > 0.9, seed
        assert same(cost[exact], full[0][exact])
        for got, want in zip(counts, full[1:]):
            assert np.array_equal(got[exact], want[exact])


def test_pairs_too_long_for_the_lower_bands_float32_sums_go_without_it():
    """The CPU's lower band sums integers in float32, exact below 2^24: pairs whose
    letters add up to more than 2^24 / the dearest weight (about 17,000 under SeqDist's
    costs) run the band without it, and their certified values are still the full
    kernel's."""
    rng = np.random.default_rng(4)
    root = "".join(rng.choice(list("ACGT"), 9000))
    seqs = sequence_set([root] + [substituted(rng, root, edits) for edits in (2, 6, 12)]
                        + [root[:400], substituted(rng, root[:400], 8)])
    pa, pb = np.array([0, 0, 0, 4], np.int64), np.array([1, 2, 3, 5], np.int64)
    full = CPU.seqdist(seqs.codes, seqs.offsets, SEQDIST)(pa, pb)
    band = CPU.seqdist_band(seqs.codes, seqs.offsets, SEQDIST)
    with_lower, without = band(pa, pb, 8, 24), band(pa, pb, 8)
    for got, want in zip(with_lower, without):
        assert np.array_equal(got[:3], want[:3])  # the long pairs: no lower band
    assert with_lower[0][3] and not without[0][3]  # the short pair: the lower band certifies
    exact, cost, *counts, upper = with_lower
    assert exact[0] and same(cost[exact], full[0][exact])
    for got, want in zip(counts, full[1:]):
        assert np.array_equal(got[exact], want[exact])
    assert np.all(cost[~exact] <= full[0][~exact]) and np.all(upper >= full[0])


def test_the_lower_band_pays_the_plain_gap_where_no_homopolymer_can_be_extended():
    """The lower band's gaps cost the plain gap where B[j-1] is neither A[i-1] nor B[j-2]
    (docs/pruning.md, section 2). Of a community's pairs kept by the identity test alone,
    the band of 8 with a lower band of 24 then certifies 96%; with the cheapest gap
    everywhere, 45%."""
    seqs = sequence_set(community(3, 16, 12, 400, 0.05))
    pa, pb = all_pairs(seqs.n)
    full = CPU.seqdist(seqs.codes, seqs.offsets, SEQDIST)(pa, pb)
    cost, length, matches, aligned = full[:4]
    identity_only = (cost / length > 0.1) & (matches >= 0.97 * aligned)
    assert identity_only.sum() > 500
    pa, pb = pa[identity_only], pb[identity_only]
    exact, got, *counts, upper = CPU.seqdist_band(seqs.codes, seqs.offsets, SEQDIST)(
        pa, pb, 8, 24)
    assert exact.mean() > 0.9
    assert same(got[exact], cost[identity_only][exact])
    for got_count, want in zip(counts, full[1:]):
        assert np.array_equal(got_count[exact], want[identity_only][exact])


def qgram_positions(a: str, b: str, q: int) -> int:
    """Positions of a whose q-gram occurs in b (plainly)."""
    grams = {b[k:k + q] for k in range(len(b) - q + 1)}
    return sum(a[k:k + q] in grams for k in range(len(a) - q + 1))


def slot_hits(a: str, b: str, q: int, bits: int) -> list:
    """Per position of a, whether its q-gram's slot (its 2-bit code, folded to `bits` bits
    by the multiplicative hash of backends/cpu/qgrams.py) is a slot of b's q-grams
    (plainly)."""
    def slot(gram):
        code = 0
        for letter in gram:
            code = 4 * code + "ACGT".index(letter)
        return code if 2 * q <= bits else (code * 0x9E3779B97F4A7C15 % 2**64) >> (64 - bits)
    slots = {slot(b[k:k + q]) for k in range(len(b) - q + 1)}
    return [slot(a[k:k + q]) in slots for k in range(len(a) - q + 1)]


def slot_positions(a: str, b: str, q: int, bits: int) -> int:
    """Positions of a whose q-gram's slot is a slot of b's q-grams (plainly)."""
    return sum(slot_hits(a, b, q, bits))


def densest_plain(hits, least: int, density: float) -> float:
    """The most, over runs of at least `least` consecutive positions, of the run's hits -
    density x its positions, by trying every run; -inf where there is none."""
    runs = [sum(hits[u:v]) - density * (v - u)
            for u in range(len(hits) + 1) for v in range(u + least, len(hits) + 1)]
    return max(runs, default=-math.inf)


@pytest.mark.parametrize("bits", [16, 10, 6])
def test_qgram_counts_are_the_slots_counts_and_at_least_the_exact_ones(bits):
    seqs = adversarial(3)
    s = sequence_set(seqs)
    pa, pb = all_pairs(s.n)
    got = CPU.qgram_shared(s.codes, s.offsets, 8, bits)(pa, pb)
    slots = [min(slot_positions(seqs[a], seqs[b], 8, bits),
                 slot_positions(seqs[b], seqs[a], 8, bits)) for a, b in zip(pa, pb)]
    exact = np.array([min(qgram_positions(seqs[a], seqs[b], 8),
                          qgram_positions(seqs[b], seqs[a], 8)) for a, b in zip(pa, pb)])
    assert np.array_equal(got, slots)
    if bits == 16:  # every 8-gram has its own bit
        assert np.array_equal(got, exact)
    else:
        assert np.all(got >= exact) and np.any(got > exact)


@pytest.mark.parametrize("bits", [16, 10])
def test_densest_windows_are_their_definition(bits):
    """qgram_shared's densest against every run tried plainly, runs of at least 1 to more
    positions than a sequence has; densities that are binary fractions make both sums
    exact, another is compared within rounding."""
    seqs = adversarial(7)
    s = sequence_set(seqs)
    pa, pb = all_pairs(s.n)
    counts = CPU.qgram_shared(s.codes, s.offsets, 8, bits)
    rng = np.random.default_rng(1)
    least = rng.integers(1, 160, len(pa))
    least[:40] = 1
    for density, exact in ((0.75, True), (0.625, True), (0.7531, False)):
        got = counts.densest(pa, pb, least, density)
        want = np.array([min(densest_plain(slot_hits(seqs[a], seqs[b], 8, bits), w, density),
                             densest_plain(slot_hits(seqs[b], seqs[a], 8, bits), w, density))
                         for a, b, w in zip(pa, pb, least)])
        assert np.isneginf(want).any() and np.isfinite(want).any()
        if exact:
            assert same(got, want)
        else:
            assert np.array_equal(np.isinf(got), np.isinf(want))
            assert np.allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=0,
                               atol=1e-9)


def overhangs(seed=0):
    """Pairs whose chosen path keeps a high identity over a part of them only: a core of a
    root between long free trailing or paid leading overhangs, homopolymer indels in the
    core, and relatives at 80-95% whose differences cluster (so they share many q-grams)."""
    rng = np.random.default_rng(seed)
    root = "".join(rng.choice(list("ACGT"), 250))
    hom = homopolymers(rng, 60)
    other = lambda n: "".join(rng.choice(list("ACGT"), n))  # noqa: E731
    seqs = [root, root[:150] + other(100), other(30) + root[30:], root[:120], root[100:],
            hom, mutate(rng, hom, 0.0, 0.02), hom[:150] + other(60)]
    for share in (0.1, 0.2):  # differences in a variable region only
        cut = int(250 * (1 - 2 * share))
        seqs += [root[:cut] + mutate(rng, root[cut:], 0.4), mutate(rng, root, share / 2)]
    seqs += [mutate(rng, root, rate, rate / 4) for rate in (0.005, 0.01, 0.02)]
    # edits q or more apart (each ends the most q-grams), 2.9% and 3.4% of the letters
    swap = {"A": "C", "C": "G", "G": "T", "T": "A"}
    for every in (35, 30):
        seqs += ["".join(swap[c] if k % every == every // 2 else c for k, c in enumerate(root)),
                 "".join(c for k, c in enumerate(root) if k % every != every // 2)]
    return seqs


@pytest.mark.parametrize("identity,some_proved", [(0.97, 10), (0.95, 10), (0.9, 0)])
def test_window_bound_holds_for_every_kept_pair(identity, some_proved):
    """Section 4's windowed filter on pairs whose identity reaches the threshold (upper =
    their cost, the least an upper bound can be): each sequence's densest run of at least
    `least` positions, on the exact q-gram hits, reaches the floor; and on the others it
    proves some below it (at 0.9 its density, 0.11 a position, proves almost nothing)."""
    seqs = overhangs(2) + adversarial(9)[:20]
    s = sequence_set(seqs)
    pa, pb = all_pairs(s.n)
    keep, (cost, *counts) = kept_by_full(s, SEQDIST, -math.inf, identity, 2, pa, pb)
    shortest = np.minimum(s.lengths[pa], s.lengths[pb]).astype(float)
    least, density, floor = prune.identity_window(shortest, cost, identity,
                                                  SEQDIST.cheapest_gap)
    densest = np.array([min(densest_plain(slot_hits(seqs[a], seqs[b], prune.Q, 16), w, density),
                            densest_plain(slot_hits(seqs[b], seqs[a], prune.Q, 16), w, density))
                        if w >= 1 else math.inf for a, b, w in zip(pa, pb, least)])
    proved = densest < floor - prune.WINDOW_TOLERANCE
    assert keep.sum() >= 20 and not proved[keep].any()
    assert proved[~keep].sum() >= some_proved


def kept_by_full(seqs, scheme, max_distance, identity, iddef, pa, pb):
    cost, *counts = CPU.seqdist(seqs.codes, seqs.offsets, scheme)(pa, pb)
    keep = cost / counts[0] <= max_distance
    if identity is not None:
        keep |= upper_bound(iddef, seqs.lengths[pa], seqs.lengths[pb], *counts) >= identity
    return keep, (cost, *counts)


def test_bounds_hold_for_every_kept_pair():
    """The lemmas of docs/pruning.md on pairs that pass: their q-gram counts reach the
    bounds (checked here on the exact counts, without the bitsets' collisions)."""
    rng = np.random.default_rng(4)
    root = "".join(rng.choice(list("ACGT"), 300))
    seqs = [mutate(rng, root, rate) for rate in np.repeat([0.0, 0.003, 0.01, 0.02], 6)]
    s = sequence_set(seqs)
    pa, pb = all_pairs(s.n)
    for max_distance, identity in ((0.1, None), (0.3, None), (-math.inf, 0.97),
                                   (-math.inf, 0.95)):
        keep, (cost, length, matches, aligned, leading) = kept_by_full(
            s, SEQDIST, max_distance, identity, 2, pa, pb)
        exact = np.array([min(qgram_positions(seqs[a], seqs[b], prune.Q),
                              qgram_positions(seqs[b], seqs[a], prune.Q))
                          for a, b in zip(pa, pb)])
        shortest = np.minimum(s.lengths[pa], s.lengths[pb]).astype(float)
        if identity is None:
            bound = prune.distance_qgrams(shortest, max_distance, SEQDIST.cheapest_edit)
        else:
            bound = prune.identity_qgrams(shortest, cost, identity, SEQDIST.cheapest_gap)
        assert keep.any() and np.all(exact[keep] >= bound[keep])


CASES = [  # (max_distance, candidate identity, iddef)
    (0.1, 0.97, 2), (0.1, None, 2), (0.3, None, 2), (-math.inf, 0.97, 2), (-math.inf, 0.9, 2),
    (0.1, 0.97, 0), (0.1, 0.97, 1), (0.05, 0.99, 3), (0.0, None, 2), (8.0, 0.5, 2)]


def check_pruner(seqs, scheme, max_distance, identity, iddef, backend=CPU):
    """The pruner's pairs and values against the full kernel's; returns its stats."""
    pa, pb = all_pairs(seqs.n)
    keep, full = kept_by_full(seqs, scheme, max_distance, identity, iddef, pa, pb)
    pruner = prune.Pruner(backend, seqs, scheme, None, max_distance, identity, iddef)
    positions, *values = pruner(pa, pb)
    assert np.all(np.diff(positions) > 0)
    assert np.all(np.isin(np.nonzero(keep)[0], positions))  # no kept pair lost
    for got, want in zip(values, full):
        assert same(got, want[positions])
    return pruner.stats


@pytest.mark.parametrize("max_distance,identity,iddef", CASES)
@pytest.mark.parametrize("scheme", [SEQDIST, TIES, ODD], ids=["seqdist", "ties", "odd"])
def test_pruner_keeps_every_kept_pair_exactly(scheme, max_distance, identity, iddef):
    check_pruner(sequence_set(adversarial(5)), scheme, max_distance, identity, iddef)


def test_pruner_with_folded_qgrams_and_other_widths(monkeypatch):
    monkeypatch.setattr(prune, "qgram_bits", lambda n, memory: 8)  # many collisions
    for widths in ((), (0,), (3, 7, 12)):
        check_pruner(sequence_set(adversarial(6)), SEQDIST, 0.1, 0.97, 2,
                     backend=dataclasses.replace(CPU, band_cost=dict.fromkeys(widths, 1.0)))


@pytest.mark.parametrize("max_distance,identity,iddef", CASES[:4])
def test_pruner_with_lower_bands(max_distance, identity, iddef):
    """Bands whose outside cells take a lower band's bounds: the same pairs and values,
    and the bands certify more of them than without."""
    seqs = sequence_set(adversarial(6) + community(3, 4, 6, 200, 0.04))
    certified = []
    for lower in ({}, {3: 12, 8: 30}):
        backend = dataclasses.replace(CPU, band_cost={3: 0.0, 8: 0.0}, band_lower=lower)
        stats = check_pruner(seqs, SEQDIST, max_distance, identity, iddef, backend=backend)
        certified.append(stats["certified 3"] + stats["certified 8"])
    assert certified[1] > certified[0]


def test_qgram_bitsets_fill_the_backends_memory():
    """Whole 8-gram bitsets (2^16 bits) while the backend's qgram_memory holds them for
    every sequence, fewer bits beyond (never below 2^10); the pruner asks its backend's."""
    assert prune.qgram_bits(1 << 15, 256 << 20) == 16
    assert prune.qgram_bits(1 << 16, 256 << 20) == 15
    assert prune.qgram_bits(1 << 18, 64 << 20) == 11
    assert prune.qgram_bits(1 << 18, 2 << 30) == 16
    assert prune.qgram_bits(1 << 30, 1 << 20) == 10
    seen = []

    def counter(codes, offsets, q, bits, threads=None):
        seen.append(bits)
        return CPU.qgram_shared(codes, offsets, q, bits, threads)

    seqs = sequence_set(adversarial(5))
    for memory in (1 << 10, 1 << 20):
        backend = dataclasses.replace(CPU, qgram_memory=memory, qgram_shared=counter)
        check_pruner(seqs, SEQDIST, 0.1, 0.97, 2, backend=backend)
    assert seen == [prune.qgram_bits(seqs.n, 1 << 10), prune.qgram_bits(seqs.n, 1 << 20)]
    assert seen[0] < seen[1]


@pytest.mark.parametrize("cost", [0.0, 1e9])
def test_pruner_whichever_stages_pay(cost):
    """Stages that always pay and stages that never do (on the sample): the same pairs."""
    backend = dataclasses.replace(CPU, upper_cost={2: cost, 8: cost},
                                  band_cost={4: cost, 16: cost},
                                  band_shared=0.0)  # bands for every pair left
    seqs = sequence_set(adversarial(9) + community(10, 6, 12, 150, 0.1))
    assert seqs.n * (seqs.n - 1) // 2 >= prune.SAMPLE * prune.MIN_SAMPLE  # sampled
    stats = check_pruner(seqs, SEQDIST, 0.1, 0.97, 2, backend=backend)
    sample = -(-stats["pairs"] // prune.SAMPLE)
    if cost:  # nothing paid on the sample: nothing ran beyond it
        assert stats["band 4"] <= sample and stats["band 16"] <= sample
        assert stats["upper 2"] <= sample and stats["upper 8"] <= sample
    else:
        assert stats["band 4"] > sample
        # the wide band only on the suspects that the narrow one left
        assert sample < stats["upper 2"] and 0 < stats["upper 8"] < stats["upper 2"]


def test_a_band_proving_nothing_does_not_run_for_the_relaxed_recurrence():
    """The relaxed recurrence needs an upper bound, not every band: a band that proves
    nothing on the sample (here, one whose bounds are infinite) runs on the sample only,
    while the narrower one and the relaxed recurrence run on every suspect."""
    def upper(codes, offsets, scheme, threads=None):
        bound = CPU.seqdist_upper(codes, offsets, scheme, threads)
        return lambda pa, pb, width: (np.full(len(pa), np.inf) if width == 8
                                      else bound(pa, pb, width))

    backend = dataclasses.replace(CPU, seqdist_upper=upper, upper_cost={2: 0.0, 8: 0.0},
                                  relaxed_cost=0.0)
    seqs = sequence_set(adversarial(9) + community(10, 6, 12, 150, 0.1))
    stats = check_pruner(seqs, SEQDIST, 0.1, 0.97, 2, backend=backend)
    sample = -(-stats["pairs"] // prune.SAMPLE)
    assert 0 < stats["upper 8"] <= sample < stats["relaxed"] <= stats["upper 2"]


def test_relaxed_recurrence_drops_pairs_the_bands_leave(monkeypatch):
    """Pairs that a band did not certify and whose lower bound fails the distance test go
    through the relaxed recurrence, above the band's upper bound, before a wider band or
    the full kernel: it proves some below the identity threshold, and the pairs kept stay
    exact."""
    proved = []
    relaxed_fails = prune.Pruner._relaxed_fails

    def recorded(self, i, j, pairs, upper, stat="relaxed"):
        fails = relaxed_fails(self, i, j, pairs, upper, stat)
        proved.append((stat, int(fails.sum())))
        return fails

    monkeypatch.setattr(prune.Pruner, "_relaxed_fails", recorded)
    stats = check_pruner(sequence_set(community(5, 8, 8, 300, 0.05)), SEQDIST, 0.1, 0.97, 2)
    assert stats["relaxed after bands"] > 0
    assert sum(n for stat, n in proved if stat == "relaxed after bands") > 0


@pytest.mark.parametrize("share", [0.0, 0.8, 2.0])
def test_bands_run_on_the_pairs_likely_to_certify(share):
    """Bands only for the pairs left that share at least backend.band_shared of the shorter
    sequence's q-gram positions (none at 2.0, all at 0.0): the same pairs and values."""
    seqs = sequence_set(adversarial(9) + community(10, 6, 12, 150, 0.1))
    backend = dataclasses.replace(CPU, band_cost={4: 0.0}, band_shared=share)
    stats = check_pruner(seqs, SEQDIST, 0.1, 0.97, 2, backend=backend)
    left = stats["pairs"] - stats["qgrams"]  # the pairs past the counting filter
    if share == 0.0:
        assert stats["band 4"] == left
    elif share == 2.0:
        assert stats["band 4"] == 0
    else:
        assert 0 < stats["band 4"] < left


def community(seed, taxa, per_taxon, length, divergence):
    """Taxa with substitutions (and a few indels) from a common root, about `divergence`
    apart, and reads of each with about 1% errors."""
    rng = np.random.default_rng(seed)
    root = "".join(rng.choice(list("ACGT"), length))
    seqs = []
    for _ in range(taxa):
        taxon = mutate(rng, root, divergence / 2, divergence / 40)
        seqs += [mutate(rng, taxon, 0.003) for _ in range(per_taxon)]
    return seqs


def test_pruning_drops_most_pairs_of_a_diverse_community():
    """Not only exact but useful: taxa about 15% apart leave few pairs to align in full."""
    stats = check_pruner(sequence_set(community(7, 12, 5, 250, 0.15)), SEQDIST, 0.1, 0.97, 2)
    assert stats["full"] < 0.1 * stats["pairs"], stats
    assert stats["qgrams"] + sum(v for k, v in stats.items() if k.startswith("certified")) > 0


def real_subset(path, count=150):
    opener = gzip.open if str(path).endswith(".gz") else open
    fmt = "fastq" if "fastq" in path.name else "fasta"
    with opener(path, "rt") as handle:
        seqs = []
        for record in SeqIO.parse(handle, fmt):
            seq = str(record.seq).upper()
            if set(seq) <= set("ACGT") and seq not in seqs:
                seqs.append(seq)
            if len(seqs) == count:
                break
    return seqs


@pytest.mark.parametrize("name", ["C005_454.fa.gz", "sam1F.fastq.gz", "sam2F.fastq.gz",
                                  "samPB.fastq.gz", "ten_16s.100.fa.gz"])
def test_pruner_on_real_data(shared_data, name):
    count = 40 if name in ("samPB.fastq.gz", "ten_16s.100.fa.gz") else 150
    seqs = sequence_set(real_subset(shared_data / name, count))
    for max_distance, identity in ((0.1, 0.97), (0.1, None), (-math.inf, 0.97)):
        check_pruner(seqs, SEQDIST, max_distance, identity, 2)


@pytest.mark.parametrize("name", ["C005_454.fa.gz", "sam1F.fastq.gz"])
def test_relaxed_recurrence_settles_real_pairs_the_qgrams_cannot(shared_data, name):
    """Reads of one gene at 80-90% identity share too many q-grams for section 4's bound;
    the relaxed recurrence (section 6) proves most of them below the identity: the same
    pairs and values, and at most half as many pairs left to the full kernel."""
    seqs = sequence_set(real_subset(shared_data / name, 150))
    full = []
    for relaxed in (None, CPU.seqdist_relaxed):
        backend = dataclasses.replace(CPU, seqdist_relaxed=relaxed, relaxed_cost=0.0)
        full.append(check_pruner(seqs, SEQDIST, 0.1, 0.97, 2, backend=backend)["full"])
    assert full[1] < full[0] / 2


@pytest.mark.parametrize("name", ["C005_454.fa.gz", "sam1F.fastq.gz"])
def test_windowed_filter_settles_real_pairs_the_counts_cannot(shared_data, name, monkeypatch):
    """The same reads without the relaxed recurrence: section 4's windowed filter proves
    most of the pairs whose whole count reaches the bound below the identity: the same
    pairs and values, and at most half as many pairs left to the full kernel."""
    seqs = sequence_set(real_subset(shared_data / name, 150))
    backend = dataclasses.replace(CPU, seqdist_relaxed=None)
    full = []
    for window in (lambda *args: None, prune.identity_window):
        monkeypatch.setattr(prune, "identity_window", window)
        full.append(check_pruner(seqs, SEQDIST, 0.1, 0.97, 2, backend=backend)["full"])
    assert full[1] < full[0] / 2


def write_fasta(path, seqs):
    path.write_text("".join(f">s{k};size={len(seqs) - k}\n{s}\n" for k, s in enumerate(seqs)))
    return path


def test_cli_outputs_are_the_same_bytes_with_and_without_pruning(tmp_path, cli):
    fasta = write_fasta(tmp_path / "u.fasta", adversarial(8) + community(9, 4, 4, 200, 0.1))
    outputs = {}
    for flag in ([], ["--no-prune"]):
        tag = "full" if flag else "pruned"
        code, _, err = cli("distance", "-i", fasta, "--backend", "cpu", "--max-distance", "0.2",
                           "--candidate-identity", "0.95", "--edges", tmp_path / f"{tag}.npz",
                           "--mothur", tmp_path / f"{tag}.dist", *flag)
        assert code == 0, err
        code, _, err = cli("filter", "-i", fasta, "--backend", "cpu", "--identity", "0.95",
                           "-o", tmp_path / f"{tag}.tsv", *flag)
        assert code == 0, err
        outputs[tag] = [(tmp_path / f"{tag}{ext}").read_bytes() for ext in (".npz", ".dist", ".tsv")]
    assert outputs["pruned"] == outputs["full"]
    assert all(len(b) > 100 for b in outputs["full"])  # something was kept


def test_pruning_is_used_only_where_it_can_pay(monkeypatch):
    from seqpairs.pairs.distance import pruner

    seqs = sequence_set(adversarial(0)[:5])
    args = dict(backend=CPU, seqs=seqs, scheme=SEQDIST, candidate_identity=0.97, iddef=2,
                threads=None)
    assert pruner(**args, max_distance=0.1, dense=False, prune=True) is not None
    # runs too small to repay the kernels' first compilation (tests prune every run:
    # conftest.py's prune_every_run; here the backend's own test, WORTH_PRUNING)
    cells = prune.run_cells(seqs)
    monkeypatch.setattr(prune, "worth_pruning", WORTH_PRUNING)
    for least, built in ((cells / 2, True), (cells * 2, False)):
        gated = dataclasses.replace(CPU, prune_least_cells=least)
        assert WORTH_PRUNING(gated, seqs) == built
        assert (pruner(**{**args, "backend": gated}, max_distance=0.1, dense=False,
                       prune=True) is not None) == built
    assert CPU.prune_least_cells > 0  # the CPU's kernels take seconds to compile
    for changed in (dict(max_distance=math.inf, dense=False, prune=True),
                    dict(max_distance=0.1, dense=True, prune=True),
                    dict(max_distance=0.1, dense=False, prune=False)):
        assert pruner(**args, **changed) is None
    assert CPU.band_cost  # at least one band before a full alignment
