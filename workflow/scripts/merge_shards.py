"""Rule distance_merge: the shards' edge lists as one (the same bytes as one job)."""
from pathlib import Path

from seqpairs.formats.distances import merge_edges, read_edges, write_edges

edges = merge_edges([read_edges(path) for path in snakemake.input.shards])
write_edges(snakemake.output.edges, edges)
Path(snakemake.log[0]).write_text(f"{len(snakemake.input.shards)} shards, {len(edges)} pairs\n")
