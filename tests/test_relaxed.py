"""The relaxed recurrence (backends/cpu/relaxed.py; docs/pruning.md, section 6): its
three-state recurrence is the least over every path, its kernel a lower bound on it, and
L(lam) at most the chosen path's cost minus lam g on every pair."""
import gzip

import numpy as np
import pytest
from Bio import SeqIO
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_relaxed
from seqpairs import backends, scoring
from seqpairs.backends.cpu import relaxed
from seqpairs.scoring.alphabet import encode_all

SEQDIST = scoring.get("seqdist")
CPU = backends.select("cpu")
T = 0.97


@settings(max_examples=60, deadline=None)
@given(st.text("ACGT", min_size=1, max_size=4), st.text("ACGT", min_size=1, max_size=4),
       st.sampled_from([0.0, 3.0, 10.0]))
def test_recurrence_is_the_least_over_every_path(a, b, lam):
    assert reference_relaxed.relaxed(a, b, SEQDIST, lam, T) == pytest.approx(
        reference_relaxed.brute_force(a, b, SEQDIST, lam, T), abs=1e-9)


def check(seqs, pairs, lams=(0.0, 10.0, 30.0)):
    """For every pair: the kernel at or below the reference by at most its rounding, and
    below C* - lam g(P*), P* the full kernel's path (g = matches - t aligned); within the
    band of the tightest upper bound, C* itself, at or above the whole matrix's and still
    below C* - lam g(P*)."""
    codes, offsets = encode_all(seqs)
    pa, pb = np.array([p for p, _ in pairs]), np.array([q for _, q in pairs])
    cost, _, matches, aligned, _ = CPU.seqdist(codes, offsets, SEQDIST, 2)(pa, pb)
    bound = relaxed.bounder(codes, offsets, SEQDIST, 2)
    steps = np.add(np.diff(offsets)[pa], np.diff(offsets)[pb])
    for lam in lams:
        kernel = bound(pa, pb, lam, T)
        chosen = cost - lam * (matches - T * aligned)
        assert np.all(kernel <= chosen + 1e-9), lam
        banded = bound(pa, pb, lam, T, cost)
        assert np.all(banded <= chosen + 1e-9), lam
        assert np.all(banded >= kernel), lam
        for k in range(min(len(pa), 40)):
            ref = reference_relaxed.relaxed(seqs[pa[k]], seqs[pb[k]], SEQDIST, lam, T)
            assert kernel[k] <= ref + 1e-9
            assert kernel[k] >= ref - steps[k] / relaxed.SCALE - 1e-9  # one unit a step


def mutated(rng, s, rate):
    out = []
    for c in s:
        r = rng.random()
        if r < rate / 3:
            continue
        out.append(c + c if r < 2 * rate / 3 else (rng.choice(list("ACGT")) if r < rate else c))
    return "".join(out) or s


@pytest.mark.parametrize("seed", [1, 2])
def test_bound_below_the_chosen_path_on_adversarial_pairs(seed):
    """Homopolymers, two-letter sequences, large length differences, relatives at 1-30%,
    groups of LANES pairs and one over."""
    rng = np.random.default_rng(seed)
    seqs = ["A" * 30, "A" * 31, "AT" * 15, "T", "ACGT" * 20, "ACGT" * 5]
    for _ in range(60):
        root = "".join(rng.choice(list("ACGT"), int(rng.integers(1, 120))))
        seqs += [root, mutated(rng, root, float(rng.uniform(0.01, 0.3)))]
    for _ in range(12):  # overhangs before or after (paid and free end gaps), and cut
        root = "".join(rng.choice(list("ACGT"), int(rng.integers(40, 120))))
        extra = "".join(rng.choice(list("ACGT"), int(rng.integers(1, 40))))
        seqs += [root, extra + mutated(rng, root, 0.03), root, root + extra,
                 root, root[len(extra):]]
    pairs = [(int(p), int(q)) for p, q in rng.integers(0, len(seqs), (relaxed.LANES + 1, 2))]
    pairs += [(k, k + 1) for k in range(6, len(seqs) - 1, 2)]
    check(seqs, pairs)


def test_bound_below_the_chosen_path_on_c005_pairs(shared_data):
    with gzip.open(shared_data / "C005_454.fa.gz", "rt") as fh:
        seqs = list(dict.fromkeys(str(r.seq) for r in SeqIO.parse(fh, "fasta")))[:300]
    rng = np.random.default_rng(5)
    check(seqs, [(int(p), int(q)) for p, q in rng.integers(0, len(seqs), (300, 2)) if p != q])


def test_pairs_whose_sums_could_pass_float32s_range_prove_nothing():
    codes, offsets = encode_all(["ACGT" * 4000, "ACGA" * 4000, "AC"])
    bound = relaxed.bounder(codes, offsets, SEQDIST, 1)(np.array([0, 2]), np.array([1, 1]),
                                                         30.0, T)
    assert bound[0] == -np.inf and np.isfinite(bound[1])
