rule simulate:
    output:
        references=f"{SIMULATED_DIR}/references.fasta",
        samples=simulated_samples(),
        truth=f"{SIMULATED_DIR}/truth.tsv",
    log:
        "logs/simulate/simulate.log",
    benchmark:
        "results/benchmarks/simulate/simulate.tsv"
    conda:
        "../../envs/seqpairs.yaml"
    params:
        outdir=lambda wildcards, output: os.path.dirname(output.references),
        options=simulate_options(),
    shell:
        "seqpairs simulate -o {params.outdir:q} {params.options:q} > {log:q} 2>&1"
