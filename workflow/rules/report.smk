# Per-dataset plots and run summary for `snakemake --report report.html`: rule
# report_times (a script) collates the benchmark files of the dataset's jobs into
# times.tsv; rule report (`seqpairs report`) draws lengths with their bins, edge-list
# distances, the pair funnel, cluster rank-abundance and writes summary.tsv (counts,
# distance time and GCUPS, time per rule, the read QC's funnel, and the backend and GPUs
# that the distance jobs logged: their logs are inputs) and the same table as
# summary.html, the report's "run summary". The report's inputs are the last
# outputs of every stage, so every benchmark file is written before it runs.


rule report_times:
    input:
        unpack(dataset_benchmarks),
    output:
        "results/report/{dataset}/times.tsv",
    log:
        "logs/report/{dataset}/times.log",
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    params:
        edge_list=EDGE_LIST_RULES,
    script:
        "../scripts/report_times.py"


rule report:
    input:
        ingest_report="results/ingest/{dataset}/report.tsv",
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
        edges=edge_list,
        kept="results/filter/{dataset}/kept.tsv",
        psse=psse_table,
        membership="results/cluster/{dataset}/otus.membership.tsv",
        table="results/cluster/{dataset}/otus.otu_table.tsv",
        times="results/report/{dataset}/times.tsv",
        # what ran: the backends and GPUs the distance jobs logged; the read QC's funnel
        distance_logs=distance_logs,
        qc_funnel=qc_funnel,
    output:
        lengths=report_figure("lengths.png", "sequence lengths"),
        distances=report_figure("distances.png", "distances"),
        funnel=report_figure("funnel.png", "pair funnel"),
        clusters=report_figure("clusters.png", "cluster sizes"),
        # the report shows the summary as HTML (a TSV only as a download that shows nothing)
        summary="results/report/{dataset}/summary.tsv",
        summary_html=report_figure("summary.html", "run summary"),
    log:
        "logs/report/{dataset}/report.log",
    benchmark:
        benchmark_file("report")
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    params:
        psse=option_of_input("--psse", "psse"),
        qc_funnel=option_of_input("--qc-funnel", "qc_funnel"),
        edges=option_of_input("--edges", "edges"),
        distance_logs=lambda wildcards, input: [
            arg for log in input.distance_logs for arg in ("--distance-log", log)
        ],
        outdir=lambda wildcards, output: os.path.dirname(output.summary),
        alphabet=alphabet_option,
    shell:
        "python3 -m seqpairs report --dataset {wildcards.dataset:q}"
        " --ingest-report {input.ingest_report:q} --unique {input.unique:q} {params.alphabet:q}"
        " --bins {input.bins:q} --tiles {input.tiles:q} {params.edges:q}"
        " --kept {input.kept:q} {params.psse:q} --membership {input.membership:q}"
        " --otu-table {input.table:q} --times {input.times:q}"
        " {params.distance_logs:q} {params.qc_funnel:q}"
        " -o {params.outdir:q} > {log:q} 2>&1"
