"""`seqpairs psse`: pairwise statistical significance of local alignment scores (PSSE).

Agrawal and Huang's PSSE: for each pair (query, target) the Smith-Waterman score of the
real pair and of `--shuffles` pairs with the target shuffled (same letters, other order)
come from the local-alignment engine (backends/cpu_local.py, gpu_local.py). A Gumbel
distribution fitted to the shuffled scores by maximum likelihood (gumbel.py) gives the
p-value of the real score. Output, one row per input pair in the input order:

  query, target  the pair, as in --pairs (the filter's kept.tsv works as is)
  score          the real pair's local alignment score
  m, n           query and target lengths
  mu, beta       the fitted Gumbel location and scale (NaN, like every value that depends
                 on them, when every shuffle scored alike)
  lambda, K      Karlin-Altschul form: lambda = 1/beta, K = exp(lambda mu)/(m n)
  pvalue         P(S >= score) = 1 - exp(-K m n e^(-lambda (score - 1/2))) (continuity
                 correction for integer scores, see gumbel.py)
  log10_pvalue   its log10, finite where pvalue underflows to 0 (below ~1e-308: related
                 amplicons of some hundred bp get there)
  evalue         pvalue times the number of pairs tested (rows of --pairs)
  qvalue         Benjamini-Hochberg adjusted p-value over all pairs tested
  significant    pvalue <= --alpha

Under MPI (mpiexec -n N seqpairs psse ...) the pairs are split over the ranks by cost
m*n, longest first (mpi.assign), and rank 0 gathers the fits and writes the table, which
is the same bytes for any number of ranks and either backend: the shuffles of a pair depend
only on --seed and the pair's row in --pairs (its RNG key, seqpairs.shuffle).
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from Bio import SeqIO

from . import gumbel, mpi
from .backends.cpu import MAX_LENGTH
from .errors import UserError
from .local import LocalScheme
from .outputs import atomic_open
from .sequences import split_size
from .tables import read_tsv

log = logging.getLogger("seqpairs.psse")

COLUMNS = ["query", "target", "score", "m", "n", "mu", "beta", "lambda", "K", "pvalue",
           "log10_pvalue", "evalue", "qvalue", "significant"]
# Scoring when none is given: BLASTN's (blastn task) and BLASTP's defaults.
DNA_DEFAULT = {"match": 2, "mismatch": -3, "gap_open": 5, "gap_extend": 2}
PROTEIN_DEFAULT = {"matrix": "BLOSUM62", "gap_open": 11, "gap_extend": 1}


def make_scheme(args) -> LocalScheme:
    """The scoring scheme of the command line, with the alphabet's defaults filled in."""
    dna = args.alphabet == "dna"
    if args.matrix and (args.match is not None or args.mismatch is not None):
        raise UserError("--matrix and --match/--mismatch exclude each other")
    if not dna and (args.match is not None or args.mismatch is not None):
        raise UserError("--match/--mismatch score DNA; for protein give --matrix")
    default = DNA_DEFAULT if dna else PROTEIN_DEFAULT
    gap_open = default["gap_open"] if args.gap_open is None else args.gap_open
    gap_extend = default["gap_extend"] if args.gap_extend is None else args.gap_extend
    if args.matrix or not dna:
        return LocalScheme.matrix(args.matrix or PROTEIN_DEFAULT["matrix"], gap_open,
                                  gap_extend, alphabet=args.alphabet)
    match = default["match"] if args.match is None else args.match
    mismatch = default["mismatch"] if args.mismatch is None else args.mismatch
    return LocalScheme.dna(match, mismatch, gap_open, gap_extend)


def read_fasta(path: str, scheme: LocalScheme):
    """Ids (without ;size=, as the other stages write them) and encoded sequences."""
    ids, codes = {}, []
    try:
        for rec in SeqIO.parse(path, "fasta"):
            name = split_size(rec.id)[0]
            if name in ids:
                raise UserError(f"{path}:{name}: duplicate id")
            seq = str(rec.seq).upper()
            if not seq:
                raise UserError(f"{path}:{name}: empty sequence")
            if len(seq) > MAX_LENGTH:  # checked here, alike on every rank
                raise UserError(f"{path}:{name}: {len(seq)} letters, more than the engine's "
                                f"limit of {MAX_LENGTH}")
            ids[name] = len(codes)
            codes.append(scheme.encode(seq, f"{path}:{name}"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not a FASTA file ({exc})") from None
    if not codes:
        raise UserError(f"{path}: no FASTA records")
    return ids, codes


def read_pairs(path: str, ids: dict[str, int], fasta: str) -> pd.DataFrame:
    """query and target ids of --pairs (a TSV with a header naming them) and their indices."""
    table = read_tsv(path, ("query", "target"), dtype=str, keep_default_na=False)
    pairs = table[["query", "target"]].copy()
    for column in ("query", "target"):
        index = pairs[column].map(ids)
        unknown = np.flatnonzero(index.isna().to_numpy())
        if unknown.size:
            k = int(unknown[0])
            raise UserError(f"{path}:{k + 2}: {column} {pairs[column].iloc[k]!r} "
                            f"is not in {fasta}")
        pairs[f"{column}_index"] = index.to_numpy(dtype=np.int64)
    return pairs


def on_gpu(backend: str) -> bool:
    """Whether --backend means the GPU engine; `auto` is the GPU when CuPy sees one."""
    from .backends import gpu

    if backend == "cpu" or (backend == "auto" and not gpu.available()):
        return False
    if not gpu.available():
        raise UserError("--backend gpu: no CUDA GPU visible to CuPy (is cupy installed?)")
    return True


def score_and_fit(engine, scheme, codes, index: np.ndarray, keys: np.ndarray, shuffles: int,
                  seed: int, threads=None):
    """Real scores, shuffled scores and the Gumbel fit (mu, beta) of the pairs `index`
    (query, target rows into codes); keys[k] is pair k's RNG key, its row in --pairs."""
    queries = [codes[q] for q in index[:, 0]]
    targets = [codes[t] for t in index[:, 1]]
    real, shuffled = engine.psse_scores(scheme, queries, targets, keys, shuffles, seed,
                                        threads=threads)
    mu, beta = gumbel.fit(shuffled)
    return real, shuffled, mu, beta


def significance(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Add lambda, K, p-, E- and q-values and `significant` to a table of scores and fits."""
    table["lambda"], table["K"] = gumbel.karlin(table["mu"], table["beta"], table["m"],
                                                table["n"])
    p = gumbel.pvalue(table["score"], table["mu"], table["beta"])
    table["pvalue"] = p
    table["log10_pvalue"] = gumbel.log10_pvalue(table["score"], table["mu"], table["beta"])
    table["evalue"] = gumbel.evalue(p, len(table))
    table["qvalue"] = gumbel.qvalues(p)
    table["significant"] = p <= alpha  # False where there is no fit (NaN)
    return table


def run(args) -> None:
    w = mpi.world()
    if args.shuffles < 2:
        raise UserError(f"--shuffles must be at least 2, not {args.shuffles}")
    if not 0 <= args.seed < 2**64:
        raise UserError(f"--seed must be between 0 and 2**64 - 1, not {args.seed}")
    if not 0.0 <= args.alpha <= 1.0:
        raise UserError(f"--alpha must be between 0 and 1, not {args.alpha}")
    if args.plots:  # before the work, not after
        from . import psse_plots

        psse_plots.pyplot()
    scheme = make_scheme(args)
    ids, codes = read_fasta(args.input, scheme)
    pairs = read_pairs(args.pairs, ids, args.input)
    lengths = np.array([len(c) for c in codes], dtype=np.int64)
    index = np.column_stack([pairs["query_index"], pairs["target_index"]])
    m, n = lengths[index[:, 0]], lengths[index[:, 1]]
    gpu_engine = on_gpu(args.backend)
    if gpu_engine:
        from .backends import gpu
        from .backends import gpu_local as engine
    else:
        from .backends import cpu_local as engine
    mine = np.arange(len(pairs))
    if w.size > 1:  # this rank's share of the pairs, by cost; the GPU of its node-local rank
        cost = pd.DataFrame({"tile": mine, "cells": m * n})
        mine = mine[mpi.assign(cost, w.size) == w.rank]
        if gpu_engine:
            gpu.use_device(w.local_rank)
    real, shuffled, mu, beta = score_and_fit(engine, scheme, codes, index[mine], mine,
                                             args.shuffles, args.seed, args.threads)
    if not args.plots:
        shuffled = shuffled[:, :0]  # only the plots need them on rank 0
    if w.size > 1:
        gathered = mpi.gather_arrays(w, (mine, real, mu, beta, shuffled))
        if not w.root:
            return
        order = np.argsort(gathered[0])
        real, mu, beta, shuffled = (a[order] for a in gathered[1:])
    table = pd.DataFrame({"query": pairs["query"], "target": pairs["target"],
                          "score": np.asarray(real, dtype=np.int64), "m": m, "n": n,
                          "mu": mu, "beta": beta})
    table = significance(table, args.alpha)[COLUMNS]
    unfitted = int(table["beta"].isna().sum())
    if unfitted:
        log.warning("%d pairs: every shuffle scored the same, no fit (p-value NaN)", unfitted)
    log.info("%d pairs, %d with p <= %g, median lambda %.4g", len(table),
             int(table["significant"].sum()), args.alpha, table["lambda"].median())
    with atomic_open(args.output) as fh:
        table.to_csv(fh, sep="\t", index=False, na_rep="NaN")
    if args.plots and not psse_plots.write(args.plots, table, shuffled):
        log.warning("--plots: no pair has a Gumbel fit; the plots say so")


def register(sub) -> None:
    p = sub.add_parser("psse", help="pairwise statistical significance of local alignments "
                       "(shuffles + Gumbel fit)")
    p.add_argument("-i", "--input", required=True, help="sequences (FASTA)")
    p.add_argument("--pairs", required=True,
                   help="pairs (TSV with a header naming query and target columns, "
                   "e.g. the filter's kept.tsv)")
    p.add_argument("-o", "--output", required=True, help="scores, fits and p-values (TSV)")
    p.add_argument("--alphabet", choices=("dna", "protein"), default="dna",
                   help="sequence alphabet (default dna)")
    p.add_argument("--matrix", help="substitution matrix by name (Biopython's, e.g. BLOSUM62; "
                   "default for protein: BLOSUM62)")
    p.add_argument("--match", type=int, help="DNA match score (default 2)")
    p.add_argument("--mismatch", type=int, help="DNA mismatch score (default -3)")
    p.add_argument("--gap-open", type=int, help="a gap of length k costs gap-open + k gap-extend "
                   "(default: dna 5, protein 11)")
    p.add_argument("--gap-extend", type=int, help="(default: dna 2, protein 1)")
    p.add_argument("--shuffles", type=int, default=1000,
                   help="shuffled targets per pair (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffles (default 0)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="`significant` is pvalue <= alpha (default 0.05)")
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    p.add_argument("--plots", help="folder for the score histograms and the QQ plot (PNG)")
    p.set_defaults(func=run)
