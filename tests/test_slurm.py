"""The workflow through a real SLURM (profiles/slurm) and locally: the same bytes.

Runs a tiny simulated configuration twice, in two copies of the workflow: once as the
docs say, `--workflow-profile profiles/slurm --profile profiles/site` with the site profile
made from profiles/site-template (every job submitted with sbatch by the executor plugin;
the distance jobs as MPI jobs of two ranks, `srun -n 2 ... seqpairs distance ...`) and once
locally with `--cores 2` (one process, no MPI), then compares every result file byte for
byte.

Skipped where SLURM cannot be used: no `sinfo`, no idle node with 2 CPUs, or no
snakemake-executor-plugin-slurm. With SEQPAIRS_REQUIRE_SLURM=1 (set by .ci/run, which
starts a single-node SLURM) those skips are failures.
"""
from __future__ import annotations

import copy
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from test_determinism import content
from test_workflow import copy_workflow, two_samples

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_PROFILE = Path("profiles") / "slurm"
SITE_TEMPLATE = Path("profiles") / "site-template" / "config.yaml"
SITE_PROFILE = Path("profiles") / "site"
REQUIRE_SLURM = os.environ.get("SEQPAIRS_REQUIRE_SLURM") == "1"

# Every rule of the workflow runs: complete linkage with the condensed export (every
# pair: rule distance_dense), greedy clustering (other bins: its own rule distance), and
# average linkage (SeqDist text export), which shares tiny's distances (the local rule
# distance_shared). One thread per job, so the MPI distance job (2 tasks x 1 CPU) fits on
# a 2-CPU node. No read QC: its vsearch rules run in test_workflow.py, and here they
# would leave a few sequences.
TINY = {
    "simulate": {"references": 2, "samples": 2, "reads": 20, "length": 120, "seed": 7},
    "defaults": {
        "qc": {"enabled": False},
        "distance": {"backend": "cpu", "threads": 1},
        "filter": {"threads": 1},
    },
    "datasets": {
        "tiny": {
            "samples": two_samples(),
            "distance": {"exports": ["condensed"]},
            "cluster": {"linkage": "complete", "distance": "seqdist"},
        },
        "tiny.greedy": {
            "samples": two_samples(),
            "binning": {"bin_width": 20},
            "cluster": {"linkage": "greedy"},
        },
        "tiny.average": {
            "samples": two_samples(),
            "cluster": {"linkage": "average", "distance": "seqdist"},
        },
    },
}
# the datasets with a distance job of their own (tiny.average links tiny's)
COMPUTING = ("tiny", "tiny.greedy")
# How the rules run seqpairs (workflow/rules/common.smk: from the workflow's source tree)
SEQPAIRS = r"python3 -m seqpairs"
# The SLURM jobs (profiles/slurm's groups: a dataset's reading and bins, and its outputs
# after the filter, one job each): rule or group -> jobs
SLURM_JOBS = {
    "simulate": 1,
    "prepare": 3,           # ingest, binning
    "distance": 1,          # tiny.greedy
    "distance_dense": 1,    # tiny (its condensed export and complete linkage)
    "filter": 3,
    "outputs": 3,           # exports, clustering, report (report_times in the same job)
}


def slurm_config(gpus: int) -> dict:
    """TINY with two MPI ranks per distance job, each on a GPU of its own where the
    partition has two (backend auto: these computes on the CPU, as no GPU is usable).
    Neither changes an output byte, so the local run (one process, backend cpu) is the
    reference."""
    config = copy.deepcopy(TINY)
    config["defaults"]["distance"].update(tasks=2, backend="auto" if gpus >= 2 else "cpu")
    return config


def unusable(reason: str):
    if REQUIRE_SLURM:
        pytest.fail(f"SEQPAIRS_REQUIRE_SLURM=1 but {reason}")
    pytest.skip(reason)


def run(*args: str, timeout: int = 30) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)


def idle_partition() -> str:
    """A partition with an idle node of at least 2 CPUs (the default one first)."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        unusable("SLURM is not installed (no sinfo/sbatch on PATH)")
    proc = run("sinfo", "--noheader", "--states=idle", "--format=%P %c")
    if proc.returncode != 0:
        unusable(f"sinfo failed: {proc.stderr.strip()}")
    partitions = []
    for line in proc.stdout.splitlines():
        name, cpus = line.split()
        if int(cpus.rstrip("+")) >= 2:
            partitions.append(name)
    if not partitions:
        unusable(f"sinfo shows no idle SLURM node with 2 CPUs:\n{run('sinfo').stdout}")
    partitions.sort(key=lambda name: not name.endswith("*"))  # the default first
    return partitions[0].rstrip("*")


def partition_gpus(partition: str) -> int:
    """GPUs (GRES gpu) of one node of the partition, 0 when it has none."""
    proc = run("sinfo", "--noheader", f"--partition={partition}", "--format=%G")
    counts = [int(n) for n in re.findall(r"\bgpu(?::[^:,(\s]+)?:(\d+)", proc.stdout)]
    return max(counts, default=0)


def without_accounting() -> bool:
    proc = run("scontrol", "show", "config")
    return "accounting_storage/none" in proc.stdout


@pytest.fixture(scope="module")
def partition() -> str:
    name = idle_partition()
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        unusable("snakemake-executor-plugin-slurm is not installed")
    return name


def snakemake(workdir: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m snakemake ARGS` in workdir, with this Python's scripts (seqpairs) on PATH."""
    env = {**os.environ, **(env or {})}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    if proc.returncode != 0:
        logs = "\n".join(
            f"--- {p}\n{p.read_text(errors='replace')[-3000:]}"
            for folder in (workdir / "logs", workdir / ".snakemake" / "slurm_logs")
            if folder.is_dir()
            for p in sorted(folder.rglob("*.log"))
        )
        raise AssertionError(
            f"snakemake {' '.join(args)} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-5000:]}\nstderr:\n{proc.stderr[-10000:]}\n{logs}"
        )
    return proc


def site_profile(partition: str) -> dict:
    """profiles/site-template with this cluster's partition for the CPU and the GPU rules,
    and no account: there is no accounting here (the plugin then submits without -A)."""
    site = yaml.safe_load((REPO / SITE_TEMPLATE).read_text())
    defaults = site["default-resources"]
    assert defaults["slurm_partition"].startswith("EDIT")  # what users replace
    defaults["slurm_partition"] = partition
    del defaults["slurm_account"]
    for resources in site["set-resources"].values():  # one mapping (a YAML alias)
        resources["slurm_partition"] = partition
    return site


def result_files(workdir: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every output (results/ and resources/), timings aside."""
    files = {}
    for top in ("results", "resources"):
        for path in sorted((workdir / top).rglob("*")):
            relative = path.relative_to(workdir).as_posix()
            if path.is_file() and not relative.startswith("results/benchmarks/"):
                files[relative] = content(path)  # the report's measured times aside
    return files


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> Path:
    """The local run: `snakemake --cores 2`, one process per job, no MPI."""
    workdir = copy_workflow(tmp_path_factory.mktemp("local") / "local", TINY)
    snakemake(workdir, "--cores", "2")
    return workdir


@pytest.fixture(scope="module")
def on_slurm(partition, tmp_path_factory) -> tuple[Path, str]:
    """The SLURM run (workdir, Snakemake's output) with profiles/slurm as shipped and a site
    profile made from the template."""
    gpus = partition_gpus(partition)
    workdir = copy_workflow(tmp_path_factory.mktemp("slurm") / "slurm", slurm_config(gpus))
    (workdir / SITE_PROFILE).mkdir()
    (workdir / SITE_PROFILE / "config.yaml").write_text(
        yaml.safe_dump(site_profile(partition), sort_keys=False))
    options = [
        "--workflow-profile", str(WORKFLOW_PROFILE), "--profile", str(SITE_PROFILE),
        "--verbose",                               # the plugin's sbatch calls
        "--slurm-keep-successful-logs",            # the evidence checked below
        "--slurm-init-seconds-before-status-checks", "2",  # a short test, not a cluster
    ]
    if without_accounting():
        options += ["--slurm-status-command", "squeue"]  # sacct needs accounting
    proc = snakemake(workdir, *options)
    return workdir, proc.stdout + proc.stderr


def sbatch_calls(output: str) -> dict[str, list[str]]:
    """Rule or group -> the sbatch calls of its jobs (the plugin's --verbose lines; the
    log path names the rule, rule_R/..., or the group, group_G-<dataset>_<rules>/...)."""
    calls: dict[str, list[str]] = {}
    for call in re.findall(r"^sbatch call: (sbatch .*)$", output, flags=re.MULTILINE):
        job = re.search(r"--output \S*/slurm_logs/(rule|group)_([^/]+)/", call)
        name = job[2] if job[1] == "rule" else job[2].split("-")[0]
        calls.setdefault(name, []).append(call)
    return calls


def test_workflow_profile_leaves_the_site_values_to_the_site_profile():
    """Snakemake gives a workflow profile's keys precedence over --profile's: the shipped
    one must set no resources, or it would replace the site's partitions and account."""
    profile = yaml.safe_load((REPO / WORKFLOW_PROFILE / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    assert profile["retries"] >= 1  # a job out of time comes back with twice the runtime
    assert not {"default-resources", "set-resources"} & set(profile)
    site = yaml.safe_load((REPO / SITE_TEMPLATE).read_text())
    assert set(site) == {"default-resources", "set-resources"}
    # every rule that asks for GPUs gets the GPU partition (distance_shard: `use rule
    # distance`, the same resources)
    blocks = {re.match(r"use rule \w+ as (\w+)|rule (\w+)", block).group(1, 2): block
              for path in (REPO / "workflow" / "rules").glob("*.smk")
              for block in re.split(r"^(?=(?:use )?rule )", path.read_text(), flags=re.M)[1:]}
    gpu_rules = {alias or name for (alias, name), block in blocks.items()
                 if re.search(r"^        gpu=", block, re.M)}
    assert gpu_rules == {"distance", "distance_dense", "distance_matrix", "psse"}
    assert gpu_rules | {"distance_shard"} == set(site["set-resources"])
    # the groups name rules that exist
    names = {alias or name for alias, name in blocks}
    assert set(profile["groups"]) <= names, set(profile["groups"]) - names


def test_slurm_and_local_results_are_byte_identical(on_slurm, local):
    slurm_files, local_files = result_files(on_slurm[0]), result_files(local)
    assert sorted(slurm_files) == sorted(local_files)
    for dataset in TINY["datasets"]:
        assert f"results/cluster/{dataset}/otus.membership.tsv" in slurm_files
    assert "results/distance/tiny/condensed.npy" in slurm_files
    assert "results/distance/tiny.average/seqdist.txt" in slurm_files
    differ = [name for name in slurm_files if slurm_files[name] != local_files[name]]
    assert differ == [], f"differ between SLURM and local runs: {differ}"


def test_every_job_ran_as_a_slurm_job(on_slurm, local):
    workdir, output = on_slurm
    assert "SLURM run ID" in output
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", output)
    # the executor plugin keeps one log per SLURM job: .snakemake/slurm_logs/rule_R/.../ID.log
    # or group_G_<its rules>/ID.log
    slurm_logs = workdir / ".snakemake" / "slurm_logs"
    by_job: dict[str, list[str]] = {}
    for log in sorted(slurm_logs.rglob("*.log")):
        folder = log.relative_to(slurm_logs).parts[0]
        name = folder.removeprefix("rule_") if folder.startswith("rule_") else \
            folder.removeprefix("group_").split("-")[0]
        by_job.setdefault(name, []).append(log.stem)
    assert {name: len(ids) for name, ids in by_job.items()} == SLURM_JOBS
    job_ids = sorted(i for ids in by_job.values() for i in ids)
    assert all(re.fullmatch(r"\d+", i) for i in job_ids), job_ids
    assert sorted(submitted) == job_ids
    # a group job ran each of its rules: one dataset's reads and bins
    prepare = next(slurm_logs.glob("group_prepare-tiny.greedy_*"))
    assert sorted(prepare.name.removeprefix("group_prepare-tiny.greedy_").split("_")) == \
        ["binning", "ingest"]
    assert not (local / ".snakemake" / "slurm_logs").exists()


def test_jobs_ask_for_what_their_rules_declare(on_slurm, partition):
    """sbatch got each rule's runtime estimate, and for the distance jobs two MPI tasks
    with a GPU each (where the partition has them), from the rules' own resources."""
    calls = sbatch_calls(on_slurm[1])
    assert {name: len(jobs) for name, jobs in calls.items()} == SLURM_JOBS
    gpus = partition_gpus(partition) >= 2
    for name, jobs in calls.items():
        for call in jobs:
            assert f" -p {partition} " in call, call  # the site profile's partition
            assert " -A " not in call, call
            assert re.search(r" -t 10 ", call), call  # the floor: a tiny run
            if name in ("distance", "distance_dense"):
                assert "--ntasks=2" in call, call
                assert ("--gpus=2" in call and "--ntasks-per-gpu=1" in call) == gpus, call
            else:
                assert "--gpus" not in call and "--ntasks=1" in call, call


def test_distance_ran_as_an_mpi_job_of_two_tasks(on_slurm, local):
    workdir, output = on_slurm
    assert re.search(
        rf"srun --cpus-per-task=1 -n 2 {SEQPAIRS} distance -i results/ingest/tiny/unique\.fasta",
        output)
    # the full-matrix exports run one process
    assert not re.search(r"(srun|mpiexec)\b.* seqpairs distance .*--(condensed|seqdist)", output)
    for log in (workdir / ".snakemake" / "slurm_logs" / "rule_distance").rglob("*.log"):
        assert "seqpairs distance" in log.read_text(errors="replace")
    # seqpairs distance logs its rank: both ranks of the MPI world ran
    for dataset in COMPUTING:
        log = (workdir / "logs" / "distance" / dataset / "distance.log").read_text()
        assert re.search(r"\brank 0/2\b", log) and re.search(r"\brank 1/2\b", log), log
        local_log = (local / "logs" / "distance" / dataset / "distance.log").read_text()
        assert not re.search(r"\brank \d+/\d+", local_log), local_log


def test_local_mpi_run_gives_the_same_bytes(local, tmp_path):
    """profiles/local's way to MPI: --set-resources distance:tasks=2 -> mpiexec -n 2."""
    if shutil.which("mpiexec") is None:
        pytest.skip("mpiexec not found (apt-get install openmpi-bin)")
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    workdir = tmp_path / "mpi"
    shutil.copytree(local, workdir, symlinks=True)
    # Open MPI refuses root without the first two (CI runs as root) and more ranks than
    # cores without the third; other MPI libraries ignore them.
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    proc = snakemake(workdir, "--cores", "2", "--printshellcmds", "--forcerun", "distance", "distance_dense",
                     "--set-resources", "distance:tasks=2", "distance_dense:tasks=2", env=env)
    output = proc.stdout + proc.stderr
    assert len(re.findall(rf"mpiexec -n 2 {SEQPAIRS} distance", output)) == len(COMPUTING)
    for dataset in TINY["datasets"]:
        edges = f"results/distance/{dataset}/edges.npz"
        assert (workdir / edges).read_bytes() == (local / edges).read_bytes(), edges
    for dataset in COMPUTING:
        log = (workdir / "logs" / "distance" / dataset / "distance.log").read_text()
        assert re.search(r"\brank 1/2\b", log), log
    # the number of tasks is no parameter: back to one process, nothing to rerun
    proc = snakemake(workdir, "--cores", "2", "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr
