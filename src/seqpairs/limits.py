"""The bounds of the numbers that size work or output, in one place for the command line
(stages/options.py), the engines and the workflow (config/schema.yaml repeats them;
tests/test_config.py checks that they agree). Importable without NumPy: Snakemake reads
them while it plans."""

# The kernels' longest sequence: two of this length align in fewer than 2**15 columns, so
# every count fits the 16-bit fields of the packed SeqDist counts (backends/common.py).
MAX_LENGTH = 16383
MAX_BIN_WIDTH = MAX_LENGTH  # a bin that wide holds every length the kernels take
MAX_SHARDS = 1024  # jobs of one edge list, each planned by Snakemake (1,024: a 3 s dry run)
MAX_TILE_PAIRS = 4_000_000  # a tile's pairs are built at once
MAX_SHUFFLES = 100_000  # the scale of the Gumbel fit is then known to 0.25%
MAX_SEED = 2**64 - 1  # the shuffles' RNG key is 64 bits
MIN_RESOLUTION = 1e-4  # SeqDist distances are <= 15 (a gap column): <= 150,000 .list lines
MAX_LIST_LINES = 1_000_000  # .list/.otu lines, one per resolution step
MAX_REFERENCES = 100_000  # simulate: references, samples, reads per sample, length
MAX_SAMPLES = 1_000
MAX_READS = 10_000_000
MAX_REFERENCE_LENGTH = MAX_LENGTH
MAX_MEMORY = 1 << 20  # MiB of --memory: 1 TiB, more than a node has
MAX_RANK_TIMEOUT = 604_800  # seconds a rank may be silent: a week
