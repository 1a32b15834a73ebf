"""Running a stage as an MPI program (mpi4py): one rank per GPU (or per CPU process).

`seqpairs distance` launched by `mpiexec -n N` or `srun -n N` splits the tiles over the
ranks by cost, longest processing time first (Savran et al.'s static assignment): tiles
in decreasing cell count, each to the rank with the least work so far. Every rank
computes its tiles; rank 0 gathers the kept pairs (and dense outputs) and writes the
files, which are sorted by pair, so the output is byte-identical for any number of ranks.
Without an MPI launcher (or without mpi4py) everything runs in one process.
"""
from __future__ import annotations

import heapq
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

# Variables that MPI launchers set in every rank's environment.
LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE")


@dataclass(frozen=True)
class World:
    comm: object  # mpi4py.MPI.Comm, or None in a single process
    rank: int
    size: int
    local_rank: int  # rank among the ranks of this node

    @property
    def root(self) -> bool:
        return self.rank == 0


SINGLE = World(None, 0, 1, 0)


def world() -> World:
    """The MPI world this process runs in; SINGLE when not launched under MPI."""
    if not any(name in os.environ for name in LAUNCHER_VARIABLES):
        return SINGLE
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    if comm.Get_size() == 1:
        return SINGLE
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    return World(comm, comm.Get_rank(), comm.Get_size(), node.Get_rank())


def assign(tiles: pd.DataFrame, size: int) -> np.ndarray:
    """Rank of each tile: longest processing time first, by the tiles' cell counts.

    Ties (equal cost, equal load) go to the lower tile and the lower rank, so every rank
    computes the same assignment.
    """
    order = np.lexsort((tiles["tile"].to_numpy(), -tiles["cells"].to_numpy()))
    owner = np.empty(len(tiles), dtype=np.int64)
    loads = [(0, rank) for rank in range(size)]
    for k in order:
        load, rank = heapq.heappop(loads)
        owner[k] = rank
        heapq.heappush(loads, (load + int(tiles["cells"].iloc[k]), rank))
    return owner


def gather_arrays(w: World, arrays: tuple[np.ndarray, ...]):
    """Rank 0: each array concatenated over the ranks (in rank order); others: None."""
    parts = w.comm.gather(arrays, root=0)
    if not w.root:
        return None
    return tuple(np.concatenate(column) for column in zip(*parts))


def gather_dense(w: World, dense: np.ndarray):
    """Rank 0: the dense outputs merged (each pair computed by one rank, NaN elsewhere)."""
    parts = w.comm.gather(dense, root=0)
    if not w.root:
        return None
    merged = parts[0]
    for part in parts[1:]:
        np.fmax(merged, part, out=merged)  # fmax keeps the number where the other is NaN
    return merged


def abort(w: World, code: int) -> None:
    """End every rank: one rank's failure must fail the whole job, not leave it hanging."""
    w.comm.Abort(code)
