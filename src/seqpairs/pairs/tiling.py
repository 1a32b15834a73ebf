"""Length bins and the tiling of the pair space into work units (the binning stage's engine).

Sequences are sorted by length (stable, so ties keep file order) and cut into bins of
`bin_width` bp. The pair space is tiled by pairs of bins (p >= q); each bin pair is cut
into blocks so that a tile holds about `tile_pairs` pairs. A tile's cost estimate is its
exact cell count, the sum of len_a * len_b over its pairs; the kernels' time grows with it.

Tiles refer to positions in the length-sorted member list of each bin, which
`bin_members` recomputes from the lengths alone, so tiles.tsv plus unique.fasta is enough
to run any subset of tiles anywhere (shards, MPI ranks).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

BIN_WIDTH = 25  # default bin width, bp
TILE_PAIRS = 250_000  # default pairs per tile
BIN_COLUMNS = ["bin", "min", "max", "count"]
TILE_COLUMNS = ["tile", "bin_a", "bin_b", "a_start", "a_end", "b_start", "b_end", "pairs", "cells"]


def make_bins(lengths: np.ndarray, bin_width: int) -> pd.DataFrame:
    """Bins [min, max] of width bin_width starting at the shortest sequence; empty bins omitted."""
    lengths = np.asarray(lengths)
    lo = int(lengths.min())
    index = (lengths - lo) // bin_width
    rows = []
    for k, b in enumerate(np.unique(index)):
        members = lengths[index == b]
        rows.append((k, int(members.min()), int(members.max()), len(members)))
    return pd.DataFrame(rows, columns=BIN_COLUMNS)


def bin_members(lengths: np.ndarray, bins: pd.DataFrame) -> list[np.ndarray]:
    """Sequence indices of each bin, sorted by length then index."""
    lengths = np.asarray(lengths)
    order = np.argsort(lengths, kind="stable")
    sorted_len = lengths[order]
    out = []
    for lo, hi in zip(bins["min"], bins["max"]):
        start = np.searchsorted(sorted_len, lo, side="left")
        end = np.searchsorted(sorted_len, hi, side="right")
        out.append(order[start:end])
    return out


def _blocks(count: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(count, s + size)) for s in range(0, count, size)]


def make_tiles(lengths: np.ndarray, bins: pd.DataFrame, tile_pairs: int) -> pd.DataFrame:
    """Tiles of the lower triangle of the pair space, bin pair by bin pair."""
    lengths = np.asarray(lengths, dtype=np.int64)
    members = bin_members(lengths, bins)
    block = max(1, int(np.sqrt(tile_pairs)))
    rows = []
    for p in range(len(members)):
        for q in range(p + 1):
            for ba, (a0, a1) in enumerate(_blocks(len(members[p]), block)):
                for bb, (b0, b1) in enumerate(_blocks(len(members[q]), block)):
                    if p == q and bb > ba:
                        continue
                    la = lengths[members[p][a0:a1]]
                    lb = lengths[members[q][b0:b1]]
                    if p == q and ba == bb:  # triangle within one block
                        pairs = len(la) * (len(la) - 1) // 2
                        cells = (la.sum() ** 2 - (la**2).sum()) // 2
                    else:
                        pairs = len(la) * len(lb)
                        cells = la.sum() * lb.sum()
                    if pairs:
                        rows.append((len(rows), p, q, a0, a1, b0, b1, pairs, int(cells)))
    return pd.DataFrame(rows, columns=TILE_COLUMNS)


def tile_pairs(tile, members, xp=np):
    """The pairs (i, j), i > j, of one tile (a row of the tiles table).

    `members` holds each bin's member indices as arrays of `xp` (NumPy, or CuPy to build
    the pairs on the GPU).
    """
    xs = members[tile.bin_a][tile.a_start:tile.a_end]
    ys = members[tile.bin_b][tile.b_start:tile.b_end]
    if tile.bin_a == tile.bin_b and tile.a_start == tile.b_start:
        u, v = xp.triu_indices(len(xs), k=1)
        x, y = xs[u], xs[v]
    else:
        x = xp.repeat(xs, len(ys))
        y = xp.tile(ys, len(xs))
    return xp.maximum(x, y), xp.minimum(x, y)
