rule filter:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        edges=filter_edges,
    output:
        kept="results/filter/{dataset}/kept.tsv",
    log:
        "logs/filter/{dataset}/filter.log",
    benchmark:
        "results/benchmarks/filter/{dataset}.tsv"
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: filter_threads
    params:
        options=filter_options,
    shell:
        "seqpairs filter -i {input.unique:q} {params.options:q} --threads {threads}"
        " -o {output.kept:q} > {log:q} 2>&1"
