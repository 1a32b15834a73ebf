"""Exactness of the CPU affine kernel: against the spec's reference, hand-worked cases and parasail."""
import gzip
import itertools

import numpy as np
import pytest
from Bio import SeqIO
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_affine
from seqpairs.backends.common import MAX_LENGTH
from seqpairs.backends.cpu.affine import aligner
from seqpairs.errors import UserError
from seqpairs.scoring import AffineScheme
from seqpairs.scoring.alphabet import DNA, encode_all
from seqpairs.scoring.scheme import MAX_COST

# dna(match, mismatch, gap_open, gap_extend[, end_open, end_extend])
SCHEMES = {
    "linear": AffineScheme.dna(2, -3, 0, 3),
    "affine": AffineScheme.dna(2, -4, 5, 2),
    "cheap_ends": AffineScheme.dna(2, -4, 5, 2, end_open=1, end_extend=1),
    "dear_ends": AffineScheme.dna(2, -4, 3, 1, end_open=8, end_extend=3),
    "free_ends": AffineScheme.dna(2, -4, 5, 2, end_open=0, end_extend=0),
    "c005": AffineScheme.dna(2, -4, 20, 2, end_open=2, end_extend=1),
    # a mismatch scores the same as one gap each way: many optimal paths of different
    # lengths, so lengths show the shortest-length rule
    "ties": AffineScheme.dna(1, -2, 0, 1),
    # every path scores 0: the length is the shortest alignment's
    "zero": AffineScheme.dna(0, 0, 0, 0),
    # no symmetry: catches A/B swapped or a wrong letter order (rows and columns A, C, G, T)
    "asymmetric": AffineScheme(DNA, ((3, -2, -1, -5), (-4, 2, -6, -1), (-2, -5, 4, -4),
                                     (-6, 0, -3, 1)), 4, 1, 2, 2),
}
# The schemes parasail can check: end gaps cost as interior ones, match/mismatch only.
PARASAIL_DNA = {"linear": (2, -3, 0, 3), "affine": (2, -4, 5, 2), "ties": (1, -2, 0, 1),
                "c005": (2, -4, 20, 2)}


def align_pairs(codes, offsets, pa, pb, scheme, threads=None):
    """(score, length) of the pairs (pa[k] as A, pb[k] as B) on the CPU kernel."""
    return aligner(codes, offsets, scheme, threads)(pa, pb)


def kernel(pairs, scheme):
    """(score, length) int32 arrays of the CPU kernel on a list of (A, B) strings."""
    seqs = [s for pair in pairs for s in pair]
    codes, offsets = encode_all(seqs)
    idx = np.arange(len(pairs))
    return align_pairs(codes, offsets, 2 * idx, 2 * idx + 1, scheme)


def check_against_reference(pairs, scheme):
    score, length = kernel(pairs, scheme)
    assert score.dtype == length.dtype == np.int32
    for k, (a, b) in enumerate(pairs):
        assert (score[k], length[k]) == reference_affine.align(a, b, scheme), (a, b)


def random_seq(rng, n, letters="ACGT"):
    return "".join(rng.choice(list(letters), n))


def mutate(rng, s, rate, letters="ACGT"):
    """Substitutions, deletions and homopolymer-style insertions at about `rate` per letter."""
    out = []
    for c in s:
        r = rng.random()
        if r < rate / 3:
            continue
        if r < 2 * rate / 3:
            out.append(c * int(rng.integers(2, 4)))
        elif r < rate:
            out.append(rng.choice(list(letters)))
        else:
            out.append(c)
    return "".join(out) or s


def random_pairs(seed, n, letters="ACGT", max_len=40):
    """Pairs of lengths 1..max_len, 60% related (mutated copies), the rest unrelated."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        a = random_seq(rng, int(rng.integers(1, max_len + 1)), letters)
        if rng.random() < 0.6:
            b = mutate(rng, a, 0.15, letters)[:max_len]
        else:
            b = random_seq(rng, int(rng.integers(1, max_len + 1)), letters)
        pairs.append((a, b))
    return pairs


def c005_reads(shared_data, n):
    with gzip.open(shared_data / "C005_454.fa.gz", "rt") as fh:
        return [str(r.seq) for _, r in zip(range(n), SeqIO.parse(fh, "fasta"))]


def c005_pairs(shared_data, n, seed):
    seqs = c005_reads(shared_data, 2094)
    rng = np.random.default_rng(seed)
    return [(seqs[i], seqs[j]) for i, j in rng.choice(len(seqs), size=(n, 2)) if i != j]


@pytest.fixture
def parasail():
    return pytest.importorskip("parasail", reason="parasail not installed (pip install parasail)")


# --- the reference itself, on cases worked by hand from the spec ---

@pytest.mark.parametrize("a, b, scheme, expected", [
    ("ACGT", "ACGT", SCHEMES["affine"], (8, 4)),
    # one interior gap of 4 costs open + 4 * extend = 7; the end gaps are dear
    ("AAAACCCCAAAA", "AAAAAAAA", AffineScheme.dna(2, -4, 3, 1, 50, 50), (16 - 7, 12)),
    # a leading end gap of 2 costs 1 + 2 * 1
    ("ACGTAC", "GTAC", SCHEMES["cheap_ends"], (8 - 3, 6)),
    # mismatch -4 beats two end gaps of 8 + 3 each
    ("A", "C", SCHEMES["dear_ends"], (-4, 1)),
    # free end gaps: A- / -C (or -A / C-) scores 0 > -3: length 2
    ("A", "C", SCHEMES["free_ends"], (0, 2)),
    # every path scores 0: the shortest aligns as many pairs as it can
    ("A", "AA", SCHEMES["zero"], (0, 2)),
    ("AAA", "A", SCHEMES["zero"], (0, 3)),
])
def test_reference_hand_worked(a, b, scheme, expected):
    assert reference_affine.align(a, b, scheme) == expected
    check_against_reference([(a, b)], scheme)


def every_alignment(a: str, b: str):
    """All global alignments of a and b as lists of columns ("-" for a gap)."""
    if not a or not b:
        return [[(x, "-") for x in a] + [("-", y) for y in b]]
    return ([[(a[0], b[0])] + rest for rest in every_alignment(a[1:], b[1:])]
            + [[(a[0], "-")] + rest for rest in every_alignment(a[1:], b)]
            + [[("-", b[0])] + rest for rest in every_alignment(a, b[1:])])


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_kernel_gives_the_best_score_and_the_shortest_of_its_alignments(name):
    """Against brute force: every alignment of short pairs scored from its columns."""
    scheme = SCHEMES[name]
    pairs = random_pairs(seed=14, n=40, max_len=5)
    got = kernel(pairs, scheme)
    for (a, b), score, length in zip(pairs, *got):
        scored = [(reference_affine.column_score(c, scheme), -len(c)) for c in every_alignment(a, b)]
        best_score, shortest = max(scored)
        assert (score, length) == (best_score, -shortest), (a, b)


# --- the kernel against the reference ---

@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_random_pairs_match_reference(name):
    pairs = random_pairs(seed=11, n=60)
    pairs += random_pairs(seed=12, n=30, letters="AT")  # homopolymer-rich
    check_against_reference(pairs + [(b, a) for a, b in pairs], SCHEMES[name])


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_one_letter_sequences(name):
    """la = 1 or lb = 1: every letter against every sequence of 1 to 3 letters, and long ones."""
    short = ["".join(t) for n in (1, 2, 3) for t in itertools.product("ACGT", repeat=n)]
    rng = np.random.default_rng(5)
    long = [random_seq(rng, n) for n in (10, 25, 40)]
    pairs = [(x, s) for x in "ACGT" for s in short + long]
    check_against_reference(pairs + [(b, a) for a, b in pairs], SCHEMES[name])


@settings(max_examples=150, deadline=None)
@given(st.text("ACGT", min_size=1, max_size=40), st.text("ACGT", min_size=1, max_size=40),
       st.sampled_from(sorted(SCHEMES)))
def test_property_kernel_equals_reference(a, b, name):
    check_against_reference([(a, b), (b, a)], SCHEMES[name])


@settings(max_examples=100, deadline=None)
@given(st.text("AT", min_size=1, max_size=30), st.text("AT", min_size=1, max_size=30),
       st.sampled_from(sorted(SCHEMES)))
def test_property_homopolymer_rich(a, b, name):
    check_against_reference([(a, b)], SCHEMES[name])


def test_c005_pairs_match_reference(shared_data):
    pairs = c005_pairs(shared_data, 4, seed=4)
    check_against_reference(pairs, SCHEMES["c005"])


# --- scores against parasail ---
# parasail charges `open` for a gap's first letter and `extend` for each further one, so
# NCBI's open + k * extend is parasail's (open + extend, extend). Its nw charges end gaps like
# interior ones; its sg leaves all end gaps free but never ends on the all-gaps alignment
# (score 0 here), so with free end gaps our score is max(sg, 0). Only scores are compared:
# parasail's stats break ties between equal-scoring paths its own way.

def parasail_scores(parasail, pairs, params, mode="nw"):
    match, mismatch, gap_open, gap_extend = params
    matrix = parasail.matrix_create("ACGT", match, mismatch)
    fn = parasail.nw_scan_32 if mode == "nw" else parasail.sg_scan_32
    return [fn(a, b, gap_open + gap_extend, gap_extend, matrix).score for a, b in pairs]


@pytest.mark.parametrize("name", sorted(PARASAIL_DNA))
def test_random_pairs_match_parasail_nw(parasail, name):
    pairs = random_pairs(seed=21, n=300) + random_pairs(seed=22, n=100, letters="AT")
    score, _ = kernel(pairs, AffineScheme.dna(*PARASAIL_DNA[name]))
    assert score.tolist() == parasail_scores(parasail, pairs, PARASAIL_DNA[name])


@pytest.mark.parametrize("params", [(2, -4, 5, 2), (2, -3, 0, 3)])
def test_free_end_gaps_match_parasail_sg(parasail, params):
    pairs = random_pairs(seed=23, n=300)
    score, _ = kernel(pairs, AffineScheme.dna(*params, end_open=0, end_extend=0))
    expected = [max(s, 0) for s in parasail_scores(parasail, pairs, params, mode="sg")]
    assert score.tolist() == expected
    assert min(parasail_scores(parasail, pairs, params, mode="sg")) < 0  # the max matters


def test_c005_pairs_match_parasail(parasail, shared_data):
    pairs = c005_pairs(shared_data, 100, seed=7)
    assert len(pairs) > 90
    params = PARASAIL_DNA["c005"]
    score, _ = kernel(pairs, AffineScheme.dna(*params))
    assert score.tolist() == parasail_scores(parasail, pairs, params)
    score, _ = kernel(pairs, AffineScheme.dna(*params, end_open=0, end_extend=0))
    assert score.tolist() == [max(s, 0) for s in parasail_scores(parasail, pairs, params, "sg")]


# --- the scheme and the API ---

def test_scheme_values():
    s = AffineScheme.dna(2, -4, 20, 2)
    assert (s.end_open, s.end_extend) == (20, 2)  # end costs default to the interior ones
    m = s.matrix()
    assert m.dtype == np.int32 and m.shape == (4, 4) and m.flags.c_contiguous
    assert np.array_equal(m, np.where(np.eye(4, dtype=bool), 2, -4))
    # schemes compare and hash by value, whatever the subst was given as
    same = AffineScheme(DNA, np.array(s.subst, dtype=np.int64), np.int32(20), 2, 20, 2)
    assert same == s and hash(same) == hash(s) and len({s, same}) == 1
    assert same.subst == s.subst and type(same.subst[0][0]) is int


@pytest.mark.parametrize("field", ["gap_open", "gap_extend", "end_open", "end_extend"])
def test_negative_cost_is_user_error(field):
    costs = {"gap_open": 5, "gap_extend": 2, "end_open": 1, "end_extend": 1, field: -1}
    with pytest.raises(UserError, match=f"{field} must be between 0 and"):
        AffineScheme(DNA, SCHEMES["affine"].subst, **costs)


@pytest.mark.parametrize("kwargs, message", [
    ({"subst": ((1, 2), (3, 4))}, r"affine scheme: subst must be 4x4 \(letters ACGT\)"),
    ({"subst": 5}, "subst must be 4x4"),
    ({"subst": ((0.5,) * 4,) * 4}, "must be an integer"),
    ({"subst": ((MAX_COST + 1,) * 4,) * 4}, "beyond"),
    ({"gap_open": 1.5}, "gap_open must be an integer"),
    ({"end_extend": MAX_COST + 1}, "end_extend must be between"),
    ({"alphabet": "AACG"}, "distinct upper-case ASCII letters"),
])
def test_bad_scheme_is_user_error(kwargs, message):
    args = {"alphabet": DNA, "subst": SCHEMES["affine"].subst, "gap_open": 5, "gap_extend": 2,
            "end_open": 1, "end_extend": 1, **kwargs}
    with pytest.raises(UserError, match=message):
        AffineScheme(**args)


def test_too_long_sequence_is_user_error():
    codes, offsets = encode_all(["ACGT", "A" * (MAX_LENGTH + 1)])
    with pytest.raises(UserError, match="longer than the kernel's limit"):
        align_pairs(codes, offsets, [0], [0], SCHEMES["affine"])


def test_aligner_and_empty_input():
    pairs = random_pairs(seed=31, n=20)
    codes, offsets = encode_all([s for pair in pairs for s in pair])
    idx = np.arange(len(pairs))
    run = aligner(codes, offsets, SCHEMES["c005"], threads=1)
    score, length = run(2 * idx, 2 * idx + 1)
    expected = align_pairs(codes, offsets, 2 * idx, 2 * idx + 1, SCHEMES["c005"], threads=10_000)
    assert np.array_equal(score, expected[0]) and np.array_equal(length, expected[1])
    score, length = run([], [])
    assert score.shape == length.shape == (0,) and score.dtype == np.int32


def test_gpu_packed_width():
    """The GPU kernel packs states in 32 bits only where its bound allows (checked on the
    GPU by tests/gpu/test_gpu_affine.py with both widths)."""
    from seqpairs.backends.gpu.affine import packed_width

    c005 = SCHEMES["c005"]
    assert packed_width(c005, 3000) == 32
    assert packed_width(c005, 6000) == 64  # -(4 + 2) * 6000 is below -2**15
    assert packed_width(AffineScheme.dna(100, -100, 50, 10), 300) == 64
    assert packed_width(AffineScheme.dna(100, -1, 0, 1), 330) == 64  # 100 * 331 >= 2**15
    assert packed_width(AffineScheme.dna(100, -1, 0, 1), 300) == 32


def test_the_gpu_takes_the_strip_that_computes_a_launch_soonest():
    """backends/gpu/affine.least_padding (plain NumPy here): a strip of 36 computes a cell
    in 0.9 of 40's time, so it takes ~250 bp (7 x 36 = 252 columns; 40 would pad to 280)
    and also 400 and 1,500 bp (432 and 1,512 columns at 0.9 against 400 and 1,520); 40
    takes lengths that 36 pads by more than a tenth (37-40: 72 columns against 40)."""
    from seqpairs.backends.gpu.affine import CELL_TIME, least_padding
    from seqpairs.backends.gpu.kernels import VARIANTS

    for width in (32, 64):
        variants = [VARIANTS[f"affine_{width}"], VARIANTS[f"affine_{width}_narrow"]]
        assert sorted(v.defines["STRIP"] for v in variants) == sorted(CELL_TIME)
        assert {(v.source, v.function) for v in variants} == {("affine.cu", f"affine_pairs_{width}")}

        def strip(lengths):
            lengths = np.asarray(lengths)
            return least_padding(variants, lengths, lengths[::-1]).defines["STRIP"]

        assert strip([248, 250, 252]) == 36
        assert strip([400, 410]) == 36 and strip([1500]) == 36
        assert strip([37, 40]) == 40 and strip([150, 160]) == 40
        assert least_padding(variants[:1], np.array([250]), np.array([250])) is variants[0]


# --- the exact screen of affine passes (pairs.identity.AffineScreen, docs/pruning.md) ---


def weight_of(columns, alpha, beta):
    """alpha x matches - beta x mismatches of an alignment given as columns."""
    return sum(alpha if x == y else -beta for x, y in columns if "-" not in (x, y))


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_screen_reference_is_the_best_weight_among_optimal_alignments(name):
    """Against brute force: every alignment of short pairs scored from its columns."""
    scheme = SCHEMES[name]
    for a, b in random_pairs(seed=15, n=40, max_len=5):
        alignments = every_alignment(a, b)
        scores = [reference_affine.column_score(c, scheme) for c in alignments]
        best = max(scores)
        heaviest = max(weight_of(c, 3, 7) for c, s in zip(alignments, scores) if s == best)
        assert reference_affine.screen(a, b, scheme, 3, 7) == (best, heaviest), (a, b)


def adversarial_pairs(seed):
    """Related and unrelated pairs, homopolymer runs, large length differences (free and
    paid end gaps decide them) and one-letter sequences."""
    rng = np.random.default_rng(seed)
    pairs = random_pairs(seed, n=50, max_len=30)
    pairs += random_pairs(seed + 1, n=20, letters="AT", max_len=30)
    for _ in range(15):
        core = random_seq(rng, int(rng.integers(5, 15)))
        pairs.append((random_seq(rng, 8) + core + random_seq(rng, 6), mutate(rng, core, 0.1)))
    pairs += [("A" * 12, "A" * 5), ("ACGT", "T"), ("G", "G"), ("ACACACAC", "CACACACA")]
    return pairs


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_the_screen_never_drops_a_pair_its_traced_alignment_keeps(name):
    """For every iddef and thresholds at the pairs' own identities (the tightest tests),
    each pair whose traced alignment (vsearch's choice, the counts the distance stage
    keeps) reaches the threshold has the screen's weight at least AffineScreen.least; the
    screen's score is the traced one's. And the screen drops pairs."""
    from seqpairs.backends.common import AFFINE_COUNTS
    from seqpairs.backends.cpu.trace_affine import counter
    from seqpairs.pairs.identity import IDDEFS, AffineScreen, vsearch_percent

    scheme = SCHEMES[name]
    pairs = adversarial_pairs(17)
    codes, offsets = encode_all([s for pair in pairs for s in pair])
    k = np.arange(len(pairs))
    counts = dict(zip(AFFINE_COUNTS, counter(codes, offsets, scheme)(2 * k, 2 * k + 1)))
    la = np.array([len(a) for a, _ in pairs])
    lb = np.array([len(b) for _, b in pairs])
    screens = {}
    dropped = 0
    for iddef in IDDEFS:
        percent = vsearch_percent(iddef, counts["matches"], counts["mismatches"],
                                  counts["columns"], counts["terminal_gaps"],
                                  counts["openings"], la, lb)
        for t in np.unique(np.r_[np.quantile(percent / 100, [0.3, 0.6, 0.8, 0.95]), 0.97]):
            test = AffineScreen.at(iddef, t, 40)
            if test is None:
                continue
            weights = (test.alpha, test.beta)
            if weights not in screens:
                screens[weights] = np.array(
                    [reference_affine.screen(a, b, scheme, *weights) for a, b in pairs])
            score, weight = screens[weights].T
            assert np.array_equal(score, counts["score"])
            kept = percent >= 100.0 * t
            least = test.least(np.minimum(la, lb), np.maximum(la, lb))
            assert (weight >= least)[kept].all(), (iddef, t, np.flatnonzero(kept & (weight < least)))
            dropped += int((weight < least).sum())
    assert dropped > 0
