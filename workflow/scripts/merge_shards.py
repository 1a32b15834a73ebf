"""Rule distance_merge: the shards' edge lists as one (the same bytes as one job); a set
that is not shards 0..K-1 of one run is refused (formats.distances.merge_edges)."""
from pathlib import Path

from seqpairs.formats.distances import merge_edges, read_edges, write_edges

shards = list(snakemake.input.shards)
edges = merge_edges([read_edges(path) for path in shards], shards)
write_edges(snakemake.output.edges, edges)
Path(snakemake.log[0]).write_text(f"{len(shards)} shards, {len(edges)} pairs\n")
