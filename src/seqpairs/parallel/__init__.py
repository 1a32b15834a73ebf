"""Executors: where a stage's work runs. The distance and psse stages hand their work items
(tiles, pairs) with a cost each to the executor of the process (`current()`, chosen once);
it says which items this worker computes, which GPU it uses, gathers the results in
item order on the root, and ends every worker when one fails. The output is the same
bytes for any executor and any number of workers.

Contract (Executor):
  rank, size      this worker and how many there are; `root` is worker 0, which writes
  device          the GPU index this worker uses (backends.select takes it)
  share(costs)    the indices of the items this worker computes, shared by cost
  gather(key, columns)
                  on the root: every worker's columns (tuples of equal-length arrays)
                  concatenated and ordered by `key` (a unique int64 per item); else None
  merge_dense(array)
                  on the root: the workers' dense arrays merged (each entry computed by
                  one worker, NaN elsewhere); else None
  stream(pieces, receive)
                  every worker but the root sends its `pieces` (an iterable, not read on
                  the root) to the root, one piece per worker at a time, so the root holds
                  at most one piece of each worker at once; the root calls receive(piece)
                  for each of them
  barrier()       wait until every worker gets here (benchmarks time the work between two)
  set_timeout(seconds)
                  a worker that stops answering (stopped, its node wedged) for this long
                  ends every worker with one error line naming it (from then on)
  fail(error)     a UserError that this worker may have met alone: raised where there is
                  one worker; else its line is printed and every worker ended (the others
                  would wait for this one forever)
  abort(code)     end every worker (one worker's failure must not leave others waiting)

Executors, tried in order (each module's `launched()` says whether this process runs
under it): mpi.py (ranks of mpiexec/srun through mpi4py), then local.py (one process).
"""
from __future__ import annotations

import functools
import heapq
import importlib

import numpy as np

EXECUTORS = ("mpi", "local")


@functools.cache
def current():
    """The executor this process was started under (the first in EXECUTORS that says so)."""
    for name in EXECUTORS:
        module = importlib.import_module(f".{name}", __name__)
        if module.launched():
            return module.start()
    raise RuntimeError("no executor")  # local.launched() is always true


def assign(costs, size: int) -> np.ndarray:
    """Worker of each item: longest processing time first, by cost (Savran et al.'s static
    assignment): items in decreasing cost, each to the worker with the least work so far.

    Ties (equal cost, equal load) go to the lower item and the lower worker, so every
    worker computes the same assignment.
    """
    costs = np.asarray(costs, dtype=np.int64)
    order = np.lexsort((np.arange(len(costs)), -costs))
    owner = np.empty(len(costs), dtype=np.int64)
    loads = [(0, rank) for rank in range(size)]
    for k in order.tolist():
        load, rank = heapq.heappop(loads)
        owner[k] = rank
        heapq.heappush(loads, (load + int(costs[k]), rank))
    return owner


def ordered(key, columns):
    """`columns` reordered by `key` (stable)."""
    order = np.argsort(key, kind="stable")
    return tuple(np.asarray(column)[order] for column in columns)
