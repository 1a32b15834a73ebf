"""`seqpairs psse` against FASTA's ssearch36 (Debian package fasta3): the same pairs and
scoring, p-values from shuffles on both sides.

    python benchmarks/compare_ssearch.py [--pairs 50] [--shuffles 1000] [--workdir DIR]

For protein (BLOSUM62, gaps 11/1, Robinson & Robinson residue frequencies) and DNA
(+2/-3, gaps 5/2, uniform bases), `--pairs` pairs of 200-400 letters are drawn: a third
unrelated, the others a sequence and a copy with 30-98% of its letters redrawn and a
few indels, so that p-values span from ~1 down to far below 1e-100. Both tools score
the pair and `--shuffles` shuffles of the target and fit an extreme value distribution:

  seqpairs psse   uncensored ML Gumbel fit, p = the fit's survival at s (stats/gumbel.py)
  ssearch36       -k SHUFFLES -z 12: censored ML fit (top 5% censored) to the scores of
                  shuffled library sequences; with -Z 1 (a library of one sequence) its
                  E() is 1 - exp(-K m n e^(-lambda s)), the p-value without a correction,
                  printed to two digits. DNA: -n -3 (forward strand only, as psse).

Reported per alphabet: equal raw scores, and the agreement of log10 p-values (Pearson
correlation, median signed difference, median and 90th percentile of |difference|)
between the tools and, as the noise floor of shuffle statistics, between two runs of
each tool (psse: --seed 1 and 2; ssearch36 draws its shuffles afresh each run): over all
pairs with p > 0 on both sides, and over those with p > 1e-10 on both sides, where the
decisions are made (far in the tail a lambda off by 2%, well within the error of 1,000
shuffles, moves log10 p by 2% of itself).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROBINSON = dict(A=78.05, C=19.25, D=53.64, E=62.95, F=38.56, G=73.77, H=21.99, I=51.42, K=57.44,
                L=90.19, M=22.43, N=44.87, P=52.03, Q=42.64, R=51.29, S=71.20, T=58.41, V=64.41,
                W=13.30, Y=32.16)
SETUPS = {
    "protein": {
        "letters": "".join(ROBINSON), "weights": np.array(list(ROBINSON.values())),
        "psse": ["--alphabet", "protein", "--matrix", "BLOSUM62", "--gap-open", "11",
                 "--gap-extend", "1"],
        "ssearch": ["-p", "-s", "BL62", "-f", "-11", "-g", "-1"],
    },
    "dna": {
        "letters": "ACGT", "weights": np.ones(4),
        "psse": ["--alphabet", "dna", "--match", "2", "--mismatch", "-3", "--gap-open", "5",
                 "--gap-extend", "2"],
        "ssearch": ["-n", "-3", "-r", "+2/-3", "-f", "-5", "-g", "-2"],
    },
}


def draw_pairs(letters: str, weights: np.ndarray, count: int, seed: int):
    """(query, target) strings: a third unrelated, the rest mutated copies of the query."""
    rng = np.random.default_rng(seed)
    p = weights / weights.sum()

    def random(n):
        return "".join(rng.choice(list(letters), n, p=p))

    pairs = []
    for k in range(count):
        query = random(int(rng.integers(200, 401)))
        if k % 3 == 2:
            pairs.append((query, random(int(rng.integers(200, 401)))))
            continue
        rate = rng.uniform(0.3, 0.98)
        target = [c if rng.random() > rate else random(1) for c in query]
        for _ in range(int(rng.integers(0, 4))):  # indels of 1-5 letters
            at, size = int(rng.integers(0, len(target))), int(rng.integers(1, 6))
            if rng.random() < 0.5:
                target[at:at] = list(random(size))
            else:
                del target[at:at + size]
        pairs.append((query, "".join(target)))
    return pairs


def run_psse(pairs, setup, shuffles: int, seed: int, folder: Path) -> pd.DataFrame:
    fasta, table, out = folder / "seqs.fasta", folder / "pairs.tsv", folder / f"psse{seed}.tsv"
    fasta.write_text("".join(f">q{k}\n{q}\n>t{k}\n{t}\n" for k, (q, t) in enumerate(pairs)))
    table.write_text("query\ttarget\n" + "".join(f"q{k}\tt{k}\n" for k in range(len(pairs))))
    subprocess.run([sys.executable, "-m", "seqpairs", "-q", "psse", "-i", fasta, "--pairs", table,
                    "-o", out, "--shuffles", str(shuffles), "--seed", str(seed),
                    *setup["psse"]], check=True)
    return pd.read_csv(out, sep="\t")


FIELDS = {"score": r"; sw_score:\s*(\S+)", "pvalue": r"; sw_expect:\s*(\S+)",
          "lambda": r"mp_stats:.*Lambda=\s*(\S+);", "K": r"mp_stats:.*K=\s*(\S+)"}


def ssearch_one(args) -> dict:
    """One pair through ssearch36; its score, E(1) = p-value, lambda and K."""
    k, (query, target), options, shuffles, folder = args
    qf, tf = folder / f"ss{k}.q.fa", folder / f"ss{k}.t.fa"
    qf.write_text(f">q{k}\n{query}\n")
    tf.write_text(f">t{k}\n{target}\n")
    out = subprocess.run(["ssearch36", "-q", *options, "-k", str(shuffles), "-z", "12",
                          "-Z", "1", "-T", "1", "-m", "10", str(qf), str(tf)],
                         capture_output=True, text=True, check=True).stdout
    row = {}
    for name, pattern in FIELDS.items():
        found = re.search(pattern, out)
        if not found:
            raise RuntimeError(f"ssearch36 output of pair {k} has no {name}:\n{out}")
        row[name] = float(found.group(1))
    return row


def run_ssearch(pairs, setup, shuffles: int, folder: Path) -> pd.DataFrame:
    jobs = [(k, pair, setup["ssearch"], shuffles, folder) for k, pair in enumerate(pairs)]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        return pd.DataFrame(list(pool.map(ssearch_one, jobs)))


def agreement(a: pd.Series, b: pd.Series, floor: float = 0.0) -> dict:
    """Agreement of two p-value columns on the log10 scale: pairs with p > floor on both
    sides (p = 0 is an underflow)."""
    both = (a > floor) & (b > floor)
    la, lb = np.log10(a[both]), np.log10(b[both])
    diff = la - lb
    return {"pairs": int(both.sum()),
            "log10 p range": f"{min(la.min(), lb.min()):.0f}..{max(la.max(), lb.max()):.1f}",
            "pearson r": round(float(np.corrcoef(la, lb)[0, 1]), 4),
            "median dlog10 p": round(float(diff.median()), 3),
            "median |dlog10 p|": round(float(diff.abs().median()), 3),
            "90% |dlog10 p|": round(float(diff.abs().quantile(0.9)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=50, help="pairs per alphabet (default 50)")
    parser.add_argument("--shuffles", type=int, default=1000, help="(default 1000)")
    parser.add_argument("--workdir", help="keep the inputs and outputs here (default: temporary)")
    args = parser.parse_args()
    if shutil.which("ssearch36") is None:
        sys.exit("ssearch36 not found (apt-get install fasta3)")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="compare_ssearch."))
    rows, detail = [], []
    for seed, (name, setup) in enumerate(SETUPS.items(), start=1):
        folder = workdir / name
        folder.mkdir(parents=True, exist_ok=True)
        pairs = draw_pairs(setup["letters"], setup["weights"], args.pairs, seed)
        ours = [run_psse(pairs, setup, args.shuffles, s, folder) for s in (1, 2)]
        theirs = [run_ssearch(pairs, setup, args.shuffles, folder) for _ in range(2)]
        same_score = int((ours[0]["score"] == theirs[0]["score"]).sum())
        for label, a, b in (("psse vs ssearch36", ours[0], theirs[0]),
                            ("psse seed 1 vs 2", ours[0], ours[1]),
                            ("ssearch36 run 1 vs 2", theirs[0], theirs[1])):
            for floor in (0.0, 1e-10):
                rows.append({"alphabet": name, "comparison": label,
                             "pairs with": f"p > {floor:g}",
                             **agreement(a["pvalue"], b["pvalue"], floor)})
        ratio = ours[0]["lambda"] / theirs[0]["lambda"]
        print(f"{name}: {same_score}/{len(pairs)} equal scores; lambda psse median "
              f"{ours[0]['lambda'].median():.4g}, ssearch36 {theirs[0]['lambda'].median():.4g} "
              f"(ratio median {ratio.median():.3f})")
        detail.append(pd.DataFrame({"alphabet": name, "score": ours[0]["score"],
                                    "ssearch_score": theirs[0]["score"],
                                    "lambda": ours[0]["lambda"],
                                    "ssearch_lambda": theirs[0]["lambda"],
                                    "pvalue": ours[0]["pvalue"],
                                    "ssearch_pvalue": theirs[0]["pvalue"]}))
    pd.concat(detail).to_csv(workdir / "pairs.tsv", sep="\t", index=False)
    print(pd.DataFrame(rows).to_string(index=False))
    print(f"per pair: {workdir / 'pairs.tsv'}")


if __name__ == "__main__":
    main()
