# Shared by the rules: seqpairs from this workflow's own source tree, the checks of the
# config (the schema's and those it cannot express), the effective parameters of each
# dataset, which rules and files each dataset gets, the helpers and input functions of the
# rules, the MPI launcher of the GPU rules, and the targets. The rule files hold rules
# only, each with its options inline (stage_options).

import copy
import functools
import json
import math
import os
import re
import shutil
import sys
from pathlib import Path

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.settings.types import DeploymentMethod
from snakemake.sourcecache import LocalSourceFile
from snakemake.utils import validate

# The workflow's jobs (`python3 -m seqpairs ...`, the scripts) and Snakemake, which asks
# the clustering and scoring registries while it plans, run seqpairs from this checkout's
# src/, installed or not: a conda env needs only the third-party packages of envs/*.yaml.
# Jobs inherit PYTHONPATH from Snakemake (local jobs, conda envs, MPI ranks, SLURM jobs,
# which read this file again).
if not isinstance(workflow.current_basedir, LocalSourceFile):
    raise WorkflowError(
        "seqpairs runs its jobs from its own source tree: use the workflow "
        "(or a module of it) from a local checkout"
    )
ROOT = Path(workflow.current_basedir.path).resolve().parents[1]
SRC = str(ROOT / "src")
if SRC not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ.update(
        PYTHONPATH=os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))
    )
sys.path.insert(0, SRC)
from seqpairs.cluster import METHODS  # noqa: E402
from seqpairs.scoring import REGISTRY, filter_reads_edge_list  # noqa: E402
from seqpairs.limits import MAX_LIST_LINES  # noqa: E402

SIMULATED_DIR = "resources/simulated"
SCHEMA_FILE = ROOT / "config" / "schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_FILE.read_text())
# More keys and list items than any configuration needs; YAML aliases count at each use.
MAX_CONFIG_VALUES = 1_000_000


# --- the config: the schema's checks and those it cannot express ----------------------


def check_config_size(config):
    """Refuse a config of more than MAX_CONFIG_VALUES values, before validation: YAML
    aliases of lists nested in each other (an "alias bomb") load at once as shared
    references, but they expand to billions of values when validation prints the part it
    refuses. (Aliases of mappings never get here: Snakemake copies mappings key by key as
    it reads the config files, snakemake.utils.update_config, which does not end.)"""
    stack, count = [config], 0
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_CONFIG_VALUES:
            raise WorkflowError(
                f"config: more than {MAX_CONFIG_VALUES:,} keys and list items (each use "
                "of a YAML alias counts its values again); is it an alias bomb?"
            )
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def stage_sections(config):
    """(key path, values, schema) of simulate, each section of `defaults` and each stage
    section of each dataset."""
    yield "simulate", config["simulate"], SCHEMA["properties"]["simulate"]
    for name, values in config["defaults"].items():
        yield f"defaults.{name}", values, SCHEMA["$defs"][name]
    for dataset, sections in config["datasets"].items():
        for name, values in sections.items():
            if name != "samples":
                yield f"datasets.{dataset}.{name}", values, SCHEMA["$defs"][name]


def check_numbers(config):
    """What the schema lets through: NaN and infinities (YAML's .nan passes every minimum
    and maximum, .inf every minimum) and whole numbers written as floats (2.0 is an
    integer to JSON schema, not to the option it becomes); raise naming the key."""
    for path, values, schema in stage_sections(config):
        for key, value in values.items():
            if not isinstance(value, float):
                continue
            if not math.isfinite(value):
                raise WorkflowError(
                    f"config: {path}.{key}: {value} is not a finite number"
                )
            types = schema["properties"][key]["type"]
            if "number" not in ([types] if isinstance(types, str) else types):
                raise WorkflowError(
                    f"config: {path}.{key}: {value!r} is not a whole number (write it "
                    "without a decimal point)"
                )


def deep_merge(base, override):
    """A copy of `base` with `override` merged in, key by key, recursively.

    Dicts merge; any other value in `override` (lists, scalars, null) replaces the
    value in `base`.
    """
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def effective_params(dataset):
    """Stage name -> parameters for `dataset`: `defaults` deep-merged with its overrides."""
    overrides = config["datasets"][dataset]
    return {
        stage: deep_merge(defaults, overrides.get(stage, {}))
        for stage, defaults in config["defaults"].items()
    }


def reads_edge_list(params):
    """Whether the filter prunes with the distance stage's edge list (the scoring
    registry says: only under the same scheme)."""
    return filter_reads_edge_list(
        params["filter"]["scoring"], params["distance"]["scoring"]
    )


def cluster_reads(params):
    """What the dataset's clustering reads (cluster.METHODS): "pairs" (the filter's), "edge
    list" or "full matrix" (the distance stage's); None for a method and distance that do
    not go together (check_dataset says so)."""
    cluster = params["cluster"]
    return METHODS[cluster["linkage"]].reads.get(cluster["distance"])


def check_dataset(dataset, params):
    """Cross-key checks the JSON schema cannot express; raise naming the keys."""
    cluster, distance, filter_ = params["cluster"], params["distance"], params["filter"]
    if reads_edge_list(params) and filter_["identity"] < distance["candidate_identity"]:
        raise WorkflowError(
            f"config: datasets.{dataset}: filter.identity ({filter_['identity']}) is below "
            f"distance.candidate_identity ({distance['candidate_identity']}); the edge list "
            "would miss pairs the filter must see. Lower distance.candidate_identity to at "
            "most filter.identity."
        )
    if reads_edge_list(params) and filter_["iddef"] != distance["candidate_iddef"]:
        raise WorkflowError(
            f"config: datasets.{dataset}: filter.iddef ({filter_['iddef']}) differs from "
            f"distance.candidate_iddef ({distance['candidate_iddef']}); set them equal."
        )
    alphabet = params["ingest"]["alphabet"]
    for stage in ("distance", "filter"):
        name = params[stage]["scoring"]
        if REGISTRY[name].letters != alphabet:
            raise WorkflowError(
                f"config: datasets.{dataset}: {stage}.scoring {name} scores "
                f"{REGISTRY[name].letters}, but ingest.alphabet is {alphabet}; choose a "
                f"scheme of {alphabet} (config/schema.yaml lists them)."
            )
    if alphabet != "dna" and params["qc"]["enabled"] is True:
        raise WorkflowError(
            f"config: datasets.{dataset}: qc.enabled is for DNA reads (vsearch's read QC), "
            f"but ingest.alphabet is {alphabet}; set qc.enabled to false or auto."
        )
    method = METHODS[cluster["linkage"]]
    if cluster["distance"] not in method.reads:
        raise WorkflowError(
            f"config: datasets.{dataset}: cluster.linkage {cluster['linkage']} clusters on "
            f"the {' or '.join(method.reads)} distance only (cluster.distance is "
            f"{cluster['distance']})."
        )
    if cluster["weighted"] and "weighted" not in method.options:
        takes = [name for name, m in METHODS.items() if "weighted" in m.options]
        raise WorkflowError(
            f"config: datasets.{dataset}: cluster.weighted is for cluster.linkage "
            f"{' or '.join(takes)} only (linkage is {cluster['linkage']})."
        )
    if (
        cluster_reads(params) == "edge list"
        and cluster["cutoff"] > distance["max_distance"]
    ):
        raise WorkflowError(
            f"config: datasets.{dataset}: cluster.cutoff ({cluster['cutoff']}) is larger "
            f"than distance.max_distance ({distance['max_distance']}); pairs beyond "
            "max_distance are not in the edge list, so clusters at that cutoff would be "
            "wrong. Raise distance.max_distance or lower cluster.cutoff."
        )
    levels = distance["max_distance"] / cluster["resolution"]
    if cluster_reads(params) == "edge list" and levels > MAX_LIST_LINES:
        raise WorkflowError(
            f"config: datasets.{dataset}: distance.max_distance "
            f"({distance['max_distance']}) / cluster.resolution "
            f"({cluster['resolution']}) is more than {MAX_LIST_LINES:,} levels, each a "
            "line of otus.list and otus.otu. Raise cluster.resolution."
        )


check_config_size(config)
validate(config, str(SCHEMA_FILE))
check_numbers(config)
PARAMS = {dataset: effective_params(dataset) for dataset in config["datasets"]}
for _dataset, _params in PARAMS.items():
    check_dataset(_dataset, _params)


# distance.exports: the file of each. The full matrices are written from the distance
# job's matrix.npy (rule distance_export, its format the export's name); mothur's pairs
# are the edge list's within max_distance (rule distance_mothur, a script).
EXPORTS = {
    "seqdist": "seqdist.txt",
    "condensed": "condensed.npy",
    "phylip": "phylip.dist",
    "mothur": "mothur.dist",
    "mothur_identity": "mothur.identity.dist",
}
FULL_MATRIX_EXPORTS = {
    name: EXPORTS[name] for name in ("seqdist", "condensed", "phylip")
}
# The distance file of each kind of clustering input (cluster.METHODS: reads)
DISTANCE_INPUT = {"edge list": "edges.npz", "full matrix": EXPORTS["seqdist"]}


def needs_matrix(params):
    """Whether a dataset needs every pair's distance: a full-matrix export or a
    clustering method that reads the full matrix."""
    return any(e in FULL_MATRIX_EXPORTS for e in params["distance"]["exports"]) or (
        cluster_reads(params) == "full matrix"
    )


# read QC (qc.enabled; auto: where every sample has qualities)
FASTQ_SUFFIXES = (".fastq", ".fq", ".fastq.gz", ".fq.gz")


def is_fastq(path):
    return path.lower().endswith(FASTQ_SUFFIXES)


def qc_enabled(dataset, params):
    enabled = params["qc"]["enabled"]
    if enabled == "auto":  # DNA reads with qualities
        return params["ingest"]["alphabet"] == "dna" and all(
            map(is_fastq, config["datasets"][dataset]["samples"].values())
        )
    return enabled


QC = [d for d, p in PARAMS.items() if qc_enabled(d, p)]
WITHOUT_QC = [d for d in PARAMS if d not in QC]
# The read QC's rules run vsearch (envs/vsearch.yaml under --sdm conda): said at once where
# it is missing, not as "command not found" in a job's log. A warning, not an error: on a
# cluster the jobs' nodes may have it where the login node does not.
if (
    QC
    and shutil.which("vsearch") is None
    and DeploymentMethod.CONDA not in workflow.deployment_settings.deployment_method
):
    logger.warning(
        f"seqpairs: the read QC of {', '.join(QC)} runs vsearch, which is not on PATH: "
        "install it (apt-get install vsearch, or conda install -c bioconda vsearch), run "
        "with --sdm conda, or set qc: {enabled: false}"
    )


def needs_edges(params):
    """Whether a dataset runs the distance stage: the filter prunes with its edge list, an
    export or the clustering reads its distances. The vsearch preset of the filter, which
    aligns every pair itself, with greedy clustering and no SeqDist export, does not."""
    return (
        reads_edge_list(params)
        or needs_matrix(params)
        or "mothur" in params["distance"]["exports"]
        or cluster_reads(params) == "edge list"
    )


# Which rules and files each dataset gets
WITH_EDGES = [d for d, p in PARAMS.items() if needs_edges(p)]
# settings of the distance stage that change its output (not backend, threads, memory ...)
DISTANCE_RESULT_KEYS = (
    "scoring",
    "max_distance",
    "candidate_identity",
    "candidate_iddef",
    "shards",
)


def distance_inputs(dataset, params):
    """What a dataset's edge list is made from: its samples and every setting before and of
    the distance stage that changes a byte of it."""
    return json.dumps(
        {
            "samples": config["datasets"][dataset]["samples"],
            "qc": params["qc"] if dataset in QC else None,
            "ingest": params["ingest"],
            "binning": params["binning"],
            "distance": {k: params["distance"][k] for k in DISTANCE_RESULT_KEYS},
        },
        sort_keys=True,
    )


# Datasets of the same distance_inputs share one computation: the first in config order
# runs it, the others link its files (rule distance_shared). It writes every pair's
# distance where any of them needs it.
_first_of = {}  # distance_inputs -> the first dataset made from them
DISTANCE_OWNER = {
    d: _first_of.setdefault(distance_inputs(d, PARAMS[d]), d) for d in WITH_EDGES
}
OWNERS = [d for d in WITH_EDGES if DISTANCE_OWNER[d] == d]
SHARED = [d for d in WITH_EDGES if DISTANCE_OWNER[d] != d]
DENSE = [d for d, p in PARAMS.items() if needs_matrix(p)]
# an owner computes every pair's distance where one of its sharers needs it
COMPUTES_DENSE = [d for d in OWNERS if any(DISTANCE_OWNER[s] == d for s in DENSE)]
SHARDED = [d for d in OWNERS if PARAMS[d]["distance"]["shards"] > 1]
UNSHARDED = [d for d in OWNERS if d not in SHARDED]
UNSHARDED_DENSE = [d for d in UNSHARDED if d in COMPUTES_DENSE]
UNSHARDED_SPARSE = [d for d in UNSHARDED if d not in COMPUTES_DENSE]
SHARDED_DENSE = [d for d in SHARDED if d in COMPUTES_DENSE]
PSSE = [d for d, p in PARAMS.items() if p["psse"]["enabled"]]
BY_DISTANCES = [d for d, p in PARAMS.items() if cluster_reads(p) != "pairs"]
BY_PAIRS = [d for d in PARAMS if d not in BY_DISTANCES]
# the datasets whose clustering also writes otus.list and otus.otu (cluster.METHODS: levels)
WITH_LEVELS = [
    d
    for d, p in PARAMS.items()
    if p["cluster"]["distance"] in METHODS[p["cluster"]["linkage"]].levels
]
# seqpairs report's files for each dataset
REPORT_FILES = (
    "lengths.png",
    "distances.png",
    "funnel.png",
    "clusters.png",
    "summary.tsv",
    "summary.html",
)
# The rules that make the edge list (their time is the distance stage's, for GCUPS)
EDGE_LIST_RULES = ("distance", "distance_shard", "distance_merge")


def stage(wildcards, name):
    """Effective parameters of stage `name` for the rule's dataset."""
    return PARAMS[wildcards.dataset][name]


def option_list(pairs):
    """['--flag', 'value', ...] for (flag, value) pairs: null and false values left out,
    a true one as the flag alone."""
    options = []
    for flag, value in pairs:
        if value is True:
            options.append(flag)
        elif value is not None and value is not False:
            options += [flag, str(value)]
    return options


def stage_options(name, flags, fixed=()):
    """A params function: `fixed`, then the option of each config key of stage `name` of the
    rule's dataset (`flags`: key -> option; "other.key" reads stage `other`)."""

    def options(wildcards):
        values = [
            stage(wildcards, key.split(".")[0] if "." in key else name)[
                key.split(".")[-1]
            ]
            for key in flags
        ]
        return [*fixed, *option_list(zip(flags.values(), values))]

    return options


def alphabet_option(wildcards):
    """--alphabet of the stages that read the reads' letters: nothing for DNA, the commands'
    default (so that DNA datasets' commands, and what they made, stay as they were)."""
    alphabet = stage(wildcards, "ingest")["alphabet"]
    return [] if alphabet == "dna" else ["--alphabet", alphabet]


# The local schemes' scores of the psse and annotate jobs for each kind of reads
# (ingest.alphabet): DNA's from the config; protein's are blastp's (BLOSUM62, gaps 11 + k:
# the commands' defaults for --alphabet protein).
LOCAL_SCORES = {
    "dna": {
        "match": "--match",
        "mismatch": "--mismatch",
        "gap_open": "--gap-open",
        "gap_extend": "--gap-extend",
    },
    "protein": {},
}


# psse's section of each alphabet with its own scores (psse.protein): null values leave
# the command's defaults
ALPHABET_PSSE = {
    "matrix": "--matrix",
    "gap_open": "--gap-open",
    "gap_extend": "--gap-extend",
    "pssm": "--pssm",
}


def psse_alphabet_section(wildcards):
    """psse's section of the dataset's alphabet ({} for DNA: its scores are psse's own)."""
    return stage(wildcards, "psse").get(stage(wildcards, "ingest")["alphabet"]) or {}


def psse_options(wildcards):
    alphabet = stage(wildcards, "ingest")["alphabet"]
    flags = {
        **LOCAL_SCORES[alphabet],
        "shuffles": "--shuffles",
        "seed": "--seed",
        "fit": "--fit",
        "alpha": "--alpha",
    }
    section = psse_alphabet_section(wildcards)
    own = option_list((flag, section.get(key)) for key, flag in ALPHABET_PSSE.items())
    return [
        *stage_options("psse", flags, fixed=["--alphabet", alphabet])(wildcards),
        *own,
    ]


def psse_pssm(wildcards):
    """The PSSM folder of the dataset's psse, an input when there is one."""
    folder = psse_alphabet_section(wildcards).get("pssm")
    return [folder] if folder else []


# what the annotation table holds: BLAST's names (formats/hits.py)
ANNOTATION_COLUMNS = ",".join(
    ("qseqid", "sseqid", "score", "pident", "length", "mismatch", "gapopen")
    + ("qstart", "qend", "sstart", "send", "qlen", "slen")
)


def annotate_options(wildcards):
    alphabet = stage(wildcards, "ingest")["alphabet"]
    flags = {"mode": "--mode", **LOCAL_SCORES[alphabet]}
    return stage_options("annotate", flags, fixed=["--alphabet", alphabet])(wildcards)


def annotate_seconds(wildcards, input, threads):
    """Every centroid against every reference on the CPU (the bytes bound the letters)."""
    cells = os.path.getsize(input.centroids) * os.path.getsize(input.reference)
    return alignment_seconds(cells, 0, threads)


def run_options(name, flags):
    """stage_options for options that change no output (backend, memory budget, rank
    timeout): a params function of resources, which Snakemake takes as "derived", so that
    changing them reruns nothing."""
    options = stage_options(name, flags)

    def derived(wildcards, resources):
        return options(wildcards)

    return derived


def datasets_regex(names):
    """Wildcard constraint matching exactly these dataset names (nothing when empty)."""
    return "|".join(re.escape(name) for name in names) if names else "(?!)"


def threads_of(name):
    """The `threads` of a rule: config <name>.threads of the dataset."""

    def threads(wildcards):
        return stage(wildcards, name)["threads"]

    return threads


def benchmark_file(rule_folder, name=None):
    """A rule's benchmark file: results/benchmarks/<rule>/<dataset>.tsv, or
    <rule>/<dataset>/<name>.tsv for one of several jobs of a dataset (report_times
    collates them per rule)."""
    dataset = "{dataset}" if name is None else f"{{dataset}}/{name}"
    return f"results/benchmarks/{rule_folder}/{dataset}.tsv"


# --- memory of the distance jobs ----------------------------------------------------


# MiB a distance rank needs besides its budget for the kept pairs (distance.memory):
# libraries, sequences, one batch; on a GPU CUDA's and CuPy's own (measured 579 MiB for
# the whole process on an H100, benchmarks/RESULTS.md).
RANK_MEMORY_MIB = 1024


def distance_memory_mib(wildcards):
    """Default `mem_mib` resource of the distance rules: each of config distance.tasks
    ranks its floor plus distance.memory (a profile that sets `tasks` should set mem_mib
    too)."""
    settings = stage(wildcards, "distance")
    return settings["tasks"] * (RANK_MEMORY_MIB + settings["memory"])


def matrix_mib(input):
    """MiB of every pair's distance (float64) of the sequences in input.unique."""
    n, _ = fasta_residues(input.unique)
    return n * (n - 1) // 2 * 8 >> 20


def dense_memory_mib(wildcards, input):
    """`mem_mib` of the distance jobs that hold every pair's distance: distance_memory_mib
    and the matrix twice over (the host's copy and the one being written)."""
    return distance_memory_mib(wildcards) + 2 * matrix_mib(input)


def export_memory_mib(wildcards, input):
    """`mem_mib` of an export written from matrix.npy: a process and the matrix."""
    return RANK_MEMORY_MIB + matrix_mib(input)


def distance_budget(wildcards, resources):
    """config distance.memory for a script rule's params; taking `resources` makes it a
    "derived" params function, no rerun trigger (the output is the same for any budget).
    """
    return stage(wildcards, "distance")["memory"]


# --- runtime of the jobs -------------------------------------------------------------


# Every rule's `runtime` resource (minutes; SLURM's --time): the work its input implies at
# throughputs well below those measured (benchmarks/RESULTS.md: 500-2,100 GCUPS on one
# H100, 0.33 GCUPS per CPU core), at least RUNTIME_FLOOR_MIN, doubled on each retry (the
# retries of profiles/slurm), so a job that ran out of time is resubmitted with more.
RUNTIME_FLOOR_MIN = 10
GPU_CELLS_PER_S = 100e9  # one GPU
CPU_CELLS_PER_S = 0.1e9  # one thread
FILE_MB_PER_MIN = 100  # a job that reads and writes files (ingest, exports, clustering)
EDGE_BYTES_PER_PAIR = 48  # an edge list's columns (formats/distances.py)


def fasta_residues(path):
    """(sequences, residues) of a FASTA file, read once per version of it (the resources
    of a job ask several times)."""
    stat = os.stat(path)
    return _fasta_residues(os.path.abspath(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _fasta_residues(path, mtime_ns, size):
    count = residues = 0
    with open(path) as fasta:
        for line in fasta:
            if line.startswith(">"):
                count += 1
            else:
                residues += len(line.rstrip())
    return count, residues


def all_pairs_cells(input):
    """DP cells of every pair of input.unique: the product of lengths summed over pairs."""
    _, residues = fasta_residues(input.unique)
    return residues * residues / 2


def pair_cells(input, pairs):
    """DP cells of `pairs` pairs of input.unique's sequences of mean length."""
    count, residues = fasta_residues(input.unique)
    return pairs * (residues / max(count, 1)) ** 2


def alignment_seconds(cells, gpus, threads):
    return cells / (gpus * GPU_CELLS_PER_S if gpus else threads * CPU_CELLS_PER_S)


def runtime_of(seconds):
    """A `runtime` resource from seconds(wildcards, input, threads) of work."""

    def runtime(wildcards, input, threads, attempt):
        minutes = math.ceil(seconds(wildcards, input, threads) / 60)
        return max(RUNTIME_FLOOR_MIN, minutes) * 2 ** (attempt - 1)

    return runtime


def file_seconds(wildcards, input, threads):
    return 60 * input.size_mb / FILE_MB_PER_MIN


def distance_seconds(gpus_per_job):
    """The all-pairs work of a distance job on its GPUs (gpus_per_job(wildcards), or its
    threads without), one shard's share of it for a shard (wildcard shards)."""

    def seconds(wildcards, input, threads):
        shards = int(wildcards.get("shards", 1))
        return alignment_seconds(
            all_pairs_cells(input) / shards, gpus_per_job(wildcards), threads
        )

    return seconds


def filter_seconds(wildcards, input, threads):
    """Tracebacks on the CPU: the edge list's pairs (every pair without one)."""
    edges = input.get("edges")
    if edges:
        pairs = os.path.getsize(edges) / EDGE_BYTES_PER_PAIR
        cells = min(pair_cells(input, pairs), all_pairs_cells(input))
    else:
        cells = all_pairs_cells(input)
    return alignment_seconds(cells, 0, threads)


def psse_seconds(wildcards, input, threads):
    """Each kept pair and its shuffles on the job's GPUs (or threads)."""
    with open(input.pairs) as table:
        pairs = sum(1 for _ in table) - 1
    shuffles = stage(wildcards, "psse")["shuffles"]
    cells = pair_cells(input, pairs * (shuffles + 1))
    return alignment_seconds(cells, mpi_gpus("psse")(wildcards), threads)


# --- MPI launch ---------------------------------------------------------------------


# Rules that can run as an MPI program (distance and distance_shard with the distance
# section's `tasks`, psse with the psse section's) get these functions of their stage:
# the resources `tasks` (default: config <stage>.tasks), `mpi` (the launcher), `gpu` and
# `tasks_per_gpu` follow Snakemake's MPI and GPU conventions, which the SLURM executor
# plugin turns into sbatch's --ntasks, --gpus and --ntasks-per-gpu, and a profile's
# set-resources overrides. The command is prefixed with `<mpi> -n <tasks>` exactly when
# tasks > 1: one task runs `seqpairs <stage>` as one plain process, without MPI installed.


def mpi_tasks(name):
    """Default `tasks` resource of stage `name`'s MPI rules: config <name>.tasks."""

    def tasks(wildcards):
        return stage(wildcards, name)["tasks"]

    return tasks


def mpi_program(name):
    """Default `mpi` resource: for several tasks, srun under the SLURM executor and in a
    SLURM job (the ranks start inside its allocation; the job's own Snakemake runs the
    rule with another executor) and mpiexec elsewhere; unset for one task.

    Unset (None) keeps `mpi` out of the job's resources, which the SLURM executor
    plugin reads as "not an MPI job" (it refuses MPI jobs of one task).
    """
    tasks = mpi_tasks(name)

    def program(wildcards):
        if tasks(wildcards) <= 1:
            return None
        executor = workflow.executor_plugin
        on_slurm = "SLURM_JOB_ID" in os.environ or (
            executor is not None and executor.name.startswith("slurm")
        )
        return "srun" if on_slurm else "mpiexec"

    return program


def mpi_gpus(name, tasks=None):
    """Default `gpu` resource: one GPU per task (config <stage>.tasks, or tasks(wildcards)),
    none where the stage's backend is cpu. Local runs limit nothing by it (unless given
    --resources gpu=N); on SLURM it is sbatch's --gpus."""
    tasks = tasks or mpi_tasks(name)

    def gpus(wildcards):
        return 0 if stage(wildcards, name)["backend"] == "cpu" else tasks(wildcards)

    return gpus


def one_process_gpus(name):
    """Default `gpu` resource of a job of stage `name` that runs one process."""
    return mpi_gpus(name, tasks=lambda wildcards: 1)


def tasks_per_gpu(name):
    """Default `tasks_per_gpu` resource: 1 for a job with GPUs (each rank its own GPU;
    without it the SLURM plugin asks for `tasks` tasks on every GPU), else unset."""
    gpus = mpi_gpus(name)

    def per_gpu(wildcards):
        return 1 if gpus(wildcards) else None

    return per_gpu


def mpi_launcher(name):
    """A params function: '' for one task, else '<mpi> -n <tasks> ' (mpi: the resource,
    or mpiexec).

    srun also gets --cpus-per-task=<threads> (unless the launcher sets it): a job
    step does not inherit the allocation's CPUs per task (Slurm 22.05-23.02, and the
    SLURM executor plugin clears SLURM_CPUS_PER_TASK), so each rank would get one CPU.
    A params function of resources/threads is "derived" for Snakemake: the launcher is
    no rerun trigger, so changing tasks reruns nothing.
    """

    def launcher(wildcards, resources, threads):
        tasks = resources.get("tasks", 1)
        if not isinstance(tasks, int) or tasks < 1:
            raise WorkflowError(
                f"{name}: the resource tasks must be an integer >= 1, not {tasks!r}"
            )
        if tasks == 1:
            return ""
        launcher = str(resources.get("mpi") or "").strip() or "mpiexec"
        words = launcher.split()
        if os.path.basename(words[0]) == "srun" and not any(
            word == "-c" or word.startswith(("-c", "--cpus-per-task"))
            for word in words[1:]
        ):
            launcher += f" --cpus-per-task={threads}"
        return f"{launcher} -n {tasks} "

    return launcher


# --- inputs and options that depend on more than the config --------------------------


def sample_paths(wildcards):
    return list(config["datasets"][wildcards.dataset]["samples"].values())


def raw_sample(wildcards):
    """The reads file of sample {sample} of the dataset."""
    return config["datasets"][wildcards.dataset]["samples"][wildcards.sample]


def qc_sample_paths(wildcards):
    """The samples as ingest_qc reads them: FASTQ after the expected-error filter (rule
    qc_filter), FASTA as they are (no qualities to filter on)."""
    samples = config["datasets"][wildcards.dataset]["samples"]
    return [
        (
            f"results/qc/{wildcards.dataset}/filtered/{name}.fastq"
            if is_fastq(path)
            else path
        )
        for name, path in samples.items()
    ]


def qc_nonchimeras(wildcards):
    """The non-chimeras of the dataset's unique sequences, where qc.chimeras asks for them."""
    if stage(wildcards, "qc")["chimeras"]:
        return [f"results/qc/{wildcards.dataset}/nonchimeras.fasta"]
    return []


def ingest_inputs(wildcards, input):
    """['-i', 'NAME=PATH', ...] in the configured sample order."""
    names = config["datasets"][wildcards.dataset]["samples"].keys()
    return [
        arg
        for name, path in zip(names, input.samples)
        for arg in ("-i", f"{name}={path}")
    ]


def distance_shards(wildcards):
    """The shard edge lists of a sharded dataset, 0-of-N ... (N-1)-of-N."""
    n = stage(wildcards, "distance")["shards"]
    return expand(
        "results/distance/{dataset}/shards/{shard}-of-{shards}.npz",
        dataset=wildcards.dataset,
        shard=range(n),
        shards=n,
    )


def export_format(wildcards):
    """The format (its name in distance.exports) of a full-matrix export's file."""
    return next(n for n, f in FULL_MATRIX_EXPORTS.items() if f == wildcards.export)


def filter_edges(wildcards):
    """The edge list the filter prunes with, when it was made under the filter's scheme;
    otherwise the filter aligns every pair itself (reads_edge_list)."""
    if reads_edge_list(PARAMS[wildcards.dataset]):
        return f"results/distance/{wildcards.dataset}/edges.npz"
    return []


def cluster_distances(wildcards):
    """The distance file of the dataset's clustering method (cluster.METHODS: reads)."""
    reads = cluster_reads(PARAMS[wildcards.dataset])
    return f"results/distance/{wildcards.dataset}/{DISTANCE_INPUT[reads]}"


def psse_table(wildcards):
    """The PSSE table of a psse-enabled dataset (its greedy clustering uses only the
    significant pairs; its report counts them), else nothing."""
    if wildcards.dataset in PSSE:
        return f"results/psse/{wildcards.dataset}/psse.tsv"
    return []


def cluster_psse(wildcards):
    """The PSSE table the clustering keeps the significant pairs of: a psse-enabled
    dataset's, for a method that takes it (cluster.METHODS: options)."""
    linkage = stage(wildcards, "cluster")["linkage"]
    return psse_table(wildcards) if "psse" in METHODS[linkage].options else []


def option_of_output(flag, name):
    """A params function: [flag, output.<name>] when the rule has that output, else []."""

    def option(wildcards, output):
        return [flag, output[name]] if output.get(name) else []

    return option


def option_of_input(flag, name):
    """A params function: [flag, input.<name>] when the rule has that input, else []. Paths
    come from the input, so that they carry a module's prefix; params of input functions
    are no rerun trigger (the input itself is)."""

    def option(wildcards, input):
        return [flag, input[name]] if input.get(name) else []

    return option


def dataset_benchmarks(wildcards):
    """Rule -> benchmark files of every job of the dataset, in pipeline order."""
    dataset, p = wildcards.dataset, PARAMS[wildcards.dataset]
    files = {}
    if dataset in QC:
        samples = config["datasets"][dataset]["samples"]
        files["qc_filter"] = [
            benchmark_file("qc_filter", name)
            for name, path in samples.items()
            if is_fastq(path)
        ]
    files["ingest"] = [benchmark_file("ingest")]
    if dataset in QC:
        if p["qc"]["chimeras"]:
            files["qc_chimeras"] = [benchmark_file("qc_chimeras")]
        files["qc_select"] = [benchmark_file("qc_select")]
    files["binning"] = [benchmark_file("binning")]
    owner = DISTANCE_OWNER.get(dataset)  # the dataset whose jobs computed the edge list
    if owner in SHARDED:
        n = p["distance"]["shards"]
        files["distance_shard"] = [
            benchmark_file("distance_shard", f"{k}-of-{n}").format(dataset=owner)
            for k in range(n)
        ]
        files["distance_merge"] = [
            benchmark_file("distance_merge").format(dataset=owner)
        ]
        if owner in COMPUTES_DENSE:
            files["distance_matrix"] = [
                benchmark_file("distance_matrix").format(dataset=owner)
            ]
    elif owner is not None:  # distance or distance_dense
        files["distance"] = [benchmark_file("distance").format(dataset=owner)]
    exports = {EXPORTS[name] for name in p["distance"]["exports"]}
    reads = cluster_reads(p)
    if reads in DISTANCE_INPUT:
        exports.add(DISTANCE_INPUT[reads])
    full = [f for f in FULL_MATRIX_EXPORTS.values() if f in exports]
    if full:
        files["distance_export"] = [benchmark_file("distance_export", f) for f in full]
    if EXPORTS["mothur"] in exports:
        files["distance_mothur"] = [benchmark_file("distance_mothur")]
    files["filter"] = [benchmark_file("filter")]
    if EXPORTS["mothur_identity"] in exports:
        files["filter_mothur"] = [benchmark_file("filter_mothur")]
    if dataset in PSSE:
        files["psse"] = [benchmark_file("psse")]
    files["cluster"] = [benchmark_file("cluster")]
    return {
        name: [path.format(dataset=dataset) for path in paths]
        for name, paths in files.items()
    }


def distance_logs(wildcards):
    """The logs of the jobs that computed the dataset's edge list (rule distance or
    distance_dense, or each shard): the report reads what backend and GPUs ran there."""
    owner = DISTANCE_OWNER.get(wildcards.dataset)  # the dataset whose jobs ran them
    if owner is None:
        return []
    if owner in SHARDED:
        n = stage(wildcards, "distance")["shards"]
        return [f"logs/distance/{owner}/shard-{k}-of-{n}.log" for k in range(n)]
    return [f"logs/distance/{owner}/distance.log"]


def shared_distance(wildcards):
    """The file of the dataset whose distance job a sharing dataset takes it from."""
    owner = DISTANCE_OWNER[wildcards.dataset]
    return f"results/distance/{owner}/{wildcards.name}"


def edge_list(wildcards):
    """The dataset's edge list, where it runs the distance stage (needs_edges)."""
    if wildcards.dataset in WITH_EDGES:
        return [f"results/distance/{wildcards.dataset}/edges.npz"]
    return []


def qc_funnel(wildcards):
    """The read QC's funnel of a dataset with QC, for the report's summary."""
    if wildcards.dataset in QC:
        return [f"results/qc/{wildcards.dataset}/funnel.tsv"]
    return []


def report_figure(name, title):
    return report(
        f"results/report/{{dataset}}/{name}",
        caption=f"../report/{name.split('.')[0]}.rst",
        category="Overview",
        subcategory="{dataset}",
        labels={"dataset": "{dataset}", "figure": title},
    )


# --- targets --------------------------------------------------------------------------


def dataset_targets(dataset):
    """Every final file of one dataset."""
    p = PARAMS[dataset]
    targets = [f"results/qc/{dataset}/funnel.tsv"] if dataset in QC else []
    targets += [
        f"results/ingest/{dataset}/report.tsv",
        f"results/binning/{dataset}/bins.tsv",
        *([f"results/distance/{dataset}/edges.npz"] if dataset in WITH_EDGES else []),
        f"results/filter/{dataset}/kept.tsv",
    ]
    targets += [
        f"results/distance/{dataset}/{EXPORTS[export]}"
        for export in p["distance"]["exports"]
    ]
    outputs = ["membership.tsv", "otu_table.tsv", "otu_table.biom", "shared"]
    outputs += ["centroids.fasta", "uc", "sensspec"]
    if dataset in WITH_LEVELS:
        outputs += ["list", "otu"]
    targets += [f"results/cluster/{dataset}/otus.{ext}" for ext in outputs]
    if p["annotate"]["reference"] is not None:
        targets.append(f"results/cluster/{dataset}/otus.annotation.tsv")
    if p["psse"]["enabled"]:
        targets += [
            f"results/psse/{dataset}/{name}"
            for name in ("psse.tsv", "plots/histograms.png", "plots/qq.png")
        ]
    targets += [f"results/report/{dataset}/{name}" for name in REPORT_FILES]
    return targets


def all_targets():
    return [t for dataset in config["datasets"] for t in dataset_targets(dataset)]
