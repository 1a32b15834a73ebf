"""Atomic output files: write to a temporary name in the same folder, rename when complete.

A killed job then leaves no half-written file that Snakemake (or a rerun) would trust.
A write that fails for want of space, quota or permission is the user's to fix: it becomes
a one-line UserError naming the output.
"""
from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from ..errors import UserError

# Writes that fail for want of space: disk full, quota, file size limit (ulimit -f).
NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path next to `path`; rename it onto `path` if the block succeeds."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # folder missing, not writable, read-only file system...
        raise _write_error(path, exc) from None
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; outputs get the usual mode
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno in NO_SPACE:
            raise _write_error(path, exc) from None
        raise


def _umask() -> int:
    mask = os.umask(0)  # os.umask sets and returns the old mask: set it back
    os.umask(mask)
    return mask


def _write_error(path: Path, exc: OSError) -> UserError:
    if isinstance(exc, (FileExistsError, NotADirectoryError)):  # from mkdir of the folders
        return UserError(f"{path}: cannot write ({_not_a_folder(path)} is not a folder)")
    return UserError(f"{path}: cannot write ({exc.strerror or exc})")


def _not_a_folder(path: Path) -> Path:
    """The first ancestor of `path` that exists and is not a folder."""
    return next(p for p in reversed(path.parents) if p.exists() and not p.is_dir())


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w"):
    """Open a temporary file for writing; it becomes `path` only when the block succeeds."""
    with atomic_path(path) as tmp, open(tmp, mode) as handle:
        yield handle
