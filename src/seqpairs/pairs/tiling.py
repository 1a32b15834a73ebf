"""Length bins and the tiling of the pair space into work units (the binning stage's engine).

Sequences are sorted by length (stable, so ties keep file order) and cut into bins of
`bin_width` bp. The pair space is tiled by pairs of bins (p >= q); each bin pair is cut
into blocks so that a tile holds about `tile_pairs` pairs. A tile's cost estimate is its
exact cell count, the sum of len_a * len_b over its pairs; the kernels' time grows with it.

Tiles refer to positions in the length-sorted member list of each bin, which
`bin_members` recomputes from the lengths alone, so tiles.tsv plus unique.fasta is enough
to run any subset of tiles anywhere (shards, MPI ranks). Bins and tiles read back from
files are checked against the sequences' lengths (check_bins, check_tiles): every
sequence in one bin, every pair in exactly one tile, each tile with its true pairs and
cells; anything else is one error line.

Bins and tiles are NumPy structured arrays of int64 columns (BIN_COLUMNS, TILE_COLUMNS;
`pd.DataFrame(table)` turns one into a table to write): the distance command then runs
without importing pandas, about a fifth of its start-up (benchmarks/RESULTS.md).
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib import recfunctions

from ..errors import UserError

if TYPE_CHECKING:
    import pandas as pd

BIN_WIDTH = 25  # default bin width, bp
TILE_PAIRS = 250_000  # default pairs per tile
BIN_COLUMNS = ["bin", "min", "max", "count"]
TILE_COLUMNS = ["tile", "bin_a", "bin_b", "a_start", "a_end", "b_start", "b_end", "pairs", "cells"]


def rows_table(rows, columns) -> np.ndarray:
    """Rows of integers (a list of rows or a 2-D array) as a structured array of int64
    columns by name."""
    values = np.array(rows, np.int64).reshape(-1, len(columns))
    return recfunctions.unstructured_to_structured(
        values, dtype=np.dtype([(column, np.int64) for column in columns]))


def make_bins(lengths: np.ndarray, bin_width: int) -> np.ndarray:
    """Bins [min, max] of width bin_width starting at the shortest sequence; empty bins omitted."""
    lengths = np.asarray(lengths)
    lo = int(lengths.min())
    index = (lengths - lo) // bin_width
    rows = []
    for k, b in enumerate(np.unique(index)):
        members = lengths[index == b]
        rows.append((k, int(members.min()), int(members.max()), len(members)))
    return rows_table(rows, BIN_COLUMNS)


def bin_members(lengths: np.ndarray, bins: np.ndarray) -> list[np.ndarray]:
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


def make_tiles(lengths: np.ndarray, bins: np.ndarray, tile_pairs: int) -> np.ndarray:
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
    return rows_table(rows, TILE_COLUMNS)


def tile_pairs(tile, members, xp=np):
    """The pairs (i, j), i > j, of one tile (a row of the tiles table).

    `members` holds each bin's member indices as arrays of `xp` (NumPy, or CuPy to build
    the pairs on the GPU).
    """
    # plain Python ints for the slices, as the rows of a DataFrame gave them
    bin_a, bin_b, a_start, a_end, b_start, b_end = (int(tile[c]) for c in TILE_COLUMNS[1:7])
    xs = members[bin_a][a_start:a_end]
    ys = members[bin_b][b_start:b_end]
    if bin_a == bin_b and a_start == b_start:
        u, v = xp.triu_indices(len(xs), k=1)
        x, y = xs[u], xs[v]
    else:
        x = xp.repeat(xs, len(ys))
        y = xp.tile(ys, len(xs))
    return xp.maximum(x, y), xp.minimum(x, y)


# ---------------------------------------------------------------- checks of read tilings


def integers(table: pd.DataFrame, columns, path) -> np.ndarray:
    """`columns` of a table read from `path` (formats.tables.read_tsv) as a structured
    array of int64; a cell that is no integer is a UserError naming its line."""
    import pandas as pd  # only for tilings read from files

    out = []
    for column in columns:
        values = pd.to_numeric(table[column], errors="coerce")
        bad = np.flatnonzero((values.isna() | (values % 1 != 0) | (values.abs() > 2**53))
                             .to_numpy())
        if bad.size:
            raise UserError(f"{path}:{bad[0] + 2}: {column} {table[column].iloc[bad[0]]!r} "
                            "is not an integer")
        out.append(values.to_numpy(np.int64))
    return rows_table(np.column_stack(out), columns)


def check_bins(lengths: np.ndarray, bins: pd.DataFrame, path, source) -> np.ndarray:
    """Bins read from `path` with integer columns, after checking that they hold every
    sequence of `source` (with these lengths) once, as make_bins would place them."""
    bins = integers(bins, BIN_COLUMNS, path)
    lengths = np.asarray(lengths)
    if int(bins["count"].sum()) != len(lengths):
        raise UserError(f"{path}: bins hold {int(bins['count'].sum())} sequences, {source} has "
                        f"{len(lengths)} (files of different runs?)")
    for k, (number, low, high, count) in enumerate(bins.tolist()):
        line = f"{path}:{k + 2}"
        if number != k:
            raise UserError(f"{line}: bin {number}, expected {k} (bins are numbered in order)")
        if low > high or (k and low <= bins["max"][k - 1]):
            raise UserError(f"{line}: bin {k} spans {low}-{high}, not above the bin before it")
        held = int(np.count_nonzero((lengths >= low) & (lengths <= high)))
        if held != count:
            raise UserError(f"{line}: bin {k} ({low}-{high} bp) has count {count}, but {source} "
                            f"has {held} sequences of those lengths")
    return bins


def check_tiles(lengths: np.ndarray, bins: np.ndarray, tiles: pd.DataFrame, path,
                source) -> np.ndarray:
    """Tiles read from `path` with integer columns, after checking that they cover every
    pair of the (checked) bins' members exactly once, each with its true pairs and cells."""
    tiles = integers(tiles, TILE_COLUMNS, path)
    t = {column: tiles[column] for column in TILE_COLUMNS}
    counts = bins["count"]

    def refuse(wrong, problem):
        k = int(np.flatnonzero(wrong)[0])
        raise UserError(f"{path}:{k + 2}: {problem(k)}")

    wrong = t["tile"] != np.arange(len(tiles))
    if wrong.any():
        refuse(wrong, lambda k: f"tile {t['tile'][k]}, expected {k} (tiles are numbered in order)")
    wrong = ~((t["bin_b"] >= 0) & (t["bin_b"] <= t["bin_a"]) & (t["bin_a"] < len(counts)))
    if wrong.any():
        refuse(wrong, lambda k: f"bins {t['bin_a'][k]}, {t['bin_b'][k]} are not bin_a >= bin_b "
                                f"of the {len(counts)} bins")
    size_a, size_b = counts[t["bin_a"]], counts[t["bin_b"]]
    wrong = ~((0 <= t["a_start"]) & (t["a_start"] < t["a_end"]) & (t["a_end"] <= size_a)
              & (0 <= t["b_start"]) & (t["b_start"] < t["b_end"]) & (t["b_end"] <= size_b))
    if wrong.any():
        refuse(wrong, lambda k: f"ranges {t['a_start'][k]}-{t['a_end'][k]}, "
                                f"{t['b_start'][k]}-{t['b_end'][k]} are not within bins of "
                                f"{size_a[k]} and {size_b[k]} sequences")
    same_bin = t["bin_a"] == t["bin_b"]
    triangle = same_bin & (t["a_start"] == t["b_start"]) & (t["a_end"] == t["b_end"])
    wrong = same_bin & ~triangle & (t["b_end"] > t["a_start"])
    if wrong.any():
        refuse(wrong, lambda k: f"ranges {t['a_start'][k]}-{t['a_end'][k]} and "
                                f"{t['b_start'][k]}-{t['b_end'][k]} of bin {t['bin_a'][k]} "
                                "overlap but are not the same")
    # each tile's pairs and cells from its ranges: prefix sums of the members' lengths
    members = bin_members(lengths, bins)
    first = np.concatenate([[0], np.cumsum(counts + 1)])[:-1]  # bin b's sums start here
    member_lengths = [np.asarray(lengths, np.int64)[m] for m in members]
    sums = np.concatenate([np.r_[0, np.cumsum(x)] for x in member_lengths])
    squares = np.concatenate([np.r_[0, np.cumsum(x * x)] for x in member_lengths])

    def span(table, bin_, start, end):
        return table[first[bin_] + end] - table[first[bin_] + start]

    sum_a = span(sums, t["bin_a"], t["a_start"], t["a_end"])
    sum_b = span(sums, t["bin_b"], t["b_start"], t["b_end"])
    width_a = t["a_end"] - t["a_start"]
    pairs = np.where(triangle, width_a * (width_a - 1) // 2, width_a * (t["b_end"] - t["b_start"]))
    cells = np.where(triangle,
                     (sum_a**2 - span(squares, t["bin_a"], t["a_start"], t["a_end"])) // 2,
                     sum_a * sum_b)
    wrong = (t["pairs"] != pairs) | (t["cells"] != cells)
    if wrong.any():
        refuse(wrong, lambda k: f"pairs {t['pairs'][k]}, cells {t['cells'][k]}; its ranges hold "
                                f"{pairs[k]} pairs, {cells[k]} cells")
    # every bin pair's tiles hold its pairs once: the right number, and no two overlap
    group = t["bin_a"] * len(counts) + t["bin_b"]
    order = np.argsort(group, kind="stable")
    keys, starts, sizes = np.unique(group[order], return_index=True, return_counts=True)
    held = np.add.reduceat(pairs[order], starts) if len(order) else np.zeros(0, np.int64)
    p, q = keys // max(len(counts), 1), keys % max(len(counts), 1)
    need = np.where(p == q, counts[p] * (counts[p] - 1) // 2, counts[p] * counts[q])
    for k in np.flatnonzero(sizes > 1):
        rows = order[starts[k]:starts[k] + sizes[k]]
        _check_cover({c: v[rows] for c, v in t.items()}, int(p[k]), int(q[k]), counts, path)
    wrong = held != need
    if wrong.any():
        k = int(np.flatnonzero(wrong)[0])
        raise UserError(f"{path}: the tiles of bin {p[k]} with bin {q[k]} hold {held[k]} pairs, "
                        f"the bins have {need[k]}")
    total = len(lengths) * (len(lengths) - 1) // 2
    if int(pairs.sum()) != total:
        raise UserError(f"{path}: tiles hold {int(pairs.sum())} pairs, {source} has {total} "
                        "(a bin pair without tiles?)")
    return tiles


def _check_cover(t: dict, p: int, q: int, counts, path) -> None:
    """The tiles `t` of bins p >= q cover no pair twice: on the grid of their range ends
    (within bin p: cells X > Y, and the triangles X == Y of two or more members)."""
    if p != q:
        xs = np.unique(np.r_[0, counts[p], t["a_start"], t["a_end"]])
        ys = np.unique(np.r_[0, counts[q], t["b_start"], t["b_end"]])
    else:
        xs = ys = np.unique(np.r_[0, counts[p], t["a_start"], t["a_end"], t["b_start"],
                                  t["b_end"]])
    cover = np.zeros((len(xs), len(ys)), np.int64)  # difference array, then its prefix sums
    triangle = (t["a_start"] == t["b_start"]) & (p == q)
    a0, a1 = np.searchsorted(xs, t["a_start"]), np.searchsorted(xs, t["a_end"])
    b0, b1 = np.searchsorted(ys, t["b_start"]), np.searchsorted(ys, t["b_end"])
    for sign, rows, cols in ((1, a0, b0), (-1, a1, b0), (-1, a0, b1), (1, a1, b1)):
        np.add.at(cover, (rows[~triangle], cols[~triangle]), sign)
    cover = cover.cumsum(0).cumsum(1)[:-1, :-1]
    for start, end in zip(a0[triangle], a1[triangle]):
        cover[start:end, start:end] += np.tril(np.ones((end - start, end - start), np.int64))
    if p == q:  # a triangle of one member holds no pair
        np.fill_diagonal(cover, np.where(np.diff(xs) == 1, 0, np.diagonal(cover)))
    twice = np.argwhere(cover > 1)
    if twice.size:
        x, y = twice[0]
        raise UserError(f"{path}: the pairs of bin {p} members {xs[x]}-{xs[x + 1]} with bin {q} "
                        f"members {ys[y]}-{ys[y + 1]} are in {cover[x, y]} tiles, not in one")


def tiling_digest(bins: np.ndarray, tiles: np.ndarray) -> str:
    """SHA-256 (hex) of the bins' spans and counts and the tiles' ranges: what the pairs of
    a shard were cut from."""
    digest = hashlib.sha256()
    for table, columns in ((bins, ["min", "max", "count"]), (tiles, TILE_COLUMNS[1:7])):
        digest.update(recfunctions.structured_to_unstructured(table[columns]).tobytes())
    return digest.hexdigest()
