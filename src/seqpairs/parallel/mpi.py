"""The executor of MPI ranks (mpi4py): `mpiexec -n N` or `srun -n N` starts N copies of a
stage; each computes the items `assign` gives its rank (share) or the work lists it asks
rank 0 for (pull), on the GPU of its node-local rank; rank 0 gathers what is small (what is
large, the distance stage's kept pairs, goes through the output's shared folder).
Without an MPI launcher this executor is not used, so a plain run needs no MPI library.

pull: rank 0 keeps the WorkQueue. A dispatcher thread on rank 0 answers the other ranks'
requests on a communicator of its own, while rank 0's own work takes lists from the same
queue; each rank asks again when it has computed its list, until it gets an empty one.
Without MPI_THREAD_MULTIPLE (no dispatcher thread) pull is the static share.

A rank that stops answering (SIGSTOP, a wedged node) must not hang the others, wherever
they wait. Every rank runs a watchdog thread (MPI_THREAD_MULTIPLE, which mpi4py asks for)
that exchanges heartbeats with rank 0 on a communicator of its own, every tenth of the
timeout (at most 5 s): rank 0 watches every rank, the others watch rank 0. A rank that
has not heard from one it watches for the timeout (set_timeout; DEFAULT_TIMEOUT until a
stage sets it) tells the others that it ends the job (so that they stay quiet), prints
one line naming the silent ranks and calls MPI_Abort, which ends every rank. When rank 0
is the silent one, rank 1 reports it; the others wait half a timeout longer.
At exit (normal or after an error line) the ranks meet in a last barrier, still watched,
before the watchdogs stop: a rank that has finished is not taken for a stopped one, and
a rank 0 that stops while it writes is noticed. MPI_Finalize, which waits for every rank
without letting a thread run, and the rest of the process's end are watched by a
process beside each rank (the exit watcher). A stopped rank's own watchdog stops with
it; the kernels release the GIL, so a busy rank keeps answering.
"""
from __future__ import annotations

import atexit
import functools
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np

from . import WorkQueue, assign, ordered, timed

# Variables that MPI launchers set in every rank's environment.
LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE")
DEFAULT_TIMEOUT = 300.0  # seconds a rank may go unheard
HEARTBEAT, ENDING = 1, 2  # message tags: "I answer", "I am ending the job"
REQUEST, WORK = 3, 4  # pull's tags: "a list, please", "your list"
DENSE_STEP = 1 << 22  # entries of a dense array reduced at a time
DISPATCH_POLL = 0.001  # seconds between the dispatcher's probes for requests


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
    watchdog = None
    if MPI.Query_thread() >= MPI.THREAD_MULTIPLE:
        watchdog = Watchdog(comm, DEFAULT_TIMEOUT)
        watchdog.start()
    executor = Mpi(comm, comm.Get_rank(), comm.Get_size(), node.Get_rank(), watchdog)
    atexit.register(executor.close)
    return executor


# The exit watcher: a Python of its own beside each rank (no MPI, no GIL shared with it).
# It waits for the timeout on its standard input, sent once the rank has passed its last
# barrier (end of input: the rank ended before, and so does the watcher); then it kills
# the rank unless that ends within the timeout (it is then a child of another process).
# Rank 0's then gives Open MPI's launcher, where it is the rank's parent, another timeout
# to end, and kills it: Debian's mpiexec 4.1.4 with PMIx 4.2.2 can hang in
# PMIx_server_finalize once every rank is gone (gdb; 3 of 100 runs of test_mpi.py's
# stopped-rank script here, which then ended, killed, within 9 s).
EXIT_WATCHER = """
import os, sys, time
rank, size, patience, says = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
launcher = int(sys.argv[5])
timeout = sys.stdin.readline()
if not timeout:
    sys.exit()
timeout = float(timeout)


def outlives(pid, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.05)
        if os.getppid() != pid:
            return False
    return True


if not outlives(rank, timeout * patience):
    sys.exit()
if says == "says":
    print(f"seqpairs: error: MPI ranks did not all end within {timeout:g} s of their last "
          f"barrier (one stopped, or its node hangs?); ending all {size} ranks",
          file=sys.stderr, flush=True)
os.kill(rank, 9)
if says != "says":
    sys.exit()
# let go of the rank's output pipes: the launcher waits for them to close


def name(pid):
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return None


for fd in range(3):
    os.dup2(os.open(os.devnull, os.O_RDWR), fd)
started = name(launcher)
if started in ("mpiexec", "mpirun", "orterun"):
    time.sleep(timeout)
    if name(launcher) == started:
        os.kill(launcher, 9)
"""


class Watchdog(threading.Thread):
    """Heartbeats with rank 0; MPI_Abort when a watched rank is silent for `timeout` s.

    MPI_Finalize waits for every rank and holds the GIL (no thread of this process runs
    meanwhile), so a rank stopped in it, or later while its process ends, would leave the
    others or the launcher waiting beyond the watchdog's reach. The exit watcher, started
    with the watchdog (a rank may stop at any moment), takes over at the last barrier
    (watch_exit): it kills its rank if that has not ended within the timeout, and the
    launcher then ends every rank. Rank 0's acts first and says why in one line (it runs
    even while rank 0 is the stopped one); the others' act half a timeout later, quietly.
    """

    def __init__(self, comm, timeout: float):
        super().__init__(name="seqpairs-watchdog", daemon=True)
        self.world = comm
        self.comm = comm.Dup()  # heartbeats never meet the stages' messages
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.timeout = timeout
        self.watched = list(range(1, self.size)) if self.rank == 0 else [0]
        # when rank 0 stops, rank 1 reports it; the others only if rank 1 is silent too
        self.patience = 1.0 if self.rank <= 1 else 1.5
        self.heard = dict.fromkeys(self.watched, time.monotonic())
        self.stopping = False
        self.wake = threading.Event()  # ends the wait between heartbeats early
        self.exit_watcher = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", EXIT_WATCHER, str(os.getpid()), str(self.size),
             "1.0" if self.rank == 0 else "1.5", "says" if self.rank == 0 else "quiet",
             str(os.getppid())],
            stdin=subprocess.PIPE)

    def watch_exit(self) -> None:
        """From now on the exit watcher ends this rank if it has not ended in time."""
        os.write(self.exit_watcher.stdin.fileno(), b"%r\n" % self.timeout)

    def set_timeout(self, seconds: float) -> None:
        """From now on (the watched ranks get a full new timeout to be heard)."""
        self.timeout = seconds
        self.heard = dict.fromkeys(self.watched, time.monotonic())
        self.wake.set()

    def run(self) -> None:
        from mpi4py import MPI

        token, inbox = np.zeros(1, np.uint8), np.zeros(1, np.uint8)
        sends: dict = {}
        status = MPI.Status()
        awake = time.monotonic()
        while not self.stopping:
            interval = min(5.0, max(0.05, self.timeout / 10))
            if time.monotonic() - awake > 2 * interval:
                # this rank did not run for a while (stopped, then SIGCONT'd by the abort
                # of a rank that reported it; or starved): that it heard no peer then
                # proves nothing, so they get a full timeout from now
                self.heard = dict.fromkeys(self.watched, time.monotonic())
            for peer in self.watched:  # one heartbeat in flight to each peer at most
                if peer not in sends or sends[peer].Test():
                    sends[peer] = self.comm.Isend(token, dest=peer, tag=HEARTBEAT)
            while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status):
                source, tag = status.Get_source(), status.Get_tag()
                self.comm.Recv(inbox, source=source, tag=tag)
                self.heard[source] = time.monotonic()
                if tag == ENDING:  # another rank reports and ends the job: one line is enough
                    self.stopping = True
            now = time.monotonic()
            silent = [peer for peer in self.watched
                      if now - self.heard[peer] > self.timeout * self.patience]
            if silent and not self.stopping:
                for peer in set(range(self.size)) - {self.rank, *silent}:
                    self.comm.Isend(token, dest=peer, tag=ENDING)
                ranks = f"rank{'s' if len(silent) > 1 else ''} {', '.join(map(str, silent))}"
                print(f"seqpairs: error: MPI {ranks} did not answer for {self.timeout:g} s "
                      f"(stopped, or its node hangs?); ending all {self.size} ranks",
                      file=sys.stderr, flush=True)
                self.world.Abort(1)
            awake = time.monotonic()
            self.wake.wait(interval)
            self.wake.clear()

    def stop(self) -> None:
        self.stopping = True
        self.wake.set()
        self.join()


def dispatch(comm, queue: WorkQueue, workers: int) -> None:
    """Rank 0's dispatcher: a list from `queue` for each request, until each of the
    `workers` other ranks has been told that nothing is left."""
    from mpi4py import MPI

    status = MPI.Status()
    while workers:
        # probed, not waited for in recv: Open MPI's blocking receive spins a core, which
        # rank 0's own work needs
        while not comm.Iprobe(source=MPI.ANY_SOURCE, tag=REQUEST, status=status):
            time.sleep(DISPATCH_POLL)
        source = status.Get_source()
        rate = comm.recv(source=source, tag=REQUEST)
        items = queue.take(source, rate)
        comm.send(items, dest=source, tag=WORK)
        workers -= not len(items)


@dataclass(frozen=True)
class Mpi:
    comm: object  # mpi4py.MPI.Comm
    rank: int
    size: int
    device: int  # the rank among the ranks of this node
    watchdog: Watchdog | None = None

    @property
    def root(self) -> bool:
        return self.rank == 0

    def share(self, costs) -> np.ndarray:
        return np.flatnonzero(assign(costs, self.size) == self.rank)

    def pull(self, costs):
        from mpi4py import MPI

        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            yield self.share(costs)
            return
        comm = self.comm.Dup()  # requests never meet the stage's messages
        if self.root:
            queue = WorkQueue(costs, self.size)
            dispatcher = threading.Thread(target=dispatch, args=(comm, queue, self.size - 1),
                                          name="seqpairs-dispatcher", daemon=True)
            dispatcher.start()
            yield from timed(functools.partial(queue.take, 0), costs)
            dispatcher.join()  # every other rank has had its last list
        else:
            def take(rate):
                comm.send(rate, dest=0, tag=REQUEST)
                return comm.recv(source=0, tag=WORK)

            yield from timed(take, costs)
        comm.Free()

    def gather(self, key, columns):
        parts = self.comm.gather((key, *columns), root=0)
        if not self.root:
            return None
        merged = [np.concatenate(column) for column in zip(*parts)]
        return ordered(merged[0], merged[1:])

    def merge_dense(self, array):
        """Reduced with MPI_MAX a slice at a time in place: entries no rank computed are
        -inf meanwhile (distances are >= 0), so the root holds one array, not one per rank."""
        from mpi4py import MPI

        for start in range(0, len(array), DENSE_STEP):
            piece = array[start:start + DENSE_STEP]
            piece[np.isnan(piece)] = -np.inf
            if self.root:
                self.comm.Reduce(MPI.IN_PLACE, piece, op=MPI.MAX, root=0)
                piece[piece == -np.inf] = np.nan
            else:
                self.comm.Reduce(piece, None, op=MPI.MAX, root=0)
        return array if self.root else None

    def broadcast(self, value):
        return self.comm.bcast(value, root=0)

    def barrier(self) -> None:
        self.comm.Barrier()

    def set_timeout(self, seconds: float) -> None:
        if self.watchdog is not None:
            self.watchdog.set_timeout(seconds)

    def fail(self, error: Exception):
        print(f"seqpairs: error: {error}", file=sys.stderr, flush=True)
        self.comm.Abort(2)

    def abort(self, code: int) -> None:
        self.comm.Abort(code)

    def close(self) -> None:
        """The last barrier, watched; then the rest of the process's end is watched by
        the exit watcher while the watchdog stops and MPI ends (at exit)."""
        if self.watchdog is None or not self.watchdog.is_alive():
            return
        request = self.comm.Ibarrier()
        while not request.Test():
            time.sleep(0.01)
        self.watchdog.watch_exit()
        self.watchdog.stop()
        from mpi4py import MPI

        MPI.Finalize()
