"""`seqpairs filter --scoring vsearch` against `vsearch --allpairs_global` on a real dataset.

    python benchmarks/compare_vsearch.py [--fasta FILE] [--identity 0.97 0.9] [--iddef 2]
                                         [--threads 2] [--all-reads] [--workdir DIR]
                                         [--backend cpu gpu] [--vsearch PATH]

Default input: ../shared/data/C005_454.fa.gz beside the checkout (SEQPAIRS_DATA overrides
the folder), its distinct reads in file order, as `seqpairs ingest` would keep them
(--all-reads: every read, duplicates included; FASTQ input is read as its sequences). For
each --identity T both tools get the same FASTA:

  vsearch   --allpairs_global FASTA --id T --iddef K --threads N --userout (the filter's
            columns, `raw` for the score)
  seqpairs  filter -i FASTA --scoring vsearch --identity T --iddef K --threads N
            --backend B, for each --backend B (its pairs counted on B, the kept ones traced
            on B)

Reported: the kept pairs of each (their Jaccard index), over the pairs both keep the share
whose identity equals vsearch's printed one (one decimal) and the share equal in every
column, and the wall time of each command (seqpairs after a warm-up run on a small file,
so that Numba's compiled kernels are cached).
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from math import nan
from pathlib import Path

import pandas as pd
from Bio import SeqIO

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("SEQPAIRS_DATA", ROOT.parent / "shared" / "data"))
FIELDS = ["query", "target", "id", "alnlen", "mism", "opens", "gaps", "ids", "qilo", "qihi",
          "tilo", "tihi", "ql", "tl", "caln", "raw", "id0", "id1", "id2", "id3", "id4"]
PERCENT = ["id", "id0", "id1", "id2", "id3", "id4"]
SIZE = r";size=\d+"  # an abundance annotation (vsearch keeps it in --userout's labels)


def read_fasta(path: Path):
    opener = gzip.open if path.suffix == ".gz" else open
    fastq = path.name.removesuffix(".gz").endswith((".fastq", ".fq"))
    with opener(path, "rt") as fh:
        return [(r.id, str(r.seq).upper()) for r in SeqIO.parse(fh, "fastq" if fastq else "fasta")]


def write_input(records, path: Path, all_reads: bool) -> int:
    if not all_reads:  # the first read of each distinct sequence, in file order
        first = {}
        for name, seq in records:
            first.setdefault(seq, name)
        records = [(name, seq) for seq, name in first.items()]
    path.write_text("".join(f">{name}\n{seq}\n" for name, seq in records))
    return len(records)


def timed(cmd) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def run_vsearch(vsearch, fasta, out, identity, iddef, threads) -> float:
    return timed([vsearch, "--allpairs_global", str(fasta), "--id", str(identity), "--iddef",
                  str(iddef), "--threads", str(threads), "--userout", str(out), "--userfields",
                  "+".join(FIELDS), "--quiet"])


def run_seqpairs(fasta, out, identity, iddef, threads, backend="cpu") -> float:
    return timed([sys.executable, "-m", "seqpairs", "-q", "filter", "-i", str(fasta),
                  "--scoring", "vsearch", "--identity", str(identity), "--iddef", str(iddef),
                  "--threads", str(threads), "--backend", backend, "-o", str(out)])


def compare(ours_path, theirs_path) -> dict:
    ours = pd.read_csv(ours_path, sep="\t", dtype={"query": str, "target": str})
    for f in PERCENT:  # as vsearch prints them
        ours[f] = [f"{x:.1f}" for x in ours[f]]
    ours["caln"] = ours["caln"].where(ours["caln"] != "=", ours["ql"].map("{}M".format))
    theirs = pd.read_csv(theirs_path, sep="\t", header=None, names=FIELDS,
                         dtype={**{f: str for f in PERCENT}, "query": str, "target": str})
    for f in ("query", "target"):  # vsearch keeps ;size=N in its labels, seqpairs' ids do not
        theirs[f] = theirs[f].str.replace(SIZE, "", regex=True)
    kept = set(zip(ours["query"], ours["target"]))
    expected = set(zip(theirs["query"], theirs["target"]))
    shared = ours[FIELDS].merge(theirs, on=["query", "target"], suffixes=("", "_v"))
    columns = [f for f in FIELDS if f not in ("query", "target")]
    same = pd.concat([shared[f].astype(str) == shared[f + "_v"].astype(str) for f in columns],
                     axis=1)
    differing = {f: int((~same[k]).sum()) for k, f in enumerate(columns) if not same[k].all()}
    return {
        "seqpairs_kept": len(kept), "vsearch_kept": len(expected),
        "only_seqpairs": len(kept - expected), "only_vsearch": len(expected - kept),
        "jaccard": len(kept & expected) / max(1, len(kept | expected)),
        "id_equal": float((shared["id"] == shared["id_v"]).mean()) if len(shared) else nan,
        "all_columns_equal": float(same.all(axis=1).mean()) if len(shared) else nan,
        "differing_columns": differing,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fasta", type=Path, default=DATA / "C005_454.fa.gz")
    parser.add_argument("--identity", type=float, nargs="+", default=[0.97, 0.9])
    parser.add_argument("--iddef", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--all-reads", action="store_true",
                        help="every read, not only the distinct sequences")
    parser.add_argument("--workdir", type=Path, help="keep the files here (default: a temp dir)")
    parser.add_argument("--backend", nargs="+", default=["cpu"], choices=("cpu", "gpu"),
                        help="seqpairs' backends to run (default cpu)")
    parser.add_argument("--vsearch", help="the vsearch binary (default: vsearch on PATH)")
    args = parser.parse_args()
    vsearch = args.vsearch or shutil.which("vsearch")
    if vsearch is None:
        sys.exit("compare_vsearch: vsearch is not installed (apt-get install vsearch)")
    run = subprocess.run([vsearch, "--version"], capture_output=True, text=True)
    version = next(line for line in (run.stderr + run.stdout).splitlines() + ["vsearch ?"]
                   if line.startswith("vsearch"))
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        records = read_fasta(args.fasta)
        fasta = work / "input.fasta"
        n = write_input(records, fasta, args.all_reads)
        warm = work / "warm.fasta"
        warm.write_text("".join(f">{k}\n{s}\n" for k, (_, s) in enumerate(records[:20])))
        for backend in args.backend:
            run_seqpairs(warm, work / "warm.tsv", 0.9, args.iddef, args.threads, backend)
        print(f"{args.fasta.name}: {n} {'reads' if args.all_reads else 'distinct reads'}, "
              f"{n * (n - 1) // 2} pairs, --iddef {args.iddef}, {args.threads} threads, "
              f"{os.cpu_count()} cores; {version}")
        for t in args.identity:
            theirs = work / f"vsearch_{t:g}.tsv"
            v_time = run_vsearch(vsearch, fasta, theirs, t, args.iddef, args.threads)
            for backend in args.backend:
                ours = work / f"seqpairs_{backend}_{t:g}.tsv"
                s_time = run_seqpairs(fasta, ours, t, args.iddef, args.threads, backend)
                r = compare(ours, theirs)
                print(f"--id {t:g}, --backend {backend}: kept vsearch {r['vsearch_kept']}, "
                      f"seqpairs {r['seqpairs_kept']} (only vsearch {r['only_vsearch']}, only "
                      f"seqpairs {r['only_seqpairs']}), Jaccard {r['jaccard']:.6f}; shared "
                      f"pairs: id equal {r['id_equal']:.4%}, all columns equal "
                      f"{r['all_columns_equal']:.4%}"
                      + (f" (differing: {r['differing_columns']})" if r["differing_columns"]
                         else "")
                      + f"; wall time vsearch {v_time:.1f} s, seqpairs {s_time:.1f} s",
                      flush=True)


if __name__ == "__main__":
    main()
