# Helpers shared by the rules: effective per-dataset parameters and the CLI options
# each rule passes to `seqpairs <stage>`. Functions only (no rules) in this file.

import copy
import os
import re

from snakemake.exceptions import WorkflowError

STAGES = ("ingest", "binning", "distance", "filter", "psse", "cluster")
SIMULATED_DIR = "resources/simulated"


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
        stage: deep_merge(config["defaults"][stage], overrides.get(stage, {}))
        for stage in STAGES
    }


def check_dataset(dataset, params):
    """Cross-key checks the JSON schema cannot express; raise naming the keys."""
    cluster, distance, filter_ = params["cluster"], params["distance"], params["filter"]
    seqdist_filter = filter_["scoring"] == "seqdist"  # it reads the edge list
    if seqdist_filter and filter_["identity"] < distance["candidate_identity"]:
        raise WorkflowError(
            f"config: datasets.{dataset}: filter.identity ({filter_['identity']}) is below "
            f"distance.candidate_identity ({distance['candidate_identity']}); the edge list "
            "would miss pairs the filter must see. Lower distance.candidate_identity to at "
            "most filter.identity."
        )
    if seqdist_filter and filter_["iddef"] != distance["candidate_iddef"]:
        raise WorkflowError(
            f"config: datasets.{dataset}: filter.iddef ({filter_['iddef']}) differs from "
            f"distance.candidate_iddef ({distance['candidate_iddef']}); set them equal."
        )
    if cluster["weighted"] and cluster["linkage"] != "average":
        raise WorkflowError(
            f"config: datasets.{dataset}: cluster.weighted is for cluster.linkage "
            f"average only (linkage is {cluster['linkage']})."
        )
    if (
        cluster["linkage"] == "complete"
        and cluster["cutoff"] > distance["max_distance"]
    ):
        raise WorkflowError(
            f"config: datasets.{dataset}: cluster.cutoff ({cluster['cutoff']}) is larger "
            f"than distance.max_distance ({distance['max_distance']}); pairs beyond "
            "max_distance are not in the edge list, so clusters at that cutoff would be "
            "wrong. Raise distance.max_distance or lower cluster.cutoff."
        )


PARAMS = {dataset: effective_params(dataset) for dataset in config["datasets"]}
for _dataset, _params in PARAMS.items():
    check_dataset(_dataset, _params)


def stage(wildcards, name):
    """Effective parameters of stage `name` for the rule's dataset."""
    return PARAMS[wildcards.dataset][name]


def option_list(pairs):
    """['--flag', 'value', ...] for (flag, value) pairs, leaving out null values."""
    options = []
    for flag, value in pairs:
        if value is not None:
            options += [flag, str(value)]
    return options


def datasets_regex(names):
    """Wildcard constraint matching exactly these dataset names (nothing when empty)."""
    return "|".join(re.escape(name) for name in names) if names else "(?!)"


# --- MPI launch ---------------------------------------------------------------------


# Rules that can run as an MPI program (distance and distance_shard with the distance
# section's `tasks`, psse with the psse section's) get these three functions of their
# stage: the resources `tasks` (default: config <stage>.tasks) and `mpi` (the launcher)
# follow Snakemake's MPI convention, so a profile's set-resources (profiles/slurm: tasks,
# mpi: srun) override them. The command is prefixed with `<mpi> -n <tasks>` exactly when
# tasks > 1: one task runs `seqpairs <stage>` as one plain process, without MPI installed.


def mpi_tasks(name):
    """Default `tasks` resource of stage `name`'s MPI rules: config <name>.tasks."""

    def tasks(wildcards):
        return stage(wildcards, name)["tasks"]

    return tasks


def mpi_program(name):
    """Default `mpi` resource: mpiexec when the config asks for several tasks, else unset.

    Unset (None) keeps `mpi` out of the job's resources, which the SLURM executor
    plugin reads as "not an MPI job" (it refuses MPI jobs of one task).
    """
    tasks = mpi_tasks(name)

    def program(wildcards):
        return "mpiexec" if tasks(wildcards) > 1 else None

    return program


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


# --- simulate -------------------------------------------------------------------------


def simulated_samples():
    n = config["simulate"]["samples"]
    return [f"{SIMULATED_DIR}/sample{k}.fastq.gz" for k in range(1, n + 1)]


def simulate_options():
    s = config["simulate"]
    return option_list(
        [
            ("--references", s["references"]),
            ("--samples", s["samples"]),
            ("--reads", s["reads"]),
            ("--length", s["length"]),
            ("--seed", s["seed"]),
            ("--substitution-rate", s["substitution_rate"]),
            ("--indel-rate", s["indel_rate"]),
            ("--homopolymer-rate", s["homopolymer_rate"]),
            ("--divergence", s["divergence"]),
        ]
    )


# --- ingest ---------------------------------------------------------------------------


def sample_paths(wildcards):
    return list(config["datasets"][wildcards.dataset]["samples"].values())


def ingest_inputs(wildcards, input):
    """['-i', 'NAME=PATH', ...] in the configured sample order."""
    names = config["datasets"][wildcards.dataset]["samples"].keys()
    args = []
    for name, path in zip(names, input.samples):
        args += ["-i", f"{name}={path}"]
    return args


def ingest_options(wildcards):
    p = stage(wildcards, "ingest")
    return option_list(
        [
            ("--min-length", p["min_length"]),
            ("--max-length", p["max_length"]),
            ("--truncate", p["truncate"]),
            ("--ambiguous", p["ambiguous"]),
        ]
    )


# --- binning --------------------------------------------------------------------------


def binning_options(wildcards):
    p = stage(wildcards, "binning")
    return option_list(
        [("--bin-width", p["bin_width"]), ("--tile-pairs", p["tile_pairs"])]
    )


# --- distance -------------------------------------------------------------------------


def distance_threads(wildcards):
    return stage(wildcards, "distance")["threads"]


distance_tasks = mpi_tasks("distance")
distance_mpi = mpi_program("distance")
distance_launcher = mpi_launcher("distance")


# distance.shards > 1 splits a dataset's edge list into that many jobs (rule
# distance_shard, each `seqpairs distance --shard K/N`), joined by rule
# distance_merge; other datasets run rule distance. The count is per dataset, so it
# is an expand() in an input function, not Snakemake's global scattergather count.
SHARDED = [d for d, p in PARAMS.items() if p["distance"]["shards"] > 1]
UNSHARDED = [d for d in PARAMS if d not in SHARDED]


def distance_shards(wildcards):
    """The shard edge lists of a sharded dataset, 0-of-N ... (N-1)-of-N."""
    n = stage(wildcards, "distance")["shards"]
    return expand(
        "results/distance/{dataset}/shards/{shard}-of-{shards}.npz",
        dataset=wildcards.dataset,
        shard=range(n),
        shards=n,
    )


def distance_options(wildcards):
    p = stage(wildcards, "distance")
    return option_list(
        [
            ("--scoring", p["scoring"]),
            ("--backend", p["backend"]),
            ("--max-distance", p["max_distance"]),
            ("--candidate-identity", p["candidate_identity"]),
            ("--iddef", p["candidate_iddef"]),
        ]
    )


# distance.exports: file name of each (rule distance_export); its `seqpairs distance --format`
# is the export's name.
EXPORTS = {
    "seqdist": "seqdist.txt",
    "condensed": "condensed.npy",
    "phylip": "phylip.dist",
    "mothur": "mothur.dist",
}


def export_options(wildcards):
    """Options of an export run: its format; max_distance only for mothur's pairs."""
    p = stage(wildcards, "distance")
    export = next(name for name, file in EXPORTS.items() if file == wildcards.export)
    options = [
        ("--scoring", p["scoring"]),
        ("--backend", p["backend"]),
        ("--format", export),
    ]
    if export == "mothur":
        options.append(("--max-distance", p["max_distance"]))
    return option_list(options) + (["--ids"] if export == "seqdist" else [])


# --- filter ---------------------------------------------------------------------------


def filter_threads(wildcards):
    return stage(wildcards, "filter")["threads"]


def filter_edges(wildcards):
    """The edge list the filter reads (SeqDist scoring); vsearch scoring aligns every pair."""
    if stage(wildcards, "filter")["scoring"] == "vsearch":
        return []
    return f"results/distance/{wildcards.dataset}/edges.npz"


def filter_options(wildcards):
    p = stage(wildcards, "filter")
    options = option_list(
        [
            ("--identity", p["identity"]),
            ("--iddef", p["iddef"]),
            ("--scoring", p["scoring"]),
        ]
    )
    edges = filter_edges(wildcards)
    return options + (["--distances", edges] if edges else [])


# --- psse -----------------------------------------------------------------------------


# psse.enabled: the dataset's targets include the PSSE table and plots, and its greedy
# clustering reads only the kept pairs that PSSE finds significant. The rule itself runs
# for any dataset whose psse.tsv is asked for.
PSSE = [d for d, p in PARAMS.items() if p["psse"]["enabled"]]


def psse_threads(wildcards):
    return stage(wildcards, "psse")["threads"]


psse_tasks = mpi_tasks("psse")
psse_mpi = mpi_program("psse")
psse_launcher = mpi_launcher("psse")


def psse_options(wildcards):
    """Scoring (DNA: the workflow ingests nucleotides), shuffles, seed, alpha, backend."""
    p = stage(wildcards, "psse")
    return option_list(
        [
            ("--alphabet", "dna"),
            ("--match", p["match"]),
            ("--mismatch", p["mismatch"]),
            ("--gap-open", p["gap_open"]),
            ("--gap-extend", p["gap_extend"]),
            ("--shuffles", p["shuffles"]),
            ("--seed", p["seed"]),
            ("--alpha", p["alpha"]),
            ("--backend", p["backend"]),
        ]
    )


def psse_plots(wildcards, output):
    return os.path.dirname(output.histograms)


# --- cluster --------------------------------------------------------------------------


HIERARCHICAL = [d for d, p in PARAMS.items() if p["cluster"]["linkage"] != "greedy"]
GREEDY = [d for d, p in PARAMS.items() if p["cluster"]["linkage"] == "greedy"]


def cluster_distances(wildcards):
    """Complete linkage reads the edge list; average linkage needs every pair (SeqDist text)."""
    if stage(wildcards, "cluster")["linkage"] == "average":
        return f"results/distance/{wildcards.dataset}/seqdist.txt"
    return f"results/distance/{wildcards.dataset}/edges.npz"


def cluster_options(wildcards):
    p = stage(wildcards, "cluster")
    options = option_list(
        [
            ("--format", "seqdist" if p["linkage"] == "average" else "edges"),
            ("--linkage", p["linkage"]),
            ("--resolution", p["resolution"]),
            ("--cutoff", p["cutoff"]),
        ]
    )
    if p["weighted"]:
        options.append("--weighted")
    return options


def cluster_psse(wildcards):
    """Greedy clustering of a psse-enabled dataset reads the PSSE table too."""
    if wildcards.dataset in PSSE:
        return f"results/psse/{wildcards.dataset}/psse.tsv"
    return []


def cluster_greedy_options(wildcards):
    """--identity, and --psse (only the significant pairs) when psse is enabled.

    --psse goes into the options rather than the shell command, so that a dataset
    without PSSE keeps exactly the command, params and outputs it had before the stage.
    A function of wildcards only: params of input/output functions are "derived" for
    Snakemake, no rerun trigger; this way switching psse.enabled reruns the clustering.
    """
    options = option_list([("--identity", stage(wildcards, "filter")["identity"])])
    if wildcards.dataset in PSSE:
        options += ["--psse", cluster_psse(wildcards)]
    return options


def cluster_prefix(wildcards, output):
    return output.membership.removesuffix(".membership.tsv")


# --- report ---------------------------------------------------------------------------


def report_psse(wildcards):
    """The PSSE table when the dataset runs PSSE, else nothing."""
    if stage(wildcards, "psse")["enabled"]:
        return f"results/psse/{wildcards.dataset}/psse.tsv"
    return []


def report_options(wildcards, input):
    distance = stage(wildcards, "distance")
    gpus = 0 if distance["backend"] == "cpu" else distance["tasks"]
    options = option_list(
        [
            ("--shards", distance["shards"]),
            ("--distance-backend", distance["backend"]),
            ("--gpus", gpus),
        ]
    )
    return options + (["--psse", input.psse] if input.psse else [])


def report_figure(name, title):
    return report(
        f"results/report/{{dataset}}/{name}",
        caption=f"../report/{name.split('.')[0]}.rst",
        category="Overview",
        subcategory="{dataset}",
        labels={"dataset": "{dataset}", "figure": title},
    )


# --- targets --------------------------------------------------------------------------


# seqpairs report's files for each dataset (rule report, workflow/rules/report.smk)
REPORT_FILES = (
    "lengths.png",
    "distances.png",
    "funnel.png",
    "clusters.png",
    "summary.tsv",
)


def dataset_targets(dataset):
    """Every final file of one dataset."""
    p = PARAMS[dataset]
    targets = [
        f"results/ingest/{dataset}/report.tsv",
        f"results/binning/{dataset}/bins.tsv",
        f"results/distance/{dataset}/edges.npz",
        f"results/filter/{dataset}/kept.tsv",
    ]
    targets += [
        f"results/distance/{dataset}/{EXPORTS[export]}"
        for export in p["distance"]["exports"]
    ]
    outputs = ["membership.tsv", "otu_table.tsv", "otu_table.biom", "centroids.fasta"]
    if p["cluster"]["linkage"] != "greedy":
        outputs += ["list", "otu"]
    targets += [f"results/cluster/{dataset}/otus.{ext}" for ext in outputs]
    if p["psse"]["enabled"]:
        targets += [
            f"results/psse/{dataset}/{name}"
            for name in ("psse.tsv", "plots/histograms.png", "plots/qq.png")
        ]
    targets += [f"results/report/{dataset}/{name}" for name in REPORT_FILES]
    return targets


def all_targets():
    return [t for dataset in config["datasets"] for t in dataset_targets(dataset)]
