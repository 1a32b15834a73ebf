"""Unique-sequence sets as the distance, filter and cluster stages read them.

The ingest stage writes `unique.fasta` (records `>ID;size=N`, upper-case ACGT).
Here they are read back and encoded for the kernels: codes in SeqDist's order
A=0, C=1, T=2, G=3, all sequences concatenated with offsets.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from Bio import SeqIO

from .errors import UserError

# SeqDist indexes its cost table A, C, T, G (T before G).
ALPHABET = "ACTG"
_CODE = np.full(256, 255, dtype=np.uint8)
for _k, _c in enumerate(ALPHABET):
    _CODE[ord(_c)] = _k

_SIZE = re.compile(r";size=(\d+)(?=;|$)")


@dataclass(frozen=True)
class SequenceSet:
    ids: list[str]
    seqs: list[str]
    sizes: np.ndarray  # int64 abundance (1 where the header had no ;size=)
    codes: np.ndarray  # uint8, all sequences concatenated
    offsets: np.ndarray  # int64, start of sequence k in codes; offsets[n] == len(codes)

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def encode(seqs: list[str], source: str = "<sequences>", ids: list[str] | None = None):
    """Concatenate and encode sequences; raise UserError on any non-ACGT letter."""
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    raw = np.frombuffer("".join(seqs).encode("ascii", "replace"), dtype=np.uint8)
    codes = _CODE[raw]
    bad = np.flatnonzero(codes == 255)
    if bad.size:
        k = int(np.searchsorted(offsets, bad[0], side="right") - 1)
        name = ids[k] if ids else str(k + 1)
        letter = chr(raw[bad[0]])
        raise UserError(f"{source}:{name}: letter {letter!r} is not A, C, G or T")
    for k, s in enumerate(seqs):
        if not s:
            name = ids[k] if ids else str(k + 1)
            raise UserError(f"{source}:{name}: empty sequence")
    return codes, offsets


def split_size(header_id: str) -> tuple[str, int]:
    """'read7;size=12' -> ('read7', 12); 'r;size=3;tax=x' -> ('r;tax=x', 3); none -> (id, 1)."""
    m = _SIZE.search(header_id)
    if not m:
        return header_id, 1
    return (header_id[: m.start()] + header_id[m.end():]).rstrip(";"), int(m.group(1))


def read_unique_fasta(path: str) -> SequenceSet:
    """Read a FASTA of unique ACGT sequences (ingest's output, or any clean FASTA)."""
    ids, seqs, sizes = [], [], []
    try:
        for rec in SeqIO.parse(path, "fasta"):
            name, size = split_size(rec.id)
            ids.append(name)
            seqs.append(str(rec.seq).upper())
            sizes.append(size)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (ValueError, UnicodeDecodeError) as exc:
        # Biopython's messages can run over lines and sentences: its first sentence, one line
        problem = " ".join(str(exc).split()).split(". ")[0] or type(exc).__name__
        raise UserError(f"{path}: not a FASTA file ({problem})") from None
    if not ids:
        raise UserError(f"{path}: no FASTA records")
    codes, offsets = encode(seqs, path, ids)
    return SequenceSet(ids, seqs, np.asarray(sizes, dtype=np.int64), codes, offsets)
