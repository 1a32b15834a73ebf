"""Fuzzing the FASTA/FASTQ reader: whatever the bytes, ingest either succeeds with a report
that accounts for every record or stops with one UserError; no other exception escapes.

The streaming parser (formats/samples.py) must read the records that Biopython's parsers
read, and fail where they fail, whatever the size of the pieces it reads lines in.

Budget: a few hundred examples per test (seconds in CI). The aligners are fuzzed against
the references in test_distance.py, test_affine.py and test_filter.py.
"""
from __future__ import annotations

import gzip
import io
import tempfile
from pathlib import Path
from unittest import mock

from Bio.SeqIO.FastaIO import SimpleFastaParser
from Bio.SeqIO.QualityIO import FastqGeneralIterator
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from seqpairs.errors import UserError
from seqpairs.formats import samples
from seqpairs.reads.ingest import ingest

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
# Sequence characters: bases, IUPAC, protein-only letters, gaps, digits, blanks, CR, '*'.
SEQUENCE_CHARS = "ACGTUacgtuNRYnry-.EFILPQ0 *\r\t"
HEADER_CHARS = "ab1;=size_ |\r\t>@+"


def outcome(data: bytes, name: str = "in.fa"):
    """The IngestResult, or the UserError, of ingesting one file holding `data`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            return ingest([("s", str(path))])
        except UserError as exc:
            message = str(exc)
            assert "\n" not in message and message, repr(message)
            return exc


def check_result(result) -> None:
    if isinstance(result, UserError):
        return
    report = result.report.set_index("sample").loc["all"]
    dropped = sum(report[c] for c in report.index if c.startswith("dropped_"))
    assert report["records"] == report["kept"] + dropped
    assert report["kept"] == report["unique"] + report["duplicate"]
    assert all(seq and set(seq) <= set("ACGT") for seq in result.seqs)


@SETTINGS
@given(st.binary(max_size=400))
def test_random_bytes(data):
    check_result(outcome(data))


def mostly(valid, odd):
    """Mostly `valid` examples (so that many files ingest), sometimes `odd` ones."""
    return st.one_of(valid, valid, valid, odd)


HEADERS = mostly(st.from_regex(r"[A-Za-z0-9_.]{1,8}(;size=[1-9])?( [a-z ]{0,5})?",
                               fullmatch=True),
                 st.text(HEADER_CHARS, max_size=12))
SEQUENCES = mostly(st.text("ACGT", min_size=1, max_size=15),
                   st.text(SEQUENCE_CHARS, max_size=15))


def fasta_records():
    lines = st.lists(SEQUENCES, max_size=3)
    return st.lists(st.tuples(HEADERS, lines), max_size=6).map(
        lambda records: "".join(f">{h}\n" + "".join(f"{line}\n" for line in ls)
                                for h, ls in records))


def fastq_records():
    # The quality line as long as the sequence, or a random one.
    record = st.tuples(HEADERS, SEQUENCES, mostly(st.none(), st.text("I#!~ ", max_size=16)))
    return st.lists(record, max_size=5).map(
        lambda records: "".join(f"@{h}\n{s}\n+\n{'I' * len(s) if q is None else q}\n"
                                for h, s, q in records))


@SETTINGS
@given(st.one_of(fasta_records(), fastq_records()), st.booleans())
def test_random_records(text, gzipped):
    data = text.encode()
    check_result(outcome(gzip.compress(data) if gzipped else data))


@SETTINGS
@given(fastq_records(), st.integers(0, 200))
def test_truncated_gzip(text, cut):
    data = gzip.compress(text.encode(), mtime=0)
    check_result(outcome(data[: max(0, len(data) - cut)], "in.fq.gz"))


# ---------------------------------------------------------------- the streaming parser


def split_lines(text: str, cuts: list[int]) -> str:
    """`text` with line breaks inserted at the positions `cuts` (multi-line sequences and
    qualities, blank lines)."""
    for cut in sorted(cuts, reverse=True):
        cut = min(cut, len(text))
        text = text[:cut] + "\n" + text[cut:]
    return text


def biopython_records(data: bytes):
    """The (title, sequence) records of Biopython's parsers, or None for a ValueError; read
    through the same universal-newline text layer that samples.py uses."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()
    start = text.lstrip()  # samples.py skips blanks before the first record
    try:
        if start.startswith(">"):
            return list(SimpleFastaParser(io.StringIO(start)))
        return [(t, s) for t, s, _ in FastqGeneralIterator(io.StringIO(start))]
    except ValueError:
        return None


def streamed_records(data: bytes, chunk: int):
    """The (title, sequence) records of samples.read_records with pieces of `chunk`
    characters, or None for a UserError."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.txt"
        path.write_bytes(data)
        with mock.patch.object(samples, "CHUNK", chunk):
            try:
                return [(title, "".join(letters))
                        for _, title, letters in samples.read_records(str(path))]
            except UserError:
                return None


@SETTINGS
@example(">r1\nA\t\t\tC \n\t \n", [], "", 1)  # blanks inside a line, held across pieces
@example("@q1\nAC \nGT\t\n+\nIIII\n", [], " ", 2)
@given(st.one_of(fasta_records(), fastq_records()),
       mostly(st.just([]), st.lists(st.integers(0, 300), min_size=1, max_size=6)),
       st.text(" \t\r\n", max_size=4), st.integers(1, 9))
def test_streaming_parser_reads_what_biopython_reads(text, cuts, blanks, chunk):
    # Pieces of 1 to 9 characters cut lines, trailing blanks and headers everywhere.
    data = (blanks + split_lines(text, cuts)).encode()
    if not data.strip() or data.lstrip()[:1] not in (b">", b"@"):
        return  # sniffed and refused before any parsing (test_random_bytes)
    assert streamed_records(data, chunk) == biopython_records(data)
