"""Protein test data: families of related proteins, unrelated ones, low-complexity runs
and ambiguity letters (tests/test_protein.py, tests/gpu)."""
import random

from seqpairs.scoring.alphabet import AMINO_ACIDS


def mutate(rng, seq, rate):
    """Substitutions, insertions and deletions at `rate` per letter (at least one letter)."""
    out = []
    for c in seq:
        roll = rng.random()
        if roll < rate / 3:
            continue
        out.append(rng.choice(AMINO_ACIDS) if roll < 2 * rate / 3 else c)
        if rng.random() < rate / 3:
            out.append(rng.choice(AMINO_ACIDS))
    return "".join(out) or seq[:1]


def proteins(seed, n=40, max_len=120):
    """Families of related proteins, unrelated ones, low-complexity runs and ambiguity
    letters (B, Z, X)."""
    rng = random.Random(seed)
    seqs = []
    for _ in range(n):
        kind = rng.randrange(4)
        if kind == 0 or not seqs:
            s = "".join(rng.choice(AMINO_ACIDS) for _ in range(rng.randint(1, max_len)))
        elif kind == 1:
            s = mutate(rng, seqs[-1], rng.choice((0.05, 0.2, 0.4)))
        elif kind == 2:
            s = "".join(rng.choice("GS") * rng.randint(1, 6) for _ in range(max_len // 6))
        else:
            s = mutate(rng, seqs[-1], 0.1)
            s = "".join(rng.choice("BZX") if rng.random() < 0.05 else c for c in s)
        seqs.append(s[:max_len])
    return list(dict.fromkeys(seqs))
