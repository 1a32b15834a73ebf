"""Outputs never damage anything (formats/atomic.py, cli.py's signal handling).

An output replaces only a regular file or nothing: a folder, a device, a FIFO, a socket or
a symbolic link at its path is one error line and stays as it was. No temporary file
survives its process: an exception, Ctrl-C, SIGTERM and SIGHUP remove it on the way out
(real processes, signalled while they write); one killed outright (SIGKILL) leaves it, and
the next writer of that output removes it.
"""
from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from seqpairs.errors import UserError
from seqpairs.formats.atomic import atomic_open, atomic_path, writer

REPO = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])))


def fasta(path: Path) -> Path:
    path.write_text(">a\nACGTACGTAC\n>b\nACGTACGTAA\n>c\nACGTTCGTAC\n")
    return path


def folder(path: Path) -> Path:
    path.mkdir()
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def unix_socket(path: Path) -> Path:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()  # the socket file stays
    return path


def null_device(path: Path) -> Path:
    """A character device like /dev/null (1, 3), made here: if it were replaced, only this
    copy would be, never the machine's /dev/null."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root (CAP_MKNOD)")
    return path


def link_to_file(path: Path) -> Path:
    target = path.parent / "target.tsv"
    target.write_text("the target\n")
    path.symlink_to(target)
    return path


def dangling_link(path: Path) -> Path:
    path.symlink_to(path.parent / "nowhere.tsv")
    return path


def snapshot(directory: Path) -> dict[str, tuple[int, bytes | None]]:
    """Each entry's type and, for a regular file or a link, its content or target."""
    entries = {}
    for entry in sorted(directory.iterdir()):
        mode = entry.lstat().st_mode
        content = (os.readlink(entry).encode() if stat.S_ISLNK(mode)
                   else entry.read_bytes() if stat.S_ISREG(mode) else None)
        entries[entry.name] = (stat.S_IFMT(mode), content)
    return entries


@pytest.mark.parametrize("make, kind", [
    (folder, "a folder"), (fifo, "a FIFO (named pipe)"), (unix_socket, "a socket"),
    (null_device, "a character device"), (link_to_file, "a symbolic link"),
    (dangling_link, "a symbolic link")], ids=lambda value: getattr(value, "__name__", ""))
def test_an_output_replaces_only_a_regular_file(tmp_path, cli, make, kind):
    reads = fasta(tmp_path / "in.fasta")
    out = tmp_path / "out"
    out.mkdir()
    thing = make(out / "bins.tsv")
    before = snapshot(out)
    code, stdout, stderr = cli("binning", "-i", reads, "--bins", thing,
                               "--tiles", out / "tiles.tsv")
    assert (code, stdout) == (2, "")
    assert stderr == (f"seqpairs: error: {thing}: cannot write (it is {kind}; an output "
                      "replaces only a regular file)\n")
    assert snapshot(out) == before  # untouched; no temporary file, no tiles.tsv


def test_an_existing_regular_file_is_replaced(tmp_path, cli):
    reads = fasta(tmp_path / "in.fasta")
    bins = tmp_path / "bins.tsv"
    bins.write_text("old\n")
    code, _, _ = cli("binning", "-i", reads, "--bins", bins, "--tiles", tmp_path / "t.tsv")
    assert code == 0
    assert bins.read_text().splitlines()[0] == "bin\tmin\tmax\tcount"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bins.tsv", "in.fasta", "t.tsv"]


def test_a_path_that_turns_into_a_folder_while_written_is_refused(tmp_path):
    path = tmp_path / "out.txt"
    with pytest.raises(UserError, match="it is a folder"):
        with atomic_open(path) as fh:
            fh.write("x")
            path.mkdir()
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"] and path.is_dir()


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_an_error_while_writing_leaves_nothing(tmp_path, error):
    with pytest.raises(error):
        with atomic_open(tmp_path / "out.txt") as fh:
            fh.write("x")
            raise error()
    assert list(tmp_path.iterdir()) == []


def ended_pid() -> int:
    """The id of a process that has ended."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_stale_temporaries_of_gone_processes_on_this_host_are_removed(tmp_path):
    host, namespace, _ = writer().rsplit(".", 2)
    gone = tmp_path / f".out.txt.{host}.{namespace}.{ended_pid()}.0a1b2c3d.tmp"
    alive = tmp_path / f".out.txt.{host}.{namespace}.{os.getppid()}.0a1b2c3d.tmp"
    elsewhere = tmp_path / f".out.txt.other-host.{namespace}.{ended_pid()}.0a1b2c3d.tmp"
    other_output = tmp_path / f".other.txt.{host}.{namespace}.{ended_pid()}.0a1b2c3d.tmp"
    unrelated = tmp_path / ".out.txt.notes"
    for path in (gone, alive, elsewhere, other_output, unrelated):
        path.write_text("partial")
    with atomic_open(tmp_path / "out.txt") as fh:
        fh.write("complete")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (alive, elsewhere, other_output, unrelated, tmp_path / "out.txt"))


def test_stale_folders_of_sorted_runs_are_removed_by_the_next_distance_run(tmp_path, cli):
    """A killed distance run leaves its folder of sorted runs (.NAME....runs); the next
    run of the same output removes those of gone processes, spills into a folder of its
    own and removes that too. Whether it spills (--memory 1) or not, the same bytes."""
    host, namespace, _ = writer().rsplit(".", 2)
    out = folder(tmp_path / "out")
    gone = out / f".e.npz.{host}.{namespace}.{ended_pid()}.0a1b2c3d.runs"
    alive = out / f".e.npz.{host}.{namespace}.{os.getppid()}.0a1b2c3d.runs"
    for path in (gone, alive):
        path.mkdir()
        (path / "1.run").write_bytes(b"partial")
    reads = tmp_path / "r.fasta"
    rng = np.random.default_rng(3)
    reads.write_text("".join(f">s{k}\n{''.join(rng.choice(list('ACGT'), 30))}\n"
                             for k in range(300)))
    for memory, name in (("1", "e.npz"), ("256", "held.npz")):
        code, _, err = cli("distance", "-i", reads, "--memory", memory, "--edges", out / name)
        assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == sorted([alive.name, "e.npz", "held.npz"])
    assert (out / "e.npz").read_bytes() == (out / "held.npz").read_bytes()


def test_temporary_names_fit_a_file_name(tmp_path):
    path = tmp_path / ("x" * 250)
    with atomic_path(path) as tmp:
        assert len(tmp.name.encode()) <= 255 and tmp.name.startswith(".xxx")
        tmp.write_text("long")
    assert path.read_text() == "long"


# --- real processes signalled while they write -----------------------------------------


def slow_writer(tmp_path: Path, prefix: Path) -> list[str]:
    """`seqpairs cluster` of 40 sequences at resolution 1e-4: about 150,000 lines each in
    PREFIX.list and PREFIX.otu, written together for about a second, after little work."""
    rng = np.random.default_rng(13)
    n = 40
    distances = rng.uniform(0, 15, n * (n - 1) // 2)
    dist = tmp_path / "d.txt"
    dist.write_text(f"{n}\n" + "".join(f"{d:.8e}\n" for d in distances))
    return [sys.executable, "-m", "seqpairs", "-q", "cluster", "-i", str(dist), "--linkage", "complete",
            "--resolution", "0.0001", "--cutoff", "1", "-o", str(prefix)]


def signal_while_writing(command: list[str], folder: Path, signum: int):
    """Start `command`, send `signum` once a temporary file appears in `folder`."""
    proc = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if folder.is_dir() and any(p.name.endswith(".tmp") for p in folder.iterdir()):
            proc.send_signal(signum)
            break
        time.sleep(0.002)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode not in (0, None), "it finished before the signal: make it slower"
    return proc.returncode, stdout, stderr


@pytest.mark.parametrize("signum, line", [
    (signal.SIGTERM, "seqpairs: terminated by SIGTERM"),
    (signal.SIGHUP, "seqpairs: terminated by SIGHUP"),
    (signal.SIGINT, "seqpairs: interrupted")], ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_while_writing_leaves_nothing(tmp_path, signum, line):
    out = tmp_path / "out"
    code, stdout, stderr = signal_while_writing(slow_writer(tmp_path, out / "otus"), out,
                                                signum)
    assert code == (130 if signum == signal.SIGINT else 128 + signum)
    assert (stdout, stderr) == ("", line + "\n")
    assert list(out.iterdir()) == []


def test_a_killed_writers_temporaries_are_removed_by_the_next_run(tmp_path):
    out = tmp_path / "out"
    command = slow_writer(tmp_path, out / "otus")
    code, _, _ = signal_while_writing(command, out, signal.SIGKILL)
    assert code == -signal.SIGKILL
    stale = sorted(p.name for p in out.iterdir())
    assert stale and all(name.startswith((".otus.list.", ".otus.otu.")) for name in stale)

    subprocess.run(command, env=ENV, check=True)
    reference = tmp_path / "reference"
    subprocess.run([*command[:-1], str(reference / "otus")], env=ENV, check=True)
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(p.name for p in reference.iterdir())  # no temporary file
    assert not any(name.startswith(".") for name in written)
    for name in written:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
