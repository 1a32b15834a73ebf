# Annotation of the OTU centroids (annotate.reference set): every centroid aligned
# against every reference sequence by `seqpairs align` (annotate.mode, semi-global by
# default), its best hit kept. One row per OTU, beside the OTU table.


rule annotate:
    input:
        centroids="results/cluster/{dataset}/otus.centroids.fasta",
        reference=lambda wildcards: stage(wildcards, "annotate")["reference"],
    output:
        table="results/cluster/{dataset}/otus.annotation.tsv",
    log:
        "logs/annotate/{dataset}/annotate.log",
    benchmark:
        benchmark_file("annotate")
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: threads_of("annotate")
    resources:
        runtime=runtime_of(annotate_seconds),
    params:
        options=annotate_options,
        run=run_options("annotate", {"backend": "--backend"}),
        columns=ANNOTATION_COLUMNS,
    shell:
        "python3 -m seqpairs align -q {input.centroids:q} -t {input.reference:q} --top 1"
        " --columns {params.columns} {params.options:q} {params.run:q}"
        " --threads {threads} -o {output.table:q} > {log:q} 2>&1"
