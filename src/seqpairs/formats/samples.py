"""Sample files as ingest reads them: FASTA or FASTQ (sniffed from the first character),
plain or gzip (sniffed from the magic bytes), LF or CRLF; every read error is one
UserError line naming the file and record."""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from Bio.SeqIO.FastaIO import SimpleFastaParser
from Bio.SeqIO.QualityIO import FastqGeneralIterator

from ..errors import UserError
from .fasta import split_size

GZIP_MAGIC = b"\x1f\x8b"
SEQUENCE_SUFFIXES = (".fastq", ".fq", ".fasta", ".fa", ".fna")


def sample_name(path: str) -> str:
    """File name without .gz and one sequence-format extension: 'a/s1.fastq.gz' -> 's1'."""
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    for suffix in SEQUENCE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _open_text(path: str):
    try:
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == GZIP_MAGIC
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    if gzipped:
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _decode_problem(exc: Exception) -> str:
    if isinstance(exc, EOFError):
        return f"gzip data truncated ({exc})"
    if isinstance(exc, (gzip.BadGzipFile, zlib.error)):
        return f"corrupt gzip data ({exc})"
    if isinstance(exc, UnicodeDecodeError):
        return "not a text file (bytes that are not UTF-8)"
    return str(exc)


_READ_ERRORS = (ValueError, EOFError, OSError, zlib.error)  # UnicodeDecodeError is a ValueError


def sniff_format(path: str) -> str:
    """'fasta' or 'fastq' from the first non-blank character; UserError otherwise."""
    try:
        with _open_text(path) as handle:
            first = next((line.lstrip()[0] for line in handle if line.strip()), None)
    except _READ_ERRORS as exc:
        raise UserError(f"{path}: {_decode_problem(exc)}") from None
    if first is None:
        raise UserError(f"{path}: empty file (no records)")
    if first not in ">@":
        raise UserError(f"{path}: not FASTA or FASTQ (starts with {first!r}, not '>' or '@')")
    return "fasta" if first == ">" else "fastq"


def read_records(path: str):
    """Yield (number, header, sequence) for each record; parse errors become UserError."""
    fmt = sniff_format(path)
    number = 0
    try:
        with _open_text(path) as handle:
            if fmt == "fasta":
                records = SimpleFastaParser(handle)
            else:
                records = ((title, seq) for title, seq, _ in FastqGeneralIterator(handle))
            for number, (title, seq) in enumerate(records, start=1):
                yield number, title, seq
    except _READ_ERRORS as exc:
        raise UserError(f"{path}:record {number + 1}: {_decode_problem(exc)}") from None


def record_id(path: str, number: int, title: str) -> tuple[str, int]:
    """(id, abundance) from a header: first word, `;size=N` removed and returned."""
    name, size = split_size(title)
    words = name.split(maxsplit=1)
    if not words:
        raise UserError(f"{path}:record {number}: empty record id")
    if size < 1:
        raise UserError(f"{path}:{words[0]}: abundance ;size={size} is below 1")
    return words[0], size
