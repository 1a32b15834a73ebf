"""The executor of MPI ranks (mpi4py): `mpiexec -n N` or `srun -n N` starts N copies of a
stage; each computes the items `assign` gives its rank, on the GPU of its node-local rank,
and rank 0 gathers and writes. Without an MPI launcher this executor is not used, so a
plain run needs no MPI library."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from . import assign, ordered

# Variables that MPI launchers set in every rank's environment.
LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE")


def launched() -> bool:
    """True under an MPI launcher with more than one rank."""
    if not any(name in os.environ for name in LAUNCHER_VARIABLES):
        return False
    from mpi4py import MPI

    return MPI.COMM_WORLD.Get_size() > 1


def start():
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    return Mpi(comm, comm.Get_rank(), comm.Get_size(), node.Get_rank())


@dataclass(frozen=True)
class Mpi:
    comm: object  # mpi4py.MPI.Comm
    rank: int
    size: int
    device: int  # the rank among the ranks of this node

    @property
    def root(self) -> bool:
        return self.rank == 0

    def share(self, costs) -> np.ndarray:
        return np.flatnonzero(assign(costs, self.size) == self.rank)

    def gather(self, key, columns):
        parts = self.comm.gather((key, *columns), root=0)
        if not self.root:
            return None
        merged = [np.concatenate(column) for column in zip(*parts)]
        return ordered(merged[0], merged[1:])

    def merge_dense(self, array):
        parts = self.comm.gather(array, root=0)
        if not self.root:
            return None
        merged = parts[0]
        for part in parts[1:]:
            np.fmax(merged, part, out=merged)  # fmax keeps the number where the other is NaN
        return merged

    def barrier(self) -> None:
        self.comm.Barrier()

    def abort(self, code: int) -> None:
        self.comm.Abort(code)
