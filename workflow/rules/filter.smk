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
    resources:
        runtime=runtime_of(filter_seconds),
    params:
        options=stage_options(
            "filter",
            {"identity": "--identity", "iddef": "--iddef", "scoring": "--scoring"},
        ),
        run=run_options("filter", {"backend": "--backend"}),
        distances=option_of_input("--distances", "edges"),
    shell:
        "python3 -m seqpairs filter -i {input.unique:q} {params.options:q} {params.run:q}"
        " {params.distances:q} --threads {threads} -o {output.kept:q} > {log:q} 2>&1"


# distance.exports mothur_identity: the kept pairs as mothur's column distances on the
# identity distance (mothur's own scale: cutoff 0.03 = 97%)
rule filter_mothur:
    input:
        kept="results/filter/{dataset}/kept.tsv",
        unique="results/ingest/{dataset}/unique.fasta",
    output:
        "results/distance/{dataset}/mothur.identity.dist",
    log:
        "logs/distance/{dataset}/mothur.identity.dist.log",
    benchmark:
        benchmark_file("filter_mothur")
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    params:
        identity=lambda wildcards: stage(wildcards, "filter")["identity"],
    script:
        "../scripts/mothur_identity.py"
