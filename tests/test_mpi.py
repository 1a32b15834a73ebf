"""`seqpairs distance` as an MPI program: same bytes for any number of ranks."""
import heapq
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from seqpairs import parallel
from seqpairs.pairs import tiling as binning
from seqpairs.parallel import local, mpi

MPIEXEC = shutil.which("mpiexec")


def test_assign_covers_every_tile_once_and_balances():
    rng = np.random.default_rng(4)
    lengths = rng.normal(400, 10, 500).astype(int)  # Savran et al.'s variable lengths
    bins = binning.make_bins(lengths, 5)
    tiles = binning.make_tiles(lengths, bins, 2000)
    for size in (1, 2, 3, 4):
        owner = parallel.assign(tiles["cells"], size)
        assert set(owner) == set(range(size))
        loads = np.bincount(owner, weights=tiles["cells"], minlength=size)
        assert loads.sum() == tiles["cells"].sum()
        # LPT: no rank above the mean by more than the largest tile
        assert loads.max() - loads.mean() <= tiles["cells"].max()
        assert np.array_equal(owner, parallel.assign(tiles["cells"], size))  # every rank agrees


def test_assign_is_longest_first():
    tiles = pd.DataFrame({"tile": range(5), "cells": [5, 9, 1, 7, 3]})
    # 9 -> rank 0, 7 -> rank 1, 5 -> rank 1 (load 7 < 9), 3 -> rank 0, 1 -> rank 0 (12 = 12)
    assert parallel.assign(tiles["cells"], 2).tolist() == [1, 0, 0, 1, 0]
    # equal costs: the lower item first, to the lower rank at equal loads
    assert parallel.assign([4, 4, 4], 2).tolist() == [0, 1, 0]


def work_lists(costs, workers):
    """The lists that `workers` workers, each computing one cost a second, take from a
    queue in turns until each has had an empty one, in the order handed out."""
    queue = parallel.WorkQueue(costs, workers)
    queue.FIRST_SECONDS = np.inf  # no cap by time: the lists take no time here
    lists, active, rates = [], list(range(workers)), {}
    while active:
        for worker in list(active):
            items = queue.take(worker, rates.get(worker))
            if not len(items):
                active.remove(worker)
                continue
            lists.append(items)
            rates[worker] = 1.0
    return lists


def test_work_lists_hand_out_every_item_once_largest_first_shrinking():
    rng = np.random.default_rng(5)
    costs = rng.integers(1, 1000, 300)
    assert [items.tolist() for items in work_lists(costs, 1)] == [list(range(len(costs)))]
    for workers in (2, 5):
        lists = work_lists(costs, workers)
        flat = np.concatenate(lists)
        assert sorted(flat.tolist()) == list(range(len(costs)))  # each item once
        assert all(np.all(np.diff(items) > 0) for items in lists)  # each in item order
        assert all(len(items) == 1 for items in lists[:workers])  # measuring their speed
        # each list: the largest items left (ties: the lower first), at most 1/(2 x
        # workers) of the cost left where it is more than one; or the cheapest item left
        left = sorted(range(len(costs)), key=lambda k: (-costs[k], k))
        for items in lists:
            items = items.tolist()
            if items == [left[-1]]:
                left.pop()
                continue
            assert sorted(items) == sorted(left[:len(items)])
            assert len(items) == 1 or costs[items].sum() <= costs[left].sum() / (2 * workers)
            del left[:len(items)]
        assert costs[lists[-1]].sum() < costs.sum() / (10 * workers)  # short at the end
    # equal costs: the probes take the last items, the first list sized by speed the first
    lists = [items.tolist() for items in work_lists([4] * 6, 2)]
    assert lists[:3] == [[5], [4], [0]]


def test_the_last_worker_left_gets_the_rest_in_one_list():
    """Each list ends in a short batch on a GPU: once the others have retired, the one
    left takes all that is left at once."""
    queue = parallel.WorkQueue(np.arange(1, 101), 2)
    assert queue.take(0).tolist() == [0] and queue.take(1).tolist() == [1]  # probes
    queue.leave(1)
    assert queue.take(0, rate=1.0).tolist() == list(range(2, 100))
    assert queue.take(0, rate=1.0).tolist() == [] and queue.take(1).tolist() == []


def pulled(costs, speeds, overhead=0.0, per_list=0.0, capped=True):
    """Workers of these speeds (cost a second) pulling lists as they finish the last, on
    a simulated clock, their first list `overhead` seconds longer (a compile) and each
    list `per_list` seconds (a launch), each reporting the rate it saw: (each one's busy
    time, the time the last one finishes). capped=False: without the bounds on a list's
    time."""
    queue = parallel.WorkQueue(costs, len(speeds))
    clock = [0.0]
    queue.clock = lambda: clock[0]
    if not capped:
        queue.FIRST_SECONDS, queue.LEAST_SECONDS = np.inf, 0.0
    free = [(0.0, k) for k in range(len(speeds))]
    busy, rate = [0.0] * len(speeds), [None] * len(speeds)
    finish = 0.0
    while free:
        now, k = heapq.heappop(free)
        clock[0] = now
        items = queue.take(k, rate[k])
        if not len(items):
            finish = max(finish, now)
            continue
        work = costs[items].sum() / speeds[k] + per_list + (overhead if rate[k] is None else 0.0)
        busy[k] += work
        rate[k] = costs[items].sum() / work
        heapq.heappush(free, (now + work, k))
    return busy, finish


def test_slow_workers_never_hold_up_the_end():
    """Items coarse for the slow workers (one takes a slow worker longer than the fast one
    needs for all): they take only what they finish in time, and the run ends no later
    than the fast worker alone would."""
    costs = np.array([100.0] * 40 + [1.0] * 20)
    speeds = [300.0, 1.0, 1.0, 1.0]
    busy, finish = pulled(costs, speeds)
    assert finish <= costs.sum() / speeds[0]
    assert all(b > 0 for b in busy)  # each slow worker still helped


def test_a_misleading_first_rate_does_not_hand_out_long_lists():
    """One fast worker (a GPU) and 15 slow ones (CPU cores), each first list 5 s longer (a
    compile) and every list 0.05 s (a launch): a probe's rate is far from the worker's
    speed, and lists sized by those rates alone would keep the slow workers busy long
    after the fast one is done; bounded by time, the run ends about when the fast worker
    alone would (one list)."""
    rng = np.random.default_rng(1)
    costs = np.concatenate([np.full(1500, 3e9), rng.uniform(1e6, 3e9, 200)])  # cells
    speeds = [1500e9] + [2e9] * 15
    alone = costs.sum() / speeds[0] + 5.0 + 0.05
    _, finish = pulled(costs, speeds, overhead=5.0, per_list=0.05)
    assert finish <= 1.05 * alone
    _, unbounded = pulled(costs, speeds, overhead=5.0, per_list=0.05, capped=False)
    assert unbounded > 5 * alone  # what the bounds prevent


def test_a_probe_on_a_cheap_item_does_not_keep_a_gpu_on_single_items():
    """Two GPUs (2^16 reads at the thresholds on two H200s): the probe, the cheapest tile,
    takes a set-up of 0.5 s and every list 20 ms besides its work, so the rate it gives
    is a 100th of the GPU's, and no other tile fits the bound on a list's time at that
    rate. Rather than one cheapest tile after another (the 2^17 run's rank 0: 262 lists,
    5% slower), the next tile goes alone, and its rate sets the next list right."""
    rng = np.random.default_rng(2)
    costs = np.concatenate([rng.uniform(2e10, 4e10, 8000), rng.uniform(8e7, 1e9, 900)])
    speeds = [2.8e12] * 2
    ideal = costs.sum() / sum(speeds) + 0.5
    _, finish = pulled(costs, speeds, overhead=0.5, per_list=0.02)
    assert finish <= 1.03 * ideal


@pytest.mark.parametrize("workers, waves", [(2, 16), (4, 32)])
def test_a_worker_does_not_retire_while_the_others_hold_work(workers, waves):
    """SSCA#1's scan on H200s (4,096 x 4e9): waves of equal cost, 0.62 s each on two
    ranks, the first list 0.75 s longer (the target's upload), the ranks' rates 1% apart.
    Counting only the items not handed out, the slower rank saw the others finish the last
    item before it would and retired while they still held a wave each: 9 waves against
    7 on two ranks (measured: 5.94 and 4.83 s). Counting the lists in hand too, the ranks
    end together."""
    costs = np.full(waves, 1.64e13 / waves)
    speeds = [1.65e12 * (1 - 0.01 * k / workers) for k in range(workers)]
    busy, finish = pulled(costs, speeds, overhead=0.75, per_list=0.01)
    ideal = costs.sum() / sum(speeds) + 0.75
    assert finish <= 1.04 * ideal
    assert min(busy) >= 0.95 * max(busy)


def test_the_next_item_goes_alone_once_a_worker():
    """Past the bound by time, the next item goes alone only to a worker that has had
    nothing but cheapest items; after that the bound holds (a slow worker gets the
    cheapest items, as before)."""
    queue = parallel.WorkQueue([1000] * 10 + [1] * 10, 2)
    queue.clock = lambda: 0.0
    assert queue.take(0).tolist() == [19] and queue.take(1).tolist() == [18]  # probes
    assert queue.take(0, rate=1.0).tolist() == [0]  # 1,000 > 1 s at rate 1: alone
    assert queue.take(0, rate=1.0).tolist() == [17]  # then the cheapest again
    assert queue.take(1, rate=1.0).tolist() == [1]


@pytest.mark.parametrize("speeds", [[1.0, 1.0, 4.0], [1.0, 1.0, 1.0, 300.0], [2.0, 3.0]])
def test_work_lists_balance_workers_of_different_speed(speeds):
    """Each worker busy until nearly the end, whatever the speeds (CPU ranks beside a GPU
    rank: 300x), where a static share leaves the fast one idle."""
    rng = np.random.default_rng(4)
    lengths = rng.normal(400, 10, 2000).astype(int)
    bins = binning.make_bins(lengths, 5)
    costs = binning.make_tiles(lengths, bins, 2000)["cells"]
    busy, finish = pulled(costs, speeds)
    # utilisation of the capacity (each worker's time weighted by its speed): the run
    # near the best possible; and none idle for long
    assert np.dot(busy, speeds) / (finish * sum(speeds)) >= 0.97
    assert min(busy) / finish >= 0.9
    loads = np.bincount(parallel.assign(costs, len(speeds)), weights=costs) / speeds
    assert loads.min() / loads.max() < 0.8  # static: idle much of the time


def test_work_lists_from_several_threads_are_each_item_once():
    costs = np.arange(1, 5001)
    queue = parallel.WorkQueue(costs, 4)
    taken = [[] for _ in range(4)]

    def worker(k):
        while len(items := queue.take()):
            taken[k].extend(items.tolist())

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(sum(taken, [])) == list(range(len(costs)))


def test_without_a_launcher_is_a_single_process(monkeypatch):
    for name in mpi.LAUNCHER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert not mpi.launched()
    executor = parallel.current.__wrapped__()  # as chosen at start-up, without the cache
    assert executor == local.Local()
    assert (executor.rank, executor.size, executor.device, executor.root) == (0, 1, 0, True)


# mpiexec as root (CI containers) with more ranks than cores
MPI_ENV = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")


def under_mpi(cmd: list, ranks: int | None) -> list[str]:
    """`cmd` started as `ranks` MPI ranks (as one plain process when ranks is None)."""
    cmd = [str(word) for word in cmd]
    if ranks is None:
        return cmd
    return [MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks), *cmd]


def run_seqpairs(stage: str, args, ranks=None, chatter: str | None = "-q"
                 ) -> subprocess.CompletedProcess:
    """`python -m seqpairs CHATTER STAGE ARGS...` (chatter: -q, -v or None), under mpiexec
    with `ranks`."""
    cmd = under_mpi([sys.executable, "-m", "seqpairs", *([chatter] if chatter else []),
                     stage, *args], ranks)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=MPI_ENV)


def run_distance(args, ranks=None):
    return run_seqpairs("distance", args, ranks)


def run_script(path: Path, text: str, ranks: int, *args) -> subprocess.CompletedProcess:
    """The Python script `text`, written to `path`, run as `ranks` MPI ranks with this
    checkout's seqpairs importable."""
    path.write_text(text)
    env = dict(MPI_ENV, PYTHONPATH=os.pathsep.join(p for p in (
        str(Path(parallel.__file__).parents[2]), os.environ.get("PYTHONPATH")) if p))
    return subprocess.run(under_mpi([sys.executable, path, *args], ranks), capture_output=True,
                          text=True, timeout=120, env=env)


def prefix_family(seed: int, n: int, length: int, shortest: int, substitutions: int):
    """n prefixes of one random root, of lengths shortest..length, each with a few
    substitutions: related sequences whose pairs differ in cost."""
    rng = np.random.default_rng(seed)
    base = "".join(rng.choice(list("ACGT"), length))
    seqs = []
    for _ in range(n):
        s = list(base[: int(rng.integers(shortest, length + 1))])
        for k in rng.integers(0, len(s), substitutions):
            s[k] = rng.choice(list("ACGT"))
        seqs.append("".join(s))
    return seqs


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_any_rank_count_gives_the_same_bytes(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    seqs = prefix_family(8, 70, 90, 60, 6)  # varied lengths, so the tiles differ in cost
    fasta = tmp_path / "in.fasta"
    fasta.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs)))
    bins, tiles = tmp_path / "bins.tsv", tmp_path / "tiles.tsv"
    subprocess.run([sys.executable, "-m", "seqpairs", "-q", "bin", "-i", str(fasta), "--bins",
                    str(bins), "--tiles", str(tiles), "--bin-width", "5", "--tile-pairs", "100"],
                   check=True)

    def outputs(name, ranks):
        out = tmp_path / name
        out.mkdir()
        proc = run_distance(["-i", str(fasta), "--bins", str(bins), "--tiles", str(tiles),
                             "--backend", "cpu", "--threads", "1", "--max-distance", "1.5",
                             "--candidate-identity", "0.9", "--edges", str(out / "e.npz"),
                             "--seqdist", str(out / "d.txt"), "--ids",
                             "--condensed", str(out / "c.npy")], ranks)
        assert proc.returncode == 0, proc.stderr
        return {p.name: p.read_bytes() for p in sorted(out.iterdir())}

    single = outputs("plain", None)
    assert len(single) == 3
    for ranks in (1, 2, 3, 4):
        assert outputs(f"ranks{ranks}", ranks) == single, f"{ranks} ranks differ"


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_verbose_ranks_log_each_work_list(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    fasta = tmp_path / "in.fasta"
    fasta.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(prefix_family(9, 40, 90, 60,
                                                                                    6))))
    args = ["-i", fasta, "--backend", "cpu", "--threads", "1", "--max-distance", "0.5",
            "--edges", tmp_path / "e.npz"]
    logs = {}
    for chatter in ("-v", None):
        done = run_seqpairs("distance", args, 2, chatter)
        assert done.returncode == 0, done.stderr
        logs[chatter] = done.stderr
    for rank in (0, 1):  # each rank's lists, numbered from 1, with their costs
        assert re.search(rf"rank {rank}/2 seqpairs.parallel: work list 1: \d+ items, cost ",
                         logs["-v"])
    assert "work list 1:" not in logs[None] and "work lists:" in logs[None]
    done = run_seqpairs("-v", ["distance", *args])  # with -q too
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_align_under_mpi_refuses_in_one_line(tmp_path):
    """seqpairs align shares no work among ranks: several ranks are one error line, not
    the same work done by each."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    fasta = tmp_path / "s.fasta"
    fasta.write_text(">a\nACGTACGT\n>b\nACGTTCGT\n")
    out = tmp_path / "hits.tsv"
    proc = run_seqpairs("align", ["-q", str(fasta), "-o", str(out)], 2)
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("seqpairs:")]
    assert errors == ["seqpairs: error: align runs as one process, not 2 MPI ranks: start it "
                      "without mpiexec or srun -n"]
    assert "Traceback" not in proc.stderr and not out.exists()
    assert run_seqpairs("align", ["-q", str(fasta), "-o", str(out)], 1).returncode == 0
    assert out.read_text().count("\n") == 2  # header and the one pair


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_input_error_under_mpi_is_one_line(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    fasta = tmp_path / "bad.fasta"
    fasta.write_text(">a\nACGT\n>b\nACXT\n")
    proc = run_distance(["-i", str(fasta), "--edges", str(tmp_path / "e.npz")], 3)
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("seqpairs:")]
    assert errors == [f"seqpairs: error: {fasta}:b: letter 'X' is not in the ACGT alphabet"]
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_spilled_pairs_of_any_rank_count_give_the_same_bytes(tmp_path):
    """Every pair kept beyond --memory 1: each rank merges the slices of every rank's
    runs in its key ranges into the bytes of one process holding them all; within the
    budget too (the ranks' pairs then go to disk as one run each)."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    seqs = prefix_family(3, 300, 30, 20, 8)
    fasta = tmp_path / "in.fasta"
    fasta.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs)))

    def outputs(name, ranks, memory):
        out = tmp_path / name
        out.mkdir()
        proc = run_distance(["-i", fasta, "--backend", "cpu", "--threads", "1",
                             "--max-distance", "1000", "--memory", memory,
                             "--edges", out / "e.npz", "--mothur", out / "m.dist"], ranks)
        assert proc.returncode == 0, proc.stderr
        return {p.name: p.read_bytes() for p in sorted(out.iterdir())}  # no runs left

    held = outputs("held", None, "512")
    assert list(held) == ["e.npz", "m.dist"]
    for ranks, memory in ((None, "1"), (2, "1"), (3, "1"), (2, "512")):
        assert outputs(f"m{memory}r{ranks}", ranks, memory) == held, f"{ranks} ranks differ"


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_ranks_that_keep_no_pair_write_the_empty_edge_list(tmp_path):
    """No rank keeps a pair: the ranks' key ranges hold no slices, and their empty parts
    make the edge list and mothur file of no pairs, as one process's."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    rng = np.random.default_rng(3)
    fasta = tmp_path / "in.fasta"
    fasta.write_text("".join(f">r{k}\n{''.join(rng.choice(list('ACGT'), 80))}\n"
                             for k in range(40)))

    def outputs(name, ranks):
        out = tmp_path / name
        out.mkdir()
        proc = run_distance(["-i", fasta, "--backend", "cpu", "--threads", "1",
                             "--max-distance", "0", "--edges", out / "e.npz",
                             "--mothur", out / "m.dist"], ranks)
        assert proc.returncode == 0, proc.stderr
        return {p.name: p.read_bytes() for p in sorted(out.iterdir())}

    single = outputs("plain", None)
    assert len(np.load(tmp_path / "plain" / "e.npz")["i"]) == 0
    assert outputs("ranks3", 3) == single


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_mothur_to_standard_output_under_ranks_is_one_clear_line(tmp_path):
    """Every rank writes its part of the mothur file in place: standard output, which one
    process may write, is refused under MPI with one line, and no edge list is made."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    fasta = tmp_path / "in.fasta"
    fasta.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(prefix_family(2, 60, 8, 4,
                                                                                  3))))
    proc = run_distance(["-i", fasta, "--backend", "cpu", "--max-distance", "1", "--edges",
                         tmp_path / "e.npz", "--mothur", "-"], 2)
    assert proc.returncode != 0 and proc.stdout == ""
    assert ("seqpairs: error: --mothur -: under MPI every rank writes its part of the file: "
            "give a file name") in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "e.npz").exists()


WAITS = """
import os, time
from seqpairs import parallel

executor = parallel.current()
executor.set_timeout(1.0)
if executor.root:
    time.sleep(3)  # busy: the others wait at the barrier, then at exit
executor.barrier()
if executor.root:
    time.sleep(3)
os.write(1, f"done {executor.rank}\\n".encode())  # one write: ranks' lines never interleave
"""


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_ranks_that_wait_for_an_answering_rank_do_not_time_out(tmp_path):
    """Waiting longer than the timeout for a rank that answers (its watchdog does while
    it works) is no failure, neither in a collective call nor at exit."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    proc = run_script(tmp_path / "waits.py", WAITS, 3)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split("\n")) == ["", "done 0", "done 1", "done 2"]


IDLE_DISPATCHER = """
import os, resource, threading, time
from seqpairs import parallel
from seqpairs.parallel import mpi

executor = parallel.current()
comm = executor.comm.Dup()


def cpu():
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


if executor.root:
    start, used = time.monotonic(), cpu()
    thread = threading.Thread(target=mpi.dispatch,
                              args=(comm, parallel.WorkQueue([1.0, 2.0, 3.0], 1), 1))
    thread.start()
    thread.join()
    os.write(1, f"waited {time.monotonic() - start:.3f} cpu {cpu() - used:.3f}\\n".encode())
else:
    time.sleep(2)  # computing: rank 0's dispatcher waits for the first request
    items = []
    while True:
        comm.send(1.0, dest=0, tag=mpi.REQUEST)
        got = comm.recv(source=0, tag=mpi.WORK)
        if not len(got):
            break
        items += [int(item) for item in got]
    os.write(1, f"items {sorted(items)}\\n".encode())
comm.Free()
"""


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_the_dispatcher_waits_for_requests_without_spinning_a_core(tmp_path):
    """Rank 0's dispatcher thread, waiting two seconds for a request, uses a fraction of a
    core (Open MPI's blocking receive would use all of it, which rank 0's own work
    needs), and still hands out every item."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    proc = run_script(tmp_path / "idle.py", IDLE_DISPATCHER, 2)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert lines["items"] == "[0, 1, 2]"
    waited, _, used = lines["waited"].partition(" cpu ")
    assert float(waited) >= 1.5
    assert float(used) < 0.25 * float(waited), proc.stdout


STOPS_AT_EXIT = """
import os, signal, sys
from mpi4py import MPI
from seqpairs import parallel

stopped = int(sys.argv[1])
finalize = MPI.Finalize


def stop_in_finalize():  # after the last barrier
    if MPI.COMM_WORLD.Get_rank() == stopped:
        os.kill(os.getpid(), signal.SIGSTOP)
    finalize()


MPI.Finalize = stop_in_finalize
parallel.current().set_timeout(2.0)
"""


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
@pytest.mark.parametrize("stopped", [0, 1])
def test_rank_stopped_after_the_last_barrier_ends_the_job(tmp_path, stopped):
    """MPI_Finalize waits for every rank and lets no watchdog thread run: a rank stopped
    there still ends the job, with one line, soon after the timeout."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    start = time.monotonic()
    proc = run_script(tmp_path / "stops.py", STOPS_AT_EXIT, 3, stopped)
    waited = time.monotonic() - start
    assert proc.returncode != 0
    output = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr)
    errors = [line for line in output.splitlines() if line.startswith("seqpairs: error:")]
    assert errors == ["seqpairs: error: MPI ranks did not all end within 2 s of their last "
                      "barrier (one stopped, or its node hangs?); ending all 3 ranks"], output
    assert "Traceback" not in output
    assert waited < 60, waited
