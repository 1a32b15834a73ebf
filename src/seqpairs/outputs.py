"""Atomic output files: write to a temporary name in the same folder, rename when complete.

A killed job then leaves no half-written file that Snakemake (or a rerun) would trust.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path next to `path`; rename it onto `path` if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w"):
    """Open a temporary file for writing; it becomes `path` only when the block succeeds."""
    with atomic_path(path) as tmp, open(tmp, mode) as handle:
        yield handle
