# Annotation of the OTU centroids (annotate.reference set): every centroid aligned
# against every reference sequence by `seqpairs align` (annotate.mode, semi-global by
# default), its best hit kept. One row per OTU, beside the OTU table.

# what the annotation table holds: BLAST's names (formats/hits.py)
ANNOTATION_COLUMNS = "qseqid,sseqid,score,pident,length,mismatch,gapopen,qstart,qend,sstart,send,qlen,slen"


def annotate_options(wildcards):
    alphabet = stage(wildcards, "ingest")["alphabet"]
    flags = {"mode": "--mode", **LOCAL_SCORES[alphabet]}
    return stage_options("annotate", flags, fixed=["--alphabet", alphabet])(wildcards)


def annotate_seconds(wildcards, input, threads):
    """Every centroid against every reference on the CPU (the bytes bound the letters)."""
    cells = os.path.getsize(input.centroids) * os.path.getsize(input.reference)
    return alignment_seconds(cells, 0, threads)


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
