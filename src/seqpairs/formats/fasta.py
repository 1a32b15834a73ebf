"""FASTA files of the pipeline's sequences: ingest writes unique.fasta (`>ID;size=N`,
upper-case ACGT, decreasing abundance); the later stages read it (or any clean FASTA) back
here, as a SequenceSet for the all-pairs kernels or as per-record codes for PSSE."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np
from Bio import SeqIO

from ..backends.common import MAX_LENGTH
from ..errors import UserError, cannot_read
from ..scoring.alphabet import DNA, encode_all
from .atomic import STDIO

# Abundances are int64 everywhere (ingest's tables, SequenceSet.sizes, OTU sums).
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class SequenceSet:
    ids: list[str]
    seqs: list[str]
    sizes: np.ndarray  # int64 abundance (1 where the header had no ;size=)
    codes: np.ndarray  # uint8 (scoring.alphabet's codes), all sequences concatenated
    offsets: np.ndarray  # int64, start of sequence k in codes; offsets[n] == len(codes)

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def split_size(header_id: str, where: str = "") -> tuple[str, int]:
    """The id without its usearch/vsearch abundance annotation, and the abundance:
    'read7;size=12' -> ('read7', 12); 'r;size=3;tax=x' -> ('r;tax=x', 3); none -> (id, 1).

    The id is cut at ';' into fields; a field after the first that starts with `size=` is
    the annotation: at most one, its value digits only and at most 2^63 - 1. It is removed
    with its ';' (then trailing ';' too); everything else stays as it is. A UserError
    (`where`: the record) otherwise.
    """
    fields = header_id.split(";")
    found = [k for k in range(1, len(fields)) if fields[k].startswith("size=")]
    if not found:
        return header_id, 1
    if len(found) > 1:
        raise UserError(f"{where}: {len(found)} ;size= fields in the id; an id has at most "
                        "one abundance")
    value = fields[found[0]][len("size="):]
    if not (value.isascii() and value.isdigit()):
        raise UserError(f"{where}: ;size={_shown(value)} is not a whole number")
    digits = value.lstrip("0") or "0"
    if len(digits) > len(str(INT64_MAX)) or int(digits) > INT64_MAX:
        raise UserError(f"{where}: ;size={_shown(value)} is more than 2^63 - 1")
    del fields[found[0]]
    return ";".join(fields).rstrip(";"), int(digits)


def _shown(text: str, most: int = 30) -> str:
    return text if len(text) <= most else f"{text[:most]}..."


def records(path: str):
    """(id without ;size=, abundance, upper-cased sequence) of each record (`-`: standard
    input); a missing file, a file that is no FASTA and a FASTA without records are one
    UserError line."""
    found = False
    try:
        for rec in SeqIO.parse(sys.stdin if path == STDIO else path, "fasta"):
            found = True
            name, size = split_size(rec.id, f"{path}:{rec.id}")
            yield name, size, str(rec.seq).upper()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as exc:  # a folder, no permission, ...
        raise cannot_read(path, exc) from None
    except (ValueError, UnicodeDecodeError) as exc:
        # Biopython's messages can run over lines and sentences: its first sentence, one line
        problem = " ".join(str(exc).split()).split(". ")[0] or type(exc).__name__
        raise UserError(f"{path}: not a FASTA file ({problem})") from None
    if not found:
        raise UserError(f"{path}: no FASTA records")


def read_unique_fasta(path: str, alphabet: str = DNA) -> SequenceSet:
    """A FASTA of unique sequences (ingest's output, or any clean FASTA) in `alphabet`
    (scoring/alphabet.py; ACGT unless a scheme scores other letters)."""
    ids, sizes, seqs = (list(column) for column in zip(*records(path)))
    if sum(sizes) > INT64_MAX:
        raise UserError(f"{path}: the ;size= abundances add up to more than 2^63 - 1")
    codes, offsets = encode_all(seqs, alphabet, path, ids)
    return SequenceSet(ids, seqs, np.asarray(sizes, dtype=np.int64), codes, offsets)


def read_coded_set(path: str, scheme, max_length: int | None = MAX_LENGTH
                   ) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """Ids (position of each) and the records' codes under `scheme`'s alphabet end to end,
    with where each starts (alphabet.encode_all, all records at once); ids must be unique
    and sequences 1 to max_length letters (None: any length)."""
    ids, seqs = {}, []
    for name, _, seq in records(path):
        if name in ids:
            raise UserError(f"{path}:{name}: duplicate id")
        ids[name] = len(seqs)
        seqs.append(seq)
    names = list(ids)
    codes, offsets = encode_all(seqs, scheme.alphabet, path, names)
    lengths = np.diff(offsets)
    if max_length and lengths.size and lengths.max() > max_length:  # alike on every rank
        k = int(np.argmax(lengths > max_length))
        raise UserError(f"{path}:{names[k]}: {lengths[k]} letters, more than the kernels' "
                        f"limit of {max_length}")
    return ids, codes, offsets


def positions(ids: np.ndarray) -> dict[str, int]:
    """Each id's position (one file's ids as read_coded_files gives them)."""
    texts = ids.astype(str) if ids.dtype.kind == "S" else ids
    return {name: k for k, name in enumerate(texts.tolist())}


def read_coded_files(paths: list[str], scheme) -> tuple[list, np.ndarray, np.ndarray]:
    """read_coded_set of each file as (each file's ids in file order, the codes of all
    records end to end, file after file, where each starts): the ids fixed-width bytes
    arrays where formats/bulk.py's reader takes the files (all cores, for millions of
    records), else strings."""
    from . import bulk

    if STDIO not in paths:
        read = bulk.read_fastas(paths, scheme.alphabet)
        if read is not None:
            return read
    parts = [read_coded_set(path, scheme) for path in paths]
    offsets = [np.zeros(1, np.int64)]
    for _, codes, starts in parts:
        offsets.append(starts[1:] + offsets[-1][-1])
    return ([np.array(list(ids), dtype=object) for ids, _, _ in parts],
            np.concatenate([codes for _, codes, _ in parts]), np.concatenate(offsets))


# Files from this size are read by formats/bulk.py: below it Biopython is done before
# Numba has loaded bulk's kernels (0.6 s; 1,000 records: 0.005 s by Biopython)
BULK_FROM_BYTES = 16 << 20


def read_coded(path: str, scheme) -> tuple[dict[str, int], list[np.ndarray]]:
    """read_coded_set's ids, and each record's codes as an array of its own (a large file
    through read_coded_files: all cores where formats/bulk.py takes it)."""
    try:
        large = path != STDIO and os.path.getsize(path) >= BULK_FROM_BYTES
    except OSError:  # read_coded_set says what is wrong
        large = False
    if large:
        (names,), codes, offsets = read_coded_files([path], scheme)
        ids = positions(names)
    else:
        ids, codes, offsets = read_coded_set(path, scheme)
    return ids, [codes[lo:hi] for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
