"""Scoring schemes as data, and the one registry of named schemes.

Every scheme is one kind of object (scheme.Scheme: an alphabet, a substitution table over
its codes, gap costs, its own bounds), in one of three families:
  seqdist  SeqDistScheme  AmpliconNoise's SeqDist costs, minimised (docs/seqdist.md)
  affine   AffineScheme   integer global alignment, affine gaps, separate end gaps
  local    LocalScheme    integer Smith-Waterman-Gotoh (PSSE)
Stages run the families in FAMILIES; `names(stage)` lists the registered schemes a stage
takes (its --scoring choices, the config schema's enum). Importing this package needs no
NumPy: the workflow asks it about schemes while Snakemake plans the jobs.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UserError
from .affine import AffineScheme
from .local import LocalScheme
from .scheme import Scheme
from .seqdist import SeqDistScheme


@dataclass(frozen=True)
class Entry:
    family: str
    summary: str
    build: Callable[[], Scheme]  # called once, on first use (a matrix loads Biopython)
    letters: str = "dna"  # what it scores, "dna" or "protein", known without building it


REGISTRY = {
    "seqdist": Entry("seqdist", "AmpliconNoise's SeqDist costs (Tran.dat, gaps 15 and 4)",
                     SeqDistScheme.amplicon_noise),
    # vsearch's defaults (--match 2 --mismatch -4 --gapopen 20I/2E --gapext 2I/1E): a gap of
    # k columns costs 20 + 2 (k - 1) inside and 2 + (k - 1) at an end (AffineScheme.usearch).
    # The filter traces it with vsearch's choice among equal-score paths.
    "vsearch": Entry("affine", "vsearch's default global alignment scoring",
                     lambda: AffineScheme.usearch(2, -4, 20, 2, 2, 1)),
    # global protein alignment as parasail's nw with BLOSUM62 scores it (parasail's gap
    # open 12, extend 1: its opening includes the first column)
    "blosum62": Entry("affine", "BLOSUM62 global alignment, gaps 11 + k (end gaps too)",
                      lambda: AffineScheme.from_matrix("BLOSUM62", 11, 1), "protein"),
    "blastn": Entry("local", "BLASTN's defaults (blastn task): +2/-3, gaps 5 + 2k",
                    lambda: LocalScheme.dna(2, -3, 5, 2)),
    "blastp": Entry("local", "BLASTP's defaults: BLOSUM62, gaps 11 + k",
                    lambda: LocalScheme.from_matrix("BLOSUM62", 11, 1), "protein"),
}
# The families each stage runs.
FAMILIES = {"distance": ("seqdist", "affine"), "filter": ("seqdist", "affine"), "psse": ("local",)}


@functools.cache
def get(name: str) -> Scheme:
    """The registered scheme `name`; UserError listing the names when there is none."""
    entry = REGISTRY.get(name)
    if entry is None:
        raise UserError(f"unknown scoring scheme {name!r}; registered: {', '.join(REGISTRY)}")
    return entry.build()


def name_of(scheme: Scheme) -> str:
    """The registered name of `scheme`; an unregistered one (a test's) goes by its family.
    Only the schemes of its family are built (a matrix loads Biopython)."""
    return next((name for name, entry in REGISTRY.items()
                 if entry.family == scheme.family and get(name) == scheme), scheme.family)


def names(stage: str) -> tuple[str, ...]:
    """The registered schemes that `stage` runs."""
    return tuple(name for name, entry in REGISTRY.items() if entry.family in FAMILIES[stage])


def filter_reads_edge_list(filter_scheme: str, distance_scheme: str) -> bool:
    """Whether the filter under `filter_scheme` takes its candidates from an edge list made
    under `distance_scheme`: only that scheme's counts bound the filter's identities, so
    under any other the filter aligns every pair itself."""
    return filter_scheme == distance_scheme


__all__ = ["AffineScheme", "LocalScheme", "Scheme", "SeqDistScheme", "get", "names",
           "filter_reads_edge_list", "name_of", "REGISTRY", "FAMILIES"]
