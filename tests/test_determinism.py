"""Determinism: two runs of the workflow on the same inputs and config write the same bytes.

The second run uses other thread counts and, where MPI is installed, two MPI ranks for the
distance stage; every file under results/ must have the same checksum (benchmark files and
the measured times in the report's summary.tsv aside). The samples live at paths full of shell syntax, which must reach the tools as
plain file names (nothing from the config is run by a shell).
"""
from __future__ import annotations

import copy
import hashlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from test_workflow import copy_workflow, snakemake

# Every character a shell would act on, in a folder and file name.
ODD_DIR = "raw reads $(touch INJECTED_DIR)"
ODD_SAMPLE = "s1 `touch INJECTED_TICKS`; 'q' \"dq\" & | > x.fastq.gz"
MPI = shutil.which("mpiexec") is not None and importlib.util.find_spec("mpi4py") is not None


def content(path: Path) -> bytes:
    """A file's bytes; of the report's summary.tsv (and summary.html, one row a line) the
    rows that are not measured times, of its times.tsv the rules without their seconds."""
    if path.name == "times.tsv":
        rows = [line.split("\t") for line in path.read_text().splitlines()]
        return "".join(f"{row[0]}\t{row[-1]}\n" for row in rows).encode()
    if path.name not in ("summary.tsv", "summary.html"):
        return path.read_bytes()
    lines = path.read_text().splitlines(keepends=True)
    # the item: summary.tsv's first field, summary.html's first cell
    item = (lambda line: line.split("\t")[0]) if path.suffix == ".tsv" else (
        lambda line: line.split("</td>")[0])
    return "".join(line for line in lines
                   if "time" not in item(line) and "GCUPS" not in line).encode()


def checksums(workdir: Path) -> dict[str, str]:
    """sha256 of every result file, by path relative to the workdir (timings left out)."""
    results = workdir / "results"
    return {
        str(p.relative_to(workdir)): hashlib.sha256(content(p)).hexdigest()
        for p in sorted(results.rglob("*"))
        if p.is_file() and "benchmarks" not in p.relative_to(results).parts
    }


def test_two_runs_give_the_same_bytes_and_odd_paths_stay_file_names(tmp_path, monkeypatch):
    # mpiexec of the second run: root in CI containers, more ranks than cores allowed
    for name in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
                 "OMPI_MCA_rmaps_base_oversubscribe"):
        monkeypatch.setenv(name, "1")
    reads = tmp_path / ODD_DIR
    subprocess.run([sys.executable, "-m", "seqpairs", "-q", "simulate", "-o", str(tmp_path / "sim"),
                    "--references", "3", "--samples", "2", "--reads", "25", "--length", "120",
                    "--seed", "11"], check=True)
    reads.mkdir()
    odd = reads / ODD_SAMPLE
    shutil.copy2(tmp_path / "sim" / "sample1.fastq.gz", odd)
    samples = {"s1": str(odd), "s2": str(tmp_path / "sim" / "sample2.fastq.gz")}
    config = {
        "defaults": {"distance": {"backend": "cpu", "threads": 2}, "filter": {"threads": 2},
                     "binning": {"tile_pairs": 50}},
        "datasets": {
            # the odd path straight to ingest; to vsearch (read QC) in the others
            "complete": {"samples": samples, "cluster": {"linkage": "complete", "distance": "seqdist"},
                         "distance": {"exports": ["seqdist", "condensed"]},
                         "qc": {"enabled": False}},
            "greedy": {"samples": samples},
            "average": {"samples": samples, "cluster": {"linkage": "average", "distance": "seqdist"}},
        },
    }
    first = copy_workflow(tmp_path / "first", config)
    snakemake(first, "--cores", "2")

    other = copy.deepcopy(config)
    other["defaults"]["distance"].update(threads=1, tasks=2 if MPI else 1)
    other["defaults"]["filter"]["threads"] = 1
    second = copy_workflow(tmp_path / "second", other)
    snakemake(second, "--cores", "2")

    a, b = checksums(first), checksums(second)
    assert len(a) > 20 and "results/distance/complete/seqdist.txt" in a
    assert a == b
    assert not list(tmp_path.rglob("INJECTED*")) and not list(Path.cwd().glob("INJECTED*"))
    report = pd.read_csv(first / "results" / "ingest" / "complete" / "report.tsv", sep="\t")
    assert str(odd) in set(report["file"])
