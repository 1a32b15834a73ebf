rule distance:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    output:
        edges="results/distance/{dataset}/edges.npz",
    params:
        options=distance_options,
        # '' (one process) or '<mpi> -n <tasks> ' (MPI ranks): see common.smk
        launcher=distance_launcher,
    threads: distance_threads
    resources:
        tasks=distance_tasks,
        mpi=distance_mpi,
    log:
        "logs/distance/{dataset}/distance.log",
    benchmark:
        "results/benchmarks/distance/{dataset}.tsv"
    conda:
        "../../envs/seqpairs.yaml"
    shell:
        "{params.launcher}seqpairs distance -i {input.unique:q} --bins {input.bins:q}"
        " --tiles {input.tiles:q} {params.options:q} --threads {threads}"
        " --edges {output.edges:q} > {log:q} 2>&1"


rule distance_seqdist:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    output:
        seqdist="results/distance/{dataset}/seqdist.txt",
    params:
        options=export_options,
    threads: distance_threads
    log:
        "logs/distance/{dataset}/seqdist.log",
    benchmark:
        "results/benchmarks/distance_seqdist/{dataset}.tsv"
    conda:
        "../../envs/seqpairs.yaml"
    shell:
        "seqpairs distance -i {input.unique:q} --bins {input.bins:q} --tiles {input.tiles:q}"
        " {params.options:q} --threads {threads} --seqdist {output.seqdist:q} --ids"
        " > {log:q} 2>&1"


rule distance_condensed:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    output:
        condensed="results/distance/{dataset}/condensed.npy",
    params:
        options=export_options,
    threads: distance_threads
    log:
        "logs/distance/{dataset}/condensed.log",
    benchmark:
        "results/benchmarks/distance_condensed/{dataset}.tsv"
    conda:
        "../../envs/seqpairs.yaml"
    shell:
        "seqpairs distance -i {input.unique:q} --bins {input.bins:q} --tiles {input.tiles:q}"
        " {params.options:q} --threads {threads} --condensed {output.condensed:q}"
        " > {log:q} 2>&1"
