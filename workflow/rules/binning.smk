rule binning:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
    output:
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
    log:
        "logs/binning/{dataset}/binning.log",
    benchmark:
        benchmark_file("binning")
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    params:
        options=stage_options(
            "binning", {"bin_width": "--bin-width", "tile_pairs": "--tile-pairs"}
        ),
        alphabet=alphabet_option,
    shell:
        "python3 -m seqpairs binning -i {input.unique:q} --bins {output.bins:q}"
        " --tiles {output.tiles:q} {params.options:q} {params.alphabet:q} > {log:q} 2>&1"
