"""`seqpairs distance` as an MPI program: same bytes for any number of ranks."""
import os
import shutil
import subprocess
import sys
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


def run_seqpairs(stage: str, args, ranks=None) -> subprocess.CompletedProcess:
    """`python -m seqpairs -q STAGE ARGS...`, under mpiexec with `ranks`."""
    cmd = under_mpi([sys.executable, "-m", "seqpairs", "-q", stage, *args], ranks)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=MPI_ENV)


def run_distance(args, ranks=None):
    return run_seqpairs("distance", args, ranks)


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
    """Every pair kept beyond --memory 1: each rank's sorted runs reach rank 0 piece by
    piece and merge into the bytes of one process holding them all."""
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
    for ranks in (None, 2, 3):
        assert outputs(f"spilled{ranks}", ranks, "1") == held, f"{ranks} ranks differ"


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
    script = tmp_path / "waits.py"
    script.write_text(WAITS)
    env = dict(MPI_ENV, PYTHONPATH=os.pathsep.join(p for p in (
        str(Path(parallel.__file__).parents[2]), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run(under_mpi([sys.executable, script], 3), capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split("\n")) == ["", "done 0", "done 1", "done 2"]
