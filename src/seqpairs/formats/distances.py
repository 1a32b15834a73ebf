"""Distance file formats: SeqDist text, sparse edge list (.npz), condensed matrix (.npy).

Pair orientation everywhere: pair (i, j) has i > j and sequence i is A (rows), as in SeqDist.

- SeqDist text: line 1 N; with ids, N id lines; then N(N-1)/2 lines "%.8e" in the order
  (1,0), (2,0), (2,1), (3,0), ... (pair index k = i*(i-1)/2 + j).
- Edge list (.npz, numpy reads it alone, no pickle): arrays `i`, `j` (int64), `distance`
  (float64) and the per-pair columns of its scoring scheme's family (LAYOUTS); `ids`
  (unicode); scalars `n`, `max_distance`, `candidate_identity` (NaN for none), `iddef` and
  `scoring` (the registered scheme's name; absent in edge lists made before it: seqdist).
  SeqDist: `cost` (float64), distance = cost/length, and the alignment's counts (int32,
  backends/common.py): `length` (SeqDist's), `matches`, `aligned`, `leading`; it holds
  every pair with distance <= max_distance, and every pair whose identity bound
  (identity.upper_bound for iddef) reaches candidate_identity.
  Affine schemes: the AFFINE_COUNTS (int32: `score`, `matches`, `mismatches`, `openings`,
  `columns`, `terminal_gaps`, `terminal_openings`) of the alignment of j (A: vsearch's
  query, the earlier sequence) against i that the traceback with vsearch's tie rules takes,
  and distance = 1 - identity by iddef (identity.vsearch_percent / 100, exact: no bound);
  it holds every pair with distance <= max_distance or identity >= candidate_identity.
  Sorted by (i, j).
  What it was made from: `sequences`, the SHA-256 (hex) of the sequences (sequence_digest:
  each id and its sequence, in file order); `shard` and `shards`, K and N of a `--shard K/N`
  edge list (0 and 1 for a whole one); `tiling`, for a shard the SHA-256 of the bins and
  tiles it was cut from (all shards of one edge list share it), "" for a whole one. Readers
  refuse a damaged file, or one made from other sequences than theirs, with one line.
  np.savez's layout (an uncompressed zip of .npy members), written member by member in
  chunks (write_npz), so an edge list of any size is written without holding it whole.
- Condensed matrix (.npy): float64, SciPy's condensed order (scipy.spatial.distance.squareform
  reads it): entry for {x, y}, x < y, at n*x - x*(x+1)/2 + y - x - 1, value d(A=y, B=x).
"""
from __future__ import annotations

import dataclasses
import hashlib
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import scoring
from ..backends.common import AFFINE_COUNTS
from ..errors import UserError, cannot_read
from .atomic import atomic_open, atomic_path
from .npz import Archive, npy_header


@dataclass(frozen=True)
class Layout:
    """The per-pair columns of an edge list under one scheme family, after i and j (name:
    dtype, in file order), and how a pair's distance is made from them."""

    columns: dict
    distance_from: tuple[str, ...]  # the columns the distance is made from
    distance: Callable[[dict], np.ndarray]  # of a dict holding those columns

    @property
    def members(self) -> tuple[str, ...]:
        """The pair members of the file: i, j, the columns and the distance."""
        return ("i", "j", *self.columns, *(("distance",) if "distance" not in self.columns
                                           else ()))

    def dtype(self, name: str) -> np.dtype:
        return np.dtype(PAIR_TYPES.get(name) or self.columns.get(name, np.float64))


PAIR_TYPES = {"i": np.int64, "j": np.int64, "distance": np.float64}
LAYOUTS = {
    "seqdist": Layout({"cost": np.float64, "length": np.int32, "matches": np.int32,
                       "aligned": np.int32, "leading": np.int32},
                      ("cost", "length"), lambda v: v["cost"] / v["length"]),
    # the distance needs the lengths and iddef: the engine stores it
    "affine": Layout({"distance": np.float64, **dict.fromkeys(AFFINE_COUNTS, np.int32)},
                     ("distance",), lambda v: v["distance"]),
}
# The members of every edge list; older ones lack those of ORIGIN, and SCORING.
ORIGIN = ("sequences", "shard", "shards", "tiling")
FIELDS = ("n", "ids", "i", "j", "distance", "max_distance", "candidate_identity", "iddef",
          *ORIGIN)
SCORING = "scoring"
# What np.load raises for a damaged zip or .npy member (CRC, truncation, bad headers).
DAMAGED = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error,
           NotImplementedError)


def layout_of(scoring_name: str, path=None) -> Layout:
    """The Layout of edge lists made under the registered scheme `scoring_name` (or an
    unregistered scheme of the family of that name)."""
    entry = scoring.REGISTRY.get(scoring_name)
    family = entry.family if entry else scoring_name  # scoring.name_of's unregistered ones
    if family not in LAYOUTS:
        raise UserError(f"{path}: made under scoring scheme {scoring_name!r}, which this "
                        "seqpairs cannot read edge lists of" if path else
                        f"no edge list under scoring scheme {scoring_name!r}")
    return LAYOUTS[family]


@dataclass
class Edges:
    """An edge list: `values` holds its layout's per-pair columns (also read as
    attributes: edges.cost)."""

    n: int
    ids: np.ndarray
    i: np.ndarray
    j: np.ndarray
    values: dict
    max_distance: float
    candidate_identity: float = float("nan")
    iddef: int = 2
    sequences: str = ""  # sequence_digest of the sequences it was made from ("" unknown)
    shard: int = 0
    shards: int = 1
    tiling: str = ""  # a shard's tiling_digest; "" for a whole edge list
    scoring: str = "seqdist"  # the registered scheme it was made under

    def __getattr__(self, name: str):
        if name != "values" and name in self.__dict__.get("values", {}):
            return self.values[name]
        raise AttributeError(name)

    @property
    def layout(self) -> Layout:
        return layout_of(self.scoring)

    @property
    def distance(self) -> np.ndarray:
        return self.layout.distance(self.values)

    def __len__(self) -> int:
        return len(self.i)

    def empty(self) -> Edges:
        """The same sequences and settings without pairs."""
        layout = self.layout
        return dataclasses.replace(
            self, i=np.empty(0, np.int64), j=np.empty(0, np.int64),
            values={name: np.empty(0, dtype) for name, dtype in layout.columns.items()})


def sequence_digest(ids, seqs) -> str:
    """SHA-256 (hex) of the sequences in order: each id and its sequence, each line ended by
    a newline (FASTA ids hold no newline)."""
    digest = hashlib.sha256()
    for name, seq in zip(ids, seqs):
        digest.update(f"{name}\n{seq}\n".encode())
    return digest.hexdigest()


def check_made_from(edges: Edges, path, ids, seqs, source) -> None:
    """UserError unless the edge list at `path` is a whole one (no shard) made from these
    sequences (of `source`)."""
    if edges.shards > 1:
        raise UserError(f"{path}: shard {edges.shard} of {edges.shards} of an edge list; "
                        "merge the shards with `seqpairs merge`")
    if not edges.sequences:
        raise UserError(f"{path}: the edge list does not say which sequences it was made from "
                        "(made by an older seqpairs?); rerun `seqpairs distance`")
    if edges.sequences != sequence_digest(ids, seqs):
        same_ids = edges.n == len(ids) and np.array_equal(edges.ids, np.asarray(ids))
        raise UserError(f"{path}: made from other sequences than {source} "
                        + ("(same ids, changed sequences)" if same_ids else
                           f"({edges.n} sequences, {source} has {len(ids)})"))


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


def write_npz(fh, members: Iterable[tuple[str, object, tuple[int, ...], Iterable]]) -> None:
    """np.savez's bytes, written member by member in chunks: `members` are (name, dtype,
    shape, chunks), the chunks' arrays making the member's data in C order."""
    members = list(members)
    archive = Archive((name, dtype, shape) for name, dtype, shape, _ in members)
    archive.finish(fh, {name: [archive.write_header(fh, name),
                               archive.write_rows(fh, name, 0, chunks)]
                        for name, _, _, chunks in members})


def _scalar(name, value, dtype):
    value = np.asarray(value, dtype=dtype)  # str: its length decides the dtype
    return name, value.dtype, (), [value]


def write_edges(path, edges: Edges) -> None:
    """The edge list of `edges`, its pairs sorted here by (i, j)."""
    layout = edges.layout
    order = np.lexsort((edges.j, edges.i))
    columns = {name: np.asarray(values, dtype=layout.dtype(name))[order]
               for name, values in (("i", edges.i), ("j", edges.j), *edges.values.items())}
    columns["distance"] = layout.distance(columns)
    write_edge_stream(path, edges, len(order), lambda name: [columns[name]])


def edge_members(about: Edges, count: int, chunks: Callable[[str], Iterable[np.ndarray]]
                 ) -> list[tuple[str, np.dtype, tuple[int, ...], Iterable]]:
    """The members (write_npz) of the edge list of `about`'s sequences and settings whose
    `count` pairs come, sorted by (i, j), from chunks(name) for each of its layout's
    members (called once per member, when it is written)."""
    layout = about.layout
    ids = np.asarray(about.ids, dtype=str)
    members = [_scalar("n", about.n, np.int64), ("ids", ids.dtype, ids.shape, [ids])]
    for name in layout.members:
        members.append((name, layout.dtype(name), (count,), _lazy(chunks, name)))
    return members + [_scalar("max_distance", about.max_distance, np.float64),
                      _scalar("candidate_identity", about.candidate_identity, np.float64),
                      _scalar("iddef", about.iddef, np.int64),
                      _scalar("sequences", about.sequences, str),
                      _scalar("shard", about.shard, np.int64),
                      _scalar("shards", about.shards, np.int64),
                      _scalar("tiling", about.tiling, str),
                      _scalar(SCORING, about.scoring, str)]


def write_edge_stream(path, about: Edges, count: int,
                      chunks: Callable[[str], Iterable[np.ndarray]]) -> None:
    """The edge list of edge_members(about, count, chunks): the bytes np.savez would write
    for the whole arrays."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        write_npz(fh, edge_members(about, count, chunks))


def _lazy(chunks, name):
    """chunks(name), called only when its member is written."""
    yield from chunks(name)


def _open_checked(path) -> np.lib.npyio.NpzFile:
    """The edge list at `path` opened (np.load, lazy), its members all there."""
    if not Path(path).is_file():
        raise UserError(f"{path}: no such file" if not Path(path).exists() else
                        f"{path}: not a file")
    if not zipfile.is_zipfile(path):  # np.load would read a .npy and give no columns
        with open(path, "rb") as fh:  # a zip's first member header, its directory lost
            cut_short = fh.read(4) == b"PK\x03\x04"
        raise UserError(f"{path}: damaged edge list (cut short: no zip directory)" if cut_short
                        else f"{path}: not a seqpairs edge list (not an .npz file)")
    try:
        z = np.load(path, allow_pickle=False)
    except DAMAGED as exc:
        raise _damaged(path, exc) from None
    missing = [name for name in FIELDS if name not in z.files]
    if not missing:
        try:
            scoring_name = str(z[SCORING]) if SCORING in z.files else "seqdist"
        except DAMAGED as exc:
            z.close()
            raise _damaged(path, exc) from None
        missing = [name for name in layout_of(scoring_name, path).members
                   if name not in z.files]
    if missing:
        z.close()
    if missing == list(ORIGIN):
        raise UserError(f"{path}: the edge list does not say what it was made from "
                        "(made by an older seqpairs?); rerun `seqpairs distance`")
    if missing:  # also what a damaged zip directory or member name gives
        raise UserError(f"{path}: not a seqpairs edge list, or a damaged one (no "
                        f"{', '.join(missing)})")
    return z


def _damaged(path, problem) -> UserError:
    return UserError(f"{path}: damaged edge list ({' '.join(str(problem).split())})")


def read_edges(path) -> Edges:
    """An edge list, checked whole: a damaged or foreign file is one UserError line."""
    with _open_checked(path) as z:
        try:
            a = {name: z[name] for name in z.files}
        except DAMAGED as exc:
            raise _damaged(path, exc) from None
    about = _about(path, a)
    layout = about.layout
    count = len(a["i"]) if a["i"].ndim == 1 else -1
    for name in layout.members:
        if a[name].dtype != layout.dtype(name) or a[name].shape != (count,):
            raise _damaged(path, f"column {name} is not {count} values of "
                                 f"{layout.dtype(name)}")
    check_pairs(path, a["i"], a["j"], about.n)
    about.i, about.j = a["i"], a["j"]
    about.values = {name: a[name] for name in layout.columns}
    return about


def _about(path, a: dict) -> Edges:
    """An edge list's sequences and settings (no pairs) from its small members, checked."""
    a = {SCORING: np.asarray("seqdist"), **a}  # edge lists made before it: SeqDist's
    for name in ("n", "max_distance", "candidate_identity", "iddef", *ORIGIN, SCORING):
        if a[name].shape != ():
            raise _damaged(path, f"{name} is not a single value")
    if a["ids"].ndim != 1 or a["ids"].dtype.kind != "U":
        raise _damaged(path, "ids are not a list of names")
    n = int(a["n"])
    if len(a["ids"]) != n:
        raise _damaged(path, f"{len(a['ids'])} ids for {n} sequences")
    shard, shards = int(a["shard"]), int(a["shards"])
    if not 0 <= shard < shards:
        raise _damaged(path, f"shard {shard} of {shards}")
    layout_of(str(a[SCORING]), path)
    return Edges(n, a["ids"], None, None, {}, max_distance=float(a["max_distance"]),
                 candidate_identity=float(a["candidate_identity"]), iddef=int(a["iddef"]),
                 sequences=str(a["sequences"]), shard=shard, shards=shards,
                 tiling=str(a["tiling"]), scoring=str(a[SCORING])).empty()


def check_pairs(path, i, j, n: int, first: int = 0, before: int = -1) -> int:
    """UserError unless the pairs (i, j), numbered from `first`, are i > j within 0..n-1
    in strictly increasing (i, j) order after the pair index `before`; their last index."""
    wrong = np.flatnonzero((j < 0) | (i <= j) | (i >= n))
    if wrong.size:
        k = wrong[0]
        raise _damaged(path, f"pair {first + k} ({i[k]}, {j[k]}) is not i > j within "
                             f"0..{n - 1}")
    keys = pair_index(i, j)
    order = np.flatnonzero(np.diff(np.r_[before, keys]) <= 0)
    if order.size:
        k = first + order[0]
        raise _damaged(path, f"pairs {k - 1} and {k} are not in (i, j) order, or repeat")
    return int(keys[-1]) if len(keys) else before


def edge_list_about(path) -> tuple[Edges, int]:
    """An edge list's sequences and settings (an Edges without pairs, checked) and its
    number of pairs, from its small members and the pair columns' headers only."""
    with _open_checked(path) as z:
        try:
            about = _about(path, {name: z[name] for name in ("n", "ids", "max_distance",
                                                              "candidate_identity", "iddef",
                                                              *ORIGIN, SCORING)
                                  if name in z.files})
            layout = about.layout
            counts = set()
            for name in layout.members:
                with z.zip.open(f"{name}.npy") as member:
                    shape, dtype = _npy_header(member)
                if dtype != layout.dtype(name) or len(shape) != 1:
                    raise _damaged(path, f"column {name} is not values of "
                                         f"{layout.dtype(name)}")
                counts.add(shape[0])
        except DAMAGED as exc:
            raise _damaged(path, exc) from None
    if len(counts) != 1:
        raise _damaged(path, "its columns differ in length")
    return about, counts.pop()


def _npy_header(member) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(member)
    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
            else np.lib.format.read_array_header_2_0)
    shape, fortran_order, dtype = read(member)
    if fortran_order:
        raise ValueError("Fortran order")
    return shape, dtype


def edge_list_column(path, name: str, step: int):
    """Column `name` of an edge list, `step` values at a time; the member's CRC is checked
    when its last values are read (a damaged member is a UserError)."""
    try:
        with zipfile.ZipFile(path) as archive, archive.open(f"{name}.npy") as member:
            shape, dtype = _npy_header(member)
            for start in range(0, shape[0], step):
                size = min(step, shape[0] - start) * dtype.itemsize
                data = member.read(size)
                if len(data) != size:
                    raise EOFError(f"{name}.npy ends early")
                yield np.frombuffer(data, dtype)
            if member.read(1):
                raise ValueError(f"{name}.npy is longer than its header says")
    except DAMAGED as exc:
        raise _damaged(path, exc) from None


def merged_about(parts: list[Edges], names) -> Edges:
    """What the edge list merged from `parts` (the sequences and settings of edge lists,
    read from the files `names`) is made from, once they are shards 0..K-1 of one
    `--shard k/K` run of one tiling; anything else is refused with one line."""
    first = parts[0]
    for part, name in zip(parts[1:], names[1:]):
        same = (part.n == first.n and np.array_equal(part.ids, first.ids)
                and part.sequences == first.sequences and part.scoring == first.scoring
                and part.max_distance == first.max_distance and part.iddef == first.iddef
                and np.array_equal(part.candidate_identity, first.candidate_identity,
                                   equal_nan=True))
        if not same:
            raise UserError(f"{name}: made from other sequences or settings than {names[0]}")
        if (part.shards, part.tiling) != (first.shards, first.tiling):
            raise UserError(f"{name}: shard {part.shard} of {part.shards}, but {names[0]} is "
                            f"shard {first.shard} of {first.shards}"
                            + (" of another tiling" if part.shards == first.shards else ""))
    seen = {}
    for part, name in zip(parts, names):
        if part.shard in seen:
            raise UserError(f"{name}: shard {part.shard} of {part.shards} is given twice "
                            f"(also {seen[part.shard]})")
        seen[part.shard] = name
    missing = sorted(set(range(first.shards)) - set(seen))
    if missing:
        raise UserError(f"the edge lists to merge lack shard{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(map(str, missing))} of {first.shards}")
    return dataclasses.replace(first, shard=0, shards=1, tiling="")


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
    except OSError as exc:  # a folder, no permission
        raise cannot_read(path, exc) from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not SeqDist text (not a text file)") from None
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


def condensed_rows(n: int, distances: np.ndarray, step: int = 1 << 20):
    """seqdist_to_condensed in pieces of about `step` entries (whole rows x of {x, y > x})."""
    x = 0
    while x < n - 1:
        first = x
        count = 0
        while x < n - 1 and (count == 0 or count + n - 1 - x <= step):
            count += n - 1 - x
            x += 1
        widths = n - 1 - np.arange(first, x)  # entries of each row
        rows = np.repeat(np.arange(first, x), widths)
        row_starts = np.repeat(np.cumsum(widths) - widths, widths)
        columns = rows + 1 + np.arange(len(rows)) - row_starts
        yield distances[pair_index(columns, rows)]


def write_matrix(path, distances: np.ndarray) -> None:
    """Every pair's distance in SeqDist pair order (pair_index) as a .npy file (np.save's
    bytes): what the text and matrix exports are made from (read_matrix)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, npy_header(np.float64, distances.shape))
        fh.write(memoryview(np.ascontiguousarray(distances, np.float64)).cast("B"))


def read_matrix(path, n: int) -> np.ndarray:
    """write_matrix's distances of n sequences, mapped from the file (not read whole)."""
    try:
        distances = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not a distance matrix (.npy: {exc})") from None
    if distances.dtype != np.float64 or distances.shape != (n * (n - 1) // 2,):
        raise UserError(f"{path}: {distances.shape} {distances.dtype} distances, not the "
                        f"{n * (n - 1) // 2} float64 of {n} sequences")
    return distances


def write_condensed(path, n: int, distances: np.ndarray) -> None:
    """The condensed matrix as np.save writes it, reordered a piece at a time."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, npy_header(np.float64, (n * (n - 1) // 2,)))
        for piece in condensed_rows(n, distances):
            fh.write(memoryview(piece).cast("B"))  # keeps the errno of a full disk
