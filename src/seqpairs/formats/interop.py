"""Files other tools read: mothur's column distances, PHYLIP matrices, BIOM OTU tables.

- mothur column format (.dist): `ID_A<TAB>ID_B<TAB>distance` per pair, the edge list's
  pairs with distance <= max_distance, sorted like it by (i, j) (mothur's cluster/dist.seqs
  read it with a cutoff at or below that max_distance).
- PHYLIP lower-triangular matrix (.phylip): the number of sequences, then one row per
  sequence: its id and its distances to every earlier sequence, tab-separated (relaxed
  PHYLIP: ids of any length, no spaces; mothur reads it as `phylip=`). N^2 / 2 numbers:
  for small N.
- BIOM 1.0 JSON OTU table (.biom): observations are the clusters (`OTU1`, `OTU2`, ...
  with their centroid as metadata), columns the samples, sparse integer counts (QIIME 2:
  `qiime tools import --type FeatureTable[Frequency] --input-format BIOMV100Format`).
  `date` is SOURCE_DATE_EPOCH when set, else the epoch, so that reruns write equal bytes.

Distances are written as "%.8e", like SeqDist's text.
"""
from __future__ import annotations

import datetime
import json
import os
from typing import TYPE_CHECKING

import numpy as np

from .. import __version__
from .atomic import atomic_open
from .distances import pair_index

if TYPE_CHECKING:  # tables come in as DataFrames; the distance command never imports pandas
    import pandas as pd

BIOM_FORMAT = "Biological Observation Matrix 1.0.0"


def mothur_lines(ids, pairs, max_distance: float):
    """mothur's column lines (text, many a piece) of `pairs`: chunks (i, j, distance) of
    pairs sorted by (i, j), as an edge list holds them; those within max_distance."""
    ids = np.asarray(ids)
    step = 1 << 16  # lines formatted at a time
    for i, j, distance in pairs:
        within = np.flatnonzero(distance <= max_distance)
        for start in range(0, len(within), step):
            rows = within[start:start + step]
            yield "".join(f"{a}\t{b}\t{d:.8e}\n" for a, b, d in
                          zip(ids[i[rows]], ids[j[rows]], distance[rows].tolist()))


def write_mothur_column(path, ids, pairs, max_distance: float) -> None:
    """mothur_lines(ids, pairs, max_distance) into `path`."""
    with atomic_open(path) as fh:
        fh.writelines(mothur_lines(ids, pairs, max_distance))


def write_phylip(path, distances: np.ndarray, ids) -> None:
    """`distances` in SeqDist pair order (distances.pair_index)."""
    with atomic_open(path) as fh:
        fh.write(f"{len(ids)}\n")
        for i, name in enumerate(ids):
            row = distances[pair_index(np.full(i, i), np.arange(i))].tolist()
            fh.write("\t".join([name, *(f"{d:.8e}" for d in row)]) + "\n")


def biom_date() -> str:
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")


def write_biom(path, counts: pd.DataFrame, otus: list[str], centroids: list[str]) -> None:
    """`counts`: one row per cluster, one column per sample; `otus` the rows' observation
    ids (those of the centroids FASTA), each with its centroid's id as metadata."""
    matrix = counts.to_numpy(np.int64)
    rows, cols = np.nonzero(matrix)
    table = {
        "id": None,
        "format": BIOM_FORMAT,
        "format_url": "http://biom-format.org",
        "type": "OTU table",
        "generated_by": f"seqpairs {__version__}",
        "date": biom_date(),
        "rows": [{"id": otu, "metadata": {"centroid": centroid}}
                 for otu, centroid in zip(otus, centroids)],
        "columns": [{"id": str(sample), "metadata": None} for sample in counts.columns],
        "matrix_type": "sparse",
        "matrix_element_type": "int",
        "shape": list(matrix.shape),
        "data": [[int(r), int(c), int(matrix[r, c])] for r, c in zip(rows, cols)],
    }
    with atomic_open(path) as fh:
        json.dump(table, fh, indent=1)
        fh.write("\n")


def write_shared(path, counts: pd.DataFrame, otus: list[str], label: str) -> None:
    """mothur's .shared: `label`, `Group`, `numOtus`, then a column per OTU (its id), a row
    per sample (the columns of `counts`, one row per OTU)."""
    with atomic_open(path) as fh:
        fh.write("\t".join(["label", "Group", "numOtus", *otus]) + "\n")
        for sample in counts.columns:
            values = counts[sample].to_numpy(np.int64).tolist()
            fh.write("\t".join([label, str(sample), str(len(otus)), *map(str, values)]) + "\n")
