# The embedded example's reads (the default config's `example` dataset reads them); the
# options are config `simulate`'s keys as the command's flags, in a fixed order (a config
# file that lists them in another order must not rerun the simulation).


rule simulate:
    output:
        references=f"{SIMULATED_DIR}/references.fasta",
        samples=[
            f"{SIMULATED_DIR}/sample{k}.fastq.gz"
            for k in range(1, config["simulate"]["samples"] + 1)
        ],
        truth=f"{SIMULATED_DIR}/truth.tsv",
    log:
        "logs/simulate/simulate.log",
    benchmark:
        "results/benchmarks/simulate/simulate.tsv"
    conda:
        "../../envs/seqpairs.yaml"
    resources:
        runtime=runtime_of(file_seconds),
    params:
        outdir=lambda wildcards, output: os.path.dirname(output.references),
        options=option_list(
            (f"--{key.replace('_', '-')}", value)
            for key, value in sorted(config["simulate"].items())
        ),
    shell:
        "python3 -m seqpairs simulate -o {params.outdir:q} {params.options:q} > {log:q} 2>&1"
