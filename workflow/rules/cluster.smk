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
        centroids="results/cluster/{dataset}/otus.centroids.fasta",
    log:
        "logs/cluster/{dataset}/cluster.log",
    benchmark:
        "results/benchmarks/cluster/{dataset}.tsv"
    wildcard_constraints:
        dataset=datasets_regex(HIERARCHICAL),
    conda:
        "../../envs/seqpairs.yaml"
    params:
        prefix=cluster_prefix,
        options=cluster_options,
    shell:
        "seqpairs cluster -i {input.distances:q} {params.options:q}"
        " --fasta {input.unique:q} --abundance {input.abundance:q}"
        " -o {params.prefix:q} > {log:q} 2>&1"


# psse.enabled: only the kept pairs PSSE finds significant (cluster_psse, --psse in the
# options). The hierarchical rule above reads distances, not pairs: PSSE does not apply.
rule cluster_greedy:
    input:
        pairs="results/filter/{dataset}/kept.tsv",
        psse=cluster_psse,
        unique="results/ingest/{dataset}/unique.fasta",
        abundance="results/ingest/{dataset}/abundance.tsv",
    output:
        membership="results/cluster/{dataset}/otus.membership.tsv",
        table="results/cluster/{dataset}/otus.otu_table.tsv",
        biom="results/cluster/{dataset}/otus.otu_table.biom",
        centroids="results/cluster/{dataset}/otus.centroids.fasta",
    log:
        "logs/cluster/{dataset}/cluster.log",
    benchmark:
        "results/benchmarks/cluster/{dataset}.tsv"
    wildcard_constraints:
        dataset=datasets_regex(GREEDY),
    conda:
        "../../envs/seqpairs.yaml"
    params:
        prefix=cluster_prefix,
        options=cluster_greedy_options,
    shell:
        "seqpairs cluster --linkage greedy {params.options:q} --pairs {input.pairs:q}"
        " --fasta {input.unique:q} --abundance {input.abundance:q}"
        " -o {params.prefix:q} > {log:q} 2>&1"
