"""How well each clustering method of seqpairs recovers the true taxa of mock amplicon
communities, against `vsearch --cluster_size --id 0.97`: the adjusted Rand index (ARI)
over reads between the OTUs and the true taxa.

    python benchmarks/bench_otus.py -o otus.tsv [--threads 2] [--community c40 ...]
        [--method complete ...] [--no-sweep] [--no-warmup] [--workdir DIR]

Data: mock_communities.py (COMMUNITIES below: taxa 2-20% apart, 3 samples of ~250 bp
reads with substitution, homopolymer and rare indel errors, log-normal abundances).

seqpairs runs from its CLI (`python -m seqpairs`), stage by stage as a user would
(STAGES): ingest the samples (dereplicate) -> distance (the edge list, and the SeqDist
text for the full-matrix methods; every pair, the default --max-distance) -> filter
(kept pairs at --id 0.97; also its vsearch preset, --scoring vsearch, for the row
greedy_vsearch_scoring) -> cluster, once per entry of METHODS at the CLI's default options, and once per entry of SWEEP and cutoff of SWEEP_CUTOFFS (rows flagged `sweep`).
vsearch (VSEARCH_METHODS): --cluster_size --id 0.97 on seqpairs' unique.fasta (`;size=`),
the same with an exhaustive search (--maxaccepts 0 --maxrejects 0: the centroid of
highest identity, seqpairs greedy's rule), on its own --fastx_uniques of the pooled reads,
and after --fastq_filter --fastq_maxee 1 (its ARI is over the reads the filter keeps;
`reads` says how many). Reference row taxa_at_97: the true taxa clustered at 97%, each
read in its taxon's OTU: the best a 97% OTU method can do here, since sister taxa 2-3%
apart fall into one OTU.

ARI over reads: each read gets the OTU of its unique sequence (seqpairs: the read's exact
sequence in unique.fasta, ingest writing no read -> unique map; vsearch: the .uc of its
dereplication) and is compared with its taxon in truth.tsv (sklearn's
adjusted_rand_score where scikit-learn is installed, else the same formula over a
pandas crosstab). Also: purity (reads in their OTU's majority taxon: 1 = no OTU lumps
taxa) and inverse purity (reads in their taxon's majority OTU: 1 = no taxon is split).

Columns of -o (TSV) and of the printed table: community, kind (method, sweep, vsearch,
reference, or stage for the upstream stages' times), method, param (the cutoff or identity), reads
(scored), uniques, otus, otus2 (OTUs of at least 2 reads), taxa (true taxa present),
taxa97 (groups of the true taxa at 97%, as taxa_at_97 makes them), ari (against the
taxa), ari97 (against the taxa97 groups: how well 97% OTUs are recovered), purity,
inv_purity, time_s (the clustering command(s)), pipeline_s (with the upstream
stages it needs: ingest, distance, filter, filter_vsearch), error (a failed command's last stderr line).

Adding a method: one entry in METHODS (or SWEEP), the cluster arguments with
placeholders for the stages' products ({edges}, {seqdist}, {kept}, ...); a method that
needs another product adds a stage to STAGES (its `provides`).
"""
from __future__ import annotations

import argparse
import gzip
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mock_communities import make_mock  # noqa: E402

SEQPAIRS = [sys.executable, "-m", "seqpairs"]
VSEARCH = os.environ.get("VSEARCH", shutil.which("vsearch") or "/usr/bin/vsearch")

# ----------------------------------------------------------------------------- tables

# name -> mock_communities.generate's arguments (reads: per sample).
COMMUNITIES = {
    "c40": dict(taxa=40, samples=3, reads=1000, seed=40),
    "c70": dict(taxa=70, samples=3, reads=1500, seed=70),
    "c100": dict(taxa=100, samples=3, reads=2000, seed=100),
    # 454-like homopolymer errors (more distinct reads: slower); run with --community c70_454
    "c70_454": dict(taxa=70, samples=3, reads=1500, seed=71, platform="454"),
}
DEFAULT_COMMUNITIES = ("c40", "c70", "c100")


@dataclass(frozen=True)
class Stage:
    provides: tuple[str, ...]  # placeholders its outputs fill
    args: tuple[str, ...]  # seqpairs arguments (placeholders: see `paths`)


# Upstream stages, in order; each method runs after the stages whose products it names.
STAGES = {
    "ingest": Stage(("unique", "abundance"), (
        "ingest", "{inputs}", "-o", "{unique}", "--abundance", "{abundance}",
        "--report", "{dir}/ingest_report.tsv")),
    "distance": Stage(("edges", "seqdist"), (
        "distance", "-i", "{unique}", "--threads", "{threads}", "--edges", "{edges}",
        "--seqdist", "{seqdist}")),
    "filter": Stage(("kept",), (
        "filter", "-i", "{unique}", "--distances", "{edges}", "--id", "0.97",
        "--threads", "{threads}", "-o", "{kept}")),
    # the filter's vsearch preset: vsearch's scoring and identities, every pair aligned
    "filter_vsearch": Stage(("kept_vs",), (
        "filter", "-i", "{unique}", "--scoring", "vsearch", "--id", "0.97",
        "--threads", "{threads}", "-o", "{kept_vs}")),
}

# name -> `seqpairs cluster` arguments, each method at the CLI's defaults. Every command
# also gets --fasta {unique} --abundance {abundance} -o PREFIX.
METHODS = {
    # the identity distance: the filter's kept pairs at the default --id
    "greedy": ("--linkage", "greedy", "--pairs", "{kept}"),
    "opti": ("--linkage", "opti", "--pairs", "{kept}"),
    "complete": ("--linkage", "complete", "--pairs", "{kept}"),
    "greedy_vsearch_scoring": ("--linkage", "greedy", "--pairs", "{kept_vs}"),
    # SeqDist's distance at the default --cutoff
    "complete_seqdist": ("--linkage", "complete", "-i", "{edges}"),
    "average_seqdist": ("--linkage", "average", "-i", "{seqdist}"),
    "average_weighted_seqdist": ("--linkage", "average", "--weighted", "-i", "{seqdist}"),
    "opti_seqdist": ("--linkage", "opti", "-i", "{edges}"),
}

# Hierarchical methods at each cutoff of SWEEP_CUTOFFS (SeqDist is a cost per column,
# about 10 per substitution: 3% of 250 bp is about 0.3).
SWEEP = {
    "complete": ("--linkage", "complete", "-i", "{edges}", "--cutoff", "{cutoff}"),
    "average": ("--linkage", "average", "-i", "{seqdist}", "--cutoff", "{cutoff}"),
}
SWEEP_CUTOFFS = (0.03, 0.08, 0.15, 0.25, 0.30, 0.35, 0.45, 0.60)

# name -> (vsearch commands, how reads map to the clustered labels, stages needed, kind).
# Mapping "unique": the labels are unique.fasta's ids (reads by exact sequence); "derep":
# {out}.derep.uc maps the reads of {reads} (all, or those --fastq_filter keeps) to them;
# "taxon": the labels are the true taxa ({taxa}: the taxa present, ;size= their reads).
# The reference row taxa_at_97 is what a perfect 97% OTU method could reach: the true
# taxa themselves clustered at 97% (sisters 2% apart merge), each read in its taxon's OTU.
VSEARCH_METHODS = {
    "taxa_at_97": ((
        ("--cluster_size", "{taxa}", "--id", "0.97", "--sizein", "--uc", "{out}.uc",
         "--threads", "{threads}"),
    ), "taxon", (), "reference"),
    "vsearch_cluster_size": ((
        ("--cluster_size", "{unique}", "--id", "0.97", "--sizein", "--uc", "{out}.uc",
         "--threads", "{threads}"),
    ), "unique", ("ingest",), "vsearch"),
    # exhaustive search: the centroid of highest identity, as seqpairs' greedy picks
    "vsearch_cluster_size_exh": ((
        ("--cluster_size", "{unique}", "--id", "0.97", "--sizein", "--uc", "{out}.uc",
         "--maxaccepts", "0", "--maxrejects", "0", "--threads", "{threads}"),
    ), "unique", ("ingest",), "vsearch"),
    "vsearch_own_derep": ((
        ("--fastx_uniques", "{reads}", "--sizeout", "--fastaout", "{out}.uniq.fasta",
         "--uc", "{out}.derep.uc"),
        ("--cluster_size", "{out}.uniq.fasta", "--id", "0.97", "--sizein", "--uc",
         "{out}.uc", "--threads", "{threads}"),
    ), "derep", (), "vsearch"),
    "vsearch_maxee1": ((
        ("--fastq_filter", "{reads}", "--fastq_maxee", "1", "--fastaout", "{out}.filt.fasta"),
        ("--fastx_uniques", "{out}.filt.fasta", "--sizeout", "--fastaout", "{out}.uniq.fasta",
         "--uc", "{out}.derep.uc"),
        ("--cluster_size", "{out}.uniq.fasta", "--id", "0.97", "--sizein", "--uc",
         "{out}.uc", "--threads", "{threads}"),
    ), "derep", (), "vsearch"),
}

COLUMNS = ["community", "kind", "method", "param", "reads", "uniques", "otus", "otus2", "taxa",
           "taxa97", "ari", "ari97", "purity", "inv_purity", "time_s", "pipeline_s", "error"]

# ----------------------------------------------------------------------------- scoring


def ari(truth, labels) -> float:
    """Adjusted Rand index of two labelings of the same items."""
    try:
        from sklearn.metrics import adjusted_rand_score
    except ImportError:
        return ari_crosstab(truth, labels)
    return float(adjusted_rand_score(truth, labels))


def ari_crosstab(truth, labels) -> float:
    """Hubert and Arabie's ARI from the contingency table (sklearn's formula)."""
    table = pd.crosstab(pd.Series(np.asarray(truth)), pd.Series(np.asarray(labels))).to_numpy()
    n = table.sum()

    def pairs(x):
        x = np.asarray(x, dtype=np.float64)
        return float((x * (x - 1) / 2).sum())

    index = pairs(table)
    rows, cols, total = pairs(table.sum(1)), pairs(table.sum(0)), n * (n - 1) / 2
    expected = rows * cols / total if total else 0.0
    top = (rows + cols) / 2
    if top == expected:  # both labelings trivial (one cluster, or all singletons)
        return 1.0
    return float((index - expected) / (top - expected))


def purities(truth, labels) -> tuple[float, float]:
    table = pd.crosstab(pd.Series(np.asarray(truth)), pd.Series(np.asarray(labels)))
    n = table.to_numpy().sum()
    return float(table.max(axis=0).sum() / n), float(table.max(axis=1).sum() / n)


def score(truth: pd.DataFrame, otu_of_read: pd.Series) -> dict:
    """Metrics of the reads that have an OTU (truth: read_id, taxon, taxon97)."""
    scored = truth.join(otu_of_read.rename("otu"), on="read_id", how="inner")
    sizes = scored["otu"].value_counts()
    purity, inverse = purities(scored["taxon"], scored["otu"])
    return {"reads": len(scored), "otus": len(sizes), "otus2": int((sizes >= 2).sum()),
            "ari": ari(scored["taxon"], scored["otu"]), "purity": purity,
            "inv_purity": inverse, "ari97": ari(scored["taxon97"], scored["otu"])}


def taxa_at_97(taxa_fasta: Path, work: Path) -> pd.Series:
    """taxon -> its OTU when the true taxa (;size= their reads) are clustered by vsearch
    --cluster_size --id 0.97 (untimed; the second truth, column ari97)."""
    uc = work / "taxa97.uc"
    subprocess.run([VSEARCH, "--cluster_size", str(taxa_fasta), "--id", "0.97", "--sizein",
                    "--uc", str(uc), "--quiet"], check=True)
    return read_uc(uc)


# ----------------------------------------------------------------------------- helpers


def fill(args, paths: dict) -> list[str]:
    """Arguments with their {placeholders} filled; "{inputs}" expands to `-i SAMPLE=FILE`
    per sample."""
    out = []
    for arg in args:
        if arg == "{inputs}":
            out += paths["inputs"]
        else:
            out.append(arg.format(**paths))
    return out


def needs(args) -> set[str]:
    return {m for arg in args for m in re.findall(r"{(\w+)}", arg)}


def stages_for(args) -> list[str]:
    """The upstream stages (in STAGES order) that the arguments' placeholders need."""
    wanted, todo = set(), needs(args)
    for name in reversed(list(STAGES)):  # a stage may need an earlier one's products
        stage = STAGES[name]
        if todo & set(stage.provides):
            wanted.add(name)
            todo |= needs(stage.args)
    return [name for name in STAGES if name in wanted]


def run(cmd, log: Path) -> tuple[float, str | None]:
    """Run a command (its output to log); (wall seconds, None or its last error line)."""
    start = time.perf_counter()
    with open(log, "w") as fh:
        done = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    if done.returncode == 0:
        return seconds, None
    lines = [line.strip() for line in log.read_text().splitlines() if line.strip()]
    return seconds, (lines[-1] if lines else f"exit status {done.returncode}")[:300]


def read_fasta_ids(path: Path) -> dict[str, str]:
    """sequence -> id (the id cut at ';')."""
    out, name, chunks = {}, None, []
    with open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith(">"):
                if name is not None:
                    out["".join(chunks)] = name
                name, chunks = line[1:].split()[0].split(";")[0], []
            else:
                chunks.append(line.strip().upper())
    if name is not None:
        out["".join(chunks)] = name
    return out


def read_fastq(path: Path):
    with gzip.open(path, "rt") as fh:
        while True:
            head = fh.readline()
            if not head:
                return
            seq, _, _ = fh.readline(), fh.readline(), fh.readline()
            yield head[1:].split()[0], seq.strip()


def strip_size(label: str) -> str:
    return label.split(";")[0]


def read_uc(path: Path) -> pd.Series:
    """query -> target label (the centroid, itself for an S record), ;size= removed."""
    uc = pd.read_csv(path, sep="\t", header=None, dtype=str, usecols=[0, 8, 9])
    uc = uc[uc[0].isin(["S", "H"])]
    query = uc[8].map(strip_size)
    target = np.where(uc[0] == "S", query, uc[9].map(strip_size))
    return pd.Series(target, index=query.to_numpy())


# ----------------------------------------------------------------------------- one community


def bench_community(name: str, settings: dict, work: Path, threads: int, methods, sweep: bool,
                    vsearch: bool) -> list[dict]:
    work.mkdir(parents=True, exist_ok=True)
    summary = make_mock(work / "mock", **settings)
    truth = pd.read_csv(work / "mock" / "truth.tsv", sep="\t", dtype=str)
    base = {"community": name, "taxa": truth["taxon"].nunique()}
    paths = {
        "dir": str(work), "threads": str(threads),
        "inputs": [a for s, p in summary["samples"].items() for a in ("-i", f"{s}={p}")],
        "unique": str(work / "unique.fasta"), "abundance": str(work / "abundance.tsv"),
        "edges": str(work / "edges.npz"), "seqdist": str(work / "seqdist.txt"),
        "kept": str(work / "kept.tsv"), "kept_vs": str(work / "kept_vs.tsv"), "reads": str(work / "reads.fastq"),
        "taxa": str(work / "taxa_sized.fasta"),
    }
    sizes = truth["taxon"].value_counts()
    with open(work / "mock" / "taxa.fasta") as fh, open(paths["taxa"], "w") as out:
        for label, seq in zip(fh, fh):
            taxon = label[1:].strip()
            if taxon in sizes.index:
                out.write(f">{taxon};size={sizes[taxon]}\n{seq}")
    truth["taxon97"] = truth["taxon"].map(taxa_at_97(Path(paths["taxa"]), work))
    base["taxa97"] = truth["taxon97"].nunique()
    # vsearch reads the pooled samples (in sample order, as ingest reads them).
    with open(paths["reads"], "wb") as out:
        for path in summary["samples"].values():
            with gzip.open(path) as fh:
                shutil.copyfileobj(fh, out)

    rows, stage_time, stage_error = [], {}, {}
    for stage_name, stage in STAGES.items():
        failed = [s for s in stages_for(stage.args) if stage_error.get(s)]
        if failed:
            stage_error[stage_name] = f"needs {failed[0]}, which failed"
            seconds = math.nan
        else:
            seconds, stage_error[stage_name] = run(
                SEQPAIRS + fill(stage.args, paths), work / f"{stage_name}.log")
        stage_time[stage_name] = seconds
        rows.append({**base, "kind": "stage", "method": stage_name, "time_s": seconds,
                     "pipeline_s": seconds, "error": stage_error[stage_name]})
    read_to_unique = None
    if not stage_error["ingest"]:
        by_seq = read_fasta_ids(Path(paths["unique"]))
        uniques = len(by_seq)
        read_to_unique = pd.Series({rid: by_seq.get(seq) for p in summary["samples"].values()
                                    for rid, seq in read_fastq(p)})
        missing = read_to_unique.isna().sum()
        if missing:
            print(f"warning: {name}: {missing} reads not in unique.fasta", file=sys.stderr)
        for row in rows:
            row["uniques"] = uniques
    else:
        uniques = None

    def upstream(args):
        need = stages_for(args)
        bad = [s for s in need if stage_error.get(s)]
        return need, (f"needs {bad[0]}, which failed" if bad else None)

    def seqpairs_method(kind, method, param, args):
        need, error = upstream(args)
        row = {**base, "kind": kind, "method": method, "param": param, "uniques": uniques}
        if error is None:
            prefix = work / "otus" / f"{method}{'' if param is None else f'_{param}'}"
            prefix.parent.mkdir(exist_ok=True)
            cmd = SEQPAIRS + ["cluster"] + fill(args, paths) + [
                "--fasta", paths["unique"], "--abundance", paths["abundance"], "-o", str(prefix)]
            seconds, error = run(cmd, Path(f"{prefix}.log"))
            row.update(time_s=seconds, pipeline_s=seconds + sum(stage_time[s] for s in need))
            if error is None:
                member = pd.read_csv(f"{prefix}.membership.tsv", sep="\t", dtype=str)
                otu_of_unique = member.set_index("id")["cluster"]
                row.update(score(truth, read_to_unique.map(otu_of_unique).dropna()))
        row["error"] = error
        rows.append(row)
        print_row(row)

    for method in methods:
        seqpairs_method("method", method, None, METHODS[method])
    if sweep:
        for method, args in SWEEP.items():
            for cutoff in SWEEP_CUTOFFS:
                seqpairs_method("sweep", method, f"{cutoff:g}",
                                [a.replace("{cutoff}", f"{cutoff:g}") for a in args])
    if vsearch:
        for method, (commands, mapping, need, kind) in VSEARCH_METHODS.items():
            out = work / "vsearch" / method
            out.parent.mkdir(exist_ok=True)
            row = {**base, "kind": kind, "method": method, "param": "0.97"}
            error = next((f"needs {s}, which failed" for s in need if stage_error.get(s)), None)
            seconds = 0.0
            for k, command in enumerate(commands):
                if error:
                    break
                took, error = run([VSEARCH] + fill(command, {**paths, "out": str(out)}),
                                  Path(f"{out}.{k}.log"))
                seconds += took
            row.update(time_s=seconds, pipeline_s=seconds + sum(stage_time[s] for s in need),
                       error=error)
            if error is None:
                otu = read_uc(Path(f"{out}.uc"))
                if mapping == "taxon":
                    reads = truth.set_index("read_id")["taxon"].map(otu)
                elif mapping == "unique":
                    row["uniques"] = uniques
                    reads = read_to_unique.map(otu)
                else:
                    derep = read_uc(Path(f"{out}.derep.uc"))
                    row["uniques"] = int(derep.nunique())
                    reads = derep.map(otu)
                row.update(score(truth, reads.dropna()))
            rows.append(row)
            print_row(row)
    return rows


# ----------------------------------------------------------------------------- output


def print_row(row: dict) -> None:
    if row.get("error"):
        print(f"  {row['community']:6} {row['method']:22} {row.get('param') or '':6} "
              f"ERROR: {row['error']}", flush=True)
        return
    print(f"  {row['community']:6} {row['method']:22} {row.get('param') or '':6} "
          f"otus {row.get('otus')!s:>5}  ari {row.get('ari', math.nan):.3f}  "
          f"ari97 {row.get('ari97', math.nan):.3f}  "
          f"{row.get('time_s', math.nan):.1f} s", flush=True)


def table(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows).reindex(columns=COLUMNS)
    for col in ("reads", "uniques", "otus", "otus2", "taxa", "taxa97"):
        frame[col] = frame[col].astype("Int64")
    for col in ("ari", "ari97", "purity", "inv_purity"):
        frame[col] = frame[col].round(4)
    for col in ("time_s", "pipeline_s"):
        frame[col] = frame[col].astype(float).round(2)
    return frame


def warm_up(work: Path, threads: int) -> None:
    """One tiny run of every seqpairs command, so that Numba's compilation (cached after
    the first run on a machine) is not timed."""
    bench_community("warmup", dict(taxa=6, samples=2, reads=40, seed=1), work, threads,
                    list(METHODS), sweep=False, vsearch=False)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, help="results table (TSV)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--community", action="append", choices=tuple(COMMUNITIES),
                        help=f"repeat for several (default: {' '.join(DEFAULT_COMMUNITIES)})")
    parser.add_argument("--method", action="append", choices=tuple(METHODS),
                        help="seqpairs methods to run (default: all of METHODS)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the cutoff sweep")
    parser.add_argument("--no-vsearch", action="store_true")
    parser.add_argument("--no-warmup", action="store_true")
    parser.add_argument("--workdir", help="keep every file here (default: a temporary folder)")
    args = parser.parse_args(argv)

    communities = args.community or list(DEFAULT_COMMUNITIES)
    methods = args.method or list(METHODS)
    keep = args.workdir is not None
    work = Path(args.workdir) if keep else Path(tempfile.mkdtemp(prefix="bench_otus."))
    start = time.perf_counter()
    try:
        if not args.no_warmup:
            print("warm-up (not timed) ...", flush=True)
            with open(os.devnull, "w") as devnull:
                stdout, sys.stdout = sys.stdout, devnull
                try:
                    warm_up(work / "warmup", args.threads)
                finally:
                    sys.stdout = stdout
        rows = []
        for name in communities:
            print(f"{name}: {COMMUNITIES[name]}", flush=True)
            rows += bench_community(name, COMMUNITIES[name], work / name, args.threads,
                                    methods, not args.no_sweep, not args.no_vsearch)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    frame = table(rows)
    frame.to_csv(args.output, sep="\t", index=False, lineterminator="\n", na_rep="")
    with pd.option_context("display.width", 250, "display.max_rows", None,
                           "display.max_columns", None, "display.max_colwidth", 60):
        print(frame.drop(columns="error" if frame["error"].isna().all() else []).to_string(
            index=False, na_rep=""))
    print(f"total {time.perf_counter() - start:.0f} s; table -> {args.output}")


if __name__ == "__main__":
    main()
