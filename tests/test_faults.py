"""Faults: a killed distance job, a dying MPI rank, a full disk.

Each leaves no output that Snakemake would take as complete, says what happened in one
place, and a rerun gives the bytes of an uninterrupted run. (GPU out of memory:
tests/gpu/test_gpu_distance.py.)
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from test_mpi import MPI_ENV, MPIEXEC, under_mpi


def family(path: Path, n: int, length: int, seed: int) -> Path:
    """n variants (3% substitutions) of one random sequence, as FASTA."""
    rng = np.random.default_rng(seed)
    base = rng.choice(list("ACGT"), length)
    with open(path, "w") as fh:
        for k in range(n):
            s = base.copy()
            s[rng.integers(0, length, length * 3 // 100)] = rng.choice(list("ACGT"))
            fh.write(f">s{k}\n{''.join(s)}\n")
    return path


def distance_command(fasta: Path, edges: Path, threads: int = 1) -> list[str]:
    # --no-prune: every pair is aligned, so the job's length does not depend on pruning
    return [sys.executable, "-m", "seqpairs", "distance", "-i", str(fasta), "--backend", "cpu",
            "--threads", str(threads), "--max-distance", "1.0", "--no-prune", "--edges",
            str(edges)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc (inf once it has gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return float("inf")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_killed_distance_job_leaves_nothing_and_rerun_is_identical(tmp_path):
    fasta = family(tmp_path / "in.fasta", 900, 200, seed=1)
    out = tmp_path / "killed"
    out.mkdir()
    edges = out / "edges.npz"
    proc = subprocess.Popen(distance_command(fasta, edges), stderr=subprocess.PIPE, text=True)
    # Kill once it has computed for a while (past start-up and JIT compilation).
    while proc.poll() is None and cpu_seconds(proc.pid) < 2.5:
        time.sleep(0.1)
    assert proc.poll() is None, "the job ended before it could be killed; make it larger"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert list(out.iterdir()) == []  # neither the output nor a temporary file

    subprocess.run(distance_command(fasta, edges, threads=2), check=True, capture_output=True)
    reference = tmp_path / "reference.npz"
    subprocess.run(distance_command(fasta, reference, threads=2), check=True,
                   capture_output=True)
    assert edges.read_bytes() == reference.read_bytes()


def rank_pid(marker: str, rank: int) -> int | None:
    """Process id of MPI rank `rank` of the job whose environment holds `marker`."""
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if marker.encode() in environ and f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ:
            return int(entry.name)
    return None


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
def test_dying_mpi_rank_fails_the_job_without_output(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    fasta = family(tmp_path / "in.fasta", 700, 200, seed=2)
    edges = tmp_path / "edges.npz"
    marker = f"SEQPAIRS_TEST_JOB={uuid.uuid4()}"
    env = dict(MPI_ENV, **dict([marker.split("=", 1)]))
    proc = subprocess.Popen(
        under_mpi(distance_command(fasta, edges), 2),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    pid = None
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        pid = pid or rank_pid(marker, 1)
        if pid and cpu_seconds(pid) >= 3:  # rank 1 is computing its tiles
            os.kill(pid, signal.SIGKILL)
            break
        time.sleep(0.1)
    output, _ = proc.communicate(timeout=120)
    assert pid is not None and proc.returncode != 0, output
    # The launcher names the rank that died; no output, not even a temporary file.
    assert "rank 1" in output and "signal 9" in output, output
    assert list(tmp_path.iterdir()) == [tmp_path / "in.fasta"]


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (apt-get install openmpi-bin)")
@pytest.mark.parametrize("stopped", [1, 0])
def test_stopped_mpi_rank_fails_the_job_within_the_timeout(tmp_path, stopped):
    """A rank that stops answering (SIGSTOP: as a wedged node) ends the job after
    --rank-timeout seconds with one line naming it, and leaves no output. The ranks'
    sorted runs, killed with them, stay behind until the next run of the output removes
    them."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    fasta = family(tmp_path / "in.fasta", 700, 200, seed=2)
    edges = tmp_path / "edges.npz"
    marker = f"SEQPAIRS_TEST_JOB={uuid.uuid4()}"
    env = dict(MPI_ENV, **dict([marker.split("=", 1)]))
    timeout = 5
    proc = subprocess.Popen(
        under_mpi([*distance_command(fasta, edges), "--rank-timeout", timeout], 3),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    pid = stopped_at = None
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        # a second after every rank has begun its work (some 5 s of it): the stopped rank
        # is computing, or waiting for the others (with the pull, rank 0 may retire early)
        if sum(" pairs in " in line for line in list(lines)) == 3:
            time.sleep(1)
            pid = rank_pid(marker, stopped)
            os.kill(pid, signal.SIGSTOP)
            stopped_at = time.monotonic()
            break
        time.sleep(0.05)
    try:
        proc.wait(timeout=120)  # a hang fails here
        reader.join()
        output = "".join(lines)
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    waited = time.monotonic() - stopped_at
    assert stopped_at is not None and proc.returncode != 0, output
    # Open MPI's output forwarding may put colour resets (ESC[0m) before a rank's line
    plain = re.sub(r"\x1b\[[0-9;]*m", "", output)
    errors = [line for line in plain.splitlines() if line.startswith("seqpairs: error:")]
    assert errors == [f"seqpairs: error: MPI rank {stopped} did not answer for {timeout} s "
                      "(stopped, or its node hangs?); ending all 3 ranks"], output
    assert "Traceback" not in output
    # not before the timeout, and not much later (heartbeats every timeout / 10)
    assert timeout - 1 <= waited < 60, waited
    left = {p.name for p in tmp_path.iterdir()} - {"in.fasta"}
    assert all(name.startswith(".edges.npz.") and name.endswith(".runs") for name in left), left
    for name in left:  # a rank's last moments may outlast mpiexec
        pid = int(name.rsplit(".", 3)[-3])
        end = time.monotonic() + 60
        while Path(f"/proc/{pid}").exists() and time.monotonic() < end:
            time.sleep(0.1)
    subprocess.run(distance_command(fasta, edges), check=True, capture_output=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edges.npz", "in.fasta"]
    # the stopped rank was ended too (SIGKILL takes effect a moment after os.kill returns)
    gone = time.monotonic() + 10
    while rank_pid(marker, stopped) is not None and time.monotonic() < gone:
        time.sleep(0.05)
    assert rank_pid(marker, stopped) is None


def test_full_disk_while_spilling_is_one_clear_line(tmp_path):
    """Kept pairs beyond --memory go to sorted runs on disk; a disk that is full then (a
    file size limit) is one line naming the folder, and the runs are removed."""
    fasta = family(tmp_path / "in.fasta", 300, 30, seed=7)
    out = tmp_path / "out"

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    command = distance_command(fasta, out / "edges.npz")
    proc = subprocess.run([*command[:3], "-q", *command[3:], "--memory", "1"],
                          capture_output=True, text=True, preexec_fn=limit_file_size)
    assert (proc.returncode, proc.stderr) == (
        2, f"seqpairs: error: {out}: cannot write the sorted runs of edges.npz "
           f"({os.strerror(errno.EFBIG)})\n")
    assert list(out.iterdir()) == []


def test_full_disk_is_one_clear_line(tmp_path):
    """A file size limit (ulimit -f) fails the write like a full disk (EFBIG vs ENOSPC)."""
    fasta = family(tmp_path / "in.fasta", 60, 100, seed=3)
    out = tmp_path / "out"
    seqdist = out / "d.txt"

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    proc = subprocess.run(
        [sys.executable, "-m", "seqpairs", "-q", "distance", "-i", str(fasta), "--backend",
         "cpu", "--seqdist", str(seqdist)],
        capture_output=True, text=True, preexec_fn=limit_file_size)
    assert (proc.returncode, proc.stderr) == (2, f"seqpairs: error: {seqdist}: cannot write "
                                                 f"({os.strerror(errno.EFBIG)})\n")
    assert list(out.iterdir()) == []


def test_no_space_left_is_one_clear_line(tmp_path, cli, monkeypatch):
    from seqpairs.formats import npz

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    fasta = family(tmp_path / "in.fasta", 20, 50, seed=4)
    edges = tmp_path / "out" / "edges.npz"
    monkeypatch.setattr(npz.Archive, "write_piece", full_disk)  # the pairs' rows, in place
    code, out, err = cli("-q", "distance", "-i", fasta, "--backend", "cpu", "--edges", edges)
    assert (code, out, err) == (2, "", f"seqpairs: error: {edges}: cannot write "
                                       "(No space left on device)\n")
    assert list(edges.parent.iterdir()) == []


def test_rank_that_does_not_see_the_edge_list_is_one_clear_line(tmp_path):
    """Under MPI every rank writes its rows into the file rank 0 made; a rank on a node
    that does not share the output's folder gets no file to open."""
    from types import SimpleNamespace

    from seqpairs.errors import UserError
    from seqpairs.formats.distances import Edges
    from seqpairs.formats.edge_writer import write_edges_together

    def fail(error):
        raise error

    made_elsewhere = tmp_path / "not-shared" / ".edges.npz.tmp"
    rank_1 = SimpleNamespace(rank=1, size=2, root=False, broadcast=lambda _: made_elsewhere,
                             gather=lambda *_: None, fail=fail)
    about = Edges(3, ["a", "b", "c"], None, None, {}, max_distance=0.1,
                  candidate_identity=0.97, iddef=2, sequences="-", scoring="seqdist").empty()
    with pytest.raises(UserError) as error:
        write_edges_together(rank_1, tmp_path / "edges.npz", about, np.zeros(16, np.int64),
                             {1: []}, 1 << 20, 1)
    assert str(error.value) == (f"{tmp_path / 'edges.npz'}: rank 1 does not see the file rank 0 "
                                "made: the output's folder must be on a file system that every "
                                "rank shares")


def test_rank_that_does_not_see_the_others_runs_is_one_clear_line(tmp_path):
    """Under MPI every rank merges the slices of the others' runs in its key ranges, read
    in their folders beside the output; a rank on a node that does not share the output's
    folder finds none of them."""
    from types import SimpleNamespace

    from seqpairs.errors import UserError
    from seqpairs.formats.distances import LAYOUTS
    from seqpairs.formats.runs import Spill
    from seqpairs.stages.distance import key_ranges

    elsewhere = tmp_path / "not-shared" / ".edges.npz.host.1.2.abcd.runs" / "1.run"
    table = (np.array([1]), np.array([str(elsewhere)]), np.array([0]), np.array([5]))
    rank_1 = SimpleNamespace(rank=1, size=2, root=False, gather=lambda *_: None,
                             broadcast=lambda _: table)
    out = tmp_path / "out"
    with Spill(1 << 20, out, "edges.npz", LAYOUTS["seqdist"]) as spill:
        with pytest.raises(UserError) as error:
            key_ranges(rank_1, spill, 10)
    assert str(error.value) == (f"{out}: rank 1 does not see another rank's sorted runs "
                                f"({elsewhere.parent.name}): the output's folder must be on "
                                "a file system that every rank shares")


def test_output_folder_that_cannot_exist_is_one_clear_line(tmp_path, cli):
    fasta = family(tmp_path / "in.fasta", 20, 50, seed=5)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code, _, err = cli("-q", "distance", "-i", fasta, "--backend", "cpu", "--edges",
                       blocker / "edges.npz")
    assert (code, err) == (2, f"seqpairs: error: {blocker / 'edges.npz'}: cannot write "
                              f"({blocker} is not a folder)\n")


def test_outputs_get_the_mode_of_any_new_file(tmp_path):
    """Temporary files are 0600; the renamed output must be readable as usual (umask)."""
    from seqpairs.formats.atomic import atomic_open

    umask = os.umask(0o022)
    try:
        with atomic_open(tmp_path / "out.txt") as fh:
            fh.write("x")
        (tmp_path / "plain.txt").write_text("x")
    finally:
        os.umask(umask)
    assert (tmp_path / "out.txt").stat().st_mode & 0o777 == \
        (tmp_path / "plain.txt").stat().st_mode & 0o777 == 0o644
