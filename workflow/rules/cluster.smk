# One rule per kind of input a clustering reads (cluster.METHODS[...].reads of the
# dataset's cluster.distance): SeqDist distances (the edge list, or the full matrix as
# SeqDist text), or the filter's kept pairs (the identity distance). Each writes the OTU
# tables and otus.sensspec; FCluster's linkages on SeqDist distances also every level of
# their tree (otus.list, otus.otu; cluster.METHODS: levels), the others not (cluster_flat).


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
        sensspec="results/cluster/{dataset}/otus.sensspec",
    log:
        "logs/cluster/{dataset}/cluster.log",
    benchmark:
        benchmark_file("cluster")
    wildcard_constraints:
        dataset=datasets_regex([d for d in BY_DISTANCES if d in WITH_LEVELS]),
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
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
        alphabet=alphabet_option,
    shell:
        "python3 -m seqpairs cluster -i {input.distances:q} {params.options:q}"
        " --fasta {input.unique:q} {params.alphabet:q} --abundance {input.abundance:q}"
        " -o {params.prefix:q} > {log:q} 2>&1"


# SeqDist distances, a method without levels (OptiClust): the same job, no otus.list.
use rule cluster as cluster_flat with:
    output:
        membership="results/cluster/{dataset}/otus.membership.tsv",
        table="results/cluster/{dataset}/otus.otu_table.tsv",
        biom="results/cluster/{dataset}/otus.otu_table.biom",
        shared="results/cluster/{dataset}/otus.shared",
        centroids="results/cluster/{dataset}/otus.centroids.fasta",
        uc="results/cluster/{dataset}/otus.uc",
        sensspec="results/cluster/{dataset}/otus.sensspec",
    wildcard_constraints:
        dataset=datasets_regex([d for d in BY_DISTANCES if d not in WITH_LEVELS]),


# The identity distance: the kept pairs at filter.identity. psse.enabled with a method
# that takes it (greedy): only the kept pairs PSSE finds significant (--psse).
rule cluster_pairs:
    input:
        pairs="results/filter/{dataset}/kept.tsv",
        psse=cluster_psse,
        unique="results/ingest/{dataset}/unique.fasta",
        abundance="results/ingest/{dataset}/abundance.tsv",
    output:
        membership="results/cluster/{dataset}/otus.membership.tsv",
        table="results/cluster/{dataset}/otus.otu_table.tsv",
        biom="results/cluster/{dataset}/otus.otu_table.biom",
        shared="results/cluster/{dataset}/otus.shared",
        centroids="results/cluster/{dataset}/otus.centroids.fasta",
        uc="results/cluster/{dataset}/otus.uc",
        sensspec="results/cluster/{dataset}/otus.sensspec",
    log:
        "logs/cluster/{dataset}/cluster.log",
    benchmark:
        benchmark_file("cluster")
    wildcard_constraints:
        dataset=datasets_regex(BY_PAIRS),
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
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
        alphabet=alphabet_option,
    shell:
        "python3 -m seqpairs cluster {params.options:q} {params.psse:q}"
        " --pairs {input.pairs:q} --fasta {input.unique:q} {params.alphabet:q}"
        " --abundance {input.abundance:q} -o {params.prefix:q} > {log:q} 2>&1"
