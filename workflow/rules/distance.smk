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
        "results/benchmarks/distance/{dataset}.tsv"
    wildcard_constraints:
        dataset=datasets_regex(UNSHARDED),
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: distance_threads
    resources:
        tasks=distance_tasks,
        mpi=distance_mpi,
    params:
        options=distance_options,
        # '' (one process) or '<mpi> -n <tasks> ' (MPI ranks): see common.smk
        launcher=distance_launcher,
    shell:
        "{params.launcher}seqpairs distance -i {input.unique:q} --bins {input.bins:q}"
        " --tiles {input.tiles:q} {params.options:q} --threads {threads}"
        " --edges {output.edges:q} > {log:q} 2>&1"


# distance.shards > 1 (see common.smk): scatter the tiles over `shards` jobs, each
# shard K of N a job like rule distance (same threads, tasks and MPI launcher, so
# profiles give both rules the same resources), then gather them. Shard files are
# 0-based like `--shard K/N`, carry N in their name (a changed shard count never
# reuses old shards) and are temp(): deleted once merged, kept while a failed
# shard is missing, so a rerun computes only the missing ones.
rule distance_shard:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    output:
        edges=temp("results/distance/{dataset}/shards/{shard}-of-{shards}.npz"),
    log:
        "logs/distance/{dataset}/shard-{shard}-of-{shards}.log",
    benchmark:
        "results/benchmarks/distance_shard/{dataset}/{shard}-of-{shards}.tsv"
    wildcard_constraints:
        dataset=datasets_regex(SHARDED),
        shard=r"\d+",
        shards=r"\d+",
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: distance_threads
    resources:
        tasks=distance_tasks,
        mpi=distance_mpi,
    params:
        options=distance_options,
        shard="{shard}/{shards}",
        launcher=distance_launcher,
    shell:
        "{params.launcher}seqpairs distance -i {input.unique:q} --bins {input.bins:q}"
        " --tiles {input.tiles:q} {params.options:q} --threads {threads}"
        " --shard {params.shard:q} --edges {output.edges:q} > {log:q} 2>&1"


rule distance_merge:
    input:
        shards=distance_shards,
    output:
        edges="results/distance/{dataset}/edges.npz",
    log:
        "logs/distance/{dataset}/merge.log",
    benchmark:
        "results/benchmarks/distance_merge/{dataset}.tsv"
    wildcard_constraints:
        dataset=datasets_regex(SHARDED),
    conda:
        "../../envs/seqpairs.yaml"
    shell:
        "seqpairs merge -i {input.shards:q} --edges {output.edges:q} > {log:q} 2>&1"


# distance.exports (and the SeqDist text that average linkage reads): one more distance
# run per file, in the format its name says (EXPORTS in common.smk).
rule distance_export:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    output:
        "results/distance/{dataset}/{export}",
    log:
        "logs/distance/{dataset}/{export}.log",
    benchmark:
        "results/benchmarks/distance_export/{dataset}/{export}.tsv"
    wildcard_constraints:
        export="|".join(re.escape(name) for name in EXPORTS.values()),
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: distance_threads
    params:
        options=export_options,
    shell:
        "seqpairs distance -i {input.unique:q} --bins {input.bins:q} --tiles {input.tiles:q}"
        " {params.options:q} --threads {threads} -o {output:q} > {log:q} 2>&1"
