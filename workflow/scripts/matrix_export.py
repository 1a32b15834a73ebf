"""Rule distance_export: one export of the full matrix (SeqDist text with ids, the
condensed matrix in SciPy's order, or PHYLIP), written from the distance job's
matrix.npy (every pair's distance in SeqDist order) and the dataset's unique.fasta."""
from pathlib import Path

from seqpairs.formats.distances import read_matrix, write_condensed, write_seqdist_text
from seqpairs.formats.fasta import read_unique_fasta
from seqpairs.formats.interop import write_phylip

ids = read_unique_fasta(snakemake.input.unique).ids
distances = read_matrix(snakemake.input.matrix, len(ids))
write = {
    "seqdist": lambda path: write_seqdist_text(path, distances, ids),
    "condensed": lambda path: write_condensed(path, len(ids), distances),
    "phylip": lambda path: write_phylip(path, distances, ids),
}
write[snakemake.params.format](snakemake.output[0])
Path(snakemake.log[0]).write_text(f"{snakemake.params.format}: {len(ids)} sequences\n")
