"""The Snakemake workflow end to end on a tiny simulated dataset, in a copy of the workflow.

One run (module fixture) feeds the output checks; the rerun tests dry-run against it,
and the added-dataset test runs in a copy of it.
"""
from __future__ import annotations

import gzip
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from proteins import proteins

REPO = Path(__file__).resolve().parents[1]
# the workflow runs seqpairs from its own source tree (src/, with gpu_kernels/)
WORKFLOW_PARTS = ("Snakefile", "workflow", "config", "envs", "profiles", "src", "gpu_kernels")

STRICT_ALPHA = 1e-60
# How the rules run seqpairs (from the workflow's own src/ on PYTHONPATH: common.smk)
SEQPAIRS = r"python3 -m seqpairs"
def two_samples() -> dict[str, str]:
    """The simulated samples every tiny dataset reads (a fresh dict each)."""
    return {f"s{k}": f"resources/simulated/sample{k}.fastq.gz" for k in (1, 2)}


QC_MAXEE = 0.5  # tiny.qc's qc.maxee
# the datasets of tiny's samples and settings up to the distance stage: they link its edge
# list (rule distance_shared) instead of computing their own
SHARING = ("tiny.greedy", "tiny.opti", "tiny.psse", "tiny.psse.strict")
# the schema's default distance.max_distance (TINY's datasets keep it)
DEFAULT_MAX_DISTANCE = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())[
    "properties"]["defaults"]["properties"]["distance"]["properties"]["max_distance"]["default"]

TINY = {
    "simulate": {"references": 2, "samples": 2, "reads": 20, "length": 120, "seed": 7},
    # small tiles: several per dataset, so that every shard of tiny.sharded has some;
    # PSSE (where a dataset enables it) with few shuffles
    # read QC off but in tiny.qc: the other datasets cluster every read
    "defaults": {"qc": {"enabled": False},
                 "distance": {"backend": "cpu", "threads": 2}, "binning": {"tile_pairs": 50},
                 "psse": {"backend": "cpu", "threads": 2, "shuffles": 20, "seed": 5}},
    "datasets": {
        # complete linkage (FCluster) on the edge list
        "tiny": {
            "samples": two_samples(),
            "cluster": {"linkage": "complete", "distance": "seqdist"},
        },
        # the same reads, greedy clustering of the filter's pairs; its OTUs annotated
        # against the simulated references
        "tiny.greedy": {
            "samples": two_samples(),
            "annotate": {"reference": "resources/simulated/references.fasta",
                         "backend": "cpu", "threads": 2},
            "distance": {"exports": ["mothur_identity"]},
            "cluster": {"linkage": "greedy"},
        },
        # read QC (vsearch) before and after dereplication
        "tiny.qc": {
            "samples": {"n1": "reads/noisy1.fastq", "n2": "reads/noisy2.fastq.gz"},
            "qc": {"enabled": "auto", "maxee": QC_MAXEE, "min_size": 2},
            "distance": {"backend": "auto"},  # the report says which ran
        },
        # OptiClust of the kept pairs (the identity distance)
        "tiny.opti": {
            "samples": two_samples(),
            "cluster": {"linkage": "opti"},
        },
        # average linkage reads the SeqDist text export; the other exports on top (other
        # bins than tiny's: its own distance job, not tiny's, which the others share)
        "tiny.average": {
            "samples": two_samples(),
            "binning": {"bin_width": 20},
            "distance": {"exports": ["condensed", "phylip", "mothur"]},
            "cluster": {"linkage": "average", "distance": "seqdist", "weighted": True},
        },
        # as `tiny`, the edge list as 3 shard jobs and a merge
        "tiny.sharded": {
            "samples": two_samples(),
            "distance": {"shards": 3},
            "cluster": {"linkage": "complete", "distance": "seqdist"},
        },
        # sharded, and a full-matrix export: the matrix from one more job
        "tiny.sharded.matrix": {
            "samples": two_samples(),
            "distance": {"shards": 2, "exports": ["phylip"]},
            "cluster": {"linkage": "complete", "distance": "seqdist"},
        },
        # as tiny.greedy with PSSE: every kept pair is significant at the default alpha
        # (p-values of 1e-137 to 1e-41 here), so the clusters are tiny.greedy's
        "tiny.psse": {
            "samples": two_samples(),
            "psse": {"enabled": True},
            "cluster": {"linkage": "greedy"},
        },
        # the filter as vsearch --allpairs_global: every pair, no edge list
        "tiny.vsearch": {
            "samples": two_samples(),
            "filter": {"scoring": "vsearch"},
            "cluster": {"linkage": "greedy"},
        },
        # the vsearch preset in both stages: the filter traces the edge list's pairs
        "tiny.vsearch.edges": {
            "samples": two_samples(),
            "distance": {"scoring": "vsearch"},
            "filter": {"scoring": "vsearch"},
            "cluster": {"linkage": "greedy"},
        },
        # protein reads (two FASTA samples of protein families): BLOSUM62 in both stages,
        # PSSE with blastp's scores, greedy OTUs
        "tiny.protein": {
            "samples": {"p1": "reads/protein1.fasta", "p2": "reads/protein2.fasta"},
            "ingest": {"alphabet": "protein"},
            "distance": {"scoring": "blosum62", "candidate_identity": 0.6,
                         "max_distance": 0.6},
            "filter": {"scoring": "blosum62", "identity": 0.6},
            "psse": {"enabled": True},
            "cluster": {"linkage": "greedy"},
        },
        # an alpha amid those p-values: some kept pairs are not significant and must not
        # reach the clustering
        "tiny.psse.strict": {
            "samples": two_samples(),
            "psse": {"enabled": True, "alpha": STRICT_ALPHA},
            "cluster": {"linkage": "greedy"},
        },
    },
}
SAMPLES = ["s1", "s2"]
STAGES = ("ingest", "binning", "distance", "filter", "cluster")
PSSE_DATASETS = ("tiny.psse", "tiny.psse.strict", "tiny.protein")


def noisy_reads(seed: int) -> list[tuple[str, str, str]]:
    """(id, sequence, qualities) of tiny.qc's samples: two parents of 30 and 25 reads, each
    with a few reads of low quality (expected errors above QC_MAXEE) and singletons (a
    substitution), and 1 read of a chimera of the parents (their halves joined): pooled,
    more than 16 times rarer than its parents (UCHIME3's abundance skew)."""
    shared = np.random.default_rng(0)  # the same parents in every sample
    parents = ["".join(shared.choice(list("ACGT"), 120)) for _ in range(2)]
    rng = np.random.default_rng(seed)  # the sample's qualities and errors
    chimera = parents[0][:60] + parents[1][60:]
    reads = []
    for k, (seq, count) in enumerate([(parents[0], 30), (parents[1], 25), (chimera, 1)]):
        for r in range(count):
            quals = rng.integers(30, 41, len(seq))
            if r % 7 == 3:  # low quality: about 1.2 expected errors
                quals[:12] = 10
            if r % 9 == 5:  # a singleton: one substitution
                at = int(rng.integers(len(seq)))
                seq_r = seq[:at] + "ACGT"[("ACGT".index(seq[at]) + 1) % 4] + seq[at + 1:]
            else:
                seq_r = seq
            reads.append((f"p{k}_{r}_s{seed}", seq_r, "".join(chr(33 + q) for q in quals)))
    return reads


def expected_errors(quals: str) -> float:
    return sum(10 ** (-(ord(c) - 33) / 10) for c in quals)


def write_protein_reads(dest: Path) -> None:
    """tiny.protein's samples: each of 16 proteins of tests/proteins.py once or twice per
    sample, in lower case in the second."""
    families = proteins(seed=8, n=16, max_len=120)
    for k, name in ((1, "protein1.fasta"), (2, "protein2.fasta")):
        reads = [seq if k == 1 else seq.lower() for n, seq in enumerate(families)
                 for _ in range(1 + (n + k) % 2)]
        (dest / "reads" / name).write_text("".join(f">p{k}_{n}\n{seq}\n"
                                                   for n, seq in enumerate(reads)))


def write_noisy_reads(dest: Path) -> None:
    (dest / "reads").mkdir(exist_ok=True)
    for seed, name in ((1, "noisy1.fastq"), (2, "noisy2.fastq.gz")):
        text = "".join(f"@{i}\n{s}\n+\n{q}\n" for i, s, q in noisy_reads(seed))
        opener = gzip.open if name.endswith(".gz") else open
        with opener(dest / "reads" / name, "wt") as fh:
            fh.write(text)


def copy_workflow(dest: Path, config: dict | None = None) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    write_noisy_reads(dest)
    write_protein_reads(dest)
    for part in WORKFLOW_PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dest / part)
    if config is not None:
        write_config(dest, config)
    return dest


def write_config(workdir: Path, config: dict) -> None:
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def snakemake(workdir: Path, *args: str, check: bool = True,
              bin_dir: Path | None = None) -> subprocess.CompletedProcess:
    """Run `python -m snakemake` in `workdir`, with this Python's scripts (seqpairs) on PATH.

    `bin_dir` goes first on PATH (to replace `python3`).
    """
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(
        [*([str(bin_dir)] if bin_dir else []), os.path.dirname(sys.executable), env.get("PATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        check=False, cwd=workdir, env=env, capture_output=True, text=True, timeout=900,
    )
    if check and proc.returncode != 0:
        logs = "\n".join(
            f"--- {p}\n{p.read_text()[-3000:]}" for p in sorted((workdir / "logs").rglob("*.log"))
        ) if (workdir / "logs").is_dir() else ""
        raise AssertionError(
            f"snakemake {' '.join(args)} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-5000:]}\nstderr:\n{proc.stderr[-8000:]}\n{logs}"
        )
    return proc


def planned_wildcards(proc: subprocess.CompletedProcess) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run plans (or a run runs), from its descriptions."""
    jobs: list[tuple[str, dict[str, str]]] = []
    for line in (proc.stdout + proc.stderr).splitlines():
        m = re.match(r"^\s*(?:local)?(?:rule|checkpoint) (\w+):\s*$", line)
        if m:
            jobs.append((m.group(1), {}))
            continue
        m = re.match(r"^\s*wildcards: (.*)$", line)
        if m and jobs:
            jobs[-1][1].update(item.split("=", 1) for item in m.group(1).split(", "))
    return jobs


def planned_jobs(proc: subprocess.CompletedProcess) -> list[tuple[str, str | None]]:
    """(rule, dataset or None) of every job a dry run plans."""
    return [(rule, wildcards.get("dataset")) for rule, wildcards in planned_wildcards(proc)]


def and_report(expected):
    """`expected` jobs plus the report jobs of each of their datasets (report_times reads
    the benchmark file of every job, report every stage's last output, so they rerun with
    any of them)."""
    datasets = sorted({dataset for _, dataset in expected if dataset})
    return sorted(expected + [(rule, dataset) for dataset in datasets
                              for rule in ("report", "report_times")])


def read_fasta_ids(path: Path) -> list[str]:
    return [line[1:].split(";")[0] for line in path.read_text().splitlines() if line.startswith(">")]


def tsv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype={"id": str, "centroid": str, "otu": str})


def results(run: Path, stage: str, dataset: str = "tiny") -> Path:
    return run / "results" / stage / dataset


# ------------------------------------------------------------------- the run


def test_every_target_log_and_benchmark_exists(run):
    proc = snakemake(run, "--cores", "2", "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr
    for dataset in TINY["datasets"]:
        stages = STAGES + ("psse",) if dataset in PSSE_DATASETS else STAGES
        if dataset == "tiny.vsearch":  # the filter aligns every pair: no distance stage
            stages = tuple(s for s in stages if s != "distance")
            assert not (run / "logs" / "distance" / dataset).exists()
            assert not (run / "results" / "distance" / dataset).exists()
        for stage in stages:
            assert (run / "logs" / stage / dataset).is_dir(), (stage, dataset)
            if stage == "distance" and dataset in SHARING:  # tiny's job, linked
                assert (run / "logs" / stage / dataset / "edges.npz.shared.log").is_file()
                continue
            # a sharded dataset's distance stage ends with rule distance_merge
            sharded = TINY["datasets"][dataset].get("distance", {}).get("shards", 1) > 1
            rule = "distance_merge" if stage == "distance" and sharded else stage
            assert (run / "results" / "benchmarks" / rule / f"{dataset}.tsv").is_file()
    # PSSE only where enabled
    assert sorted(p.name for p in (run / "results" / "psse").iterdir()) == sorted(PSSE_DATASETS)
    assert sorted(p.name for p in (run / "logs" / "psse").iterdir()) == sorted(PSSE_DATASETS)
    for k in range(3):
        assert (run / "logs" / "distance" / "tiny.sharded" / f"shard-{k}-of-3.log").is_file()
        assert (run / "results" / "benchmarks" / "distance_shard" / "tiny.sharded"
                / f"{k}-of-3.tsv").is_file()
    assert (run / "logs" / "distance" / "tiny.sharded" / "merge.log").is_file()
    assert not (results(run, "distance", "tiny.sharded") / "shards").exists()  # temp(): merged
    for name in ("unique.fasta", "abundance.tsv", "report.tsv"):
        assert (results(run, "ingest") / name).stat().st_size > 0
    for ext in ("list", "otu", "membership.tsv", "otu_table.tsv", "centroids.fasta"):
        assert (results(run, "cluster") / f"otus.{ext}").stat().st_size > 0
    assert not (results(run, "distance") / "seqdist.txt").exists()  # exports only on request
    greedy = results(run, "cluster", "tiny.greedy")  # annotated: annotate.reference set
    assert sorted(p.name for p in greedy.iterdir()) == [
        "otus.annotation.tsv", "otus.centroids.fasta", "otus.membership.tsv",
        "otus.otu_table.biom", "otus.otu_table.tsv", "otus.sensspec", "otus.shared", "otus.uc"]
    assert sorted(p.name for p in (run / "logs" / "annotate").iterdir()) == ["tiny.greedy"]
    assert (run / "results" / "benchmarks" / "annotate" / "tiny.greedy.tsv").is_file()
    # OptiClust reports the MCC it reached (mothur's .sensspec)
    stats = pd.read_csv(results(run, "cluster", "tiny.opti") / "otus.sensspec", sep="\t")
    assert len(stats) == 1 and 0 < stats["mcc"][0] <= 1


# docs/outputs.md documents every file and column of a run, with placeholders in the paths
OUTPUTS_DOC = REPO / "docs" / "outputs.md"
EXPORT_FILES = ("seqdist.txt", "condensed.npy", "phylip.dist", "mothur.identity.dist",
                "mothur.dist")
# stages whose log is logs/STAGE/D/STAGE.log and benchmark results/benchmarks/STAGE/D.tsv
NAMED_STAGES = (*STAGES, "psse", "annotate", "report")
# files with one column per sample (documented as `SAMPLE`)
PER_SAMPLE = ("results/ingest/D/abundance.tsv", "results/cluster/D/otus.otu_table.tsv",
              "results/qc/D/dereplicated.tsv")


def outputs_reference() -> dict[str, str]:
    """docs/outputs.md's table: each path in a row's first cell -> the whole row."""
    rows = {}
    for line in OUTPUTS_DOC.read_text().splitlines():
        cells = line.split(" | ")
        if line.startswith("| `") and len(cells) > 1:
            rows.update((path, line) for path in re.findall(r"`([^`]+)`", cells[0]))
    return rows


def documented_path(path: str) -> str:
    """A run's file as docs/outputs.md writes it: dataset -> D, stage folder and log name
    -> STAGE, export file name -> EXPORT, shard k of n -> K-of-N, sampleS."""
    parts = path.split("/")
    path = "/".join("D" if part in TINY["datasets"] else
                    "D.tsv" if part.removesuffix(".tsv") in TINY["datasets"] else part
                    for part in parts)
    path = re.sub(r"\d+-of-\d+", "K-of-N", path)
    path = re.sub(r"/sample\d+\.fastq\.gz$", "/sampleS.fastq.gz", path)
    path = re.sub(r"^(logs/qc/D/filter-)[^/]+\.log$", r"\1SAMPLE.log", path)
    path = re.sub(r"^(results/benchmarks/qc_filter/D/)[^/]+\.tsv$", r"\1SAMPLE.tsv", path)
    if path.startswith(("logs/", "results/benchmarks/")):
        path = re.sub("|".join(map(re.escape, EXPORT_FILES)), "EXPORT", path)
        stages = "|".join(NAMED_STAGES)
        path = re.sub(rf"^logs/({stages})/D/\1\.log$", "logs/STAGE/D/STAGE.log", path)
        path = re.sub(rf"^results/benchmarks/({stages})/D\.tsv$",
                      "results/benchmarks/STAGE/D.tsv", path)
    return path


def run_files(run: Path) -> list[str]:
    """Every file the run wrote under resources/, results/ and logs/, relative to it."""
    return sorted(p.relative_to(run).as_posix() for top in ("resources", "results", "logs")
                  for p in (run / top).rglob("*") if p.is_file())


def test_outputs_reference_lists_every_file(run):
    assert documented_path("results/benchmarks/distance_export/tiny.average/seqdist.txt.tsv") \
        == "results/benchmarks/distance_export/D/EXPORT.tsv"
    assert documented_path("logs/distance/tiny.sharded/shard-2-of-3.log") == \
        "logs/distance/D/shard-K-of-N.log"
    documented = outputs_reference()
    made = {documented_path(path) for path in run_files(run)}
    assert not made - set(documented), f"not in docs/outputs.md: {sorted(made - set(documented))}"
    # and the table lists nothing else: the shards are temp(), deleted once merged
    # (no tiny dataset links another's matrix: test_shard_count_change... plans one)
    assert set(documented) - made == {"results/distance/D/shards/K-of-N.npz",
                                      "results/qc/D/filtered/SAMPLE.fastq",
                                      "logs/distance/D/matrix.npy.shared.log"}


def test_outputs_reference_lists_every_column(run):
    documented = outputs_reference()
    checked = set()
    for path in run_files(run):
        pattern = documented_path(path)
        if path.endswith(".tsv"):
            columns = (run / path).read_text().splitlines()[0].split("\t")
            if pattern in PER_SAMPLE:  # the dataset's samples, in config order
                samples = list(TINY["datasets"][path.split("/")[2]]["samples"])
                start = columns.index(samples[0])
                assert columns[start:start + len(samples)] == samples, path
                columns[start:start + len(samples)] = ["SAMPLE"]
            if pattern == "results/report/D/summary.tsv":  # its items, as a column
                items = pd.read_csv(run / path, sep="\t")["item"]
                columns += [re.sub(r"^QC .+: (reads|unique)$", r"QC STEP: \1",
                                   re.sub(r"^time \w+ \(s\)$", "time RULE (s)", item))
                            for item in items]
        elif path.endswith(".npz"):
            with np.load(run / path, allow_pickle=False) as z:
                columns = list(z.files)
        else:
            continue
        missing = [column for column in columns if f"`{column}`" not in documented[pattern]]
        assert not missing, f"{path}: docs/outputs.md's row {pattern} lacks {missing}"
        checked.add(pattern)
    assert checked == {
        "resources/simulated/truth.tsv", "results/ingest/D/abundance.tsv",
        "results/ingest/D/report.tsv", "results/binning/D/bins.tsv",
        "results/binning/D/tiles.tsv", "results/distance/D/edges.npz",
        "results/filter/D/kept.tsv", "results/psse/D/psse.tsv",
        "results/cluster/D/otus.membership.tsv", "results/cluster/D/otus.otu_table.tsv",
        "results/cluster/D/otus.annotation.tsv",
        "results/report/D/summary.tsv", "results/benchmarks/STAGE/D.tsv",
        "results/benchmarks/distance_shard/D/K-of-N.tsv",
        "results/benchmarks/distance_merge/D.tsv",
        "results/benchmarks/distance_matrix/D.tsv",
        "results/benchmarks/distance_export/D/EXPORT.tsv",
        "results/benchmarks/distance_mothur/D.tsv",
        "results/benchmarks/filter_mothur/D.tsv",
        "results/qc/D/funnel.tsv", "results/qc/D/dereplicated.tsv",
        "results/benchmarks/qc_filter/D/SAMPLE.tsv", "results/benchmarks/qc_chimeras/D.tsv",
        "results/benchmarks/qc_select/D.tsv",
        "results/benchmarks/simulate/simulate.tsv", "results/report/D/times.tsv"}


def test_simulated_inputs(run):
    sim = run / "resources" / "simulated"
    for k in (1, 2):
        with gzip.open(sim / f"sample{k}.fastq.gz", "rt") as fh:
            assert sum(1 for _ in fh) == 4 * TINY["simulate"]["reads"]
    assert len(read_fasta_ids(sim / "references.fasta")) == TINY["simulate"]["references"]


def test_ingest_report_accounts_for_every_read(run):
    report = tsv(results(run, "ingest") / "report.tsv").set_index("sample")
    assert list(report.index) == SAMPLES + ["all"]
    dropped = report.filter(like="dropped_").sum(axis=1)
    assert (report["records"] == report["kept"] + dropped).all()
    assert (report["kept"] == report["unique"] + report["duplicate"]).all()
    numeric = report.select_dtypes("number")
    assert (numeric.loc[SAMPLES].sum() == numeric.loc["all"]).all()
    assert (report.loc[SAMPLES, "records"] == TINY["simulate"]["reads"]).all()

    unique_ids = read_fasta_ids(results(run, "ingest") / "unique.fasta")
    abundance = tsv(results(run, "ingest") / "abundance.tsv")
    assert list(abundance["id"]) == unique_ids
    assert len(unique_ids) == report.loc["all", "unique"]
    assert list(abundance.columns) == ["id"] + SAMPLES + ["total"]
    assert (abundance[SAMPLES].sum(axis=1) == abundance["total"]).all()
    assert (abundance[SAMPLES].sum() == report.loc[SAMPLES, "abundance_kept"]).all()


def test_binning_covers_every_unique(run):
    n = len(read_fasta_ids(results(run, "ingest") / "unique.fasta"))
    bins = tsv(results(run, "binning") / "bins.tsv")
    tiles = tsv(results(run, "binning") / "tiles.tsv")
    assert bins["count"].sum() == n
    assert tiles["pairs"].sum() == n * (n - 1) // 2


def test_edge_list_matches_the_uniques(run):
    unique_ids = read_fasta_ids(results(run, "ingest") / "unique.fasta")
    with np.load(results(run, "distance") / "edges.npz", allow_pickle=False) as z:
        assert int(z["n"]) == len(unique_ids)
        assert list(z["ids"]) == unique_ids
        assert float(z["max_distance"]) == DEFAULT_MAX_DISTANCE
        assert float(z["candidate_identity"]) == 0.97
        i, j, d = z["i"], z["j"], z["distance"]
        assert len(i) == len(j) == len(d)
        assert ((i > j) & (j >= 0) & (i < len(unique_ids))).all()
        np.testing.assert_array_equal(d, z["cost"] / z["length"])


def test_full_matrix_exports_agree_with_the_edge_list(run):
    from scipy.spatial.distance import squareform

    unique_ids = read_fasta_ids(results(run, "ingest", "tiny.average") / "unique.fasta")
    n = len(unique_ids)
    lines = (results(run, "distance", "tiny.average") / "seqdist.txt").read_text().splitlines()
    assert int(lines[0]) == n and lines[1:1 + n] == unique_ids
    text = np.array(lines[1 + n:], dtype=float)
    assert len(text) == n * (n - 1) // 2
    square = squareform(np.load(results(run, "distance", "tiny.average") / "condensed.npy"))
    with np.load(results(run, "distance", "tiny.average") / "edges.npz") as z:
        i, j, d, max_distance = z["i"], z["j"], z["distance"], float(z["max_distance"])
    np.testing.assert_array_equal(square[i, j], d)
    np.testing.assert_allclose(text[i * (i - 1) // 2 + j], d, rtol=1e-7)
    assert (results(run, "cluster", "tiny.average") / "otus.tree").is_file()
    # PHYLIP: N, then each sequence's row of distances to the earlier ones
    rows = (results(run, "distance", "tiny.average") / "phylip.dist").read_text().splitlines()
    assert int(rows[0]) == n and [r.split("\t")[0] for r in rows[1:]] == unique_ids
    lower = [[float(x) for x in r.split("\t")[1:]] for r in rows[1:]]
    np.testing.assert_allclose([lower[a][b] for a, b in zip(i, j)], d, rtol=1e-7)
    assert all(len(lower[a]) == a for a in range(n))
    # mothur: the pairs within max_distance, by id
    column = pd.read_csv(results(run, "distance", "tiny.average") / "mothur.dist", sep="\t",
                         header=None, names=["a", "b", "d"], dtype={"a": str, "b": str})
    within = d <= max_distance
    assert 0 < within.sum() == len(column)
    ids = np.asarray(unique_ids)
    assert set(zip(column.a, column.b)) == set(zip(ids[i[within]], ids[j[within]]))


def test_vsearch_filter_runs_no_distance_stage(run):
    kept = pd.read_csv(results(run, "filter", "tiny.vsearch") / "kept.tsv", sep="\t")
    assert "raw" in kept.columns and "distance" not in kept.columns and len(kept) > 0
    # nothing reads a SeqDist distance: a distance setting reruns nothing
    jobs = dry_run_with(run, with_override(TINY, "tiny.vsearch", "distance", max_distance=0.2))
    assert jobs == []
    summary = pd.read_csv(results(run, "report", "tiny.vsearch") / "summary.tsv", sep="\t",
                          dtype=str)
    items = dict(zip(summary["item"], summary["value"]))
    assert items["backend"] == "none (no distance stage)" and "candidates" not in items
    assert items["kept"] == str(len(kept))
    # clustering on SeqDist's distance needs the edge list: then the stage runs
    changed = with_override(TINY, "tiny.vsearch", "cluster", linkage="complete",
                            distance="seqdist")
    rules = {rule for rule, dataset in dry_run_with(run, changed) if dataset == "tiny.vsearch"}
    # ... here tiny's, of the same samples and settings
    assert {"distance_shared", "cluster"} <= rules and not {"distance", "binning"} & rules


def test_vsearch_filter_reads_a_vsearch_edge_list(run):
    """distance.scoring vsearch: the filter keeps the same rows from the edge list as
    aligning every pair itself (tiny.vsearch)."""
    kept = {name: pd.read_csv(results(run, "filter", name) / "kept.tsv", sep="\t")
            for name in ("tiny.vsearch", "tiny.vsearch.edges")}
    pd.testing.assert_frame_equal(kept["tiny.vsearch"], kept["tiny.vsearch.edges"])
    log = (run / "logs" / "filter" / "tiny.vsearch.edges" / "filter.log").read_text()
    assert "in the edge list" in log
    from seqpairs.formats.distances import read_edges

    edges = read_edges(results(run, "distance", "tiny.vsearch.edges") / "edges.npz")
    assert edges.scoring == "vsearch" and len(edges) >= len(kept["tiny.vsearch"])


def test_protein_dataset_runs_every_stage(run):
    """tiny.protein: BLOSUM62 edge list and kept pairs, PSSE with blastp's scores, OTUs
    whose centroids are the proteins."""
    from seqpairs.formats.distances import read_edges

    kept = pd.read_csv(results(run, "filter", "tiny.protein") / "kept.tsv", sep="\t")
    assert "raw" in kept.columns and len(kept) > 0 and (kept["id"] >= 60).all()
    edges = read_edges(results(run, "distance", "tiny.protein") / "edges.npz")
    assert edges.scoring == "blosum62" and len(edges) >= len(kept)
    psse = pd.read_csv(results(run, "psse", "tiny.protein") / "psse.tsv", sep="\t")
    assert len(psse) == len(kept)
    unique = results(run, "ingest", "tiny.protein") / "unique.fasta"
    lines = unique.read_text().splitlines()
    seq_of = {head[1:].split(";")[0]: seq for head, seq in zip(lines[::2], lines[1::2])}
    assert sorted(seq_of.values()) == sorted(set(proteins(seed=8, n=16, max_len=120)))
    # blastp's scores: parasail's Smith-Waterman with BLOSUM62, open 12 (11 + the first
    # column), extend 1
    import parasail

    assert [parasail.sw(seq_of[q], seq_of[t], 12, 1, parasail.blosum62).score
            for q, t in zip(psse["query"], psse["target"])] == psse["score"].tolist()
    centroids = results(run, "cluster", "tiny.protein") / "otus.centroids.fasta"
    assert 0 < centroids.read_text().count(">") < 16


def test_datasets_of_the_same_inputs_share_one_distance_job(run):
    edges = results(run, "distance", "tiny") / "edges.npz"
    for dataset in SHARING:
        linked = results(run, "distance", dataset) / "edges.npz"
        assert linked.read_bytes() == edges.read_bytes(), dataset
        assert not (run / "logs" / "distance" / dataset / "distance.log").exists()
        assert "tiny/edges.npz" in (run / "logs" / "distance" / dataset
                                    / "edges.npz.shared.log").read_text()
    # the report of a sharing dataset shows the job that ran (tiny's)
    times = pd.read_csv(results(run, "report", "tiny.greedy") / "times.tsv", sep="\t")
    tiny = pd.read_csv(results(run, "report", "tiny") / "times.tsv", sep="\t")
    assert times.set_index("rule")["seconds"]["distance"] == \
        tiny.set_index("rule")["seconds"]["distance"]
    # a change of one of them that changes its edge list gives it its own job again
    jobs = dry_run_with(run, with_override(TINY, "tiny.greedy", "distance", max_distance=0.2))
    assert ("distance", "tiny.greedy") in jobs and ("distance", "tiny") not in jobs


def test_sharded_dataset_gives_the_bytes_of_the_unsharded_one(run):
    from seqpairs import parallel
    from seqpairs.formats.tables import read_tsv
    from seqpairs.pairs import tiling

    # the test means something only when every shard has tiles to compute
    tiles = read_tsv(results(run, "binning", "tiny.sharded") / "tiles.tsv", tiling.TILE_COLUMNS)
    assert set(parallel.assign(tiles["cells"], 3)) == {0, 1, 2}
    for name in ("distance/{}/edges.npz", "filter/{}/kept.tsv", "cluster/{}/otus.list",
                 "cluster/{}/otus.otu", "cluster/{}/otus.membership.tsv",
                 "cluster/{}/otus.otu_table.tsv", "cluster/{}/otus.centroids.fasta"):
        sharded = (run / "results" / name.format("tiny.sharded")).read_bytes()
        assert sharded == (run / "results" / name.format("tiny")).read_bytes(), name


def test_each_dataset_has_one_edge_list_rule(run):
    # shards == 1: rule distance; shards > 1: its shards and the merge, never the other
    edges = [f"results/distance/{dataset}/edges.npz" for dataset in ("tiny", "tiny.sharded")]
    jobs = planned_wildcards(snakemake(run, "--dry-run", "--forceall", *edges))
    distance_jobs = sorted((rule, w["dataset"], w.get("shard", ""))
                           for rule, w in jobs if rule.startswith("distance"))
    assert distance_jobs == [("distance", "tiny", ""), ("distance_merge", "tiny.sharded", "")] + [
        ("distance_shard", "tiny.sharded", str(k)) for k in range(3)]
    proc = snakemake(run, "--dry-run", "results/distance/tiny/shards/0-of-3.npz", check=False)
    assert proc.returncode != 0
    assert "MissingRuleException" in proc.stdout + proc.stderr


def fail_shard(bin_dir: Path, shard: str) -> Path:
    """A `python3` in bin_dir (the rules run `python3 -m seqpairs`) that fails for
    `--shard SHARD` and runs this Python otherwise."""
    bin_dir.mkdir()
    script = bin_dir / "python3"
    script.write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" --shard {shard} "*) echo "simulated failure" >&2; exit 1;; esac\n'
        f'exec {shlex.quote(sys.executable)} "$@"\n')
    script.chmod(0o755)
    return bin_dir


def test_rerun_after_a_failed_shard_computes_only_that_shard(run, tmp_path):
    work = tmp_path / "copy"
    shutil.copytree(run, work, symlinks=True)
    shutil.rmtree(work / "results" / "distance" / "tiny.sharded")
    # shard 1 fails; --keep-going lets shards 0 and 2 finish
    proc = snakemake(work, "--cores", "2", "--keep-going", check=False,
                     bin_dir=fail_shard(tmp_path / "bin", "1/3"))
    assert proc.returncode != 0
    assert "Error in rule distance_shard" in proc.stdout + proc.stderr
    shards = work / "results" / "distance" / "tiny.sharded" / "shards"
    assert sorted(p.name for p in shards.iterdir()) == ["0-of-3.npz", "2-of-3.npz"]
    assert not (shards.parent / "edges.npz").exists()
    # the dry run and the run plan the failed shard, the merge and what reads the edge list
    expected = and_report([("all", None), ("cluster", "tiny.sharded"),
                           ("distance_merge", "tiny.sharded"), ("distance_shard", "tiny.sharded"),
                           ("filter", "tiny.sharded")])
    for args in (["--dry-run"], []):
        jobs = planned_wildcards(snakemake(work, "--cores", "2", *args))
        assert sorted((rule, w.get("dataset")) for rule, w in jobs) == expected, args
        assert [w["shard"] for rule, w in jobs if rule == "distance_shard"] == ["1"], args
    assert (shards.parent / "edges.npz").read_bytes() == (
        work / "results" / "distance" / "tiny" / "edges.npz").read_bytes()
    assert not shards.exists()  # temp(): deleted once merged


def test_filter_keeps_pairs_of_known_sequences(run):
    unique_ids = set(read_fasta_ids(results(run, "ingest") / "unique.fasta"))
    kept = pd.read_csv(results(run, "filter") / "kept.tsv", sep="\t",
                       dtype={"query": str, "target": str})
    assert {"query", "target", "id", "caln", "distance"} <= set(kept.columns)
    assert set(kept["query"]) <= unique_ids
    assert set(kept["target"]) <= unique_ids
    assert (kept["id"] >= 97.0 - 1e-9).all()  # percent, like vsearch


@pytest.mark.parametrize("dataset", list(TINY["datasets"]))
def test_clusters_cover_every_unique_and_the_table_every_read(run, dataset):
    unique_ids = read_fasta_ids(results(run, "ingest", dataset) / "unique.fasta")
    abundance = tsv(results(run, "ingest", dataset) / "abundance.tsv")
    membership = tsv(results(run, "cluster", dataset) / "otus.membership.tsv")
    assert sorted(membership["id"]) == sorted(unique_ids)
    table = tsv(results(run, "cluster", dataset) / "otus.otu_table.tsv")
    samples = list(TINY["datasets"][dataset]["samples"])
    assert set(samples + ["total"]) <= set(table.columns)
    assert len(table) == membership["cluster"].nunique()
    for column in samples + ["total"]:
        assert table[column].sum() == abundance[column].sum()
    centroids = read_fasta_ids(results(run, "cluster", dataset) / "otus.centroids.fasta")
    assert sorted(centroids) == sorted(table["centroid"]) == sorted(table["otu"])
    assert set(centroids) == set(membership["centroid"])


# ------------------------------------------------------------------- PSSE


def read_pairs(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype={"query": str, "target": str})


def test_annotation_names_the_reference_of_each_otu(run):
    """tiny.greedy's annotation: one row per OTU in the centroids' order, each centroid's
    best hit the reference its reads were simulated from (truth.tsv), the whole centroid
    aligned (semi-global), identical where the centroid read has no simulated error;
    datasets without a reference get none."""
    otus = run / "results" / "cluster"
    table = pd.read_csv(otus / "tiny.greedy" / "otus.annotation.tsv", sep="\t",
                        dtype={"qseqid": str, "sseqid": str})
    centroids = read_fasta_ids(otus / "tiny.greedy" / "otus.centroids.fasta")
    assert list(table.qseqid) == centroids and len(centroids) >= 2
    truth = pd.read_csv(run / "resources" / "simulated" / "truth.tsv", sep="\t", dtype=str)
    truth = truth.set_index("read_id")
    assert list(table.sseqid) == list(truth.loc[table.qseqid, "reference"])
    exact = (truth.loc[table.qseqid, "n_errors"] == "0").to_numpy()  # error-free centroids
    assert exact.any() and (table.pident[exact] == 100).all()
    assert (table.pident > 80).all()
    assert (table.qstart == 1).all() and (table.qend == table.qlen).all()
    assert not (otus / "tiny" / "otus.annotation.tsv").exists()


@pytest.mark.parametrize("dataset", PSSE_DATASETS)
def test_psse_table_has_a_row_per_kept_pair_and_the_plots(run, dataset):
    from seqpairs.stats.psse import COLUMNS

    kept = read_pairs(results(run, "filter", dataset) / "kept.tsv")
    table = read_pairs(results(run, "psse", dataset) / "psse.tsv")
    assert len(kept) > 10
    assert list(table.columns) == COLUMNS
    assert table[["query", "target"]].equals(kept[["query", "target"]])  # same pairs, same order
    alpha = TINY["datasets"][dataset]["psse"].get("alpha", 0.05)
    np.testing.assert_array_equal(table["significant"], table["pvalue"] <= alpha)
    for name in ("histograms.png", "qq.png"):
        assert (results(run, "psse", dataset) / "plots" / name).read_bytes()[:8] == \
            b"\x89PNG\r\n\x1a\n", name
    log = (run / "logs" / "psse" / dataset / "psse.log").read_text()
    assert f"{len(kept)} pairs" in log


def test_greedy_clusters_of_psse_datasets_use_only_significant_pairs(run, tmp_path):
    from seqpairs.cli import main

    greedy = results(run, "cluster", "tiny.greedy")
    # default alpha: every pair is significant, so the clusters are those without PSSE
    table = read_pairs(results(run, "psse", "tiny.psse") / "psse.tsv")
    assert table["significant"].all()
    for name in ("otus.membership.tsv", "otus.otu_table.tsv", "otus.centroids.fasta"):
        assert (results(run, "cluster", "tiny.psse") / name).read_bytes() == \
            (greedy / name).read_bytes(), name
    # STRICT_ALPHA: some pairs are not significant (else pick another alpha)
    strict = results(run, "psse", "tiny.psse.strict") / "psse.tsv"
    table = read_pairs(strict)
    assert 0 < table["significant"].sum() < len(table)
    log = (run / "logs" / "cluster" / "tiny.psse.strict" / "cluster.log").read_text()
    assert f"({table['significant'].sum()} of {len(table)} pairs significant in" in log
    # the workflow's clusters are greedy clustering of the significant pairs alone ...
    kept = read_pairs(results(run, "filter", "tiny.psse.strict") / "kept.tsv")
    significant = tmp_path / "significant.tsv"
    kept[table["significant"].to_numpy()].to_csv(significant, sep="\t", index=False)
    ingest = results(run, "ingest", "tiny.psse.strict")
    prefix = tmp_path / "otus"
    assert main(["cluster", "--linkage", "greedy", "--identity", "0.97", "--pairs",
                 str(significant), "--fasta", str(ingest / "unique.fasta"), "--abundance",
                 str(ingest / "abundance.tsv"), "-o", str(prefix)]) == 0
    clusters = results(run, "cluster", "tiny.psse.strict")
    for name in ("membership.tsv", "otu_table.tsv", "centroids.fasta"):
        assert (clusters / f"otus.{name}").read_bytes() == \
            Path(f"{prefix}.{name}").read_bytes(), name
    # ... which differ from those of every kept pair
    strict_membership = tsv(clusters / "otus.membership.tsv")
    assert strict_membership["cluster"].nunique() > tsv(greedy / "otus.membership.tsv")[
        "cluster"].nunique()


def test_greedy_command_without_psse_is_the_one_before_the_stage(run):
    # psse disabled: the same command as before PSSE existed (its words), so the same
    # files and bytes
    proc = snakemake(run, "--dry-run", "--printshellcmds", "--force",
                     "results/cluster/tiny.greedy/otus.membership.tsv",
                     "results/cluster/tiny.psse/otus.membership.tsv")
    commands = sorted(" ".join(re.sub(rf"^.*{SEQPAIRS} ", "", line).split())
                      for line in (proc.stdout + proc.stderr).splitlines()
                      if "seqpairs cluster" in line)
    before = ("cluster --linkage greedy --identity 0.97"
              " --pairs results/filter/{0}/kept.tsv --fasta results/ingest/{0}/unique.fasta"
              " --abundance results/ingest/{0}/abundance.tsv -o results/cluster/{0}/otus"
              " > logs/cluster/{0}/cluster.log 2>&1")
    assert commands == [before.format("tiny.greedy"), before.format("tiny.psse").replace(
        "--identity 0.97", "--identity 0.97 --psse results/psse/tiny.psse/psse.tsv")]


def test_psse_runs_as_mpi_ranks_like_distance(run):
    proc = snakemake(run, "results/psse/tiny.psse/psse.tsv", "results/distance/tiny/edges.npz",
                     "--dry-run", "--cores", "2", "--printshellcmds", "--forcerun", "psse", "distance",
                     "--set-resources", "psse:tasks=2", "psse:mpi='srun'", "distance:tasks=3")
    output = proc.stdout + proc.stderr
    assert re.search(rf"srun --cpus-per-task=2 -n 2 {SEQPAIRS} psse -i "
                     r"results/ingest/tiny\.psse/unique\.fasta", output), output
    assert re.search(rf"mpiexec -n 3 {SEQPAIRS} distance -i results/ingest/tiny/unique\.fasta",
                     output), output
    # config psse.tasks is the default of the resource
    proc = dry_run_proc(run, with_override(TINY, "tiny.psse", "psse", tasks=2),
                        "results/psse/tiny.psse/psse.tsv", "--printshellcmds", "--forcerun",
                        "psse")
    assert re.search(rf"mpiexec -n 2 {SEQPAIRS} psse -i", proc.stdout + proc.stderr)
    # tasks is no parameter: unforced, nothing reruns
    assert dry_run_with(run, with_override(TINY, "tiny.psse", "psse", tasks=2)) == []


def test_a_dataset_picks_its_psse_fit(run):
    proc = dry_run_proc(run, with_override(TINY, "tiny.psse", "psse", fit="moments"),
                        "results/psse/tiny.psse/psse.tsv", "--printshellcmds", "--forcerun",
                        "psse")
    output = proc.stdout + proc.stderr
    assert re.search(rf"{SEQPAIRS} psse -i results/ingest/tiny\.psse/unique\.fasta .*"
                     r"--fit moments", output), output


def test_a_protein_dataset_scores_psse_with_its_matrix_gaps_and_pssms(run, tmp_path):
    """psse.protein: the matrix, gaps and PSSM folder reach `seqpairs psse`, whose scores
    are then the plain reference's with each query's PSSM; DNA datasets' commands stay."""
    import reference_local
    from seqpairs.formats.pssm import read_pssm
    from seqpairs.scoring import LocalScheme
    from test_pssm import pssm_text

    work = tmp_path / "copy"
    shutil.copytree(run, work, symlinks=True)
    unique = results(work, "ingest", "tiny.protein") / "unique.fasta"
    lines = unique.read_text().splitlines()
    seqs = {head[1:].split(";")[0]: seq for head, seq in zip(lines[::2], lines[1::2])}
    (work / "pssm").mkdir()
    for k, (name, seq) in enumerate(seqs.items()):  # BLOSUM62's rows, some scores raised
        bump = {(1 + (k * 7 + j) % len(seq), "W"): 5 for j in range(3)}
        (work / "pssm" / f"{name}.pssm").write_text(pssm_text(seq, bump=bump))
    config = with_override(TINY, "tiny.protein", "psse",
                           protein={"gap_open": 10, "gap_extend": 2, "pssm": "pssm"})
    write_config(work, config)
    proc = snakemake(work, "--cores", "2", "--printshellcmds",
                     "results/psse/tiny.protein/psse.tsv")
    assert re.search(r"seqpairs psse .*--alphabet protein .*--gap-open 10 --gap-extend 2 "
                     r"--pssm pssm", proc.stdout + proc.stderr)
    assert [rule for rule, _ in planned_jobs(proc)] == ["psse"]
    scheme = LocalScheme.from_matrix("BLOSUM62", 10, 2)
    table = pd.read_csv(results(work, "psse", "tiny.protein") / "psse.tsv", sep="\t")
    assert len(table) >= 3
    for query, target, score in zip(table["query"], table["target"], table["score"]):
        _, profile = read_pssm(work / "pssm" / f"{query}.pssm", scheme)
        assert score == reference_local.score(scheme.encode(seqs[query], query),
                                              scheme.encode(seqs[target], target), scheme,
                                              profile), (query, target)
    plain = pd.read_csv(results(run, "psse", "tiny.protein") / "psse.tsv", sep="\t")
    assert (plain["score"] != table["score"]).any()


def test_report_shows_the_psse_plots(run, tmp_path):
    import json
    import zipfile

    proc = snakemake(run, "--report", str(tmp_path / "report.zip"))
    assert "Report created" in proc.stdout + proc.stderr
    with zipfile.ZipFile(tmp_path / "report.zip") as z:
        html = z.read("report/report.html").decode()
        images = {name: z.read(name) for name in z.namelist() if name.endswith(".png")}
    # every plot of every PSSE dataset and the report stage's figures, and nothing else
    expected = [(results(run, "psse", dataset) / "plots" / name).read_bytes()
                for dataset in PSSE_DATASETS for name in ("histograms.png", "qq.png")]
    expected += [(results(run, "report", dataset) / name).read_bytes()
                 for dataset in TINY["datasets"]
                 for name in ("lengths.png", "distances.png", "funnel.png", "clusters.png")]
    assert sorted(images.values()) == sorted(expected)
    for dataset in PSSE_DATASETS:
        for name in ("histograms.png", "qq.png"):
            entry = html.split(json.dumps(f"results/psse/{dataset}/plots/{name}") + ": ", 1)[1]
            assert f"PSSE of dataset <tt class=\\\"docutils literal\\\">{dataset}</tt>" in \
                entry[:2000], entry[:2000]
    assert '"PSSE"' in html  # the category
    # the workflow's description (Snakefile `report:`)
    assert "pass a read QC with vsearch" in html


# tests that need a browser fail instead of skipping without one (.ci/run sets it)
REQUIRE_BROWSER = os.environ.get("SEQPAIRS_REQUIRE_BROWSER") == "1"


def headless_chromium(downloads: Path):
    """A selenium driver of headless Chromium (Debian: packages chromium, chromium-driver;
    pip: selenium), downloads into `downloads`; skips (or fails with
    SEQPAIRS_REQUIRE_BROWSER=1) where one is missing or does not start."""
    def unusable(reason: str):
        if REQUIRE_BROWSER:
            pytest.fail(f"SEQPAIRS_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)

    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unusable("selenium is not installed (pip install selenium)")
    binary = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    if binary is None:
        unusable("no chromium on PATH (apt-get install chromium)")
    driver = shutil.which("chromedriver")
    if driver is None:
        unusable("no chromedriver on PATH (apt-get install chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1400,1000"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    try:  # this driver: selenium would otherwise fetch one from the network
        return webdriver.Chrome(service=Service(executable_path=driver), options=options)
    except WebDriverException as exc:
        unusable(f"headless {binary} with {driver} did not start: {exc.msg}")


def test_report_shows_the_run_summary(run, tmp_path):
    """The run summary of a dataset is visible in the HTML report, rendered by a real
    browser: clicked through as a user does (menu: category, dataset, then the view
    button of its "run summary"), the page shows every row of its summary.tsv."""
    browser = headless_chromium(tmp_path / "downloads")  # first: it skips without selenium
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shows
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        snakemake(run, "--report", str(tmp_path / "report.html"))
        dataset = "tiny.qc"  # with the read QC's rows
        table = pd.read_csv(results(run, "report", dataset) / "summary.tsv", sep="\t",
                            dtype=str, keep_default_na=False)
        expected = list(zip(table["item"], table["value"]))
        unique = read_fasta_ids(results(run, "ingest", dataset) / "unique.fasta")
        assert ("unique sequences", str(len(unique))) in expected
        assert any(item == "backend" for item, _ in expected)

        browser.get((tmp_path / "report.html").as_uri())
        wait = WebDriverWait(browser, 30)

        def click(xpath: str, what: str):
            wait.until(shows.element_to_be_clickable((By.XPATH, xpath)),
                       f"the report shows no {what} to click").click()

        click("//a[normalize-space()='Overview']", "category Overview")
        click(f"//a[normalize-space()='{dataset}']", f"dataset {dataset}")
        click(f"//tr[td[1][normalize-space()='{dataset}'] and "
              "td[normalize-space()='run summary']]//a", "view button of the run summary")
        wait.until(shows.frame_to_be_available_and_switch_to_it((By.TAG_NAME, "iframe")),
                   "the run summary shows nothing: no frame with its page")
        rows = wait.until(shows.visibility_of_all_elements_located((By.CSS_SELECTOR, "tbody tr")),
                          "the run summary's page shows no table rows")
        # .text is the rendered, visible text of each cell
        shown = [tuple(cell.text for cell in row.find_elements(By.TAG_NAME, "td"))
                 for row in rows]
        assert shown == expected
    finally:
        browser.quit()


def test_mothur_identity_export_is_the_kept_pairs_at_one_minus_identity(run):
    kept = read_pairs(results(run, "filter", "tiny.greedy") / "kept.tsv")
    dist = pd.read_csv(results(run, "distance", "tiny.greedy") / "mothur.identity.dist",
                       sep="\t", header=None, names=["a", "b", "d"], dtype={"a": str, "b": str})
    assert len(kept) > 0 and len(dist) == len(kept)
    expected = {frozenset((q, t)): (100 - i) / 100
                for q, t, i in zip(kept["query"], kept["target"], kept["id"])}
    got = {frozenset((a, b)): d for a, b, d in zip(dist["a"], dist["b"], dist["d"])}
    assert got.keys() == expected.keys()
    assert all(abs(got[k] - expected[k]) <= 1e-8 * max(expected[k], 1e-3) for k in got)
    assert max(got.values()) <= 1 - 0.97 + 1e-12


def test_report_says_what_ran(run):
    """The summary's backend and GPUs are those the distance jobs logged (tiny.qc's config
    says `auto`); the QC funnel leads the summary of tiny.qc."""
    from seqpairs.backends import gpu

    ran = ("gpu", "1") if gpu.available() else ("cpu", "0")
    for dataset, expected in (("tiny", ("cpu", "0")), ("tiny.sharded", ("cpu", "0")),
                              ("tiny.qc", ran)):
        summary = pd.read_csv(results(run, "report", dataset) / "summary.tsv", sep="\t",
                              dtype=str)
        items = dict(zip(summary["item"], summary["value"]))
        assert (items["backend"], items["GPUs"]) == expected, dataset
    funnel = pd.read_csv(results(run, "qc", "tiny.qc") / "funnel.tsv", sep="\t", dtype=str)
    assert summary["item"].iloc[0] == "QC reads: reads"
    assert items["QC abundance >= 2: unique"] == funnel["uniques"].iloc[-1]


def test_read_qc_filters_errors_chimeras_and_singletons(run):
    """tiny.qc against what its reads are made of: the expected errors computed here, the
    designed chimera, the singletons."""
    reads = noisy_reads(1) + noisy_reads(2)
    passing = [seq for _, seq, quals in reads if expected_errors(quals) <= QC_MAXEE]
    distinct = pd.Series(passing).value_counts()
    funnel = pd.read_csv(results(run, "qc", "tiny.qc") / "funnel.tsv", sep="\t")
    assert funnel["step"].tolist() == ["reads", "expected errors", "dereplicated",
                                       "non-chimeric", "abundance >= 2"]
    assert funnel["reads"].tolist()[:3] == [len(reads), len(passing), len(passing)]
    assert funnel["uniques"][2] == len(distinct)
    assert len(passing) < len(reads) and (distinct == 1).sum() >= 4  # the test filters
    chimera = reads[-1][1]
    assert distinct[chimera] == 2
    unique = (results(run, "ingest", "tiny.qc") / "unique.fasta").read_text().split()
    kept = set(unique[1::2])
    assert kept == set(distinct.index[distinct >= 2]) - {chimera}
    assert funnel["uniques"].tolist()[3:] == [len(distinct) - 1, len(kept)]
    table = pd.read_csv(results(run, "ingest", "tiny.qc") / "abundance.tsv", sep="\t")
    assert table["total"].sum() == funnel["reads"].iloc[-1] and (table["total"] >= 2).all()
    # ingest reads the filtered samples: its report counts what the filter kept
    report = pd.read_csv(results(run, "ingest", "tiny.qc") / "report.tsv", sep="\t")
    assert report.set_index("sample")["records"]["all"] == len(passing)


def test_list_file_has_one_line_per_level(run):
    unique_ids = sorted(read_fasta_ids(results(run, "ingest") / "unique.fasta"))
    lines = (results(run, "cluster") / "otus.list").read_text().splitlines()
    assert lines
    levels = []
    for line in lines:
        level, count, *clusters = line.split()
        levels.append(float(level))
        assert int(count) == len(clusters)
        assert sorted(m for c in clusters for m in c.split(",")) == unique_ids
    np.testing.assert_allclose(levels, 0.01 * np.arange(len(levels)), atol=1e-6)
    assert levels[-1] <= DEFAULT_MAX_DISTANCE + 1e-9  # the edge list is exact up to it


# ------------------------------------------------------------------- reruns


def dry_run_proc(run: Path, config: dict, *args: str) -> subprocess.CompletedProcess:
    """A dry run of `run` with another config (put back afterwards)."""
    original = (run / "config" / "config.yaml").read_text()
    try:
        write_config(run, config)
        return snakemake(run, "--dry-run", "--cores", "2", *args)
    finally:
        (run / "config" / "config.yaml").write_text(original)


def dry_run_with(run: Path, config: dict) -> list[tuple[str, str | None]]:
    return planned_jobs(dry_run_proc(run, config))


def with_override(config: dict, dataset: str, stage: str, **values) -> dict:
    changed = yaml.safe_load(yaml.safe_dump(config))
    changed["datasets"][dataset].setdefault(stage, {}).update(values)
    return changed


def test_unchanged_config_plans_nothing(run):
    assert dry_run_with(run, TINY) == []


def test_filter_param_change_reruns_filter_and_what_reads_it(run):
    # complete linkage does not read the filter's pairs: only the filter reruns
    jobs = dry_run_with(run, with_override(TINY, "tiny", "filter", identity=0.99))
    assert sorted(jobs) == and_report([("all", None), ("filter", "tiny")])
    # greedy clustering reads them, and the mothur_identity export: all three rerun
    jobs = dry_run_with(run, with_override(TINY, "tiny.greedy", "filter", identity=0.99))
    # tiny.greedy's OTUs are annotated: new centroids, a new annotation
    assert sorted(jobs) == and_report([("all", None), ("annotate", "tiny.greedy"),
                                       ("cluster_pairs", "tiny.greedy"),
                                       ("filter", "tiny.greedy"),
                                       ("filter_mothur", "tiny.greedy")])


def test_defaults_change_reaches_every_dataset_and_only_its_stage(run):
    changed = yaml.safe_load(yaml.safe_dump(TINY))
    changed["defaults"]["binning"] = {"bin_width": 10}
    jobs = dry_run_with(run, changed)
    rules = {rule for rule, _ in jobs}
    assert {dataset for _, dataset in jobs if dataset} == set(TINY["datasets"])
    assert "binning" in rules and "ingest" not in rules and "simulate" not in rules


def test_shard_count_change_reruns_the_edge_list_and_what_reads_it(run):
    # two shards, as tiny.sharded.matrix: one computation for both, by the first in config
    # order (tiny.sharded, which then writes the matrix too); the other links its files
    jobs = dry_run_with(run, with_override(TINY, "tiny.sharded", "distance", shards=2))
    assert sorted(d for r, d in jobs if r == "distance_shard") == ["tiny.sharded"] * 2
    assert ("distance_matrix", "tiny.sharded") in jobs
    assert {r for r, d in jobs if d == "tiny.sharded.matrix" and r.startswith("distance")} == {
        "distance_shared", "distance_export"}
    # one shard: the samples and settings of `tiny`, whose edge list it then shares
    jobs = dry_run_with(run, with_override(TINY, "tiny.sharded", "distance", shards=1))
    assert sorted(jobs) == and_report([("all", None), ("cluster", "tiny.sharded"),
                            ("distance_shared", "tiny.sharded"), ("filter", "tiny.sharded")])


def test_backend_switch_reruns_nothing(run):
    # the same results on every backend: no rerun trigger (distance, its exports, filter,
    # psse)
    for dataset in ("tiny", "tiny.sharded", "tiny.psse", "tiny.average"):
        changed = with_override(TINY, dataset, "distance", backend="cpu")
        changed = with_override(changed, dataset, "filter", backend="cpu")
        assert dry_run_with(run, with_override(changed, dataset, "psse", backend="cpu")) == []


def test_memory_budget_and_rank_timeout_rerun_nothing_and_size_the_jobs(run):
    # the edge list is the same bytes for any budget or timeout: no rerun trigger
    for dataset in ("tiny", "tiny.sharded"):
        changed = with_override(TINY, dataset, "distance", memory=512, rank_timeout=60)
        assert dry_run_with(run, changed) == []
    # the jobs ask for them (mem_mib): each rank 1024 MiB plus the budget; the merge one
    # process
    changed = with_override(with_override(TINY, "tiny", "distance", memory=512, tasks=2),
                            "tiny.sharded", "distance", memory=100)
    proc = dry_run_proc(run, changed, "--forceall")
    asked = {}
    for job in re.split(r"^\[.*\]$", proc.stdout + proc.stderr, flags=re.M):  # timestamps
        rule = re.search(r"^\s*(?:local)?rule (\w+):", job, re.M)
        dataset = re.search(r"wildcards: dataset=([\w.]+)", job)
        memory = re.search(r"resources: .*\bmem_mib=(\d+)", job)
        if rule and dataset and rule.group(1).startswith("distance"):
            asked[rule.group(1), dataset.group(1)] = memory and int(memory.group(1))
    assert asked[("distance", "tiny")] == 2 * (1024 + 512)
    assert asked[("distance_shard", "tiny.sharded")] == 1024 + 100
    assert asked[("distance_merge", "tiny.sharded")] == 1024 + 100


def test_psse_switch_and_param_changes_rerun_what_they_change(run):
    # enabled on a greedy dataset: PSSE, and its clusters from the significant pairs
    jobs = dry_run_with(run, with_override(TINY, "tiny.greedy", "psse", enabled=True))
    assert sorted(jobs) == and_report([("all", None), ("annotate", "tiny.greedy"),
                                       ("cluster_pairs", "tiny.greedy"),
                                       ("psse", "tiny.greedy")])
    # hierarchical linkage reads distances, not pairs: only the PSSE outputs are added
    jobs = dry_run_with(run, with_override(TINY, "tiny", "psse", enabled=True))
    assert sorted(jobs) == and_report([("all", None), ("psse", "tiny")])
    # disabled again: the clusters of every kept pair
    jobs = dry_run_with(run, with_override(TINY, "tiny.psse", "psse", enabled=False))
    assert sorted(jobs) == and_report([("all", None), ("cluster_pairs", "tiny.psse")])
    jobs = dry_run_with(run, with_override(TINY, "tiny.psse.strict", "psse", alpha=0.01))
    assert sorted(jobs) == and_report([("all", None), ("cluster_pairs", "tiny.psse.strict"),
                            ("psse", "tiny.psse.strict")])
    assert dry_run_with(run, with_override(TINY, "tiny.psse", "psse", threads=1)) == []


def test_cluster_param_change_reruns_only_cluster(run):
    jobs = dry_run_with(run, with_override(TINY, "tiny", "cluster", cutoff=0.02))
    assert sorted(jobs) == and_report([("all", None), ("cluster", "tiny")])


def test_added_dataset_runs_only_its_jobs_and_paths_with_spaces_work(run, tmp_path):
    work = tmp_path / "copy"
    shutil.copytree(run, work, symlinks=True)
    spaced = work / "raw reads"
    spaced.mkdir()
    for k in (1, 2):
        shutil.copy2(work / "resources" / "simulated" / f"sample{k}.fastq.gz",
                     spaced / f"sample {k}.fastq.gz")
    config = yaml.safe_load(yaml.safe_dump(TINY))
    config["datasets"]["spaced"] = {
        "samples": {"s1": "raw reads/sample 1.fastq.gz", "s2": "raw reads/sample 2.fastq.gz"},
        "cluster": {"linkage": "complete", "distance": "seqdist"},
    }
    write_config(work, config)
    jobs = planned_jobs(snakemake(work, "--dry-run", "--cores", "2"))
    assert {dataset for _, dataset in jobs} == {"spaced", None}
    assert sorted(rule for rule, _ in jobs) == [
        "all", "binning", "cluster", "distance", "filter", "ingest", "report", "report_times"]
    snakemake(work, "--cores", "2")
    # same reads as `tiny`, so the same uniques and clusters
    for name in ("ingest/{}/unique.fasta", "cluster/{}/otus.list"):
        assert (work / "results" / name.format("spaced")).read_text() == (
            work / "results" / name.format("tiny")).read_text()
    report = tsv(work / "results" / "ingest" / "spaced" / "report.tsv")
    assert "raw reads/sample 1.fastq.gz" in set(report["file"])


# ------------------------------------------------------------------- config and lint


def test_default_config_plans_the_whole_example(tmp_path):
    workdir = copy_workflow(tmp_path / "default")
    jobs = planned_jobs(snakemake(workdir, "--dry-run", "--cores", "2"))
    # the example turns the read QC off (vsearch is no pip package: the README's command
    # needs none); a FASTQ dataset without that line gets it (qc.enabled auto)
    assert sorted(rule for rule, _ in jobs) == [
        "all", "binning", "cluster_pairs", "distance", "filter", "ingest", "report",
        "report_times", "simulate"]
    config = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    del config["datasets"]["example"]["qc"]
    write_config(workdir, config)
    jobs = planned_jobs(snakemake(workdir, "--dry-run", "--cores", "2"))
    assert sorted(rule for rule, _ in jobs if rule.startswith(("qc", "ingest"))) == [
        "ingest_qc", "qc_chimeras", "qc_filter", "qc_filter", "qc_filter", "qc_select"]
    assert {dataset for _, dataset in jobs} == {"example", None}


def test_lint_reports_nothing(tmp_path):
    workdir = copy_workflow(tmp_path / "lint")
    proc = snakemake(workdir, "--lint", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Lints for" not in output, output
    assert "Congratulations, your workflow is in a good condition!" in output


@pytest.mark.parametrize(
    "dataset, words",
    [
        ({"samples": {"s1": "a.fq"}, "filter": {"identity": 1.5}},
         ["1.5 is greater than the maximum of 1", "['datasets']['d1']['filter']['identity']"]),
        ({"samples": {"s1": "a.fq"}, "filtre": {}}, ["'filtre' was unexpected"]),
        ({"samples": {"s1": "a.fq"}, "cluster": {"linkage": "complete", "distance": "seqdist", "cutoff": 0.5}},
         ["datasets.d1", "cluster.cutoff", "distance.max_distance"]),
        ({"samples": {"s1": "a.fq"}, "cluster": {"linkage": "average"}},
         ["datasets.d1", "cluster.linkage average", "seqdist distance only"]),
        ({"samples": {"s1": "a.fq"}, "filter": {"identity": 0.9}},
         ["datasets.d1", "filter.identity", "distance.candidate_identity"]),
        ({"samples": {"s1": "a.fq"}, "cluster": {"weighted": True}},
         ["datasets.d1", "cluster.weighted"]),
        ({"samples": {"s1": "a.fq"}, "distance": {"scoring": "blosum62"}},
         ["datasets.d1", "distance.scoring blosum62 scores protein",
          "ingest.alphabet is dna"]),
        ({"samples": {"s1": "a.fa"}, "ingest": {"alphabet": "protein"},
          "distance": {"scoring": "blosum62"}, "filter": {"scoring": "vsearch"}},
         ["datasets.d1", "filter.scoring vsearch scores dna", "ingest.alphabet is protein"]),
        ({"samples": {"s1": "a.fa"}, "ingest": {"alphabet": "protein"}, "qc": {"enabled": True},
          "distance": {"scoring": "blosum62"}, "filter": {"scoring": "blosum62"}},
         ["datasets.d1", "qc.enabled is for DNA reads"]),
    ],
)
def test_invalid_config_stops_snakemake_naming_the_key(tmp_path, dataset, words):
    workdir = copy_workflow(tmp_path / "bad", {"datasets": {"d1": dataset}})
    proc = snakemake(workdir, "--dry-run", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for word in words:
        assert word in output, output
    assert not (workdir / "results").exists()


def test_bad_dataset_name_stops_snakemake(tmp_path):
    workdir = copy_workflow(tmp_path / "bad", {"datasets": {"../up": {"samples": {"s1": "a.fq"}}}})
    proc = snakemake(workdir, "--dry-run", check=False)
    assert proc.returncode != 0
    assert "'../up' does not match" in proc.stdout + proc.stderr
