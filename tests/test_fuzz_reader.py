"""Fuzzing the FASTA/FASTQ reader: whatever the bytes, ingest either succeeds with a report
that accounts for every record or stops with one UserError; no other exception escapes.

Budget: a few hundred examples per test (seconds in CI). The aligners are fuzzed against
the references in test_distance.py, test_affine.py and test_filter.py.
"""
from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqpairs.errors import UserError
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
