"""File formats: what the stages read and write, each with one error line per problem.

  atomic.py     every output written to a temporary name and renamed when complete
  tables.py     TSV tables in and out
  samples.py    sample files (FASTA/FASTQ, plain or gzip) as ingest reads them
  fasta.py      unique.fasta and other FASTA inputs of the later stages (SequenceSet)
  distances.py  SeqDist text, the edge list (.npz), the condensed matrix (.npy)
  interop.py    files other tools read: mothur column distances, PHYLIP, BIOM
"""
