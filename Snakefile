# seqpairs: all-pairs SeqDist distances, identity filtering, PSSE and OTU clustering.
# Run from the repository root:  snakemake --cores 2   (see README.md)

from snakemake.utils import min_version

min_version("8.0")


# validated by workflow/rules/common.smk
configfile: "config/config.yaml"


# the description at the top of `snakemake --report`
report: "workflow/report/workflow.rst"


wildcard_constraints:
    dataset="[A-Za-z0-9_-][A-Za-z0-9_.-]*",


include: "workflow/rules/common.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/ingest.smk"
include: "workflow/rules/qc.smk"
include: "workflow/rules/binning.smk"
include: "workflow/rules/distance.smk"
include: "workflow/rules/filter.smk"
include: "workflow/rules/psse.smk"
include: "workflow/rules/cluster.smk"
include: "workflow/rules/annotate.smk"
include: "workflow/rules/report.smk"


localrules:
    all,


rule all:
    default_target: True
    input:
        all_targets(),
