"""Clustering into OTUs: one module per method behind one registry (METHODS), each writing
the OTU tables of otus.py.

  complete, average  fcluster.py  AmpliconNoise FCluster's hierarchical linkage, exactly
  greedy             greedy.py    abundance-ordered centroid clustering of the kept pairs

A method module offers `cluster(request) -> str` (a summary line). The registry imports no
method: the workflow asks it which input a method reads while Snakemake plans the jobs.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    module: str  # the module of this package that runs it
    reads: str  # what the workflow gives it: "edge list", "full matrix" or "pairs"
    options: tuple[str, ...] = ()  # the options of Request only this method takes


METHODS = {
    "complete": Method("fcluster", "edge list"),
    "average": Method("fcluster", "full matrix", ("weighted",)),
    "greedy": Method("greedy", "pairs", ("pairs", "psse")),
}


@dataclass(frozen=True)
class Request:
    """One clustering run, as plain values (the cluster stage builds it from its options)."""

    linkage: str
    prefix: str  # output prefix
    fasta: object = None  # formats.fasta.SequenceSet of --fasta, or None
    fasta_path: str | None = None
    abundance: object = None  # inputs.read_abundance's table of --abundance, or None
    abundance_path: str | None = None
    distances: str | None = None  # hierarchical: SeqDist text or edge list
    distance_format: str = "auto"
    resolution: float = 0.01
    cutoff: float = 0.03
    weighted: bool = False
    pairs: str | None = None  # greedy: the filter's kept pairs
    psse: str | None = None  # greedy: psse's table of those pairs
    identity: float = 0.97
    relabel: str | None = None  # OTU ids PREFIX1, PREFIX2, ... instead of the centroids' ids
    sizeout: bool = False  # ;size=N in the centroids FASTA's headers


def run(request: Request) -> str:
    """Cluster with the request's method; returns its summary line."""
    module = importlib.import_module(f".{METHODS[request.linkage].module}", __name__)
    return module.cluster(request)
