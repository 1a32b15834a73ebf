"""Rule distance_merge: the shards' edge lists as one (the same bytes as one job), within
config distance.memory MiB, its rows written by the rule's threads; a set that is not
shards 0..K-1 of one run is refused (formats.edge_writer.merge_edge_lists)."""
from pathlib import Path

from seqpairs.formats.edge_writer import merge_edge_lists

shards = list(snakemake.input.shards)
count = merge_edge_lists(shards, snakemake.output.edges, snakemake.params.memory << 20,
                         snakemake.threads)
Path(snakemake.log[0]).write_text(f"{len(shards)} shards, {count} pairs\n")
