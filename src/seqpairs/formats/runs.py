"""Kept pairs in bounded memory: sorted runs on disk, merged at the end as sort(1) does.

A Spill takes the distance stage's kept pairs batch by batch (any order) into one of two
buffers that share `budget` bytes. When a buffer is full it is sorted by pair index (the
key i(i-1)/2 + j, which orders pairs by (i, j)) and written as a run, a file per column in
a temporary folder, by a writer thread while the other buffer fills: the GPU's loop that
hands the pairs does not wait for the sort and the disk (a second or more a run). At the
end `merged` cuts the runs by key into parts that fit the budget and yields the pairs in
key order, part by part; when the runs are too many for a part to read MIN_WINDOW records
from each, they are first merged in groups into longer runs (one more pass over the data
each time).
Pairs that fit the budget stay in memory and no file is written. Keys are unique (a pair
is computed once; a key in two runs is an Overlap), so the order is total and the output
does not depend on how the pairs were cut into runs.

Under MPI each worker's runs are cut into ranges of keys (Spill.slices): the worker that
owns a range reads that range's slices of every worker's runs, in their folders beside
the output, and merges them.

The shards of an edge list are sorted runs already: edge_list_run copies one into a run
file, checking it as it reads (formats/edge_writer.merge_edge_lists merges them).
"""
from __future__ import annotations

import contextlib
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError
from .atomic import RUNS_SUFFIX, remove_stale, temporary_name
from .distances import (
    Layout,
    check_pairs,
    edge_list_column,
    pair_from_index,
    pair_index,
)

KEY = np.dtype(np.int64)
# Bytes a buffered pair needs while its run is sorted, beyond its record: its sort index
# and one column's reordered copy.
SORT_OVERHEAD = 16
MIN_WINDOW = 1 << 14  # records a part of the merge reads from each run, on average, at least
STEP = 1 << 20  # pairs converted to the edge list's columns at a time


def run_columns(layout: Layout) -> dict[str, np.dtype]:
    """A run's columns, in file order: the pair index and the layout's columns."""
    return {"key": KEY, **{name: np.dtype(dtype) for name, dtype in layout.columns.items()}}


def record_bytes(columns: dict[str, np.dtype]) -> int:
    """Bytes of one pair's record."""
    return sum(dtype.itemsize for dtype in columns.values())


@dataclass
class MemoryRun:
    """A sorted run held in memory (the pairs of a run that fits the budget)."""

    values: dict[str, np.ndarray]
    columns: dict[str, np.dtype]

    @property
    def count(self) -> int:
        return len(self.values["key"])

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        return self.values[name][start:stop]

    def keys(self) -> np.ndarray:
        return self.values["key"]

    def part(self, start: int, stop: int) -> MemoryRun:
        """Records start..stop-1 (views)."""
        return MemoryRun({name: values[start:stop] for name, values in self.values.items()},
                         self.columns)


@dataclass
class FileRun:
    """A sorted run on disk: a file per column (`path`.NAME), `count` values each from
    record `first` on. A run that is not its files' `whole` content is a slice of another
    worker's run (Spill.slices), which other workers read too: it is never removed alone."""

    path: Path
    count: int
    columns: dict[str, np.dtype]
    first: int = 0
    whole: bool = True

    def column(self, name: str) -> Path:
        return self.path.with_name(f"{self.path.name}.{name}")

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        dtype = self.columns[name]
        return np.fromfile(self.column(name), dtype, count=stop - start,
                           offset=(self.first + start) * dtype.itemsize)

    def keys(self) -> np.ndarray:
        """The keys as a memory map: a search reads only the pages it visits."""
        if not self.count:
            return np.empty(0, KEY)
        return np.memmap(self.column("key"), KEY, "r", offset=self.first * KEY.itemsize,
                         shape=(self.count,))

    def part(self, start: int, stop: int) -> FileRun:
        """Records start..stop-1, a slice that never removes the files."""
        return FileRun(self.path, stop - start, self.columns, self.first + start, whole=False)

    def remove(self) -> None:
        if self.whole:
            for name in self.columns:
                self.column(name).unlink(missing_ok=True)


def write_run(path: Path, count: int, chunks, columns: dict[str, np.dtype]) -> FileRun:
    """A FileRun of `count` records from chunks (dicts of every one of `columns`, in key
    order)."""
    run = FileRun(path, 0, columns)
    for name in columns:  # empty files: a run of no records reads as one
        run.column(name).touch(exist_ok=False)
    for chunk in chunks:
        for name, dtype in columns.items():
            with open(run.column(name), "ab") as fh:
                # file.write, unlike ndarray.tofile, keeps the errno of a full disk
                fh.write(memoryview(np.ascontiguousarray(chunk[name], dtype)).cast("B"))
        run.count += len(chunk[next(iter(columns))])
    if run.count != count:
        raise RuntimeError(f"{path}: {run.count} records written, {count} expected")
    return run


def merges_within(runs: list, budget: int, most: int) -> int:
    """How many merges of parts of `runs` (each reading parts of MIN_WINDOW records a run
    or more) fit the budget at once, from 1 to `most`."""
    if not runs:
        return 1
    width = record_bytes(runs[0].columns)
    return max(1, min(most, budget // (len(runs) * MIN_WINDOW * (3 * width + 8))))


class Overlap(ValueError):
    """Runs that hold the same key (`merged` yields every key once)."""


def merged(runs: list, names, budget: int):
    """The records of `runs` in key order, as chunks: dicts of "key" and `names`. The runs
    are cut by key into parts of about equal counts that fit the budget (balanced_splits:
    every run's slice, their concatenation, its sort index and the reordered copy), and
    each part is read whole and sorted (the runs' sorted stretches: timsort merges them).
    A merge through windows of every run, each round up to the least of their last keys,
    took rounds of a few records a run where the runs' keys lie dense in different places
    (the distance stage's: tiles of sequences of like lengths), 2,098 rounds for 126.8 M
    pairs at 2^16."""
    names = ["key", *(name for name in names if name != "key")]
    runs = [run for run in runs if run.count]
    if not runs:
        return
    width = sum(runs[0].columns[name].itemsize for name in names)
    part_records = max(budget // (3 * width + 8), MIN_WINDOW)
    # balanced_splits' parts are equal within a few percent: aim at 80% of a part's room
    parts = -(-sum(run.count for run in runs) * 5 // (4 * part_records))
    for held in cut(runs, balanced_splits(runs, parts)):
        if len(held) == 1:
            yield {name: held[0].read(name, 0, held[0].count) for name in names}
            continue
        keys = np.concatenate([run.read("key", 0, run.count) for run in held])
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        if (np.diff(keys) == 0).any():
            raise Overlap("a key in two sorted runs")
        yield {"key": keys, **{name: np.concatenate([run.read(name, 0, run.count)
                                                     for run in held])[order]
                               for name in names[1:]}}


class Scratch:
    """Run files in a temporary folder made on first need in `folder`, hidden and named
    after the output `name` like its temporary file (`.NAME.HOST.PIDNS.PID.RANDOM.runs`,
    formats/atomic.py); close() removes it, and the next run of the same output removes
    those of processes that are gone (killed). A folder or run that cannot be written
    (full disk, no permission) is a UserError naming the folder."""

    def __init__(self, folder, name: str):
        self.folder, self.name = Path(folder), name
        with contextlib.suppress(OSError):  # no folder yet: nothing stale; else a write says
            remove_stale(self.folder / name, RUNS_SUFFIX)
        self._temporary: Path | None = None
        self._files = 0  # run files made so far (their names)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None

    def path(self) -> Path:
        """A new run's path (its column files add a suffix to it)."""
        try:
            if self._temporary is None:
                self.folder.mkdir(parents=True, exist_ok=True)
                temporary = temporary_name(self.folder / self.name, RUNS_SUFFIX)
                temporary.mkdir(mode=0o700)
                self._temporary = temporary
        except OSError as exc:
            raise self.error(exc) from None
        self._files += 1
        return self._temporary / f"{self._files}.run"

    def error(self, exc: OSError) -> UserError:
        return UserError(f"{self.folder}: cannot write the sorted runs of {self.name} "
                         f"({exc.strerror or exc})")

    def write_run(self, count: int, chunks, columns: dict[str, np.dtype]) -> FileRun:
        """write_run into new files here."""
        path = self.path()
        try:
            return write_run(path, count, chunks, columns)
        except OSError as exc:
            raise self.error(exc) from None


def fewer_runs(runs: list, budget: int, scratch: Scratch,
               columns: dict[str, np.dtype], most: int | None = None) -> list:
    """No more runs than `most` (default: as many as a merge's parts within the budget
    can read MIN_WINDOW records of each): merge passes of groups of runs into one each, as
    long as needed."""
    fan_in = max(2, budget // (MIN_WINDOW * (3 * record_bytes(columns) + 8)))
    while len(runs) > (most or fan_in):
        groups = [runs[k:k + fan_in] for k in range(0, len(runs), fan_in)]
        runs = []
        for group in groups:
            runs.append(scratch.write_run(sum(run.count for run in group),
                                          merged(group, columns, budget), columns))
            for run in group:
                run.remove()
    return runs


class Spill:
    """Kept pairs (their `layout`'s columns) within a memory budget (bytes), spilled as
    sorted runs into a Scratch folder in `folder` (named after the output `name`), removed
    by close()."""

    def __init__(self, budget: int, folder, name: str, layout: Layout):
        self.budget, self.layout = budget, layout
        self.columns = run_columns(layout)
        self.record = record_bytes(self.columns)
        # two buffers: one filling while the other is sorted and written
        self.capacity = max(budget // (2 * self.record + SORT_OVERHEAD), MIN_WINDOW)
        self.scratch = Scratch(folder, name)
        self.buffer = self._empty_buffer()
        self.filled = 0
        self.runs: list = []
        self.count = 0  # pairs taken
        self.finished: list | None = None
        self.writer: ThreadPoolExecutor | None = None  # sorts and writes full buffers
        self.pending: Future | None = None  # the run being written

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.pending is not None:  # its files are written before the folder goes
            self.pending.exception()
            self.pending = None
        if self.writer is not None:
            self.writer.shutdown()
            self.writer = None
        self.scratch.close()

    def _empty_buffer(self) -> dict[str, np.ndarray]:
        return {column: np.empty(self.capacity, dtype) for column, dtype in self.columns.items()}

    def add(self, i, j, *values) -> None:
        """One batch of kept pairs, any order: their layout's columns in order."""
        self.add_records({"key": pair_index(i, j), **dict(zip(self.layout.columns, values))})

    def add_records(self, records: dict[str, np.ndarray]) -> None:
        """Records given as run columns (self.columns), any order."""
        total, done = len(records["key"]), 0
        while done < total:
            take = min(total - done, self.capacity - self.filled)
            for name in self.columns:
                self.buffer[name][self.filled:self.filled + take] = records[name][done:done + take]
            self.filled += take
            done += take
            if self.filled == self.capacity:
                self._write_run()
        self.count += total

    def _sorted(self, buffer: dict, filled: int) -> dict[str, np.ndarray]:
        """The first `filled` records of `buffer` in key order (the buffer is given up)."""
        order = np.argsort(buffer["key"][:filled])
        columns = {}
        for name in self.columns:  # one reordered copy at a time
            columns[name] = buffer[name][:filled][order]
            buffer[name] = None
        return columns

    def _write_run(self) -> None:
        """The buffer sorted and written as a run by the writer thread while the next one
        fills: the computing that hands the pairs waits for the disk only when both are
        full (NumPy's sort and the writes let the thread run beside it)."""
        if not self.filled:
            return
        self._written()  # the run before: its buffer is free again
        full, filled = self.buffer, self.filled
        self.buffer, self.filled = self._empty_buffer(), 0
        if self.writer is None:
            self.writer = ThreadPoolExecutor(1, thread_name_prefix="seqpairs-runs")
        self.pending = self.writer.submit(
            lambda: self.scratch.write_run(filled, [self._sorted(full, filled)], self.columns))

    def _written(self) -> None:
        """Wait for the run being written (a failed write raises its UserError here)."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            self.runs.append(pending.result())

    def _flush(self) -> None:
        """Every pair taken written as runs; no buffer left."""
        self._write_run()
        self._written()
        self.buffer = None

    def finish(self) -> list:
        """The sorted runs of every pair taken (one in memory when they fit the budget), no
        more than a merge's parts within the budget can read MIN_WINDOW records of each."""
        if self.finished is None and not (self.runs or self.pending):
            self.finished = [MemoryRun(self._sorted(self.buffer, self.filled), self.columns)]
            self.buffer = None
        elif self.finished is None:  # the merge's parts take the budget: the buffer to disk
            self._flush()
            self.finished = self.runs
        self.finished = fewer_runs(self.finished, self.budget, self.scratch, self.columns)
        return self.finished

    def slices(self, splits: np.ndarray) -> list[list[tuple[str, int, int]]]:
        """Every pair taken, on disk (the buffer as a last run), each run cut at `splits`
        (even_splits): for each range, (path, first record, count) of its records in each
        run that has some, for FileRuns on any worker that sees this folder."""
        self._flush()
        return [[(str(run.path), run.first, run.count) for run in held]
                for held in cut(self.runs, splits)]


def cut(runs: list, splits: np.ndarray) -> list[list]:
    """For each of the len(splits) + 1 ranges of keys that `splits` (increasing) cut, the
    slices of `runs` that hold its keys (runs without any left out)."""
    ranges: list[list] = [[] for _ in range(len(splits) + 1)]
    for run in runs:
        bounds = [0, *np.searchsorted(run.keys(), splits).tolist(), run.count]
        for held, first, stop in zip(ranges, bounds, bounds[1:]):
            if stop > first:
                held.append(run.part(first, stop))
    return ranges


def balanced_splits(runs: list, parts: int, samples: int = 1 << 10) -> np.ndarray:
    """parts - 1 increasing keys that cut the records of `runs` into `parts` ranges of
    about equal counts (from `samples` keys a run at even steps)."""
    keys, weights = [], []
    for run in runs:
        if run.count:
            at = np.unique(np.linspace(0, run.count - 1, min(run.count, samples)).astype(np.int64))
            keys.append(np.asarray(run.keys()[at]))
            weights.append(np.full(len(at), run.count / len(at)))
    if not keys:
        return np.empty(0, KEY)
    keys, weights = np.concatenate(keys), np.concatenate(weights)
    order = np.argsort(keys, kind="stable")
    keys, below = keys[order], np.cumsum(weights[order])
    at = np.searchsorted(below, below[-1] * np.arange(1, parts) / parts)
    return np.unique(keys[np.minimum(at, len(keys) - 1)])


def even_splits(keys: int, parts: int) -> np.ndarray:
    """parts - 1 increasing keys that cut the keys 0..keys-1 into `parts` ranges of equal
    length (within one): range q holds the keys from splits[q - 1] up to, not with,
    splits[q]."""
    return np.arange(1, parts, dtype=np.int64) * keys // parts


def pieces(runs: list, names, budget: int, step: int = STEP):
    """merged(runs, names, budget) in pieces of at most `step` pairs (so that what is made
    from a piece stays small)."""
    for chunk in merged(runs, names, budget):
        for start in range(0, len(chunk["key"]), step):
            yield {name: values[start:start + step] for name, values in chunk.items()}


def member_rows(piece: dict, name: str, layout: Layout) -> np.ndarray:
    """Edge list member `name`'s rows of a merged piece (its key and the run columns the
    member is made from)."""
    if name in ("i", "j"):
        return pair_from_index(piece["key"])[name == "j"]
    return layout.distance(piece) if name == "distance" else piece[name]


def edge_pieces(runs: list, budget: int, layout: Layout, step: int = STEP):
    """The runs' pairs in (i, j) order, merged once, in pieces of at most `step` pairs
    with every run column that edge_rows needs."""
    return pieces(runs, [name for name in run_columns(layout) if name != "key"], budget, step)


def edge_rows(piece: dict, layout: Layout) -> dict:
    """Every edge list member's rows (name -> rows) of a piece of edge_pieces."""
    return {name: member_rows(piece, name, layout) for name in layout.members}


def pair_chunks(runs: list, budget: int, layout: Layout):
    """(i, j, distance) of the runs' pairs in (i, j) order, chunk by chunk
    (formats.interop.mothur_lines)."""
    for piece in pieces(runs, list(layout.distance_from), budget):
        yield (*pair_from_index(piece["key"]), layout.distance(piece))


def edge_list_run(path, count: int, n: int, scratch: Scratch,
                  columns: dict[str, np.dtype]) -> FileRun:
    """An edge list's pairs (sorted by (i, j): a sorted run already) copied into a run's
    column files, checked as they are read (formats.distances.edge_list_column)."""
    run = FileRun(scratch.path(), count, columns)
    try:
        for name in columns:
            with open(run.column(name), "wb") as fh:
                if name == "key":
                    last = -1
                    for k, (i, j) in enumerate(zip(edge_list_column(path, "i", STEP),
                                                   edge_list_column(path, "j", STEP))):
                        last = check_pairs(path, i, j, n, k * STEP, last)
                        fh.write(memoryview(pair_index(i, j)).cast("B"))
                else:
                    for values in edge_list_column(path, name, STEP):
                        fh.write(memoryview(np.ascontiguousarray(values)).cast("B"))
    except OSError as exc:
        raise scratch.error(exc) from None
    return run
