"""`seqpairs psse`: pairwise statistical significance of local alignment scores
(stats/psse.py) for the pairs of a TSV (e.g. the filter's kept.tsv) over one FASTA, or for
queries against subjects (every pair, or a TSV's), optionally with the queries' PSSMs.
Under MPI each rank scores its share of the pairs (by cost m*n) and rank 0 writes the
table."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from .. import backends, parallel
from ..errors import UserError
from ..formats.fasta import read_coded
from ..formats.pssm import read_pssms
from ..formats.tables import read_pair_list, write_tsv
from ..report import psse_figures
from ..stats import gumbel
from ..stats.psse import COLUMNS, by_target, score_and_fit, significance
from ..stats.shuffle import subject_key
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


def _pairs(args, scheme):
    """(query ids, query codes, subject ids, subject codes, pairs table with query,
    target, query_index, target_index) of the command line's inputs."""
    if args.input and not (args.queries or args.subjects):
        if not args.pairs:
            raise UserError("psse: --input needs --pairs (or give --queries and --subjects)")
        ids, codes = read_coded(args.input, scheme)
        return ids, codes, ids, codes, read_pair_list(args.pairs, ids, ids, args.input,
                                                      args.input)
    if args.input or not (args.queries and args.subjects):
        raise UserError("psse: give --input with --pairs, or --queries and --subjects")
    query_ids, queries = read_coded(args.queries, scheme)
    subject_ids, subjects = read_coded(args.subjects, scheme)
    if args.pairs:
        pairs = read_pair_list(args.pairs, query_ids, subject_ids, args.queries, args.subjects)
    else:  # every query against every subject, queries outer
        q, t = np.divmod(np.arange(len(queries) * len(subjects), dtype=np.int64),
                         len(subjects))
        pairs = pd.DataFrame({"query": np.array(list(query_ids), dtype=object)[q],
                              "target": np.array(list(subject_ids), dtype=object)[t],
                              "query_index": q, "target_index": t})
    return query_ids, queries, subject_ids, subjects, pairs


def run(args) -> None:
    log.debug("psse: started")
    if args.plots:  # before the work, not after
        psse_figures.pyplot()
    scheme = local_scheme(args)
    query_ids, queries, subject_ids, subjects, pairs = _pairs(args, scheme)
    profiles = None
    if args.pssm:
        letters = np.frombuffer(scheme.alphabet.encode("ascii"), dtype=np.uint8)
        profiles = read_pssms(args.pssm, list(query_ids),
                              [letters[codes].tobytes().decode() for codes in queries], scheme)
    index = np.column_stack([pairs["query_index"], pairs["target_index"]]).astype(np.int64)
    keys = np.zeros(len(subjects), dtype=np.int64)  # the pairs' targets' (a hash each)
    names, targets = list(subject_ids), np.unique(index[:, 1])
    keys[targets] = [subject_key(names[k]) for k in targets.tolist()]
    m = np.array([len(c) for c in queries], dtype=np.int64)[index[:, 0]]
    n = np.array([len(c) for c in subjects], dtype=np.int64)[index[:, 1]]
    # at debug level (-v), the steps around the scoring (which ranks do not share out)
    log.debug("psse: %d pairs of %d and %d sequences read", len(index), len(queries),
              len(subjects))
    executor = parallel.current()
    backend = backends.select(args.backend, executor.device)
    if executor.size > 1 and len(index):
        # compiled before the pull: a rank's first list measures its speed, and a rate
        # that is mostly a compile makes a rank that starts late retire at once
        backend.local_scores(scheme, queries, subjects, index[:1], keys, 1, args.seed,
                             args.threads, profiles)
    mine, real, shuffled, mu, beta = score_and_fit(
        backend, scheme, queries, subjects, index, keys, args.shuffles, args.seed,
        args.threads, work=by_target(index, m * n, executor.pull), eta=executor.size == 1,
        fit=args.fit, profiles=profiles,
        keep_shuffled=bool(args.plots))  # only the plots need them
    gathered = executor.gather(mine, (real, mu, beta, shuffled))
    if not executor.root:
        return
    log.debug("psse: every rank's scores gathered")
    real, mu, beta, shuffled = gathered
    table = pd.DataFrame({"query": pairs["query"].to_numpy(), "target": pairs["target"].to_numpy(),
                          "score": np.asarray(real, dtype=np.int64), "m": m, "n": n,
                          "mu": mu, "beta": beta})
    table = significance(table, args.alpha)[COLUMNS]
    unfitted = int(table["beta"].isna().sum())
    if unfitted:
        log.warning("%d pairs: every shuffle scored the same, no fit (p-value NaN)", unfitted)
    log.info("%d pairs, %d with p <= %g, median lambda %.4g", len(table),
             int(table["significant"].sum()), args.alpha, table["lambda"].median())
    write_tsv(args.output, table, na_rep="NaN")
    log.debug("psse: table written")
    if args.plots and not psse_figures.write(args.plots, table, shuffled):
        log.warning("--plots: no pair has a Gumbel fit; the plots say so")


def register(sub) -> None:
    p = sub.add_parser("psse", help="pairwise statistical significance of local alignments "
                       "(shuffles + Gumbel fit)")
    p.add_argument("-i", "--input", help="sequences (FASTA) of both sides of --pairs")
    p.add_argument("--queries", help="query sequences (FASTA); with --subjects")
    p.add_argument("--subjects", help="subject sequences (FASTA), shuffled: every query "
                   "against every subject, or the pairs of --pairs")
    p.add_argument("--pairs",
                   help="pairs (TSV with a header naming query and target columns, "
                   "e.g. the filter's kept.tsv); needed with --input")
    p.add_argument("--pssm", type=path_not_stdio,
                   help="folder of the queries' position-specific scoring matrices, "
                   "<query id>.pssm each (psiblast -out_ascii_pssm)")
    p.add_argument("-o", "--output", required=True, help="scores, fits and p-values (TSV)")
    local_scheme_options(p)
    p.add_argument("--shuffles", type=integer(2, MAX_SHUFFLES), default=1000,
                   help=f"shuffles of each subject, 2 to {MAX_SHUFFLES:,} (default 1000); "
                   "one set serves all its queries")
    p.add_argument("--seed", type=integer(0, MAX_SEED), default=0,
                   help="seed of the shuffles, 0 to 2**64 - 1 (default 0); with the subject's "
                   "id it decides them, whatever the order of the pairs")
    p.add_argument("--fit", choices=tuple(gumbel.FITS), default="ml",
                   help="how the shuffled scores' Gumbel is fitted: ml (maximum likelihood, "
                   "default), moments (mean and variance) or censored (maximum likelihood "
                   "of the upper half, the lower half counted as below the median)")
    p.add_argument("--alpha", type=fraction, default=0.05,
                   help="`significant` is pvalue <= alpha (default 0.05)")
    p.add_argument("--backend", choices=backends.NAMES, default="auto")
    p.add_argument("--threads", type=threads, default=None,
                   help="CPU threads (default: all cores; at most NUMBA_NUM_THREADS)")
    p.add_argument("--plots", type=path_not_stdio,
                   help="folder for the score histograms and the QQ plot (PNG)")
    p.set_defaults(func=run)
