"""`seqpairs psse`: pairwise statistical significance of local alignment scores
(stats/psse.py) for the pairs of a TSV, e.g. the filter's kept.tsv. Under MPI each rank
scores its share of the pairs (by cost m*n) and rank 0 writes the table."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from .. import backends, parallel
from ..formats.atomic import atomic_open
from ..formats.fasta import read_coded
from ..formats.tables import read_pair_list
from ..report import psse_figures
from ..stats import gumbel
from ..stats.psse import COLUMNS, score_and_fit, significance
from .options import (
    MAX_SEED,
    MAX_SHUFFLES,
    fraction,
    integer,
    local_scheme,
    local_scheme_options,
    path_not_stdio,
    threads,
)

log = logging.getLogger("seqpairs.psse")
def run(args) -> None:
    if args.plots:  # before the work, not after
        psse_figures.pyplot()
    scheme = local_scheme(args)
    ids, codes = read_coded(args.input, scheme)
    pairs = read_pair_list(args.pairs, ids, ids, args.input, args.input)
    lengths = np.array([len(c) for c in codes], dtype=np.int64)
    index = np.column_stack([pairs["query_index"], pairs["target_index"]])
    m, n = lengths[index[:, 0]], lengths[index[:, 1]]
    executor = parallel.current()
    backend = backends.select(args.backend, executor.device)
    mine, real, shuffled, mu, beta = score_and_fit(
        backend, scheme, codes, index, args.shuffles, args.seed, args.threads,
        work=executor.pull(m * n), eta=executor.size == 1, fit=args.fit)
    if not args.plots:
        shuffled = shuffled[:, :0]  # only the plots need them on rank 0
    gathered = executor.gather(mine, (real, mu, beta, shuffled))
    if not executor.root:
        return
    real, mu, beta, shuffled = gathered
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
    if args.plots and not psse_figures.write(args.plots, table, shuffled):
        log.warning("--plots: no pair has a Gumbel fit; the plots say so")


def register(sub) -> None:
    p = sub.add_parser("psse", help="pairwise statistical significance of local alignments "
                       "(shuffles + Gumbel fit)")
    p.add_argument("-i", "--input", required=True, help="sequences (FASTA)")
    p.add_argument("--pairs", required=True,
                   help="pairs (TSV with a header naming query and target columns, "
                   "e.g. the filter's kept.tsv)")
    p.add_argument("-o", "--output", required=True, help="scores, fits and p-values (TSV)")
    local_scheme_options(p)
    p.add_argument("--shuffles", type=integer(2, MAX_SHUFFLES), default=1000,
                   help=f"shuffled targets per pair, 2 to {MAX_SHUFFLES:,} (default 1000)")
    p.add_argument("--seed", type=integer(0, MAX_SEED), default=0,
                   help="seed of the shuffles, 0 to 2**64 - 1 (default 0)")
    p.add_argument("--fit", choices=tuple(gumbel.FITS), default="ml",
                   help="how the shuffled scores' Gumbel is fitted: ml (maximum likelihood, "
                   "default) or moments (mean and variance)")
    p.add_argument("--alpha", type=fraction, default=0.05,
                   help="`significant` is pvalue <= alpha (default 0.05)")
    p.add_argument("--backend", choices=backends.NAMES, default="auto")
    p.add_argument("--threads", type=threads, default=None,
                   help="CPU threads (default: all cores; at most NUMBA_NUM_THREADS)")
    p.add_argument("--plots", type=path_not_stdio,
                   help="folder for the score histograms and the QQ plot (PNG)")
    p.set_defaults(func=run)
