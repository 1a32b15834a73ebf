"""Kept pairs in bounded memory: sorted runs on disk, merged at the end as sort(1) does.

A Spill takes the distance stage's kept pairs batch by batch (any order) into a buffer of
at most `budget` bytes. When the buffer is full it is sorted by pair index (the key
i(i-1)/2 + j, which orders pairs by (i, j)) and written as a run: a file in a temporary
folder holding the columns one after another. At the end `merged` reads every run in
windows and yields the pairs in key order, chunk by chunk; when the runs are too many for
windows of MIN_WINDOW records within the budget, they are first merged in groups into
longer runs (one more pass over the data each time). Pairs that fit the budget stay in
memory and no file is written. Keys are unique (a pair is computed once), so the order
is total and the output does not depend on how the pairs were cut into runs.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError
from .distances import pair_from_index, pair_index

# A run's columns, in file order.
COLUMNS = {"key": np.dtype(np.int64), "cost": np.dtype(np.float64),
           "length": np.dtype(np.int32), "matches": np.dtype(np.int32),
           "aligned": np.dtype(np.int32), "leading": np.dtype(np.int32)}
RECORD = sum(dtype.itemsize for dtype in COLUMNS.values())  # bytes of one pair
# Bytes a buffered pair needs while its run is sorted: itself, its sort index and one
# column's reordered copy.
SORT_BYTES = RECORD + 16
MIN_WINDOW = 1 << 14  # records read from each run at a time, at least
STEP = 1 << 20  # pairs converted to the edge list's columns at a time


@dataclass
class MemoryRun:
    """A sorted run held in memory (the pairs of a run that fits the budget)."""

    columns: dict[str, np.ndarray]

    @property
    def count(self) -> int:
        return len(self.columns["key"])

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        return self.columns[name][start:stop]


@dataclass
class FileRun:
    """A sorted run on disk: its columns one after another, `count` values each."""

    path: Path
    count: int

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        offset = 0
        for column, dtype in COLUMNS.items():
            if column == name:
                break
            offset += self.count * dtype.itemsize
        dtype = COLUMNS[name]
        return np.fromfile(self.path, dtype, count=stop - start,
                           offset=offset + start * dtype.itemsize)


def write_run(path: Path, count: int, chunks) -> FileRun:
    """A FileRun of `count` records from chunks (dicts of every column, in key order)."""
    starts, offset = {}, 0
    for name, dtype in COLUMNS.items():
        starts[name] = offset
        offset += count * dtype.itemsize
    written = 0
    with open(path, "wb") as fh:
        for chunk in chunks:
            size = len(chunk["key"])
            for name, dtype in COLUMNS.items():
                fh.seek(starts[name] + written * dtype.itemsize)
                # file.write, unlike ndarray.tofile, keeps the errno of a full disk
                fh.write(memoryview(np.ascontiguousarray(chunk[name], dtype=dtype)).cast("B"))
            written += size
    if written != count:
        raise RuntimeError(f"{path}: {written} records written, {count} expected")
    return FileRun(path, count)


class Cursor:
    """Reads one run window by window for `merged`."""

    def __init__(self, run, names, window: int):
        self.run, self.names, self.window = run, names, window
        self.loaded = 0  # records read from the run so far
        self._load()

    def _load(self) -> None:
        stop = min(self.loaded + self.window, self.run.count)
        self.values = {name: self.run.read(name, self.loaded, stop) for name in self.names}
        self.loaded, self.position = stop, 0

    @property
    def done(self) -> bool:
        return self.position == len(self.values["key"])

    @property
    def last_key(self) -> int:
        return int(self.values["key"][-1])

    def take(self, frontier: int) -> dict[str, np.ndarray]:
        """The window's next records with key <= frontier (refilling the window when they
        were its last)."""
        keys = self.values["key"]
        end = self.position + int(np.searchsorted(keys[self.position:], frontier, "right"))
        part = {name: values[self.position:end] for name, values in self.values.items()}
        self.position = end
        if self.done and self.loaded < self.run.count:
            self._load()
        return part


def window_for(runs: list, names, budget: int) -> int:
    """Records per run and window so that a merge of `runs` stays within `budget` bytes:
    every window, their concatenation, its sort index and the reordered chunk."""
    width = sum(COLUMNS[name].itemsize for name in names)
    return budget // (max(len(runs), 1) * (3 * width + 8))


def merged(runs: list, names, budget: int):
    """The records of `runs` in key order, as chunks: dicts of "key" and `names`."""
    names = ["key", *(name for name in names if name != "key")]
    window = max(window_for(runs, names, budget), MIN_WINDOW)
    cursors = [Cursor(run, names, window) for run in runs if run.count]
    while cursors:
        frontier = min(cursor.last_key for cursor in cursors)
        parts = [cursor.take(frontier) for cursor in cursors]
        parts = [part for part in parts if len(part["key"])]
        if len(parts) == 1:
            yield parts[0]
        else:
            keys = np.concatenate([part["key"] for part in parts])
            order = np.argsort(keys, kind="stable")  # runs' sorted stretches: timsort merges them
            yield {name: np.concatenate([part[name] for part in parts])[order]
                   for name in names}
        cursors = [cursor for cursor in cursors if not cursor.done]


class Spill:
    """Kept pairs within a memory budget (bytes), spilled as sorted runs into a temporary
    folder made on first need in `folder` (named after `name`), removed by close()."""

    def __init__(self, budget: int, folder, name: str):
        self.budget = budget
        self.capacity = max(budget // SORT_BYTES, MIN_WINDOW)
        self.folder, self.name = Path(folder), name
        self.buffer = {column: np.empty(self.capacity, dtype) for column, dtype in COLUMNS.items()}
        self.filled = 0
        self.runs: list = []
        self.count = 0  # pairs taken
        self.finished: list | None = None
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

    def add(self, i, j, cost, length, matches, aligned, leading) -> None:
        """One batch of kept pairs (PAIR_COLUMNS), any order."""
        self.add_records({"key": pair_index(i, j), "cost": cost, "length": length,
                          "matches": matches, "aligned": aligned, "leading": leading})

    def add_records(self, records: dict[str, np.ndarray]) -> None:
        """Records given as run columns (COLUMNS), any order."""
        total, done = len(records["key"]), 0
        while done < total:
            take = min(total - done, self.capacity - self.filled)
            for name in COLUMNS:
                self.buffer[name][self.filled:self.filled + take] = records[name][done:done + take]
            self.filled += take
            done += take
            if self.filled == self.capacity:
                self._write_run()
        self.count += total

    def _sorted_buffer(self) -> dict[str, np.ndarray]:
        """The buffer's records in key order (the buffer is given up)."""
        order = np.argsort(self.buffer["key"][:self.filled])
        columns = {}
        for name in COLUMNS:  # one reordered copy at a time
            columns[name] = self.buffer[name][:self.filled][order]
            self.buffer[name] = None
        self.buffer = None
        self.filled = 0
        return columns

    def _new_path(self) -> Path:
        try:
            if self._temporary is None:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._temporary = Path(tempfile.mkdtemp(prefix=f".{self.name}.runs-",
                                                        dir=self.folder))
        except OSError as exc:
            raise self._error(exc) from None
        self._files += 1
        return self._temporary / f"{self._files}.run"

    def _error(self, exc: OSError) -> UserError:
        """A run that cannot be written (disk full, no permission...): the user's to fix."""
        return UserError(f"{self.folder}: cannot write the sorted runs of {self.name} "
                         f"({exc.strerror or exc})")

    def _write_run(self) -> None:
        if not self.filled:
            return
        columns = self._sorted_buffer()
        path = self._new_path()
        try:
            self.runs.append(write_run(path, len(columns["key"]), [columns]))
        except OSError as exc:
            raise self._error(exc) from None
        del columns
        self.buffer = {column: np.empty(self.capacity, dtype) for column, dtype in COLUMNS.items()}

    def finish(self) -> list:
        """The sorted runs of every pair taken (one in memory when they fit the budget),
        no more than a merge can read in windows of MIN_WINDOW records within the budget."""
        if self.finished is not None:
            return self.finished
        if not self.runs:
            self.finished = [MemoryRun(self._sorted_buffer())]
            return self.finished
        self._write_run()
        self.buffer = None
        fan_in = max(2, self.budget // (MIN_WINDOW * (3 * RECORD + 8)))
        runs = self.runs
        while len(runs) > fan_in:  # a merge pass: groups of fan_in runs into one each
            groups = [runs[k:k + fan_in] for k in range(0, len(runs), fan_in)]
            runs = []
            for group in groups:
                path = self._new_path()
                try:
                    runs.append(write_run(path, sum(run.count for run in group),
                                          merged(group, COLUMNS, self.budget)))
                except OSError as exc:
                    raise self._error(exc) from None
                for run in group:
                    run.path.unlink()
        self.finished = runs
        return runs

    def pieces(self, records: int):
        """This spill's records, run by run, in pieces of at most `records` (for sending)."""
        for run in self.finish():
            for start in range(0, run.count, records):
                stop = min(start + records, run.count)
                yield {name: run.read(name, start, stop) for name in COLUMNS}


def pieces(runs: list, names, budget: int):
    """merged(runs, names, budget) in pieces of at most STEP pairs (so that what is made
    from a piece stays small)."""
    for chunk in merged(runs, names, budget):
        for start in range(0, len(chunk["key"]), STEP):
            yield {name: values[start:start + STEP] for name, values in chunk.items()}


def edge_columns(runs: list, budget: int):
    """chunks(name) of the runs' pairs in (i, j) order for each edge list column
    (formats.distances.write_edge_stream)."""
    needs = {"i": [], "j": [], "distance": ["cost", "length"]}

    def chunks(name):
        for piece in pieces(runs, needs.get(name, [name]), budget):
            if name in ("i", "j"):
                yield pair_from_index(piece["key"])[name == "j"]
            elif name == "distance":
                yield piece["cost"] / piece["length"]
            else:
                yield piece[name]

    return chunks


def pair_chunks(runs: list, budget: int):
    """(i, j, distance) of the runs' pairs in (i, j) order, chunk by chunk
    (formats.interop.write_mothur_column)."""
    for piece in pieces(runs, ["cost", "length"], budget):
        yield (*pair_from_index(piece["key"]), piece["cost"] / piece["length"])
