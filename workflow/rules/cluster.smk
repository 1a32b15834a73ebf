# One rule per kind of input a clustering method reads (cluster.METHODS[...].reads): the
# distances (FCluster's linkages: the edge list, or the full matrix as SeqDist text) or
# the filter's kept pairs (greedy). Both write the OTU tables.


rule cluster:
    input:
        distances=cluster_distances,
        unique="results/ingest/{dataset}/unique.fasta",
        abundance="results/ingest/{dataset}/abundance.tsv",
    output:
        list="results/cluster/{dataset}/otus.list",
        otu="results/cluster/{dataset}/otus.otu",
        membership="results/cluster/{dataset}/otus.membership.tsv",
        table="results/cluster/{dataset}/otus.otu_table.tsv",
        biom="results/cluster/{dataset}/otus.otu_table.biom",
        shared="results/cluster/{dataset}/otus.shared",
        centroids="results/cluster/{dataset}/otus.centroids.fasta",
        uc="results/cluster/{dataset}/otus.uc",
    log:
        "logs/cluster/{dataset}/cluster.log",
    benchmark:
        benchmark_file("cluster")
    wildcard_constraints:
        dataset=datasets_regex(BY_DISTANCES),
    conda:
        "../../envs/seqpairs.yaml"
    params:
        prefix=lambda wildcards, output: output.membership.removesuffix(
            ".membership.tsv"
        ),
        options=stage_options(
            "cluster",
            {
                "linkage": "--linkage",
                "resolution": "--resolution",
                "cutoff": "--cutoff",
                "weighted": "--weighted",
                "relabel": "--relabel",
                "sizeout": "--sizeout",
            },
        ),
    shell:
        "python3 -m seqpairs cluster -i {input.distances:q} {params.options:q}"
        " --fasta {input.unique:q} --abundance {input.abundance:q}"
        " -o {params.prefix:q} > {log:q} 2>&1"


# psse.enabled: only the kept pairs PSSE finds significant (--psse). A dataset without
# PSSE keeps the command it had before the stage. The rule above reads distances, not
# pairs: PSSE does not apply there.
rule cluster_pairs:
    input:
        pairs="results/filter/{dataset}/kept.tsv",
        psse=psse_table,
        unique="results/ingest/{dataset}/unique.fasta",
        abundance="results/ingest/{dataset}/abundance.tsv",
    output:
        membership="results/cluster/{dataset}/otus.membership.tsv",
        table="results/cluster/{dataset}/otus.otu_table.tsv",
        biom="results/cluster/{dataset}/otus.otu_table.biom",
        shared="results/cluster/{dataset}/otus.shared",
        centroids="results/cluster/{dataset}/otus.centroids.fasta",
        uc="results/cluster/{dataset}/otus.uc",
    log:
        "logs/cluster/{dataset}/cluster.log",
    benchmark:
        benchmark_file("cluster")
    wildcard_constraints:
        dataset=datasets_regex(BY_PAIRS),
    conda:
        "../../envs/seqpairs.yaml"
    params:
        prefix=lambda wildcards, output: output.membership.removesuffix(
            ".membership.tsv"
        ),
        options=stage_options(
            "cluster",
            {
                "linkage": "--linkage",
                "filter.identity": "--identity",
                "relabel": "--relabel",
                "sizeout": "--sizeout",
            },
        ),
        psse=option_of_input("--psse", "psse"),
    shell:
        "python3 -m seqpairs cluster {params.options:q} {params.psse:q}"
        " --pairs {input.pairs:q} --fasta {input.unique:q}"
        " --abundance {input.abundance:q} -o {params.prefix:q} > {log:q} 2>&1"
