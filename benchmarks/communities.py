"""Mock amplicon communities for the benchmarks, independent of `seqpairs simulate`: taxa
on a binary tree, so that pairs of taxa differ by every divergence from --min to --max
(two taxa that split at the root differ by about the maximum, two sister taxa by about
the minimum), and reads of the taxa with sequencing errors.

    python benchmarks/communities.py -o unique.fasta [--sequences 16384] [--taxa 64]
                                     [--length 400] [--min 0.02] [--max 0.2] [--seed 1]

Taxa: a random root of --length bases; every branch at depth d of the tree substitutes a
fraction r_d of the bases (and indels at r_d / 20), with r_d growing geometrically from the
leaves up so that 2 sum(r_d) = --max and 2 r_D = --min. Reads: each taxon has a
log-normal abundance; a read gets substitutions, single-base indels and homopolymer-length
errors at `seqpairs simulate`'s rates (reads/simulate.py: sequence_read). The output is
the --sequences most abundant distinct reads as `>rK;size=N`, decreasing abundance, as
`seqpairs ingest` writes unique.fasta.
"""
from __future__ import annotations

import argparse
import math
from collections import Counter

import numpy as np

from seqpairs.reads.simulate import Params, indels, sequence_read, substitute, text


def branch_rates(depth: int, smallest: float, largest: float) -> list[float]:
    """Substitution rates of the branches at depths 1..depth, geometric, so that two leaves
    split at the root differ by `largest` and sisters by `smallest` (twice the sums)."""
    total = largest / 2 / (smallest / 2)  # sum of ratio**k, k < depth
    lo, hi = 1.0, 10.0
    for _ in range(100):  # solve (ratio**depth - 1) / (ratio - 1) = total
        mid = (lo + hi) / 2
        if (mid**depth - 1) / (mid - 1) < total:
            lo = mid
        else:
            hi = mid
    return [smallest / 2 * lo ** (depth - d) for d in range(1, depth + 1)]


def taxa(rng, count: int, length: int, smallest: float, largest: float) -> list[np.ndarray]:
    depth = max(1, math.ceil(math.log2(count)))
    rates = branch_rates(depth, smallest, largest)
    level = [rng.integers(0, 4, length).astype(np.uint8)]
    for rate in rates:
        children = []
        for parent in level:
            for _ in range(2):
                child, _ = substitute(rng, parent, rate)
                child, _ = indels(rng, child, rate / 20)
                children.append(child)
        level = children
    return level[:count]


def community(sequences: int, n_taxa: int = 64, length: int = 400, smallest: float = 0.02,
              largest: float = 0.2, seed: int = 1) -> list[tuple[str, int]]:
    """The `sequences` most abundant distinct reads (sequence, abundance)."""
    rng = np.random.default_rng(seed)
    refs = taxa(rng, n_taxa, length, smallest, largest)
    weights = rng.lognormal(0.0, 1.5, len(refs))
    params = Params(length=length)
    counts: Counter = Counter()
    while len(counts) < sequences:
        for k in rng.choice(len(refs), size=sequences, p=weights / weights.sum()):
            read, _ = sequence_read(rng, refs[k], params)
            counts[text(read)] += 1
    return counts.most_common(sequences)


def write_fasta(path, reads) -> None:
    with open(path, "w") as out:
        for k, (seq, size) in enumerate(reads):
            out.write(f">r{k};size={size}\n{seq}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--sequences", type=int, default=16384)
    parser.add_argument("--taxa", type=int, default=64)
    parser.add_argument("--length", type=int, default=400)
    parser.add_argument("--min", type=float, default=0.02)
    parser.add_argument("--max", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    write_fasta(args.output, community(args.sequences, args.taxa, args.length, args.min,
                                       args.max, args.seed))


if __name__ == "__main__":
    main()
