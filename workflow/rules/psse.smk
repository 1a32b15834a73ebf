# Pairwise statistical significance (PSSE) of the filter's kept pairs: local alignment
# scores of each pair and of `psse.shuffles` shuffles of its target, a Gumbel fit per
# pair, p-values, and `significant` (p <= psse.alpha). One row per kept pair, in
# kept.tsv's order. Like rule distance, an MPI job of `tasks` ranks (see common.smk);
# the table is the same bytes for any rank count and either backend.
# psse.enabled: the dataset's targets include the PSSE table and plots, and its greedy
# clustering reads only the kept pairs that PSSE finds significant. The rule itself runs
# for any dataset whose psse.tsv is asked for.


rule psse:
    input:
        unique="results/ingest/{dataset}/unique.fasta",
        pairs="results/filter/{dataset}/kept.tsv",
        pssm=psse_pssm,
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
        benchmark_file("psse")
    conda:
        "../../envs/seqpairs-gpu.yaml"
    threads: threads_of("psse")
    resources:
        tasks=mpi_tasks("psse"),
        mpi=mpi_program("psse"),
        gpu=mpi_gpus("psse"),
        tasks_per_gpu=tasks_per_gpu("psse"),
        runtime=runtime_of(psse_seconds),
    params:
        options=psse_options,
        run=run_options("psse", {"backend": "--backend"}),
        plots=lambda wildcards, output: os.path.dirname(output.histograms),
        # '' (one process) or '<mpi> -n <tasks> ' (MPI ranks): see common.smk
        launcher=mpi_launcher("psse"),
    shell:
        "{params.launcher}python3 -m seqpairs psse -i {input.unique:q} --pairs {input.pairs:q}"
        " {params.options:q} {params.run:q} --threads {threads} --plots {params.plots:q}"
        " -o {output.table:q} > {log:q} 2>&1"
