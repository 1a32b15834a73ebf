"""Rule filter_mothur: mothur's column distances on the identity distance, 1 - identity
(filter.iddef) of the filter's kept pairs (all at least filter.identity), in SeqDist pair
order; mothur's cluster with cutoff = 1 - filter.identity reads every pair it needs."""
from pathlib import Path

import numpy as np

from seqpairs.cluster.inputs import read_close_pairs
from seqpairs.formats.distances import pair_index
from seqpairs.formats.fasta import read_unique_fasta
from seqpairs.formats.interop import write_mothur_column

seqs = read_unique_fasta(snakemake.input.unique)
identity = snakemake.params.identity
query, target, ident = read_close_pairs(snakemake.input.kept, seqs.ids, identity)
i, j = np.maximum(query, target), np.minimum(query, target)
order = np.argsort(pair_index(i, j), kind="stable")
distance = (100 - ident[order]) / 100
write_mothur_column(snakemake.output[0], seqs.ids, [(i[order], j[order], distance)], 1.0)
Path(snakemake.log[0]).write_text(
    f"{len(order)} pairs at identity >= {identity} (distance 1 - identity)\n")
