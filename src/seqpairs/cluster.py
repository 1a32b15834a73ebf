"""Cluster: hierarchical (AmpliconNoise FCluster, exactly) or greedy centroid clustering.

Hierarchical (`--linkage complete|average`) reproduces FCluster's merge sequence:

- Distances are held as C floats, as FCluster reads them: SeqDist text values go to
  float32; edge-list distances (cost/length) are first rounded to SeqDist's printed
  precision (%.8e), so an edge list and its SeqDist text give the same clusters.
- FCluster keeps a lower-triangular working matrix of "slots". Each step merges the
  closest pair: the row `hi` (1..n-1) whose minimum is strictly smallest, first such row,
  and in it the first column `lo` holding that minimum. The merged cluster takes slot
  `lo`; the cluster in the last slot n-1 moves into slot `hi`. Ties therefore follow
  slot order, which after the first move is not input order.
- complete: d(merged, k) = max(d(hi, k), d(lo, k)). average (FCluster -a): size-weighted
  (UPGMA), (d(hi,k)*n_hi + d(lo,k)*n_lo) / (n_hi + n_lo) in float32; with `--weighted`
  (FCluster -w) the sizes are the sequences' abundances.
- PREFIX.list / PREFIX.otu: one line per threshold d = k*resolution, k = 0, 1, ... while
  k < floor(last merge height / resolution + 1e-7), each built from the merges taken in
  order while their height is strictly below d. A line is `"%f %d "` (d, number of
  clusters) then every cluster followed by one space: in .list its members joined by
  commas, in .otu its size. A cluster sits at the lowest input index it holds; a merge
  appends the members of the cluster at the higher index to those at the lower one.
  Members are named by the ids of the distance file (else --fasta's, else 0-based
  indices, as FCluster without -i).
- PREFIX.tree (dense input only): FCluster's tree, `(left:len,right:len)` nested, "%.3f"
  branch lengths (merge height minus the child's height), ended by ";".

An edge list holds every pair with distance <= its max_distance, so complete linkage on
it (missing pairs count as infinite) repeats FCluster's merges exactly below
max_distance: the .list stops at the last threshold <= max_distance (FCluster's own
.list would stop at its last merge, for a full matrix the largest distance) and
--cutoff must be <= max_distance. One caveat: a missing pair whose distance exceeds
max_distance by less than float32 rounding (about 1e-9 relative) reads as equal to it in
FCluster. Average linkage needs every pair: an edge list is refused unless complete.

Greedy (`--linkage greedy`), vsearch --cluster_size style: sequences in decreasing
abundance, ties in input order (unique.fasta's order). Each sequence joins, among the
existing centroids it has a pair with at identity >= --identity (the filter's kept pairs,
--pairs, columns `query`, `target`, `id`), the one of highest identity, ties to the
earliest centroid; with none it becomes a centroid. This is vsearch's choice with
maxaccepts 1 when its candidates are tried in order of decreasing identity (what an
exhaustive search, --maxaccepts 0 --maxrejects 0, also picks); vsearch's default k-mer
order may accept a lower-identity centroid first. `id` is in percent, as the filter and
vsearch write it; a pair counts when id >= 100 * --identity, so a pair the filter kept
at the same --identity always counts. With --psse (`seqpairs psse`'s table of the same
pairs, in the same order) only the pairs it marks `significant` count.

Outputs for every linkage (hierarchical ones at --cutoff, merges strictly below it):
- PREFIX.membership.tsv: `id`, `cluster`, `centroid`, one row per sequence in input order.
- PREFIX.otu_table.tsv (needs --abundance): `cluster`, `centroid`, one column per
  sample, `total`: summed counts of the cluster's members; the same counts as BIOM 1.0
  JSON in PREFIX.otu_table.biom (interop.py).
- PREFIX.centroids.fasta (needs --fasta): `>CENTROID;size=N`, N the cluster's total
  abundance, then the centroid's sequence.
The centroid is the most abundant member, ties to the earliest in input order (for
greedy that is the seed). Clusters are numbered 1, 2, ... by decreasing abundance of
their centroid, ties in input order. Abundance is abundance.tsv's `total`, else the
FASTA's `;size=`, else 1 for every sequence.
"""
from __future__ import annotations

import heapq
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
import pandas as pd

from .distfiles import pair_index, read_edges, read_seqdist_text
from .errors import UserError
from .interop import write_biom
from .outputs import atomic_open
from .sequences import read_unique_fasta
from .tables import read_tsv

log = logging.getLogger("seqpairs.cluster")

LINKAGES = ("complete", "average", "greedy")
# FCluster's tolerance when it counts the thresholds below its last merge.
THRESHOLD_EPS = 1e-7
_LOW32 = (1 << 32) - 1


# ---------------------------------------------------------------- inputs


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


def read_distances(path: str, fmt: str) -> Distances:
    if fmt == "auto":
        fmt = "edges" if Path(path).suffix == ".npz" else "seqdist"
    if fmt == "seqdist":
        n, ids, d = read_seqdist_text(path)
        _check_values(path, d)
        return Distances(n, ids, dense=d.astype(np.float32))
    edges = read_edges(path)
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
    """abundance.tsv (`id`, samples..., `total`) indexed by id, counts as int64."""
    table = read_tsv(path, dtype={"id": str})
    if table.columns[0] != "id" or table.columns[-1] != "total" or len(table.columns) < 3:
        raise UserError(f"{path}:1: columns must be id, one per sample, total")
    counts = table.iloc[:, 1:]
    numeric = counts.apply(pd.to_numeric, errors="coerce")
    bad = numeric.isna().any(axis=1) | (numeric < 0).any(axis=1) | (numeric % 1 != 0).any(axis=1)
    if bad.any():
        raise UserError(f"{path}:{_line(bad)}: counts must be whole numbers >= 0")
    numeric = numeric.astype(np.int64)
    wrong = numeric.iloc[:, :-1].sum(axis=1) != numeric["total"]
    if wrong.any():
        raise UserError(f"{path}:{_line(wrong)}: total is not the sum of the sample counts")
    numeric.index = pd.Index(table["id"], name="id")
    _check_unique(path, numeric.index)
    return numeric


def _line(mask: pd.Series) -> int:
    """File line of the first true row of a table read with a header line."""
    return int(np.flatnonzero(mask.to_numpy())[0]) + 2


def _check_unique(source, names) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise UserError(f"{source}:{name}: id appears twice")
        seen.add(name)


def read_pairs(path: str, position: dict[str, int]):
    """The filter's kept pairs -> (query index, target index, identity in percent)."""
    table = read_tsv(path, ("query", "target", "id"), dtype={"query": str, "target": str})
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


def read_significant(path: str, pairs_path: str, query: list[str], target: list[str]) -> np.ndarray:
    """`significant` of `seqpairs psse`'s table for each --pairs row (query, target).

    The table must list the same pairs in the same order, as psse writes them for --pairs.
    """
    table = read_tsv(path, ("query", "target", "significant"), dtype=str, keep_default_na=False)
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


# ---------------------------------------------------------------- FCluster on a full matrix


@numba.njit(cache=True)
def _at(a, b):
    """Position of the pair of slots {a, b} in the SeqDist-order working matrix."""
    if a < b:
        a, b = b, a
    return a * (a - 1) // 2 + b


@numba.njit(cache=True)
def _refresh_row(d, r, rmin, rarg):
    base = r * (r - 1) // 2
    best, arg = d[base], 0
    for c in range(1, r):
        if d[base + c] < best:
            best, arg = d[base + c], c
    rmin[r], rarg[r] = best, arg


@numba.njit(cache=True)
def _note(r, c, v, rmin, rarg, stale):
    """Keep row r's (minimum, first column holding it) exact after entry (r, c) became v."""
    if stale[r]:
        return
    if v < rmin[r] or (v == rmin[r] and c < rarg[r]):
        rmin[r], rarg[r] = v, c
    elif c == rarg[r] and v != rmin[r]:
        stale[r] = True


@numba.njit(cache=True)
def _fcluster_dense(d, weight, average):
    """FCluster's MaxCluster / AvCluster / AvClusterW on `d` (float32, SeqDist order; overwritten).

    Returns (left, right, height) per merge; nodes < n are sequences, n + s the node
    made by merge s; left is the cluster from the higher slot.
    """
    n0 = weight.shape[0]
    node = np.arange(n0)
    w = weight.copy()
    rmin = np.empty(n0, np.float32)
    rarg = np.zeros(n0, np.int64)
    stale = np.zeros(n0, np.bool_)
    for r in range(1, n0):
        _refresh_row(d, r, rmin, rarg)
    left = np.empty(n0 - 1, np.int64)
    right = np.empty(n0 - 1, np.int64)
    height = np.empty(n0 - 1, np.float32)
    for step in range(n0 - 1):
        n = n0 - step
        hi = 1
        for r in range(2, n):
            if rmin[r] < rmin[hi]:
                hi = r
        lo = rarg[hi]
        left[step], right[step], height[step] = node[hi], node[lo], rmin[hi]
        stale[hi] = True
        stale[lo] = True
        wsum = w[hi] + w[lo]
        for k in range(n):
            if k == hi or k == lo:
                continue
            a, b = d[_at(hi, k)], d[_at(lo, k)]
            if average:
                v = (a * w[hi] + b * w[lo]) / wsum
            else:
                v = max(b, a)  # FCluster's max(a, b) macro: b unless a > b
            d[_at(lo, k)] = v
            if k > lo:
                _note(k, lo, v, rmin, rarg, stale)
        last = n - 1
        if hi != last:
            for k in range(last):
                if k != hi:
                    v = d[_at(last, k)]
                    d[_at(hi, k)] = v
                    if k > hi:
                        _note(k, hi, v, rmin, rarg, stale)
        node[lo], node[hi] = n0 + step, node[last]
        w[lo], w[hi] = wsum, w[last]
        for r in range(n):
            if stale[r]:
                if 0 < r < last:
                    _refresh_row(d, r, rmin, rarg)
                stale[r] = False
    return left, right, height


# ---------------------------------------------------------------- FCluster on an edge list


def _sparse_complete(n: int, i: np.ndarray, j: np.ndarray, value: np.ndarray):
    """FCluster's complete linkage where missing pairs are infinite; merges until none is finite.

    The working matrix's slots are tracked as in `_fcluster_dense`. A heap of keys
    (distance, higher slot, lower slot), packed in one integer, gives FCluster's choice:
    float32 distances >= 0 order as their bit patterns, and complete linkage's max can
    work on those too. A key is skipped unless its slots are live and still hold a pair
    at its distance (keys go stale as clusters merge and move).
    """
    slot = list(range(n))
    node_at = list(range(n))
    adj: list[dict | None] = [{} for _ in range(n)]
    heap = []
    for a, b, v in zip(i.tolist(), j.tolist(), value.astype(np.float32).view(np.uint32).tolist()):
        adj[a][b] = adj[b][a] = v
        heap.append(v << 64 | a << 32 | b)
    heapq.heapify(heap)

    def push(v, x, y):
        sx, sy = slot[x], slot[y]
        heapq.heappush(heap, v << 64 | max(sx, sy) << 32 | min(sx, sy))

    left, right, height = [], [], []
    alive = n
    while heap:
        key = heapq.heappop(heap)
        v, hi, lo = key >> 64, key >> 32 & _LOW32, key & _LOW32
        if hi >= alive or adj[node_at[hi]].get(node_at[lo]) != v:
            continue
        x, y, new = node_at[hi], node_at[lo], n + len(height)
        left.append(x)
        right.append(y)
        height.append(v)
        ax, ay = adj[x], adj[y]
        small, big = (ax, ay) if len(ax) < len(ay) else (ay, ax)
        joined = {k: max(dk, big[k]) for k, dk in small.items() if k in big}
        for k in ax:
            if k != y:
                del adj[k][x]
        for k in ay:
            if k != x:
                del adj[k][y]
        adj[x] = adj[y] = None
        slot.append(lo)
        node_at[lo] = new
        adj.append(joined)
        for k, dk in joined.items():
            adj[k][new] = dk
            push(dk, new, k)
        last = alive - 1
        if hi != last:
            moved = node_at[last]
            slot[moved] = hi
            node_at[hi] = moved
            for k, dk in adj[moved].items():
                push(dk, moved, k)
        alive -= 1
    height = np.array(height, np.uint32).view(np.float32)
    return np.array(left, np.int64), np.array(right, np.int64), height


# ---------------------------------------------------------------- merges -> flat clusters


@dataclass
class Tree:
    n: int
    left: np.ndarray
    right: np.ndarray
    height: np.ndarray  # float64 of FCluster's float heights
    dense: bool  # every merge known (full matrix), else only those below max_distance


def build_tree(dist: Distances, linkage: str, weight: np.ndarray | None) -> Tree:
    if dist.dense is None:
        left, right, height = _sparse_complete(dist.n, dist.i, dist.j, dist.value)
        return Tree(dist.n, left, right, height.astype(np.float64), dense=False)
    w = np.ones(dist.n, np.float32) if weight is None else weight.astype(np.float32)
    left, right, height = _fcluster_dense(dist.dense.copy(), w, linkage == "average")
    return Tree(dist.n, left, right, height.astype(np.float64), dense=True)


class FlatClusters:
    """The clusters after the merges below a threshold, laid out as FCluster's output.

    A cluster sits at the lowest sequence index it holds; a merge appends the members
    at the higher index to those at the lower one.
    """

    def __init__(self, tree: Tree, names: list[str]):
        self.tree = tree
        self.members: list[list[int] | None] = [[k] for k in range(tree.n)]
        self.text: list[str | None] = list(names)
        self.home = list(range(tree.n)) + [0] * len(tree.height)
        self.done = 0

    def advance(self, threshold: float) -> None:
        """Take the merges, in order, while their height is strictly below `threshold`."""
        t = self.tree
        while self.done < len(t.height) and t.height[self.done] < threshold:
            a, b = self.home[t.left[self.done]], self.home[t.right[self.done]]
            keep, gone = min(a, b), max(a, b)
            self.members[keep].extend(self.members[gone])
            self.text[keep] = f"{self.text[keep]},{self.text[gone]}"
            self.members[gone] = self.text[gone] = None
            self.home[t.n + self.done] = keep
            self.done += 1

    def clusters(self) -> list[list[int]]:
        return [m for m in self.members if m is not None]

    def list_line(self, threshold: float) -> str:
        return f"{threshold:f} {self.tree.n - self.done} " + "".join(
            f"{t} " for t in self.text if t is not None) + "\n"

    def otu_line(self, threshold: float) -> str:
        return f"{threshold:f} {self.tree.n - self.done} " + "".join(
            f"{len(m)} " for m in self.members if m is not None) + "\n"


def threshold_count(tree: Tree, resolution: float, max_distance: float) -> int:
    """Number of .list lines: FCluster's, or those up to max_distance for an edge list."""
    if tree.dense:
        if not len(tree.height):
            return 0
        return math.floor(tree.height[-1] / resolution + THRESHOLD_EPS)
    return math.floor(max_distance / resolution + THRESHOLD_EPS) + 1


def write_list_otu(prefix: str, tree: Tree, names: list[str], resolution: float, count: int) -> None:
    flat = FlatClusters(tree, names)
    with atomic_open(f"{prefix}.list") as lfp, atomic_open(f"{prefix}.otu") as ofp:
        for k in range(count):
            threshold = k * resolution
            flat.advance(threshold)
            lfp.write(flat.list_line(threshold))
            ofp.write(flat.otu_line(threshold))


def newick(tree: Tree, names: list[str]) -> str:
    """FCluster's .tree text (writeNodesPhylip), built without recursion."""
    n, pieces = tree.n, []

    def below(x):
        return tree.height[x - n] if x >= n else 0.0

    stack: list[tuple[bool, object]] = [(False, n + len(tree.height) - 1)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            pieces.append(item)
        elif item < n:
            pieces.append(names[item])
        else:
            s = item - n
            h, a, b = tree.height[s], tree.left[s], tree.right[s]
            pieces.append("(")
            stack += [(True, f":{h - below(b):.3f})"), (False, b), (True, f":{h - below(a):.3f},"), (False, a)]
    return "".join(pieces) + ";\n"


# ---------------------------------------------------------------- greedy


def greedy(abundance: np.ndarray, query, target, ident, identity: float) -> list[list[int]]:
    """Abundance-ordered centroid clustering (see the module docstring for the rule).

    `ident` in percent, `identity` a fraction.
    """
    n = len(abundance)
    order = np.argsort(-abundance, kind="stable")
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    keep = ident >= 100 * identity
    a = np.concatenate([query[keep], target[keep]])
    b = np.concatenate([target[keep], query[keep]])
    s = np.concatenate([ident[keep], ident[keep]])
    earlier = rank[b] < rank[a]  # only sequences seen before can be centroids
    a, b, s = a[earlier], b[earlier], s[earlier]
    # per sequence, its candidates by decreasing identity, ties to the earliest
    by = np.lexsort((rank[b], -s, rank[a]))
    a, b = a[by], b[by]
    starts = np.searchsorted(rank[a], np.arange(n + 1))
    centroid = np.full(n, -1, np.int64)
    clusters: dict[int, list[int]] = {}
    for r, x in enumerate(order.tolist()):
        hit = next((c for c in b[starts[r]:starts[r + 1]].tolist() if centroid[c] == c), x)
        centroid[x] = hit
        clusters.setdefault(hit, []).append(x)
    return [sorted(m) for m in clusters.values()]


# ---------------------------------------------------------------- tables


@dataclass
class Annotation:
    """What --fasta and --abundance tell about the clustered sequences, in their order."""

    abundance: np.ndarray
    counts: pd.DataFrame | None  # per-sample counts with `total`, rows in sequence order
    seqs: list[str] | None


def align_ids(names: list[str], origin: str, other: list[str], source: str) -> np.ndarray:
    """Positions in `other` (read from `source`) of each of `names` (from `origin`).

    Both must hold the same ids, in any order.
    """
    _check_unique(source, other)
    position = {name: k for k, name in enumerate(other)}
    missing = [name for name in names if name not in position]
    if missing:
        raise UserError(f"{source}: no id {missing[0]!r}, which {origin} has")
    if len(other) != len(names):
        known = set(names)
        extra = next(name for name in other if name not in known)
        raise UserError(f"{source}:{extra}: id not in {origin}")
    return np.array([position[name] for name in names], np.int64)


def annotate(names: list[str], origin: str, fasta, table: pd.DataFrame | None, args) -> Annotation:
    seqs, abundance, counts = None, np.ones(len(names), np.int64), None
    if fasta is not None:
        at = align_ids(names, origin, fasta.ids, args.fasta)
        seqs = [fasta.seqs[k] for k in at]
        abundance = fasta.sizes[at]
    if table is not None:
        counts = table.iloc[align_ids(names, origin, list(table.index), args.abundance)]
        abundance = counts["total"].to_numpy(np.int64)
    return Annotation(abundance, counts, seqs)


def numbered(clusters: list[list[int]], abundance: np.ndarray) -> list[tuple[int, list[int]]]:
    """(centroid, members) per cluster, in cluster-number order."""
    def centroid(members):
        return min(members, key=lambda k: (-abundance[k], k))

    pairs = [(centroid(m), m) for m in clusters]
    return sorted(pairs, key=lambda p: (-abundance[p[0]], p[0]))


def write_tables(prefix: str, clusters, names: list[str], note: Annotation) -> list[str]:
    """membership, OTU table and centroids FASTA (those the inputs allow); returns paths."""
    ranked = numbered(clusters, note.abundance)
    cluster_of = np.empty(len(names), np.int64)
    centroid_of = np.empty(len(names), np.int64)
    for number, (c, members) in enumerate(ranked, start=1):
        cluster_of[members] = number
        centroid_of[members] = c
    membership = pd.DataFrame({"id": names, "cluster": cluster_of,
                               "centroid": [names[c] for c in centroid_of]})
    written = [f"{prefix}.membership.tsv"]
    with atomic_open(written[-1]) as out:
        membership.to_csv(out, sep="\t", index=False, lineterminator="\n")
    if note.counts is not None:
        table = note.counts.groupby(cluster_of).sum()
        table.index.name = "cluster"
        table.insert(0, "centroid", [names[c] for c, _ in ranked])
        written.append(f"{prefix}.otu_table.tsv")
        with atomic_open(written[-1]) as out:
            table.to_csv(out, sep="\t", lineterminator="\n")
        written.append(f"{prefix}.otu_table.biom")
        write_biom(written[-1], table.drop(columns=["centroid", "total"]),
                   list(table["centroid"]))
    if note.seqs is not None:
        written.append(f"{prefix}.centroids.fasta")
        with atomic_open(written[-1]) as out:
            for c, members in ranked:
                out.write(f">{names[c]};size={note.abundance[members].sum()}\n{note.seqs[c]}\n")
    return written


# ---------------------------------------------------------------- command


def _check_options(args) -> None:
    if args.linkage == "greedy":
        if args.pairs is None:
            raise UserError("--linkage greedy needs --pairs (the filter's kept pairs)")
        if args.fasta is None and args.abundance is None:
            raise UserError("--linkage greedy needs --fasta or --abundance (the sequences and their order)")
        if not 0 <= args.identity <= 1:
            raise UserError(f"--identity {args.identity}: must be a fraction between 0 and 1")
    else:
        if args.input is None:
            raise UserError(f"--linkage {args.linkage} needs -i (distances)")
        if args.pairs is not None:
            raise UserError("--pairs is for --linkage greedy only")
        if args.psse is not None:
            raise UserError("--psse is for --linkage greedy only")
        if not (math.isfinite(args.resolution) and args.resolution > 0):
            raise UserError(f"--resolution {args.resolution}: must be > 0")
        if not args.cutoff >= 0:
            raise UserError(f"--cutoff {args.cutoff}: must be >= 0")
    if args.weighted and args.linkage != "average":
        raise UserError("--weighted is for --linkage average only")
    if args.weighted and args.fasta is None and args.abundance is None:
        raise UserError("--weighted needs abundances: --abundance or --fasta with ;size=")


def _side_inputs(args):
    fasta = read_unique_fasta(args.fasta) if args.fasta else None
    table = read_abundance(args.abundance) if args.abundance else None
    return fasta, table


def run_hierarchical(args, fasta, table) -> str:
    dist = read_distances(args.input, args.format)
    if dist.n < 1:
        raise UserError(f"{args.input}: no sequences")
    names = dist.names
    if names is None:
        names = fasta.ids if fasta else list(table.index) if table is not None else [str(k) for k in range(dist.n)]
        if len(names) != dist.n:
            raise UserError(f"{args.input}: {dist.n} sequences, but {len(names)} in --fasta/--abundance")
    _check_unique(args.input, names)
    if dist.dense is None:
        if args.linkage == "average":
            raise UserError(f"{args.input}: average linkage needs every pair; this edge list stops at "
                            f"max_distance {dist.max_distance} (use SeqDist text or a complete edge list)")
        if args.cutoff > dist.max_distance:
            raise UserError(f"{args.input}: --cutoff {args.cutoff} is above the edge list's max_distance "
                            f"{dist.max_distance}; complete linkage is exact only up to it")
    note = annotate(names, args.input, fasta, table, args)
    tree = build_tree(dist, args.linkage, note.abundance if args.weighted else None)
    count = threshold_count(tree, args.resolution, dist.max_distance)
    write_list_otu(args.output, tree, names, args.resolution, count)
    if tree.dense and tree.n > 1:
        with atomic_open(f"{args.output}.tree") as out:
            out.write(newick(tree, names))
    flat = FlatClusters(tree, names)
    flat.advance(args.cutoff)
    clusters = flat.clusters()
    written = write_tables(args.output, clusters, names, note)
    limit = "" if tree.dense else f" (edge list: exact up to max_distance {dist.max_distance})"
    return (f"{args.linkage} linkage: {dist.n} sequences, {count} thresholds in {args.output}.list{limit}; "
            f"{len(clusters)} clusters at cutoff {args.cutoff} -> {', '.join(written)}")


def run_greedy(args, fasta, table) -> str:
    origin = args.fasta or args.abundance
    names = fasta.ids if fasta else list(table.index)
    if not names:
        raise UserError(f"{origin}: no sequences")
    _check_unique(origin, names)
    note = annotate(names, origin, fasta, table, args)
    query, target, ident = read_pairs(args.pairs, {name: k for k, name in enumerate(names)})
    significance = ""
    if args.psse is not None:
        keep = read_significant(args.psse, args.pairs, [names[k] for k in query],
                                [names[k] for k in target])
        significance = f" ({int(keep.sum())} of {len(keep)} pairs significant in {args.psse})"
        query, target, ident = query[keep], target[keep], ident[keep]
    clusters = greedy(note.abundance, query, target, ident, args.identity)
    written = write_tables(args.output, clusters, names, note)
    return (f"greedy: {len(names)} sequences, {len(clusters)} clusters at identity "
            f"{args.identity}{significance} -> {', '.join(written)}")


def run(args) -> None:
    _check_options(args)
    fasta, table = _side_inputs(args)
    if args.linkage == "greedy":
        log.info(run_greedy(args, fasta, table))
    else:
        log.info(run_hierarchical(args, fasta, table))


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "cluster",
        help="cluster sequences into OTUs (FCluster complete/average linkage, or greedy)",
        description="Hierarchical clustering exactly as AmpliconNoise's FCluster (PREFIX.list, "
        ".otu, .tree) or greedy abundance-ordered centroid clustering; then membership, "
        "OTU table and centroids.",
    )
    p.add_argument("-i", "--input", metavar="DIST",
                   help="distances: SeqDist text or edge list .npz (complete/average linkage; "
                   "greedy does not read it)")
    p.add_argument("--format", choices=("auto", "seqdist", "edges"), default="auto",
                   help="format of -i (default: edges for .npz, else seqdist)")
    p.add_argument("--linkage", choices=LINKAGES, default="complete",
                   help="complete (FCluster default), average (FCluster -a) or greedy (default: complete)")
    p.add_argument("--weighted", action="store_true",
                   help="average linkage weighted by abundance (FCluster -w)")
    p.add_argument("--resolution", type=float, default=0.01,
                   help="step between .list thresholds (FCluster -r, default: 0.01)")
    p.add_argument("--cutoff", type=float, default=0.03,
                   help="hierarchical: clusters from merges below this distance (default: 0.03)")
    p.add_argument("--identity", type=float, default=0.97,
                   help="greedy: join a centroid at identity >= this fraction (default: 0.97)")
    p.add_argument("--pairs", metavar="TSV",
                   help="greedy: the filter's kept pairs (columns query, target, id)")
    p.add_argument("--psse", metavar="TSV",
                   help="greedy: seqpairs psse's table of the --pairs (same pairs, same order); "
                   "only the pairs it marks significant count")
    p.add_argument("--fasta", metavar="FASTA", help="unique sequences (>ID;size=N), for centroids")
    p.add_argument("--abundance", metavar="TSV",
                   help="abundance table (id, samples..., total), for the OTU table")
    p.add_argument("-o", "--output", required=True, metavar="PREFIX", help="output prefix")
    p.set_defaults(func=run)
