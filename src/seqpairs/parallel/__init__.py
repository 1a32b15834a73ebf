"""Executors: where a stage's work runs. The distance and psse stages hand their work items
(tiles, pairs) with a cost each to the executor of the process (`current()`, chosen once);
it says which items this worker computes, which GPU it uses, gathers the results in
item order on the root, and ends every worker when one fails. The output is the same
bytes for any executor and any number of workers.

Contract (Executor):
  rank, size      this worker and how many there are; `root` is worker 0, which writes
  device          the GPU index this worker uses (backends.select takes it)
  share(costs)    the indices of the items this worker computes, shared by cost
                  (a static share: the same on every worker, decided before any work)
  pull(costs)     the items this worker computes, as work lists (index arrays) handed
                  out on request as the worker finishes the last, largest first
                  (WorkQueue), so that workers of different speed finish together
  gather(key, columns)
                  on the root: every worker's columns (tuples of equal-length arrays)
                  concatenated and ordered by `key` (a unique int64 per item); else None
  merge_dense(array)
                  on the root: the workers' dense arrays merged (each entry computed by
                  one worker, NaN elsewhere); else None
  broadcast(value)
                  the root's `value` on every worker (the others pass None)
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
import logging
import threading
import time

import numpy as np

EXECUTORS = ("mpi", "local")
log = logging.getLogger("seqpairs.parallel")


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


def shard_tiles(tiles, shard: int, shards: int):
    """The tiles of shard `shard` of `shards` (`seqpairs distance --shard K/N`): those
    assign gives worker K of N, so that the shards of a run are its ranks' static shares."""
    return tiles[assign(tiles["cells"], shards) == shard]


def ordered(key, columns):
    """`columns` reordered by `key` (stable)."""
    order = np.argsort(key, kind="stable")
    return tuple(np.asarray(column)[order] for column in columns)


class WorkQueue:
    """Work lists handed out on request (thread-safe), sized by each worker's speed.

    Items go largest first (decreasing cost; ties: the lower item first). A worker's first
    list is the cheapest item left, which measures its speed (cost per second, `rate`,
    which it reports with its next request). Later lists take the next items up to the
    share of the cost not yet handed out that the worker would finish in 1/LIST_SHARE of
    the time all workers need for it at their rates (workers not yet measured counted at
    the mean rate): the lists shrink as the work runs out, and a slow worker's last list
    ends about when the fast ones finish (guided self-scheduling, weighted by speed),
    no list longer than half the time since the first, none shorter than a quarter second.
    Where only that bound keeps out the next item and the worker has had only cheapest
    items (a rate measured on those is mostly their lists' fixed cost), it gets that item
    alone if it would finish it before the other workers finish all that is left (what
    is not handed out, and what their lists in hand still hold at their rates). Where
    the share is below the next item, it gets the cheapest item left on the same
    condition, else nothing and it retires: a slow worker (a CPU beside a GPU) never
    holds up the end. The last worker left gets all that is left in one list (each list
    ends in a short batch). Each list is in item order; an empty list: nothing left for
    this worker.
    """

    LIST_SHARE = 2
    # No list longer (at its worker's rate) than this share of the time since the first
    # list, nor than FIRST_SECONDS before that: first rates mislead (a probe's time is
    # mostly a compile or a launch), and each worker's next request corrects them. None
    # shorter than LEAST_SECONDS: each list costs a launch or two.
    LIST_GROWTH, FIRST_SECONDS, LEAST_SECONDS = 0.5, 1.0, 0.25

    def __init__(self, costs, workers: int):
        self.costs = np.asarray(costs, dtype=np.float64)
        self.order = np.lexsort((np.arange(len(self.costs)), -self.costs))
        self.done = np.cumsum(self.costs[self.order])  # cost up to each item, largest first
        self.first, self.stop = 0, len(self.order)  # the items left: order[first:stop]
        self.workers = workers
        self.rates: dict = {}  # worker -> cost per second
        self.sized: set = set()  # workers that had a list of the next items, not a cheapest
        self.started = None  # time.monotonic() of the first list
        self.in_hand: dict = {}  # worker -> (clock when its list went out, cost of it)
        self.lock = threading.Lock()

    def take(self, worker=0, rate: float | None = None, guess: float | None = None
             ) -> np.ndarray:
        """The next list of `worker`, which computed its last at `rate` (None: none yet;
        then `guess`, if given, is its rate until measured, and it gets its first list
        only if it would finish it at that rate before the others finish the rest)."""
        with self.lock:
            if rate is not None and rate > 0:
                self.rates[worker] = rate
            self.in_hand.pop(worker, None)  # it asks: its last list is done
            first, stop = self.first, self.stop
            if first == stop:
                return np.empty(0, dtype=np.int64)
            if self.started is None:
                self.started = self.clock()
            if self.workers == 1:  # the others retired: the rest in one list
                self.first = stop
                return np.sort(self.order[first:stop])
            before = self.done[first - 1] if first else 0.0
            left = self.done[stop - 1] - before
            held = self.held()  # the others' lists in hand, still to do
            cheapest, next_up = self.costs[self.order[stop - 1]], self.costs[self.order[first]]
            if worker not in self.rates:  # its speed first
                if guess is None or not self.rates:
                    return self.cheapest()
                others = sum(self.rates.values()) * (self.workers - 1) / len(self.rates)
                fits = self.fits(cheapest, guess, left + held, others)
                return self.cheapest() if fits else self.retire(worker)
            speed = sum(self.rates.values()) * self.workers / len(self.rates)
            mine = self.rates[worker]
            longest = max(self.FIRST_SECONDS, self.LIST_GROWTH * (self.clock() - self.started))
            share = max(left * mine / speed / self.LIST_SHARE, mine * self.LEAST_SECONDS)
            end = min(int(np.searchsorted(self.done, before + min(share, mine * longest),
                                          side="right")), stop)
            others = speed - mine  # what the others do meanwhile
            # a rate measured only on cheap items is mostly their lists' fixed cost: where
            # only the bound by time keeps out the next item, it goes alone, once (its
            # rate is closer); later rates are the worker's own
            if (end == first and worker not in self.sized and next_up <= share
                    and self.fits(next_up, mine, left + held, others)):
                end = first + 1
            if end > first:
                self.first = end
                self.sized.add(worker)
                return self.hand(worker, np.sort(self.order[first:end]))
            if self.fits(cheapest, mine, left + held, others):
                return self.hand(worker, self.cheapest())
            return self.retire(worker)

    clock = staticmethod(time.monotonic)

    @staticmethod
    def fits(cost: float, mine: float, left: float, others: float) -> bool:
        """Whether a worker at rate `mine` finishes an item of this cost before the others
        (at `others` together) finish all that is left."""
        return others <= 0 or cost / mine <= left / others

    def leave(self, worker) -> None:
        """`worker` takes no more lists (it retires)."""
        with self.lock:
            self.retire(worker)

    def hand(self, worker, items: np.ndarray) -> np.ndarray:
        """`items` go to `worker` (a measured one): held() counts them until it asks again."""
        self.in_hand[worker] = (self.clock(), float(self.costs[items].sum()))
        return items

    def held(self) -> float:
        """The cost the measured workers' lists in hand still hold, at their rates: a worker
        that would retire because the others finish what is left before it finishes an
        item must count what they have to do first."""
        now = self.clock()
        return sum(max(0.0, cost - (now - since) * self.rates[w])
                   for w, (since, cost) in self.in_hand.items() if w in self.rates)

    def retire(self, worker) -> np.ndarray:
        """Nothing more for `worker`: the others finish sooner without it."""
        self.rates.pop(worker, None)
        self.in_hand.pop(worker, None)
        self.workers -= 1
        return np.empty(0, dtype=np.int64)

    def cheapest(self) -> np.ndarray:
        self.stop -= 1
        return self.order[self.stop:self.stop + 1].copy()


def timed(take, costs, who=""):
    """The lists of take(rate=...) until an empty one, each request with the rate (cost
    per second) at which the consumer computed the previous list: the time between
    handing it out and the next request (the first: None). Logs at the end how many
    lists this worker (`who`, where a process has several) computed, their cost, and
    its time busy with them of the time since its first request."""
    costs = np.asarray(costs, dtype=np.float64)
    rate, lists, done, busy, begin = None, 0, 0.0, 0.0, time.perf_counter()
    while len(items := take(rate=rate)):
        start = time.perf_counter()
        yield items
        seconds = max(time.perf_counter() - start, 1e-9)
        cost = float(costs[items].sum())
        rate, lists, done, busy = cost / seconds, lists + 1, done + cost, busy + seconds
        log.debug("work list %d%s: %d items, cost %.4g, %.3f s, at %.3f s", lists,
                  f" of the {who}" if who else "", len(items), cost, seconds,
                  time.perf_counter() - begin)
    log.info("work lists%s: %d, cost %.6g, busy %.3f s of %.3f s",
             f" of the {who}" if who else "", lists, done, busy, time.perf_counter() - begin)
