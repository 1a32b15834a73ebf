# The edge list: rule distance (one job), or with distance.shards = K > 1 the K jobs of
# rule distance_shard and rule distance_merge; which rule makes a dataset's edges.npz is
# decided by wildcard constraints, never by ruleorder. The count is per dataset, so the
# merge's input is an expand() in an input function, not Snakemake's global scattergather.
# A dataset that needs every pair's distance (a full-matrix export, average linkage) gets
# it from the same job (rule distance_dense: edges.npz and matrix.npy); sharded, from one
# more job (rule distance_matrix). The exports are then written from matrix.npy (rule
# distance_export, a script) and mothur's from the edge list (rule distance_mothur). A
# dataset of the same samples and settings as an earlier one links that one's files
# (rule distance_shared).

DISTANCE_OPTIONS = {
    "scoring": "--scoring",
    "max_distance": "--max-distance",
    "candidate_identity": "--candidate-identity",
    "candidate_iddef": "--iddef",
}
# options that change no output: no rerun trigger (run_options)
RUN_OPTIONS = {
    "backend": "--backend",
    "memory": "--memory",
    "rank_timeout": "--rank-timeout",
}


rule distance:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    output:
        edges="results/distance/{dataset}/edges.npz",
    log:
        "logs/distance/{dataset}/distance.log",
    benchmark:
        benchmark_file("distance")
    wildcard_constraints:
        dataset=datasets_regex(UNSHARDED_SPARSE),
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: threads_of("distance")
    resources:
        tasks=mpi_tasks("distance"),
        mpi=mpi_program("distance"),
        gpu=mpi_gpus("distance"),
        tasks_per_gpu=tasks_per_gpu("distance"),
        runtime=runtime_of(distance_seconds(mpi_gpus("distance"))),
        mem_mib=distance_memory_mib,
    params:
        options=stage_options("distance", DISTANCE_OPTIONS),
        shard=[],
        matrix=option_of_output("--matrix", "matrix"),
        # '' (one process) or '<mpi> -n <tasks> ' (MPI ranks): see common.smk
        launcher=mpi_launcher("distance"),
        run=run_options("distance", RUN_OPTIONS),
    shell:
        "{params.launcher}python3 -m seqpairs distance -i {input.unique:q}"
        " --bins {input.bins:q} --tiles {input.tiles:q} {params.options:q} {params.shard:q}"
        " {params.run:q} --threads {threads} --edges {output.edges:q} {params.matrix:q}"
        " > {log:q} 2>&1"


# A dataset that needs the full matrix: the edge list and every pair's distance in SeqDist
# order (matrix.npy, which the exports are written from), one job; its memory holds the
# matrix (dense_memory_mib).
use rule distance as distance_dense with:
    output:
        edges="results/distance/{dataset}/edges.npz",
        matrix="results/distance/{dataset}/matrix.npy",
    wildcard_constraints:
        dataset=datasets_regex(UNSHARDED_DENSE),
    resources:
        tasks=mpi_tasks("distance"),
        mpi=mpi_program("distance"),
        gpu=mpi_gpus("distance"),
        tasks_per_gpu=tasks_per_gpu("distance"),
        runtime=runtime_of(distance_seconds(mpi_gpus("distance"))),
        mem_mib=dense_memory_mib,


# Shard K of N (0-based like `--shard K/N`, N in the name so that a changed count never
# reuses old shards): rule distance on its share of the tiles, the same threads, tasks
# and MPI launcher, so profiles give both rules the same resources. Shards are temp():
# deleted once merged, kept while a failed shard is missing, so a rerun computes only
# the missing ones.
use rule distance as distance_shard with:
    output:
        edges=temp("results/distance/{dataset}/shards/{shard}-of-{shards}.npz"),
    log:
        "logs/distance/{dataset}/shard-{shard}-of-{shards}.log",
    benchmark:
        benchmark_file("distance_shard", "{shard}-of-{shards}")
    wildcard_constraints:
        dataset=datasets_regex(SHARDED),
        shard=r"\d+",
        shards=r"\d+",
    params:
        options=stage_options("distance", DISTANCE_OPTIONS),
        shard=lambda wildcards: ["--shard", f"{wildcards.shard}/{wildcards.shards}"],
        launcher=mpi_launcher("distance"),
        run=run_options("distance", RUN_OPTIONS),


rule distance_merge:
    input:
        shards=distance_shards,
    output:
        edges="results/distance/{dataset}/edges.npz",
    log:
        "logs/distance/{dataset}/merge.log",
    benchmark:
        benchmark_file("distance_merge")
    wildcard_constraints:
        dataset=datasets_regex(SHARDED),
    conda:
        "../../envs/seqpairs.yaml"
    threads: threads_of("distance")
    resources:
        mem_mib=lambda wildcards: RANK_MEMORY_MIB
        + stage(wildcards, "distance")["memory"],
        runtime=runtime_of(file_seconds),
    params:
        memory=distance_budget,
    script:
        "../scripts/merge_shards.py"


# A dataset made from the same samples and settings as an earlier one (distance_inputs)
# takes that one's edge list and matrix: a hard link where the file system allows, else a
# copy; the same bytes, no second all-pairs run.
rule distance_shared:
    input:
        shared_distance,
    output:
        "results/distance/{dataset}/{name}",
    log:
        "logs/distance/{dataset}/{name}.shared.log",
    wildcard_constraints:
        dataset=datasets_regex(SHARED),
        name=r"edges\.npz|matrix\.npy",
    localrule: True
    conda:
        "../../envs/seqpairs.yaml"
    script:
        "../scripts/link_shared.py"


# A sharded dataset that needs the full matrix: one more job, every pair again.
rule distance_matrix:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    output:
        matrix="results/distance/{dataset}/matrix.npy",
    log:
        "logs/distance/{dataset}/matrix.log",
    benchmark:
        benchmark_file("distance_matrix")
    wildcard_constraints:
        dataset=datasets_regex(SHARDED_DENSE),
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: threads_of("distance")
    resources:
        mem_mib=dense_memory_mib,
        gpu=one_process_gpus("distance"),
        runtime=runtime_of(distance_seconds(one_process_gpus("distance"))),
    params:
        options=stage_options("distance", {"scoring": "--scoring"}),
        run=run_options("distance", {"backend": "--backend"}),
    shell:
        "python3 -m seqpairs distance -i {input.unique:q} --bins {input.bins:q}"
        " --tiles {input.tiles:q} {params.options:q} {params.run:q}"
        " --threads {threads} --matrix {output.matrix:q} > {log:q} 2>&1"


# One full-matrix export of distance.exports, written from matrix.npy (no alignment).
rule distance_export:
    input:
        matrix="results/distance/{dataset}/matrix.npy",
        unique="results/ingest/{dataset}/unique.fasta",
    output:
        "results/distance/{dataset}/{export}",
    log:
        "logs/distance/{dataset}/{export}.log",
    benchmark:
        benchmark_file("distance_export", "{export}")
    wildcard_constraints:
        export="|".join(re.escape(name) for name in FULL_MATRIX_EXPORTS.values()),
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        mem_mib=export_memory_mib,
        runtime=runtime_of(file_seconds),
    params:
        format=export_format,
    script:
        "../scripts/matrix_export.py"


rule distance_mothur:
    input:
        edges="results/distance/{dataset}/edges.npz",
        unique="results/ingest/{dataset}/unique.fasta",
    output:
        "results/distance/{dataset}/mothur.dist",
    log:
        "logs/distance/{dataset}/mothur.dist.log",
    benchmark:
        benchmark_file("distance_mothur")
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    script:
        "../scripts/mothur_export.py"
