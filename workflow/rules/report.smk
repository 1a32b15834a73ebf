# Per-dataset plots and run summary for `snakemake --report report.html` (seqpairs report):
# lengths with their bins, edge-list distances, the pair funnel, cluster rank-abundance
# and summary.tsv (counts, distance time and GCUPS from the benchmark files, time per
# rule). Its inputs are the last outputs of every stage, so every benchmark file it
# reads is written before it runs.


rule report:
    input:
        ingest_report="results/ingest/{dataset}/report.tsv",
        unique="results/ingest/{dataset}/unique.fasta",
        bins="results/binning/{dataset}/bins.tsv",
        tiles="results/binning/{dataset}/tiles.tsv",
        edges="results/distance/{dataset}/edges.npz",
        kept="results/filter/{dataset}/kept.tsv",
        psse=report_psse,
        membership="results/cluster/{dataset}/otus.membership.tsv",
        table="results/cluster/{dataset}/otus.otu_table.tsv",
    output:
        lengths=report_figure("lengths.png", "sequence lengths"),
        distances=report_figure("distances.png", "distances"),
        funnel=report_figure("funnel.png", "pair funnel"),
        clusters=report_figure("clusters.png", "cluster sizes"),
        summary=report_figure("summary.tsv", "run summary"),
    log:
        "logs/report/{dataset}/report.log",
    benchmark:
        "results/benchmarks/report/{dataset}.tsv"
    conda:
        "../../envs/seqpairs.yaml"
    params:
        options=report_options,
        outdir=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        "seqpairs report --dataset {wildcards.dataset:q}"
        " --ingest-report {input.ingest_report:q} --unique {input.unique:q}"
        " --bins {input.bins:q} --tiles {input.tiles:q} --edges {input.edges:q}"
        " --kept {input.kept:q} --membership {input.membership:q}"
        " --otu-table {input.table:q} --benchmarks results/benchmarks {params.options:q}"
        " -o {params.outdir:q} > {log:q} 2>&1"
