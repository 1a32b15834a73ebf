# Pairwise statistical significance (PSSE) of the filter's kept pairs: local alignment
# scores of each pair and of `psse.shuffles` shuffles of its target, a Gumbel fit per
# pair, p-values, and `significant` (p <= psse.alpha). One row per kept pair, in
# kept.tsv's order. Like rule distance, an MPI job of `tasks` ranks (see common.smk);
# the table is the same bytes for any rank count and either backend.
rule psse:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        pairs="results/filter/{dataset}/kept.tsv",
    output:
        table="results/psse/{dataset}/psse.tsv",
        histograms=report(
            "results/psse/{dataset}/plots/histograms.png",
            caption="../report/psse_histograms.rst",
            category="PSSE",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "figure": "score histograms"},
        ),
        qq=report(
            "results/psse/{dataset}/plots/qq.png",
            caption="../report/psse_qq.rst",
            category="PSSE",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "figure": "QQ plot"},
        ),
    log:
        "logs/psse/{dataset}/psse.log",
    benchmark:
        "results/benchmarks/psse/{dataset}.tsv"
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: psse_threads
    resources:
        tasks=psse_tasks,
        mpi=psse_mpi,
    params:
        options=psse_options,
        plots=psse_plots,
        # '' (one process) or '<mpi> -n <tasks> ' (MPI ranks): see common.smk
        launcher=psse_launcher,
    shell:
        "{params.launcher}seqpairs psse -i {input.unique:q} --pairs {input.pairs:q}"
        " {params.options:q} --threads {threads} --plots {params.plots:q}"
        " -o {output.table:q} > {log:q} 2>&1"
