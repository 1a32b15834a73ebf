"""Rule report_times: the seconds of every rule that ran for a dataset, from the Snakemake
benchmark files it is given (one named input per rule), for `seqpairs report --times`.

A rule's seconds are the sum over its files of the mean `s` (one row per repeat);
`edge_list` marks the rules that made the edge list (the distance stage's time and GCUPS).
"""
import csv
from pathlib import Path

from seqpairs.formats.atomic import atomic_open


def seconds(path) -> float:
    with open(path, newline="") as fh:
        rows = [float(row["s"]) for row in csv.DictReader(fh, delimiter="\t")]
    if not rows:
        raise ValueError(f"{path}: no benchmark rows")
    return sum(rows) / len(rows)


with atomic_open(snakemake.output[0]) as out:
    out.write("rule\tseconds\tedge_list\n")
    for rule, files in snakemake.input.items():
        total = sum(seconds(path) for path in ([files] if isinstance(files, str) else files))
        out.write(f"{rule}\t{total}\t{rule in snakemake.params.edge_list}\n")
Path(snakemake.log[0]).write_text(f"{len(snakemake.input)} rules\n")
