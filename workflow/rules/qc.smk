# Read QC (qc.enabled; `auto`: on where every sample is FASTQ), one vsearch step per rule
# around ingest's dereplication: qc_filter drops each FASTQ sample's reads of more than
# qc.maxee expected errors (optionally truncated to qc.trunc_length first); ingest_qc
# dereplicates them as ingest does (results/qc/, not yet the dataset's unique.fasta);
# qc_chimeras runs vsearch's de novo chimera check on the pooled uniques (qc.chimeras);
# qc_select keeps the non-chimeras of at least qc.min_size reads as the dataset's
# unique.fasta and abundance.tsv, which every later stage reads, and writes the funnel.

QC_FILTER_OPTIONS = {
    "maxee": "--fastq_maxee",
    "trunc_length": "--fastq_trunclen",
    "min_length": "--fastq_minlen",
}


rule qc_filter:
    input:
        raw_sample,
    output:
        temp("results/qc/{dataset}/filtered/{sample}.fastq"),
    log:
        "logs/qc/{dataset}/filter-{sample}.log",
    benchmark:
        benchmark_file("qc_filter", "{sample}")
    wildcard_constraints:
        dataset=datasets_regex(QC),
    conda:
        "../../envs/vsearch.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    params:
        options=stage_options("qc", QC_FILTER_OPTIONS),
    shell:
        "vsearch --fastq_filter {input:q} {params.options:q} --fastqout {output:q}"
        " --threads 1 > {log:q} 2>&1"


use rule ingest as ingest_qc with:
    input:
        samples=qc_sample_paths,
    output:
        unique="results/qc/{dataset}/dereplicated.fasta",
        abundance="results/qc/{dataset}/dereplicated.tsv",
        report="results/ingest/{dataset}/report.tsv",
    wildcard_constraints:
        dataset=datasets_regex(QC),


rule qc_chimeras:
    input:
        "results/qc/{dataset}/dereplicated.fasta",
    output:
        "results/qc/{dataset}/nonchimeras.fasta",
    log:
        "logs/qc/{dataset}/chimeras.log",
    benchmark:
        benchmark_file("qc_chimeras")
    conda:
        "../../envs/vsearch.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    shell:
        "vsearch --uchime3_denovo {input:q} --sizein --nonchimeras {output:q}"
        " > {log:q} 2>&1"


rule qc_select:
    input:
        raw=sample_paths,
        samples=qc_sample_paths,
        unique="results/qc/{dataset}/dereplicated.fasta",
        abundance="results/qc/{dataset}/dereplicated.tsv",
        nonchimeras=qc_nonchimeras,
    output:
        unique="results/ingest/{dataset}/unique.fasta",
        abundance="results/ingest/{dataset}/abundance.tsv",
        funnel="results/qc/{dataset}/funnel.tsv",
    log:
        "logs/qc/{dataset}/select.log",
    benchmark:
        benchmark_file("qc_select")
    wildcard_constraints:
        dataset=datasets_regex(QC),
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    params:
        min_size=lambda wildcards: stage(wildcards, "qc")["min_size"],
    script:
        "../scripts/qc_select.py"
