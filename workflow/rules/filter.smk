rule filter:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        edges=filter_edges,
    output:
        kept="results/filter/{dataset}/kept.tsv",
    log:
        "logs/filter/{dataset}/filter.log",
    benchmark:
        benchmark_file("filter")
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: threads_of("filter")
    params:
        options=stage_options(
            "filter",
            {"identity": "--identity", "iddef": "--iddef", "scoring": "--scoring"},
        ),
        distances=option_of_input("--distances", "edges"),
    shell:
        "python3 -m seqpairs filter -i {input.unique:q} {params.options:q}"
        " {params.distances:q} --threads {threads} -o {output.kept:q} > {log:q} 2>&1"
