"""PSSE engine on the CPU: LocalScheme, the shuffle spec (Philox4x32-10, Lemire, Fisher-Yates)
and the Numba scores, against Random123's known answers, the pure-Python reference and parasail."""
import hashlib
import itertools

import numpy as np
import parasail
import pytest
from Bio.Align import substitution_matrices
from scipy import stats

import reference_local
from seqpairs.backends.common import MAX_LENGTH
from seqpairs.backends.cpu import local as cpu_local
from seqpairs.errors import UserError
from seqpairs.scoring import LocalScheme
from seqpairs.stats.shuffle import Stream, permutation, philox4x32, subject_key

# Random123 tests/kat_vectors, "philox4x32 10" and "philox4x32 7": counter, key, result.
KAT = [
    (10, (0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    (10, (0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (10, (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    (7, (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0x4DFCCABA, 0x190A87F0, 0xC47362BA, 0xB6B5242A)),
]

SCHEMES = {
    "dna": LocalScheme.dna(2, -3, 5, 2),
    "dna linear": LocalScheme.dna(1, -1, 0, 1),
    # gaps cheaper than mismatches: gapped paths win often
    "dna cheap gaps": LocalScheme.dna(5, -4, 1, 1),
    "blosum62": LocalScheme.from_matrix("BLOSUM62", 10, 1),
    "pam30": LocalScheme.from_matrix("PAM30", 9, 1),
    "nuc44": LocalScheme.from_matrix("NUC.4.4", 3, 2, alphabet="dna"),
    # no symmetry: catches query and target swapped
    "asymmetric": LocalScheme("ACGT", ((3, -2, -5, -1), (-4, 2, -1, -6), (-6, 0, 1, -3),
                                       (-2, -5, -4, 4)), 2, 1),
}


def random_codes(rng, scheme, n):
    """Codes of a random sequence over the whole alphabet (BLOSUM62's B Z X * included)."""
    return rng.integers(0, len(scheme.alphabet), n).astype(np.uint8)


def mutate(rng, codes, k, rate=0.2):
    """Substitutions, deletions and insertions at about `rate` per letter."""
    out = []
    for c in codes:
        r = rng.random()
        if r < rate / 3:
            continue
        if r < 2 * rate / 3:
            out += [c, *rng.integers(0, k, int(rng.integers(1, 4)))]
        else:
            out.append(int(rng.integers(0, k)) if r < rate else c)
    return np.array(out, dtype=np.uint8)


def random_pairs(scheme, seed, n, max_len=40):
    """Pairs of lengths 1..max_len (and some of length 1), half related, half unrelated."""
    rng = np.random.default_rng(seed)
    k = len(scheme.alphabet)
    queries, targets = [], []
    for p in range(n):
        q = random_codes(rng, scheme, 1 if p % 7 == 0 else int(rng.integers(1, max_len + 1)))
        t = mutate(rng, q, k) if p % 2 else random_codes(rng, scheme, int(rng.integers(1, max_len)))
        queries.append(q)
        targets.append(t if t.size else q[:1].copy())
    return queries, targets


# --- the RNG and the permutation ---------------------------------------------------------

@pytest.mark.parametrize("rounds, counter, key, want", KAT)
def test_philox_known_answers(rounds, counter, key, want):
    assert philox4x32(counter, key, rounds) == want


def reference_draws(seed, pair, shuffle, bounds):
    stream = Stream(seed, pair, shuffle)
    return [stream.bounded(s) for s in bounds], stream


def test_numba_stream_equals_reference_with_rejections():
    # s = 2**31 + 1 rejects almost half of the words, so the rejection loop runs often
    bounds = [1, 2, 3, 7, 2**31 + 1, 2**32 - 1, 1000, 2**31 + 1] * 40
    for seed, pair, shuffle in [(0, 0, 0), (2**64 - 1, 2**63 - 1, 2**32 - 1), (12345, 7, 99)]:
        want, stream = reference_draws(seed, pair, shuffle, bounds)
        words_used = 4 * stream.block - len(stream.words)
        assert words_used > len(bounds) + 50  # rejections happened
        state = np.empty(cpu_local.STATE, dtype=np.uint64)
        cpu_local.start_stream(state, np.uint64(seed), np.uint64(pair), np.uint64(shuffle))
        got = [int(cpu_local.bounded(state, s)) for s in bounds]
        assert got == want
        assert all(0 <= v < s for v, s in zip(got, bounds))


def test_bounded_rejects_the_biased_words():
    # s = 3: (2**32 - 3) % 3 = 1, so a word x with x * 3 mod 2**32 == 0 (x = 0) is rejected
    class Words(Stream):
        def __init__(self, words):
            self.words_left = list(words)

        def next(self):
            return self.words_left.pop(0)

    stream = Words([0, 2**32 - 1])
    assert stream.bounded(3) == 2 and stream.words_left == []


@pytest.mark.parametrize("n", [0, 1, 2, 5, 64, 1000])
def test_numba_shuffle_equals_reference_permutation(n):
    state = np.empty(cpu_local.STATE, dtype=np.uint64)
    for seed, pair, shuffle in [(0, 0, 0), (1, 2, 3), (2**64 - 1, 2**63 - 1, 2**32 - 1)]:
        a = np.arange(n, dtype=np.int64)
        cpu_local.start_stream(state, np.uint64(seed), np.uint64(pair), np.uint64(shuffle))
        cpu_local.shuffle_in_place(a, n, state)
        assert np.array_equal(a, permutation(n, seed, pair, shuffle))


def test_permutation_is_a_reproducible_permutation_keeping_composition():
    rng = np.random.default_rng(5)
    target = rng.integers(0, 4, 300)
    a = permutation(300, 11, 3, 4)
    assert a.dtype == np.int64 and np.array_equal(np.sort(a), np.arange(300))
    assert np.array_equal(np.bincount(target[a], minlength=4), np.bincount(target, minlength=4))
    assert np.array_equal(a, permutation(300, 11, 3, 4))
    assert len(permutation(0, 1, 2, 3)) == 0 and list(permutation(1, 1, 2, 3)) == [0]


def test_permutations_differ_across_seeds_pairs_and_shuffles():
    keys = [(seed, pair, shuffle) for seed in (0, 1, 2**40) for pair in (0, 1, 2**33)
            for shuffle in (0, 1, 2**31)]
    perms = {tuple(permutation(50, *key)) for key in keys}
    assert len(perms) == len(keys)


def test_permutations_are_uniform():
    # Fixed keys, so the result is deterministic (no flakes); a biased shuffle (e.g. Sattolo's,
    # j < i, or a modulo-biased bound) fails these by far.
    n_perm = 4800
    counts = {p: 0 for p in itertools.permutations(range(4))}
    for s in range(n_perm):
        counts[tuple(permutation(4, 2024, 17, s))] += 1
    assert stats.chisquare(list(counts.values())).pvalue > 1e-3
    first = np.bincount([permutation(10, 7, s, 0)[0] for s in range(3000)], minlength=10)
    assert stats.chisquare(first).pvalue > 1e-3


# --- LocalScheme ------------------------------------------------------------------------

def test_dna_scheme():
    scheme = LocalScheme.dna(2, -3, 5, 2)
    assert scheme.alphabet == "ACGT"
    m = scheme.matrix()
    assert m.dtype == np.int32 and m.shape == (4, 4) and m.flags.c_contiguous
    assert np.array_equal(m, np.where(np.eye(4, dtype=bool), 2, -3))
    assert hash(scheme) == hash(LocalScheme.dna(2, -3, 5, 2))


@pytest.mark.parametrize("name, alphabet, letters", [
    ("BLOSUM62", "protein", "ARNDCQEGHILKMFPSTWYVBZX*"),
    ("PAM250", "protein", "ARNDCQEGHILKMFPSTWYVBZX*"),
    ("STR", "protein", "ARNDCQEGHILKMFPSTWYV"),
    ("NUC.4.4", "dna", "ACGTSWRYKMBVHDN"),
    ("HOXD70", "dna", "ACGT"),
])
def test_matrix_scheme_follows_biopython(name, alphabet, letters):
    scheme = LocalScheme.from_matrix(name, 11, 1, alphabet=alphabet)
    table = substitution_matrices.load(name)
    assert scheme.alphabet == letters
    assert (scheme.gap_open, scheme.gap_extend) == (11, 1)
    m = scheme.matrix()
    for a, b in itertools.product(range(len(letters)), repeat=2):
        assert m[a, b] == table[letters[a], letters[b]]


@pytest.mark.parametrize("call, message", [
    (lambda: LocalScheme.from_matrix("BLOSUM63", 10, 1), "unknown substitution matrix 'BLOSUM63'; "
                                                     "available: .*BLOSUM62"),
    (lambda: LocalScheme.from_matrix("BENNER6", 10, 1), "non-integer"),
    (lambda: LocalScheme.from_matrix("NUC.4.4", 10, 1), "no score for"),
    (lambda: LocalScheme.from_matrix("BLOSUM62", 10, 1, alphabet="rna"), "alphabet must be"),
    (lambda: LocalScheme.dna(2, -3, -1, 2), "gap_open must be between 0"),
    (lambda: LocalScheme.dna(2, -3, 5, 10_001), "gap_extend must be between 0"),
    (lambda: LocalScheme.dna(2, -3, 1.5, 2), "gap_open must be an integer"),
    (lambda: LocalScheme.dna(20_000, -3, 1, 2), "beyond"),
    (lambda: LocalScheme("ACGT", ((1, 2), (3, 4)), 1, 1), "subst must be 4x4"),
    (lambda: LocalScheme("ACGA", ((0,) * 4,) * 4, 1, 1), "distinct upper-case"),
    (lambda: LocalScheme("acgt", ((0,) * 4,) * 4, 1, 1), "distinct upper-case"),
])
def test_bad_schemes_are_user_errors(call, message):
    with pytest.raises(UserError, match=message):
        call()


def test_encode():
    dna = LocalScheme.dna(1, -1, 1, 1)
    codes = dna.encode("acgTTGCA", "q")
    assert codes.dtype == np.uint8 and list(codes) == [0, 1, 2, 3, 3, 2, 1, 0]
    assert dna.encode("", "q").size == 0
    with pytest.raises(UserError, match=r"^seqs.fa:r1: letter 'N' is not in the ACGT alphabet$"):
        dna.encode("ACGNT", "seqs.fa:r1")
    protein = LocalScheme.from_matrix("BLOSUM62", 10, 1)
    assert list(protein.encode("ar*x", "q")) == [0, 1, 23, 22]
    with pytest.raises(UserError, match="letter 'J' is not in the ARNDCQEGHILKMFPSTWYVBZX"):
        protein.encode("MKJL", "q")
    with pytest.raises(UserError, match="letter 'é'"):
        protein.encode("MKéL", "q")


# --- scores -----------------------------------------------------------------------------

def engine(scheme, queries, targets, shuffles=0, seed=1, keys=None, threads=None):
    return cpu_local.local_scores(scheme, *reference_local.one_target_each(queries, targets, keys),
                                  shuffles, seed, threads)


@pytest.mark.parametrize("name", list(SCHEMES))
def test_scores_equal_the_reference(name):
    scheme = SCHEMES[name]
    queries, targets = random_pairs(scheme, 1, 60)
    real, shuffled = engine(scheme, queries, targets)
    assert real.dtype == np.int32 and real.shape == (60,) and shuffled.shape == (60, 0)
    for k, (q, t) in enumerate(zip(queries, targets)):
        assert real[k] == reference_local.score(q, t, scheme), k
    assert real.max() > 10  # related pairs: real alignments, not just single letters


def parasail_matrix(scheme):
    matrix = parasail.matrix_create(scheme.alphabet, 0, 0)
    for a, b in itertools.product(range(len(scheme.alphabet)), repeat=2):
        matrix.set_value(a, b, scheme.subst[a][b])
    return matrix


@pytest.mark.parametrize("name", ["dna", "dna linear", "blosum62", "nuc44", "asymmetric"])
def test_scores_equal_parasail(name):
    scheme = SCHEMES[name]
    queries, targets = random_pairs(scheme, 2, 100, max_len=200)
    real, _ = engine(scheme, queries, targets)
    matrix = parasail_matrix(scheme)
    for k, (q, t) in enumerate(zip(queries, targets)):
        # parasail's open is the cost of a gap's first letter: open + extend here
        want = parasail.sw("".join(scheme.alphabet[c] for c in q),
                           "".join(scheme.alphabet[c] for c in t),
                           scheme.gap_open + scheme.gap_extend, scheme.gap_extend, matrix).score
        assert real[k] == want, k


@pytest.mark.parametrize("name", ["dna", "blosum62", "asymmetric"])
def test_shuffled_scores_equal_the_reference_on_the_permutation(name):
    scheme = SCHEMES[name]
    queries, targets = random_pairs(scheme, 3, 12, max_len=30)
    keys = np.array([5, 0, 2**40, 7, 3, 9, 11, 13, 1, 2, 4, 6])
    seed = 2**63 + 12345
    real, shuffled = engine(scheme, queries, targets, shuffles=9, seed=seed, keys=keys)
    assert shuffled.dtype == np.int32 and shuffled.shape == (12, 9)
    for k, (q, t) in enumerate(zip(queries, targets)):
        assert real[k] == reference_local.score(q, t, scheme)
        for s in range(9):
            shuffled_target = t[permutation(len(t), seed, int(keys[k]), s)]
            assert shuffled[k, s] == reference_local.score(q, shuffled_target, scheme), (k, s)


def test_scores_do_not_depend_on_threads_chunks_or_batch():
    scheme = SCHEMES["blosum62"]
    queries, targets = random_pairs(scheme, 4, 7, max_len=60)
    keys = np.arange(100, 107)
    one = engine(scheme, queries, targets, shuffles=150, seed=3, keys=keys, threads=1)
    two = engine(scheme, queries, targets, shuffles=150, seed=3, keys=keys, threads=2)
    alone = engine(scheme, queries[4:5], targets[4:5], shuffles=150, seed=3, keys=keys[4:5])
    assert all(np.array_equal(a, b) for a, b in zip(one, two))
    assert np.array_equal(alone[1][0], one[1][4])
    # the shuffles of a related pair score below the pair itself, and not all alike
    assert one[1][3].max() < one[0][3] and len(set(one[1][3])) > 3


def test_empty_sequences_and_no_pairs():
    scheme = SCHEMES["dna"]
    real, shuffled = engine(scheme, [np.zeros(0, np.uint8), np.array([0], np.uint8)],
                            [np.array([0, 1], np.uint8), np.zeros(0, np.uint8)], shuffles=2)
    assert list(real) == [0, 0] and not shuffled.any()
    real, shuffled = engine(scheme, [], [], shuffles=3)
    assert real.shape == (0,) and shuffled.shape == (0, 3)


@pytest.mark.parametrize("change, message", [
    (dict(targets=[]), "0 targets and 1 target keys"),
    (dict(pairs=np.array([[0, 1]])), "a pair's target index is outside the 1 target"),
    (dict(pairs=np.array([[-1, 0]])), "a pair's query index is outside the 1 query"),
    (dict(shuffles=-1), "shuffles must be between 0"),
    (dict(seed=2**64), "seed must be between 0 and 2\\*\\*64 - 1"),
    (dict(seed=-1), "seed must be between 0"),
    (dict(keys=np.array([-3])), "target keys must be >= 0"),
    (dict(queries=[np.array([0, 4], np.uint8)]), "query 0 has letter code 4"),
    (dict(targets=[np.zeros(MAX_LENGTH + 1, np.uint8)]), "target 0 has 16384 letters"),
    (dict(profiles=[np.zeros((3, 4))]), r"the profile of query 0 is \(3, 4\), not \(2, 4\)"),
    (dict(profiles=[np.full((2, 4), 10_001)]), "the profile of query 0 has a score beyond"),
    (dict(profiles=[]), "1 queries and 0 profiles"),
])
def test_bad_inputs_are_user_errors(change, message):
    args = dict(scheme=SCHEMES["dna"], queries=[np.array([0, 1], np.uint8)],
                targets=[np.array([1, 2], np.uint8)], pairs=np.array([[0, 0]]),
                keys=np.array([0]), shuffles=2, seed=1)
    args.update(change)
    with pytest.raises(UserError, match=message):
        cpu_local.local_scores(**args)


# --- targets shared by queries, keyed by id; position-specific profiles -----------------

def test_subject_key_is_the_specs_blake2b():
    ids = ["r1", "r2", "seq with spaces", "é", ""]
    keys = [subject_key(i) for i in ids]
    for i, key in zip(ids, keys):
        digest = hashlib.blake2b(i.encode(), digest_size=8).digest()
        assert key == int.from_bytes(digest, "little") // 2 and 0 <= key < 2**63
    assert len(set(keys)) == len(keys)


def test_a_targets_shuffles_serve_all_its_queries_in_any_order():
    scheme = SCHEMES["blosum62"]
    rng = np.random.default_rng(8)
    queries = [random_codes(rng, scheme, int(rng.integers(1, 50))) for _ in range(9)]
    targets = [random_codes(rng, scheme, int(rng.integers(1, 50))) for _ in range(3)]
    keys = np.array([subject_key(f"t{k}") for k in range(3)])
    pairs = np.array([(q, t) for q in range(9) for t in range(3) if (q + t) % 4])
    seed, shuffles = 99, 70  # 70 slots: more than one chunk of a group's slots
    real, shuffled = cpu_local.local_scores(scheme, queries, targets, pairs, keys, shuffles,
                                            seed, 2)
    for k in rng.choice(len(pairs), 6, replace=False):
        q, t = queries[pairs[k, 0]], targets[pairs[k, 1]]
        assert real[k] == reference_local.score(q, t, scheme)
        for s in (0, 33, 69):
            shuffled_t = t[permutation(len(t), seed, int(keys[pairs[k, 1]]), s)]
            assert shuffled[k, s] == reference_local.score(q, shuffled_t, scheme), (k, s)
    # reordered, alone, with targets listed in another order: the same scores per pair
    flip = rng.permutation(len(pairs))
    again = cpu_local.local_scores(scheme, queries, targets[::-1], pairs[flip] * [1, -1] + [0, 2],
                                   keys[::-1], shuffles, seed, 1)
    assert np.array_equal(again[0], real[flip]) and np.array_equal(again[1], shuffled[flip])
    alone = cpu_local.local_scores(scheme, queries, targets, pairs[4:5], keys, shuffles, seed)
    assert np.array_equal(alone[1][0], shuffled[4])


class Recorded(list):
    """A list that records which items were read (psse passes a whole FASTA's sequences
    with each work list's pairs)."""

    def __init__(self, items):
        super().__init__(items)
        self.read = set()

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)

    def __iter__(self):
        raise AssertionError("the engine walked every sequence")


def test_a_call_reads_only_its_pairs_sequences():
    scheme = SCHEMES["asymmetric"]
    rng = np.random.default_rng(12)
    queries, targets = random_pairs(scheme, 13, 40, max_len=30)
    profiles = [rng.integers(-9, 13, (len(q), 4)).astype(np.int32) for q in queries]
    keys = np.array([subject_key(f"t{k}") for k in range(40)])
    # sparse, repeated and unordered rows: their compacted numbering must map back
    pairs = np.array([(31, 7), (2, 38), (31, 38), (17, 7), (2, 7), (39, 0)])
    seen_q, seen_t, seen_p = Recorded(queries), Recorded(targets), Recorded(profiles)
    real, shuffled = cpu_local.local_scores(scheme, seen_q, seen_t, pairs, keys, 9, 4,
                                            profiles=seen_p)
    assert seen_q.read == seen_p.read == {2, 17, 31, 39} and seen_t.read == {0, 7, 38}
    for k, (q, t) in enumerate(pairs):
        assert real[k] == reference_local.score(queries[q], targets[t], scheme, profiles[q])
        shuffled_t = targets[t][permutation(len(targets[t]), 4, int(keys[t]), 8)]
        assert shuffled[k, 8] == reference_local.score(queries[q], shuffled_t, scheme,
                                                       profiles[q]), k


@pytest.mark.parametrize("name", ["dna", "blosum62", "asymmetric"])
def test_profiles_score_as_the_reference(name):
    scheme = SCHEMES[name]
    rng = np.random.default_rng(9)
    queries, targets = random_pairs(scheme, 10, 20, max_len=40)
    k = len(scheme.alphabet)
    profiles = [rng.integers(-9, 13, (len(q), k)).astype(np.int32) for q in queries]
    args = reference_local.one_target_each(queries, targets)
    real, shuffled = cpu_local.local_scores(scheme, *args, 5, 3, profiles=profiles)
    for j, (q, t) in enumerate(zip(queries, targets)):
        assert real[j] == reference_local.score(q, t, scheme, profiles[j]), j
        shuffled_t = t[permutation(len(t), 3, j, 4)]
        assert shuffled[j, 4] == reference_local.score(q, shuffled_t, scheme, profiles[j])
    # the matrix's own rows as a profile: the matrix's scores
    rows = [scheme.matrix()[q] for q in queries]
    assert all(np.array_equal(a, b) for a, b in zip(
        cpu_local.local_scores(scheme, *args, 5, 3, profiles=rows),
        cpu_local.local_scores(scheme, *args, 5, 3)))
