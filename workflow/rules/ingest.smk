# The samples' reads -> the dataset's unique sequences; with read QC (qc.smk) the
# samples filtered first, and the unique sequences selected after (rule qc_select).


rule ingest:
    input:
        samples=sample_paths,
    output:
        unique="results/ingest/{dataset}/unique.fasta",
        abundance="results/ingest/{dataset}/abundance.tsv",
        report="results/ingest/{dataset}/report.tsv",
    log:
        "logs/ingest/{dataset}/ingest.log",
    benchmark:
        benchmark_file("ingest")
    wildcard_constraints:
        dataset=datasets_regex(WITHOUT_QC),
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    params:
        inputs=ingest_inputs,
        options=stage_options(
            "ingest",
            {
                "min_length": "--min-length",
                "max_length": "--max-length",
                "truncate": "--truncate",
                "ambiguous": "--ambiguous",
            },
        ),
        alphabet=alphabet_option,
    shell:
        "python3 -m seqpairs ingest {params.inputs:q}"
        " -o {output.unique:q} --abundance {output.abundance:q} --report {output.report:q}"
        " {params.options:q} {params.alphabet:q} > {log:q} 2>&1"
