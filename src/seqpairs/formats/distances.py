"""Distance file formats: SeqDist text, sparse edge list (.npz), condensed matrix (.npy).

Pair orientation everywhere: pair (i, j) has i > j and sequence i is A (rows), as in SeqDist.

- SeqDist text: line 1 N; with ids, N id lines; then N(N-1)/2 lines "%.8e" in the order
  (1,0), (2,0), (2,1), (3,0), ... (pair index k = i*(i-1)/2 + j).
- Edge list (.npz, numpy reads it alone, no pickle): arrays `i`, `j` (int64), `cost`
  (float64), `distance` (float64, cost/length) and the alignment's counts (int32, see
  backends/common.py): `length` (SeqDist's), `matches`, `aligned`, `leading`; `ids`
  (unicode); scalars `n`, `max_distance`, `candidate_identity` (NaN for none) and `iddef`.
  It holds every pair with distance <= max_distance, and every pair whose identity bound
  (identity.upper_bound for iddef) reaches candidate_identity; sorted by (i, j).
- Condensed matrix (.npy): float64, SciPy's condensed order (scipy.spatial.distance.squareform
  reads it): entry for {x, y}, x < y, at n*x - x*(x+1)/2 + y - x - 1, value d(A=y, B=x).
"""
from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError
from .atomic import atomic_open, atomic_path

# The per-pair columns of an edge list, in the order Edges takes them.
PAIR_COLUMNS = ("i", "j", "cost", "length", "matches", "aligned", "leading")


@dataclass
class Edges:
    n: int
    ids: np.ndarray
    i: np.ndarray
    j: np.ndarray
    cost: np.ndarray
    length: np.ndarray
    matches: np.ndarray
    aligned: np.ndarray
    leading: np.ndarray
    max_distance: float
    candidate_identity: float = float("nan")
    iddef: int = 2

    @property
    def distance(self) -> np.ndarray:
        return self.cost / self.length

    def __len__(self) -> int:
        return len(self.i)

    def columns(self) -> tuple[np.ndarray, ...]:
        """The per-pair arrays, in PAIR_COLUMNS order."""
        return tuple(getattr(self, name) for name in PAIR_COLUMNS)


def pair_index(i, j):
    """SeqDist order index of pair (i, j), i > j."""
    i = np.asarray(i, dtype=np.int64)
    return i * (i - 1) // 2 + np.asarray(j, dtype=np.int64)


def pair_from_index(k):
    """Inverse of pair_index: (i, j) with i > j."""
    k = np.asarray(k, dtype=np.int64)
    i = ((1 + np.sqrt(1 + 8 * k.astype(np.float64))) / 2).astype(np.int64)
    # correct float rounding at row boundaries
    i = np.where(i * (i - 1) // 2 > k, i - 1, i)
    i = np.where((i + 1) * i // 2 <= k, i + 1, i)
    return i, k - i * (i - 1) // 2


def write_edges(path, edges: Edges) -> None:
    order = np.lexsort((edges.j, edges.i))
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(
            fh,
            n=np.int64(edges.n),
            ids=np.asarray(edges.ids, dtype=str),
            i=np.asarray(edges.i, dtype=np.int64)[order],
            j=np.asarray(edges.j, dtype=np.int64)[order],
            cost=np.asarray(edges.cost, dtype=np.float64)[order],
            length=np.asarray(edges.length, dtype=np.int32)[order],
            matches=np.asarray(edges.matches, dtype=np.int32)[order],
            aligned=np.asarray(edges.aligned, dtype=np.int32)[order],
            leading=np.asarray(edges.leading, dtype=np.int32)[order],
            distance=(edges.cost / edges.length)[order],
            max_distance=np.float64(edges.max_distance),
            candidate_identity=np.float64(edges.candidate_identity),
            iddef=np.int64(edges.iddef),
        )


def read_edges(path) -> Edges:
    if not Path(path).is_file():
        raise UserError(f"{path}: no such file")
    if not zipfile.is_zipfile(path):  # np.load would read a .npy and give no columns
        raise UserError(f"{path}: not a seqpairs edge list (not an .npz file)")
    try:
        with np.load(path, allow_pickle=False) as z:
            return Edges(
                n=int(z["n"]), ids=z["ids"], i=z["i"], j=z["j"], cost=z["cost"],
                length=z["length"], matches=z["matches"], aligned=z["aligned"],
                leading=z["leading"], max_distance=float(z["max_distance"]),
                candidate_identity=float(z["candidate_identity"]), iddef=int(z["iddef"]),
            )
    except (OSError, KeyError, ValueError) as exc:
        raise UserError(f"{path}: not a seqpairs edge list ({exc})") from None


def merge_edges(parts: list[Edges]) -> Edges:
    """One edge list from edge lists of disjoint pair sets of the same run (shards)."""
    first = parts[0]
    for part in parts[1:]:
        same = (part.n == first.n and np.array_equal(part.ids, first.ids)
                and part.max_distance == first.max_distance and part.iddef == first.iddef
                and np.array_equal(part.candidate_identity, first.candidate_identity,
                                   equal_nan=True))
        if not same:
            raise UserError("the edge lists to merge come from different sequences or settings")
    merged = [np.concatenate(column) for column in zip(*(p.columns() for p in parts))]
    pairs = merged[0] * (merged[0] - 1) // 2 + merged[1]
    if len(np.unique(pairs)) != len(pairs):
        raise UserError("the edge lists to merge overlap (a shard given twice?)")
    return Edges(first.n, first.ids, *merged, max_distance=first.max_distance,
                 candidate_identity=first.candidate_identity, iddef=first.iddef)


def write_seqdist_text(path, distances: np.ndarray, ids=None) -> None:
    """SeqDist's text format; `distances` in SeqDist pair order."""
    n = int(round((1 + np.sqrt(1 + 8 * len(distances))) / 2)) if len(distances) else 1
    with atomic_open(path) as fh:
        fh.write(f"{n}\n")
        if ids is not None:
            fh.write("".join(f"{name}\n" for name in ids))
        step = 1 << 20
        for start in range(0, len(distances), step):
            chunk = distances[start:start + step].tolist()
            fh.write(("%.8e\n" * len(chunk)) % tuple(chunk))


def read_seqdist_text(path, with_ids: bool | None = None):
    """Read SeqDist text. Returns (n, ids or None, distances in SeqDist order).

    With with_ids=None the presence of id lines is detected (a line that is not a number).
    """
    try:
        with open(path) as fh:
            lines = fh.read().split("\n")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    if lines and lines[-1] == "":
        lines.pop()
    try:
        n = int(lines[0])
    except (IndexError, ValueError):
        raise UserError(f"{path}:1: first line must be the number of sequences") from None
    npairs = n * (n - 1) // 2
    if with_ids is None:
        with_ids = len(lines) == 1 + n + npairs
    ids = lines[1:1 + n] if with_ids else None
    body = lines[1 + (n if with_ids else 0):]
    if len(body) != npairs:
        raise UserError(f"{path}: expected {npairs} distances for {n} sequences, found {len(body)}")
    try:
        d = np.array(body, dtype=np.float64)
    except ValueError as exc:
        raise UserError(f"{path}: bad distance value ({exc})") from None
    return n, ids, d


def seqdist_to_condensed(n: int, distances: np.ndarray) -> np.ndarray:
    """Reorder SeqDist-order distances into SciPy's condensed order."""
    x, y = np.triu_indices(n, k=1)  # x < y, SciPy order
    return distances[pair_index(y, x)]


def write_condensed(path, n: int, distances: np.ndarray) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, seqdist_to_condensed(n, distances))
