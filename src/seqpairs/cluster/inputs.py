"""What the clustering methods read: distances as FCluster holds them, the abundance
table, the filter's kept pairs and psse's significance flags (one error line each)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UserError
from ..formats.distances import (
    check_made_from,
    pair_from_index,
    pair_index,
    read_edges,
    read_seqdist_text,
)
from ..formats.fasta import INT64_MAX
from ..formats.tables import read_tsv


@dataclass
class Distances:
    """Distances as FCluster holds them: float32, SeqDist pair order for a full matrix.

    Either `dense` (all n(n-1)/2 pairs) or the sparse pairs `i` > `j` with `value`,
    every missing pair being above `max_distance`.
    """

    n: int
    names: list[str] | None
    dense: np.ndarray | None = None
    i: np.ndarray | None = None
    j: np.ndarray | None = None
    value: np.ndarray | None = None
    max_distance: float = math.inf

    def within(self, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
        """(i, j) of the pairs at distance <= cutoff (of a sparse list: those it holds)."""
        if self.dense is not None:
            return pair_from_index(np.flatnonzero(self.dense <= cutoff))
        close = self.value <= cutoff
        return self.i[close], self.j[close]


def as_fcluster_float(distance: np.ndarray) -> np.ndarray:
    """float64 distances -> float32 as FCluster gets them from SeqDist text (%.8e, strtod, float).

    Printing moves a value by at most half a unit of its 9th digit; only values that
    close to a float32 rounding boundary are printed (slow), the rest are cast directly.
    """
    distance = np.asarray(distance, dtype=np.float64)
    value = distance.astype(np.float32)
    with np.errstate(divide="ignore"):
        # the exponent may come out one too high near a power of ten: a looser bound only
        digits = np.floor(np.log10(distance * (1 + 1e-12)))
    half = 0.5 * 10.0 ** (digits - 8) * (1 + 1e-6)
    near = (distance > 0) & ((distance - half).astype(np.float32) != (distance + half).astype(np.float32))
    printed = np.char.mod("%.8e", distance[near]).astype(np.float64)
    value[near] = printed.astype(np.float32)
    return value


def _check_values(path, values: np.ndarray) -> None:
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if bad.size:
        raise UserError(f"{path}: distance {values[bad[0]]} is not a finite number >= 0")


def read_distances(path: str, fmt: str, fasta=None, fasta_path=None) -> Distances:
    """Distances of `path`; an edge list must have been made from the sequences of `fasta`
    (a SequenceSet, in any order) when given."""
    if fmt == "auto":
        fmt = "edges" if Path(path).suffix == ".npz" else "seqdist"
    if fmt == "seqdist":
        n, ids, d = read_seqdist_text(path)
        _check_values(path, d)
        return Distances(n, ids, dense=d.astype(np.float32))
    edges = read_edges(path)
    position = dict(zip(fasta.ids, fasta.seqs)) if fasta is not None else {}
    if position and len(position) == edges.n and all(name in position for name in edges.ids):
        # same ids (otherwise otus.align_ids says which differ): the same sequences?
        check_made_from(edges, path, edges.ids, [position[name] for name in edges.ids],
                        fasta_path)
    n = edges.n
    i, j = np.asarray(edges.i, dtype=np.int64), np.asarray(edges.j, dtype=np.int64)
    bad = np.flatnonzero((j < 0) | (i <= j) | (i >= n))
    if bad.size:
        raise UserError(f"{path}: pair {bad[0]} ({i[bad[0]]}, {j[bad[0]]}) is not i > j within 0..{n - 1}")
    k = pair_index(i, j)
    if np.unique(k).size != k.size:
        raise UserError(f"{path}: the edge list holds a pair twice")
    distance = np.asarray(edges.distance, dtype=np.float64)
    _check_values(path, distance)
    if len(edges.ids) not in (0, n):
        raise UserError(f"{path}: {len(edges.ids)} ids for {n} sequences")
    names = [str(x) for x in edges.ids] if len(edges.ids) else None
    value = as_fcluster_float(distance)
    if k.size == n * (n - 1) // 2:
        dense = np.empty(k.size, dtype=np.float32)
        dense[k] = value
        return Distances(n, names, dense=dense)
    if not math.isfinite(edges.max_distance):
        raise UserError(f"{path}: the edge list lacks pairs, yet its max_distance is {edges.max_distance}")
    return Distances(n, names, i=i, j=j, value=value, max_distance=edges.max_distance)


def read_abundance(path: str) -> pd.DataFrame:
    """abundance.tsv (`id`, samples..., `total`) indexed by id (as written), counts as int64."""
    table = read_tsv(path, text=True)
    if table.columns[0] != "id" or table.columns[-1] != "total" or len(table.columns) < 3:
        raise UserError(f"{path}:1: columns must be id, one per sample, total")
    counts = table.iloc[:, 1:]
    numeric = counts.apply(pd.to_numeric, errors="coerce")
    bad = numeric.isna().any(axis=1) | (numeric < 0).any(axis=1) | (numeric % 1 != 0).any(axis=1)
    if bad.any():
        raise UserError(f"{path}:{_line(bad)}: counts must be whole numbers >= 0")
    # Sums of Python integers: int64 sums could wrap round
    rows = [[int(x) for x in row] for row in numeric.itertuples(index=False)]
    sums = pd.Series([sum(row[:-1]) for row in rows])
    totals = pd.Series([row[-1] for row in rows])
    over = sums > INT64_MAX
    if over.any() or sum(totals) > INT64_MAX:
        row = f":{_line(over)}" if over.any() else ""
        raise UserError(f"{path}{row}: counts add up to more than 2^63 - 1")
    wrong = sums != totals
    if wrong.any():
        raise UserError(f"{path}:{_line(wrong)}: total is not the sum of the sample counts")
    numeric = numeric.astype(np.int64)
    numeric.index = pd.Index(table["id"], name="id")
    check_unique(path, numeric.index)
    return numeric


def _line(mask: pd.Series) -> int:
    """File line of the first true row of a table read with a header line."""
    return int(np.flatnonzero(mask.to_numpy())[0]) + 2


def check_unique(source, names) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise UserError(f"{source}:{name}: id appears twice")
        seen.add(name)


def read_pairs(path: str, position: dict[str, int]):
    """The filter's kept pairs -> (query index, target index, identity in percent)."""
    table = read_tsv(path, ("query", "target", "id"), text=True)
    ident = pd.to_numeric(table["id"], errors="coerce")
    bad = ~ident.between(0, 100)  # NaN too
    if bad.any():
        raise UserError(f"{path}:{_line(bad)}: id must be a percentage, 0 to 100")
    if len(ident) and ident.max() <= 1:
        raise UserError(f"{path}: every id is <= 1: fractions? id must be in percent, as the filter writes it")
    ident = ident.to_numpy(dtype=np.float64)
    ends = []
    for column in ("query", "target"):
        index = table[column].map(position)
        if index.isna().any():
            row = _line(index.isna())
            raise UserError(f"{path}:{row}: {column} {table[column].iloc[row - 2]!r} is not a known sequence id")
        ends.append(index.to_numpy(dtype=np.int64))
    same = ends[0] == ends[1]
    if same.any():
        raise UserError(f"{path}:{int(np.flatnonzero(same)[0]) + 2}: a sequence paired with itself")
    return ends[0], ends[1], ident


def read_seqdist(request) -> tuple[Distances, list[str]]:
    """request.distances (SeqDist text or an edge list) and the ids of its sequences: its
    own, else --fasta's or the abundance table's (as many), else 0..n-1; unique."""
    r = request
    dist = read_distances(r.distances, r.distance_format, r.fasta, r.fasta_path)
    if dist.n < 1:
        raise UserError(f"{r.distances}: no sequences")
    names = dist.names
    if names is None:
        names = (r.fasta.ids if r.fasta else list(r.abundance.index) if r.abundance is not None
                 else [str(k) for k in range(dist.n)])
        if len(names) != dist.n:
            raise UserError(f"{r.distances}: {dist.n} sequences, but {len(names)} in "
                            "--fasta/--abundance")
    check_unique(r.distances, names)
    return dist, names


def read_close_pairs(path: str, names: list[str], identity: float):
    """The kept pairs of `path` at identity >= `identity` (a fraction; `id` is in percent, so a
    pair the filter kept at the same identity always counts): (query, target, id) indices
    into `names`."""
    query, target, ident = read_pairs(path, {name: k for k, name in enumerate(names)})
    close = ident >= 100 * identity
    return query[close], target[close], ident[close]


def read_significant(path: str, pairs_path: str, query: list[str], target: list[str]) -> np.ndarray:
    """`significant` of `seqpairs psse`'s table for each --pairs row (query, target).

    The table must list the same pairs in the same order, as psse writes them for --pairs.
    """
    table = read_tsv(path, ("query", "target", "significant"), text=True)
    same = "--psse must be seqpairs psse's table of the --pairs file (same pairs, same order)"
    if len(table) != len(query):
        raise UserError(f"{path}: {len(table)} pairs, but {pairs_path} has {len(query)}; {same}")
    differ = (table["query"].to_numpy() != np.asarray(query, dtype=object)) | (
        table["target"].to_numpy() != np.asarray(target, dtype=object))
    if differ.any():
        k = int(np.flatnonzero(differ)[0])
        raise UserError(f"{path}:{k + 2}: pair {table['query'].iloc[k]} {table['target'].iloc[k]}, "
                        f"but {pairs_path}:{k + 2} has {query[k]} {target[k]}; {same}")
    flags = table["significant"]
    bad = ~flags.isin(["True", "False"])
    if bad.any():
        raise UserError(f"{path}:{_line(bad)}: significant must be True or False, "
                        f"not {flags[bad].iloc[0]!r}")
    return (flags == "True").to_numpy()
