"""`seqpairs binning` (alias `bin`): length bins and tiles of the pair space (pairs/tiling.py)."""
from __future__ import annotations

import logging

import pandas as pd

from ..formats.fasta import read_unique_fasta
from ..formats.tables import write_tsv
from ..pairs.tiling import BIN_WIDTH, TILE_COLUMNS, TILE_PAIRS, make_bins, make_tiles
from ..scoring.alphabet import ALPHABETS
from .options import MAX_BIN_WIDTH, MAX_TILE_PAIRS, alphabet_option, integer

log = logging.getLogger("seqpairs.binning")


def run(args) -> None:
    seqs = read_unique_fasta(args.input, ALPHABETS[args.alphabet])
    bins = make_bins(seqs.lengths, args.bin_width)
    tiles = make_tiles(seqs.lengths, bins, args.tile_pairs)
    write_tsv(args.bins, pd.DataFrame(bins))
    write_tsv(args.tiles, pd.DataFrame(tiles))
    log.info("%d sequences of %d to %d bp in %d bins of %d bp; %d pairs in %d tiles, "
             "%.4g cells", seqs.n, seqs.lengths.min(), seqs.lengths.max(), len(bins),
             args.bin_width, int(tiles["pairs"].sum()), len(tiles), float(tiles["cells"].sum()))


def register(sub) -> None:
    p = sub.add_parser("binning", aliases=["bin"],
                       help="length bins and the tiling of the pair space into work units")
    p.add_argument("-i", "--input", required=True, help="unique sequences (FASTA)")
    alphabet_option(p)
    p.add_argument("--bins", required=True, help="bin manifest TSV: bin, min, max, count")
    p.add_argument("--tiles", required=True, help="tiles TSV: " + ", ".join(TILE_COLUMNS))
    p.add_argument("--bin-width", type=integer(1, MAX_BIN_WIDTH), default=BIN_WIDTH,
                   help=f"bin width in bp, 1 to {MAX_BIN_WIDTH} (default {BIN_WIDTH})")
    p.add_argument("--tile-pairs", type=integer(1, MAX_TILE_PAIRS), default=TILE_PAIRS,
                   help=f"about this many pairs per tile, at most {MAX_TILE_PAIRS:,} "
                   f"(default {TILE_PAIRS})")
    p.set_defaults(func=run)
