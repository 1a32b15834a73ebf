"""Rule distance_mothur: mothur's column distances, the edge list's pairs within its
max_distance (formats/interop.py), once the edge list is known to be made from the
dataset's unique.fasta."""
from pathlib import Path

from seqpairs.formats.distances import check_made_from, read_edges
from seqpairs.formats.fasta import read_unique_fasta
from seqpairs.formats.interop import write_mothur_column

edges = read_edges(snakemake.input.edges)
seqs = read_unique_fasta(snakemake.input.unique)
check_made_from(edges, snakemake.input.edges, seqs.ids, seqs.seqs, snakemake.input.unique)
write_mothur_column(snakemake.output[0], edges.ids, [(edges.i, edges.j, edges.distance)],
                    edges.max_distance)
Path(snakemake.log[0]).write_text(f"pairs within max_distance {edges.max_distance}\n")
