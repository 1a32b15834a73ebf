"""Rule distance_mothur: mothur's column distances, the edge list's pairs within its
max_distance (formats/interop.py)."""
from pathlib import Path

from seqpairs.formats.distances import read_edges
from seqpairs.formats.interop import write_mothur_column

edges = read_edges(snakemake.input.edges)
write_mothur_column(snakemake.output[0], edges)
Path(snakemake.log[0]).write_text(f"pairs within max_distance {edges.max_distance}\n")
