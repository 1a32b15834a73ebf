"""What the seed experiments' scripts (benchmarks/seeds/) share: their reads, whole-process
runs of `seqpairs distance`, the machine's name, and an order-free digest of edge lists."""
from __future__ import annotations

import datetime
import os
import platform
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from communities import community, write_fasta  # noqa: E402,F401  (the scripts' reads)

# the workflow's defaults (config/schema.yaml): Savran et al.'s tables at "default thresholds"
THRESHOLDS = ("--max-distance", "0.1", "--candidate-identity", "0.97")
# the sharded runs' ledgers (one line a shard), committed beside the scripts
LEDGERS = Path(__file__).resolve().parent / "ledgers"
# the columns of an edge list that hold a pair and its values (formats/distances.py)
EDGE_COLUMNS = ("i", "j", "cost", "length", "matches", "aligned", "leading", "distance")


def machine() -> str:
    """The GPU's name (nvidia-smi) or, without one, the CPU's, and the core count."""
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        gpu = ""
    cpu = platform.processor() or platform.machine()
    try:
        found = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text())
        cpu = found.group(1) if found else cpu
    except OSError:
        pass
    gpus = f"{len(gpu.splitlines())} x {gpu.splitlines()[0]}, " if gpu else ""
    return f"{gpus}{cpu}, {os.cpu_count()} cores"


def header(title: str) -> None:
    print(f"# {title}\n# {datetime.date.today()}, {machine()}", flush=True)


def distance_command(fasta: Path, backend: str, *options: str, threads: int | None = None,
                     quiet: bool = False) -> list[str]:
    """`seqpairs [-q] distance -i fasta --backend backend options [--threads threads]`."""
    command = [sys.executable, "-m", "seqpairs", *(["-q"] if quiet else []), "distance",
               "-i", str(fasta), "--backend", backend, *options]
    return command + (["--threads", str(threads)] if threads else [])


def distance(fasta: Path, backend: str, *options: str, threads: int | None = None,
             env: dict | None = None) -> tuple[float, str]:
    """Seconds and log of distance_command's process (in the environment `env`, default
    this one's)."""
    command = distance_command(fasta, backend, *options, threads=threads)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return seconds, done.stderr


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element by element (uint64, wrapping)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def edge_digest(path: Path) -> int:
    """A 64-bit digest of an edge list's pairs and values that does not depend on their
    order: the sum (mod 2^64) of one hash per pair, so that the digests of a run's shards
    add up to the digest of the whole run, or of any merge of them."""
    with np.load(path) as z:
        hashes = np.zeros(len(z["i"]), np.uint64)
        for name in EDGE_COLUMNS:
            column = np.ascontiguousarray(z[name])
            bits = column.view(np.uint64) if column.dtype.itemsize == 8 else \
                column.astype(np.int64).view(np.uint64)
            hashes = _mix(hashes + bits)
    return int(hashes.sum(dtype=np.uint64))


class DenseDigest:
    """A dense sink for pairs.distance.compute (dense_sink=): every pair's distance folded
    into an order-free 64-bit digest of (pair index, distance bits) as it comes, nothing
    kept, so a problem of any size needs no memory for its matrix; the digests of ranks
    or shards add up (mod 2^64) to the whole's. Thread-safe (a helper's batches too)."""

    def __init__(self):
        self.digest, self.pairs = 0, 0
        self._lock = threading.Lock()

    def __setitem__(self, index, distances) -> None:
        index = np.asarray(index, np.int64).view(np.uint64)
        bits = np.ascontiguousarray(distances, np.float64).view(np.uint64)
        part = int(_mix(_mix(index) + bits).sum(dtype=np.uint64))
        with self._lock:
            self.digest = (self.digest + part) % 2**64
            self.pairs += len(index)


def shard_numbers(words: list[str]) -> list[int]:
    """'0 1 4-7' -> [0, 1, 4, 5, 6, 7]."""
    numbers = []
    for word in words:
        first, _, last = word.partition("-")
        numbers += range(int(first), int(last or first) + 1)
    return numbers


def read_ledger(path: Path, shards: int) -> tuple[dict[int, list[str]], list[int]]:
    """A ledger's lines by shard (its first column; the other columns as text, the last
    the shard's digest in hex) and the shards of 0 .. shards - 1 it does not hold yet."""
    rows = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        shard, *columns = line.split("\t")
        rows[int(shard)] = columns
    return rows, sorted(set(range(shards)) - set(rows))


def ledger_digest(rows: dict[int, list[str]]) -> int:
    """The sum of a ledger's shard digests (the whole run's digest)."""
    return sum(int(columns[-1], 16) for columns in rows.values()) % 2**64
