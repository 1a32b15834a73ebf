"""Clustering into OTUs: one module per method behind one registry (METHODS), each writing
the OTU tables of otus.py.

  complete, average  fcluster.py  AmpliconNoise FCluster's hierarchical linkage, exactly
                                  (complete also on the identity distance of kept pairs)
  greedy             greedy.py    abundance-ordered centroid clustering of the kept pairs
  opti               opti.py      OptiClust (mothur's default): the OTUs of best MCC

Each method clusters on one or both distances (DISTANCES): the identity distance,
1 - identity of the filter's kept pairs (at --id, as vsearch and mothur cut), or SeqDist's
distance (the distance stage's edge list or full matrix, at --cutoff on its own scale:
about 11 x (1 - identity) for a substitution, see docs/clustering.md). A method module
offers `cluster(request) -> str` (a summary line). The registry imports no method: the
workflow asks it which input a method reads while Snakemake plans the jobs.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

# what each distance is read from: the filter's kept pairs, or the distance stage's files
DISTANCES = ("identity", "seqdist")


@dataclass(frozen=True)
class Method:
    module: str  # the module of this package that runs it
    # per distance it clusters on (DISTANCES), what the workflow gives it: "pairs" (the
    # filter's kept pairs), "edge list" or "full matrix" (the distance stage's)
    reads: dict
    options: tuple[str, ...] = ()  # the options of Request only this method takes
    # the distances on which it also writes PREFIX.list and .otu (every level of its tree)
    levels: tuple[str, ...] = ()


METHODS = {
    "complete": Method("fcluster", {"identity": "pairs", "seqdist": "edge list"},
                       levels=("seqdist",)),
    "average": Method("fcluster", {"seqdist": "full matrix"}, ("weighted",), ("seqdist",)),
    "greedy": Method("greedy", {"identity": "pairs"}, ("psse",)),
    "opti": Method("opti", {"identity": "pairs", "seqdist": "edge list"}),
}
# the defaults of the command line and the workflow (config/schema.yaml says the same):
# OTUs at 97% identity; SeqDist's cutoff of about the same OTUs (docs/clustering.md)
DEFAULT_LINKAGE = "greedy"
DEFAULT_IDENTITY = 0.97
DEFAULT_CUTOFF = 0.3


@dataclass(frozen=True)
class Request:
    """One clustering run, as plain values (the cluster stage builds it from its options)."""

    linkage: str
    prefix: str  # output prefix
    fasta: object = None  # formats.fasta.SequenceSet of --fasta, or None
    fasta_path: str | None = None
    abundance: object = None  # inputs.read_abundance's table of --abundance, or None
    abundance_path: str | None = None
    distances: str | None = None  # SeqDist distance: SeqDist text or edge list
    distance_format: str = "auto"
    resolution: float = 0.01
    cutoff: float = DEFAULT_CUTOFF
    weighted: bool = False
    pairs: str | None = None  # identity distance: the filter's kept pairs
    psse: str | None = None  # greedy: psse's table of those pairs
    identity: float = DEFAULT_IDENTITY
    relabel: str | None = None  # OTU ids PREFIX1, PREFIX2, ... instead of the centroids' ids
    sizeout: bool = False  # ;size=N in the centroids FASTA's headers


def run(request: Request) -> str:
    """Cluster with the request's method; returns its summary line."""
    module = importlib.import_module(f".{METHODS[request.linkage].module}", __name__)
    return module.cluster(request)
