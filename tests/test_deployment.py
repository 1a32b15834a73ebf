"""The workflow deployed as users deploy it: its jobs in a conda-like environment that holds
only the third-party packages of envs/*.yaml (seqpairs not installed: the jobs run it from
the workflow's source tree), and the workflow used as a Snakemake module with a prefix.
Both must write the bytes of the plain run (conftest.py's `run`).

No conda channel is reachable in CI, so the environment is a fresh virtual environment
with the env files' packages at their pinned versions from PyPI (the conda-forge names
mapped below); Snakemake itself is installed there too, at this Python's version, so that
the jobs' `python3` and Snakemake's scripts run in that environment.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import snakemake
import yaml

from test_determinism import content
from test_workflow import TINY, copy_workflow, write_noisy_reads, write_protein_reads

REPO = Path(__file__).resolve().parents[1]
ENV_FILES = sorted((REPO / "envs").glob("*.yaml"))
# conda-forge package -> PyPI distribution where the names differ; None: left out (python
# itself; the CUDA runtime and CuPy: no GPU here; Open MPI and mpi4py: the tiny run starts
# no MPI ranks, and mpi4py 4.0.0 has no wheel, its build from source takes ~20 GB of RAM;
# tests/test_mpi.py runs the MPI executor with the test extra's mpi4py; vsearch: no PyPI
# package, the machine's own, Debian's, as CI installs it).
PYPI = {"python": None, "matplotlib-base": "matplotlib", "openmpi": None, "mpi4py": None,
        "cuda-version": None, "cupy": None, "vsearch": None}


def pip_requirements(env_file: Path) -> list[str]:
    """The env file's packages as pinned PyPI requirements."""
    specs = yaml.safe_load(env_file.read_text())["dependencies"]
    assert all(isinstance(spec, str) for spec in specs), f"{env_file.name}: pip entries"
    requirements = []
    for spec in specs:
        name, version = spec.split("=")[:2]
        if PYPI.get(name, name):
            requirements.append(f"{PYPI.get(name, name)}=={version}")
    return requirements


def without_pythonpath() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.fixture(scope="module")
def conda_like(tmp_path_factory) -> Path:
    """A fresh virtual environment with every env file's packages and Snakemake."""
    venv = tmp_path_factory.mktemp("env") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    requirements = sorted({r for env in ENV_FILES for r in pip_requirements(env)})
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *requirements, f"snakemake=={snakemake.__version__}"],
                   check=True, env=without_pythonpath(), timeout=1500)
    probe = subprocess.run([str(python), "-c", "import seqpairs"], capture_output=True,
                           env=without_pythonpath(), cwd=venv)
    assert probe.returncode != 0, "seqpairs must not be installed in the environment"
    return venv


def outputs(workdir: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every result, measured times and figures aside (matplotlib
    versions draw them differently)."""
    files = {}
    for top in ("results", "resources"):
        for path in sorted((workdir / top).rglob("*")):
            relative = path.relative_to(workdir).as_posix()
            if path.is_file() and not relative.startswith("results/benchmarks/"):
                files[relative] = b"png" if path.suffix == ".png" else content(path)
    return files


def same_outputs(got: dict[str, bytes], want: dict[str, bytes]) -> list[str]:
    """The files that differ. psse.tsv's Gumbel fits (float64 reductions over the shuffles)
    may differ in the last bits between NumPy builds: its numbers within 1e-12, the rest
    exactly."""
    differ = []
    for name in want:
        if got[name] == want[name]:
            continue
        if not name.endswith("psse.tsv"):
            differ.append(name)
            continue
        a, b = (pd.read_csv(io.BytesIO(data), sep="\t") for data in (got[name], want[name]))
        floats = [c for c in a.columns if a[c].dtype.kind == "f"]
        if not (a.drop(columns=floats).equals(b.drop(columns=floats)) and np.allclose(
                a[floats], b[floats], rtol=1e-12, atol=0, equal_nan=True)):
            differ.append(name)
    return differ


def test_env_files_list_third_party_packages_only():
    for env in ENV_FILES:
        text = env.read_text()
        assert "pip:" not in text and "-e " not in text and "seqpairs" not in yaml.safe_load(
            text)["dependencies"], env.name


def test_jobs_run_in_an_environment_of_the_env_files_packages(conda_like, run, tmp_path):
    workdir = copy_workflow(tmp_path / "wf", TINY)
    env = without_pythonpath()
    env["PATH"] = f"{conda_like / 'bin'}{os.pathsep}{env['PATH']}"
    proc = subprocess.run([str(conda_like / "bin" / "python"), "-m", "snakemake", "--cores", "2"],
                          cwd=workdir, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-6000:]
    got, want = outputs(workdir), outputs(run)
    assert sorted(got) == sorted(want)
    assert same_outputs(got, want) == []


HOST = '''configfile: "config.yaml"


module seqpairs:
    snakefile:
        "{snakefile}"
    config:
        config
    prefix:
        "sp"


use rule * from seqpairs as sp_*
'''


def test_workflow_as_a_module_with_a_prefix(run, tmp_path):
    """A host workflow that uses this one as a module: every path of its rules under sp/."""
    source = copy_workflow(tmp_path / "seqpairs")
    host = tmp_path / "host"
    (host / "sp").mkdir(parents=True)
    (host / "Snakefile").write_text(HOST.format(snakefile=source / "Snakefile"))
    (host / "config.yaml").write_text(yaml.safe_dump(TINY, sort_keys=False))
    # tiny.qc's and tiny.protein's samples, where the module's prefix puts them
    write_noisy_reads(host / "sp")
    write_protein_reads(host / "sp")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2"], cwd=host,
                          env=without_pythonpath(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert not (host / "results").exists() and not (source / "results").exists()
    got, want = outputs(host / "sp"), outputs(run)
    assert sorted(got) == sorted(want)
    for name in got:  # ingest's report names the samples' paths, which carry the prefix
        if name.startswith("results/ingest/") and name.endswith("/report.tsv"):
            assert 2 in (got[name].count(b"\tsp/resources/simulated/"),
                         got[name].count(b"\tsp/results/qc/"),
                         got[name].count(b"\tsp/reads/")), name
            got[name] = got[name].replace(b"\tsp/resources/", b"\tresources/").replace(
                b"\tsp/results/", b"\tresults/").replace(b"\tsp/reads/", b"\treads/")
    assert [name for name in want if got[name] != want[name]] == []
