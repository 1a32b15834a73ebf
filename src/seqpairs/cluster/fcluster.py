"""Hierarchical clustering exactly as AmpliconNoise's FCluster (`--linkage complete|average`):
FCluster's merge sequence, .list/.otu/.tree files, then the OTU tables (otus.py).


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
  indices, as FCluster without -i). The format has no quoting, so ids holding ',' or
  whitespace are refused (one error line) before anything is written.
- PREFIX.tree (dense input only): FCluster's tree, `(left:len,right:len)` nested, "%.3f"
  branch lengths (merge height minus the child's height), ended by ";". FCluster prints
  ids as they are; here an id holding a character Newick reserves (whitespace or
  `()[]':;,`) is quoted as Newick quotes labels, 'in single quotes' with a quote doubled,
  so that tree readers get the id back; other ids are written as FCluster writes them.

An edge list holds every pair with distance <= its max_distance, so complete linkage on
it (missing pairs count as infinite) repeats FCluster's merges exactly below
max_distance: the .list stops at the last threshold <= max_distance (FCluster's own
.list would stop at its last merge, for a full matrix the largest distance) and
--cutoff must be <= max_distance. One caveat: a missing pair whose distance exceeds
max_distance by less than float32 rounding (about 1e-9 relative) reads as equal to it in
FCluster. Average linkage needs every pair: an edge list is refused unless complete.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numba
import numpy as np

from ..errors import UserError
from ..formats.atomic import atomic_open
from ..limits import MAX_LIST_LINES
from .inputs import Distances, read_close_pairs, read_seqdist
from .otus import Close, Naming, annotate, centroid_identity, sequence_names, write_tables

# FCluster's tolerance when it counts the thresholds below its last merge.
THRESHOLD_EPS = 1e-7

# Characters of a Newick label that need quotes (besides whitespace).
NEWICK_RESERVED = "()[]':;,"
_LOW32 = (1 << 32) - 1


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
        count = math.floor(tree.height[-1] / resolution + THRESHOLD_EPS) if len(tree.height) else 0
    else:
        count = math.floor(max_distance / resolution + THRESHOLD_EPS) + 1
    if count > MAX_LIST_LINES:
        raise UserError(f"--resolution {resolution:g} makes {count:,} lines of the .list "
                        f"(at most {MAX_LIST_LINES:,}): raise it")
    return count


def write_list_otu(prefix: str, tree: Tree, names: list[str], resolution: float, count: int) -> None:
    flat = FlatClusters(tree, names)
    with atomic_open(f"{prefix}.list") as lfp, atomic_open(f"{prefix}.otu") as ofp:
        for k in range(count):
            threshold = k * resolution
            flat.advance(threshold)
            lfp.write(flat.list_line(threshold))
            ofp.write(flat.otu_line(threshold))


def check_list_names(source, names: list[str]) -> None:
    """Ids must not hold what separates the members (',') or the clusters (blanks) of a line
    of .list: it has no quoting."""
    for name in names:
        if "," in name or any(char.isspace() for char in name):
            raise UserError(f"{source}:{name}: FCluster's .list cannot hold this id (its "
                            "members are joined by ',' and its clusters by spaces); rename the "
                            "sequence or cluster with --linkage greedy")


def newick_label(name: str) -> str:
    """`name` as a Newick label: as it is, or in single quotes (a quote doubled) where it
    holds whitespace or one of `()[]':;,`."""
    if any(char.isspace() or char in NEWICK_RESERVED for char in name):
        return "'" + name.replace("'", "''") + "'"
    return name


def newick(tree: Tree, names: list[str]) -> str:
    """FCluster's .tree text (writeNodesPhylip), built without recursion; labels quoted
    where Newick needs it (newick_label)."""
    n, pieces = tree.n, []

    def below(x):
        return tree.height[x - n] if x >= n else 0.0

    stack: list[tuple[bool, object]] = [(False, n + len(tree.height) - 1)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            pieces.append(item)
        elif item < n:
            pieces.append(newick_label(names[item]))
        else:
            s = item - n
            h, a, b = tree.height[s], tree.left[s], tree.right[s]
            pieces.append("(")
            stack += [(True, f":{h - below(b):.3f})"), (False, b), (True, f":{h - below(a):.3f},"), (False, a)]
    return "".join(pieces) + ";\n"


def cluster_pairs(request) -> str:
    """Complete linkage on the identity distance (1 - identity) of the kept pairs at --id:
    OTUs whose every pair is one of them (pairs missing from the file are farther); the
    merges by increasing distance as FCluster's sparse complete linkage takes them, all of
    them (each is within the cutoff). Writes the OTU tables (no .list: its thresholds are
    SeqDist's)."""
    r = request
    names, origin = sequence_names(r)
    note = annotate(names, origin, r)
    query, target, ident = read_close_pairs(r.pairs, names, r.identity)
    high, low = np.maximum(query, target), np.minimum(query, target)
    order = np.lexsort((low, high))
    high, low, ident = high[order], low[order], ident[order]
    if np.any((high[1:] == high[:-1]) & (low[1:] == low[:-1])):
        raise UserError(f"{r.pairs}: a pair listed twice")
    distance = (100 - ident) / 100
    tree = build_tree(Distances(len(names), names, i=high, j=low, value=distance,
                                max_distance=1 - r.identity), "complete", None)
    flat = FlatClusters(tree, names)
    flat.advance(math.inf)
    clusters = flat.clusters()
    written = write_tables(r.prefix, clusters, names, note,
                           Naming(r.relabel, r.sizeout, f"{1 - r.identity:.10g}"),
                           centroid_identity(clusters, note.abundance, high, low, ident),
                           Close(high, low))
    return (f"complete linkage on identity: {len(names)} sequences, {len(clusters)} clusters "
            f"at identity {r.identity} -> {', '.join(written)}")


def cluster(request) -> str:
    """complete or average linkage of request.distances; .list/.otu (.tree), OTU tables;
    complete linkage of request.pairs on the identity distance (cluster_pairs)."""
    r = request
    if r.pairs is not None:
        return cluster_pairs(r)
    dist, names = read_seqdist(r)
    check_list_names(r.distances, names)
    if dist.dense is None:
        if r.linkage == "average":
            raise UserError(f"{r.distances}: average linkage needs every pair; this edge list "
                            f"stops at max_distance {dist.max_distance} (use SeqDist text or a "
                            "complete edge list)")
        if r.cutoff > dist.max_distance:
            raise UserError(f"{r.distances}: --cutoff {r.cutoff} is above the edge list's "
                            f"max_distance {dist.max_distance}; complete linkage is exact only "
                            "up to it")
    note = annotate(names, r.distances, r)
    tree = build_tree(dist, r.linkage, note.abundance if r.weighted else None)
    count = threshold_count(tree, r.resolution, dist.max_distance)
    write_list_otu(r.prefix, tree, names, r.resolution, count)
    if tree.dense and tree.n > 1:
        with atomic_open(f"{r.prefix}.tree") as out:
            out.write(newick(tree, names))
    flat = FlatClusters(tree, names)
    flat.advance(r.cutoff)
    clusters = flat.clusters()
    written = write_tables(r.prefix, clusters, names, note,
                           Naming(r.relabel, r.sizeout, f"{r.cutoff:.10g}"),
                           close=Close(*dist.within(r.cutoff)))
    limit = "" if tree.dense else f" (edge list: exact up to max_distance {dist.max_distance})"
    return (f"{r.linkage} linkage: {dist.n} sequences, {count} thresholds in {r.prefix}.list"
            f"{limit}; {len(clusters)} clusters at cutoff {r.cutoff} -> {', '.join(written)}")
