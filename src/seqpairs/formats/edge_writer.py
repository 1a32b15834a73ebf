"""The edge list written from sorted runs (formats/runs.py): its pair members' rows made
and written by threads in pieces, in place in the one file, by every worker at once under
MPI (each the key ranges it owns, the root the other members and the zip's headers last:
formats/npz.Archive); and `seqpairs merge`, the shards of one run written the same way.
The executor is passed in (parallel's contract; one process: parallel.local.Local)."""
from __future__ import annotations

import contextlib
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..parallel.local import Local
from .atomic import atomic_path, write_error
from .distances import Edges, edge_list_about, edge_members, merged_about
from .npz import Archive, crc32_combine
from .runs import (
    Overlap,
    Scratch,
    balanced_splits,
    cut,
    edge_list_run,
    edge_pieces,
    edge_rows,
    fewer_runs,
    merges_within,
    run_columns,
)

log = logging.getLogger("seqpairs.distance")
PIECE = 1 << 16  # pairs of the edge list's rows made and written by a thread at a time


@contextlib.contextmanager
def one_file(executor, path, size: int):
    """On every worker, a handle (r+b) on the one temporary file of `path`, which the root
    makes `size` bytes long, for each worker to write its part in place. The file becomes
    `path` when the root's block ends, after every worker has closed its handle. Any
    worker's failure ends every worker with one line."""
    try:
        with contextlib.ExitStack() as stack:
            tmp = None
            if executor.root:
                tmp = stack.enter_context(atomic_path(path))
                os.truncate(tmp, size)
            tmp = executor.broadcast(tmp)
            try:
                fh = open(tmp, "r+b")
            except FileNotFoundError:
                raise UserError(f"{path}: rank {executor.rank} does not see the file rank 0 "
                                "made: the output's folder must be on a file system that every "
                                "rank shares") from None
            with fh:
                yield fh
            executor.barrier()  # every part is written before the root renames the file
    except OSError as error:  # this worker's disk full: every worker must end
        executor.fail(write_error(Path(path), error))
    except UserError as error:
        executor.fail(error)


def write_edges_together(executor, path, about: Edges, counts: np.ndarray, owned: dict,
                         budget: int, threads: int) -> None:
    """The edge list written by every worker at once into the one file: each the rows of
    every pair member of the key ranges it owns (`owned`: range -> runs; range r's rows
    follow those of the ranges before it, `counts` pairs each; write_ranges), the root the
    other members and then the zip's headers from the CRCs of every range's pieces
    (formats/npz.py)."""
    members = edge_members(about, int(counts.sum()), None)  # pairs' rows: write_ranges
    archive = Archive((name, dtype, shape) for name, dtype, shape, _ in members)
    pairs = about.layout.members
    starts = np.concatenate([[0], np.cumsum(counts)])
    with one_file(executor, path, archive.end) as fh:
        mine = write_ranges(archive, fh.fileno(), about.layout, owned, starts, budget, threads)
        key = np.array([r * len(pairs) + k for r in owned for k in range(len(pairs))],
                       np.int64)
        gathered = executor.gather(key, tuple(np.array(c, np.int64) for c in zip(*mine)))
        if executor.root:  # every range's pieces of each pair member, range after range
            crcs, sizes = (column.reshape(len(counts), len(pairs)) for column in gathered)
            pieces = {}
            for name, _, _, member_chunks in members:
                if name in pairs:
                    k = pairs.index(name)
                    rest = list(zip(crcs[:, k].tolist(), sizes[:, k].tolist()))
                else:
                    rest = [archive.write_rows(fh, name, 0, member_chunks)]
                pieces[name] = [archive.write_header(fh, name), *rest]
            archive.finish(fh, pieces)
    log.info("edge list written: %s" if executor.root else "rows of the edge list written: %s",
             path)


def write_ranges(archive: Archive, fd: int, layout, owned: dict, starts: np.ndarray,
                 budget: int, threads: int) -> list:
    """(CRC-32, bytes) of each owned range's piece of each pair member (range after range,
    member after member). Each range's runs are cut by key into parts of about equal
    counts (runs.balanced_splits), as many as `threads` and as the budget lets merge at
    once (runs.merges_within); threads each merge a part within its share of the budget
    and make and write its rows in pieces of PIECE pairs (Archive.write_piece, in place:
    NumPy, zlib and the writes let them run beside each other; one merge in one thread
    was the tail's bottleneck); each member's CRC-32 combined over the pieces in order."""
    pairs = layout.members
    at_once = min((merges_within(runs, budget, threads) for runs in owned.values()),
                  default=1)
    parts = []  # (range, row of its first pair, its runs), in row order
    for r, runs in owned.items():
        row = int(starts[r])
        for part in cut(runs, balanced_splits(runs, at_once)):
            parts.append((r, row, part))
            row += sum(run.count for run in part)

    def write_part(row: int, runs: list) -> list:
        written = []
        for piece in edge_pieces(runs, budget // at_once, layout, PIECE):
            written.append(archive.write_piece(fd, row, edge_rows(piece, layout)))
            row += len(piece["key"])
        return written

    with ThreadPoolExecutor(at_once, thread_name_prefix="seqpairs-rows") as pool:
        done = list(pool.map(lambda part: write_part(*part[1:]), parts))
    mine = []
    for r in owned:
        pieces = [piece for (owner, _, _), written in zip(parts, done) if owner == r
                  for piece in written]
        for name in pairs:
            crc, size = 0, 0
            for piece in pieces:
                crc, size = crc32_combine(crc, *piece[name]), size + piece[name][1]
            mine.append((crc, size))
    return mine


def merge_edge_lists(paths: list, out, budget: int, threads: int = 1) -> int:
    """`seqpairs merge`: the edge list of the shards 0..K-1 of one run at `paths`, written
    to `out` within `budget` bytes by `threads` threads: each shard is a sorted run,
    copied and checked, and the runs are merged as the edge list's rows are written
    (write_edges_together, one worker); a pair in two shards is refused as the merge
    meets it (runs.Overlap), and no output is left. Returns the number of pairs."""
    parts = [edge_list_about(path) for path in paths]
    about = merged_about([part for part, _ in parts], [str(path) for path in paths])
    columns = run_columns(about.layout)
    count = sum(count for _, count in parts)
    with Scratch(Path(out).parent, Path(out).name) as scratch:
        runs = [edge_list_run(path, part_count, about.n, scratch, columns)
                for path, (_, part_count) in zip(paths, parts)]
        try:
            runs = fewer_runs(runs, budget, scratch, columns)
            write_edges_together(Local(), out, about, np.array([count]), {0: runs}, budget,
                                 threads)
        except Overlap:
            raise UserError("the edge lists to merge overlap (a pair in two shards)") from None
    return count
