rule binning:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
    output:
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    log:
        "logs/binning/{dataset}/binning.log",
    benchmark:
        "results/benchmarks/binning/{dataset}.tsv"
    conda:
        "../../envs/seqpairs.yaml"
    params:
        options=binning_options,
    shell:
        "seqpairs bin -i {input.unique:q} --bins {output.bins:q} --tiles {output.tiles:q}"
        " {params.options:q} > {log:q} 2>&1"
