"""Atomic output files: write to a temporary name in the same folder, rename when complete.

A killed job then leaves no half-written file that Snakemake (or a rerun) would trust.
What may be replaced: a regular file or nothing. Any other thing at an output's path (a
folder, a device such as /dev/null, a FIFO, a socket, a symbolic link) is refused with one
line before anything is written, so that a run as root never replaces /dev/null and a
link's target is never written through.

The temporary file is `.NAME.HOST.PIDNS.PID.RANDOM.tmp` beside NAME: its writer's host,
PID namespace and process id. It is removed on every exit the process controls (an
exception, Ctrl-C, and SIGTERM or SIGHUP, which cli.main turns into an exception). A
process killed outright (SIGKILL, power loss) leaves it behind; the next writer of NAME on
the same host removes the temporary files of NAME whose process is gone. Those of other
hosts (a shared file system) are left alone: no process there can be asked. The distance
stage's folder of sorted runs (formats/runs.py) is named and cleaned the same way, with
the suffix `.runs`.

A write that fails for want of space, quota or permission is the user's to fix: it becomes
a one-line UserError naming the output. A text output named `-` is standard output.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import socket
import stat
import sys
from pathlib import Path

from ..errors import UserError

# Writes that fail for want of space: disk full, quota, file size limit (ulimit -f).
NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
SUFFIX = ".tmp"
RUNS_SUFFIX = ".runs"  # a folder of sorted runs (formats/runs.Scratch)
NAME_MAX = 255  # bytes of one file name on Linux file systems
# What an output path may hold instead of a regular file, by stat's file type.
KINDS = {stat.S_IFDIR: "a folder", stat.S_IFCHR: "a character device",
         stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO (named pipe)",
         stat.S_IFSOCK: "a socket", stat.S_IFLNK: "a symbolic link"}


STDIO = "-"  # an output (or input) path that means standard output (input)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path next to `path`; rename it onto `path` if the block succeeds."""
    if str(path) == STDIO:
        raise UserError("-: this output is a binary file; give it a file name (standard output "
                        "takes text outputs only)")
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        check_replaceable(path)
        remove_stale(path)
    except OSError as exc:  # folder missing, not writable, read-only file system...
        raise write_error(path, exc) from None
    tmp = temporary_name(path, SUFFIX)
    try:  # made within the try: a signal the moment it exists still removes it
        try:  # 0o666 less the umask: the mode of any new file (mkstemp's would be 0600)
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666))
        except OSError as exc:
            raise write_error(path, exc) from None
        yield tmp
        check_replaceable(path)  # it may have changed while the output was written
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):  # gone already, or never made
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno in NO_SPACE:
            raise write_error(path, exc) from None
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w"):
    """Open a temporary file for writing; it becomes `path` only when the block succeeds.
    `-` is standard output, written as it comes (a stream has nothing to replace)."""
    if str(path) == STDIO:
        stream = sys.stdout.buffer if "b" in mode else sys.stdout
        yield stream
        stream.flush()
        return
    with atomic_path(path) as tmp, open(tmp, mode) as handle:
        yield handle


def check_replaceable(path: Path) -> None:
    """A UserError unless `path` is missing or a regular file (not followed if a link)."""
    try:
        kind = stat.S_IFMT(os.lstat(path).st_mode)
    except FileNotFoundError:
        return
    if kind != stat.S_IFREG:
        raise UserError(f"{path}: cannot write (it is {KINDS.get(kind, 'not a regular file')}; "
                        "an output replaces only a regular file)")


def writer() -> str:
    """HOST.PIDNS.PID of this process: who wrote a temporary file, for remove_stale."""
    try:  # processes in other PID namespaces (containers) may share the host name
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return f"{socket.gethostname()}.{namespace}.{os.getpid()}"


def temp_prefix(name: str) -> str:
    """The start of the temporary names of output `name`, short enough that the whole
    name fits NAME_MAX (a shortened name may match another output's: harmless, as only
    the files of processes that are gone are removed)."""
    room = NAME_MAX - len(f"..{writer()}.{'0' * 8}{RUNS_SUFFIX}".encode())
    return f".{name.encode()[:room].decode(errors='ignore')}."


def temporary_name(path: Path, suffix: str) -> Path:
    """A new temporary name beside output `path`: .NAME.HOST.PIDNS.PID.RANDOM{suffix}."""
    return path.parent / f"{temp_prefix(path.name)}{writer()}.{secrets.token_hex(4)}{suffix}"


def remove_stale(path: Path, suffix: str = SUFFIX) -> None:
    """Remove the temporary files (or folders) of `path` with this suffix whose writer,
    on this host, is gone."""
    prefix = temp_prefix(path.name)
    host, namespace, _ = writer().rsplit(".", 2)
    for entry in os.scandir(path.parent):
        if not (entry.name.startswith(prefix) and entry.name.endswith(suffix)):
            continue
        fields = entry.name[len(prefix):-len(suffix)].rsplit(".", 3)
        if len(fields) == 4 and fields[:2] == [host, namespace] and fields[2].isdigit() \
                and not _alive(int(fields[2])):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, as another user's process
        return True
    return True


def write_error(path: Path, exc: OSError) -> UserError:
    """The one line for an output that `exc` stopped being written."""
    if isinstance(exc, (FileExistsError, NotADirectoryError)):  # from mkdir of the folders
        return UserError(f"{path}: cannot write ({_not_a_folder(path)} is not a folder)")
    return UserError(f"{path}: cannot write ({exc.strerror or exc})")


def _not_a_folder(path: Path) -> Path:
    """The first ancestor of `path` that exists and is not a folder."""
    return next(p for p in reversed(path.parents) if p.exists() and not p.is_dir())
