"""Sample files as ingest reads them: FASTA or FASTQ, plain or gzip, LF or CRLF, from a
file, a pipe, a FIFO, process substitution or standard input (`-`).

Each sample is opened once and read as one stream, front to back: gzip is recognised by
its magic bytes at the start of that stream, FASTA or FASTQ by its first non-blank
character (blanks before it, blank lines or spaces, are skipped), and the records are
parsed from the same stream. Nothing is read twice, so a pipe loses nothing.

No line is held whole: lines are read in pieces of at most CHUNK characters and a
record's sequence reaches the caller as pieces (`read_records`), so a read of any length
costs bounded memory; headers longer than MAX_HEADER characters are refused. The records
are those of Biopython's SimpleFastaParser and FastqGeneralIterator (the parsers this
module replaced; tests/test_fuzz_reader.py compares them), with their error messages.

Every read error is one UserError line naming the file and record.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import sys
import zlib
from pathlib import Path

from ..errors import UserError, cannot_read
from .fasta import split_size

GZIP_MAGIC = b"\x1f\x8b"
SEQUENCE_SUFFIXES = (".fastq", ".fq", ".fasta", ".fa", ".fna")
STDIN = "-"  # the path that names standard input
CHUNK = 1 << 16  # characters read at a time
MAX_HEADER = 1 << 20  # characters of a header line (`>`, `@` or `+` line)
MAX_BLANK_RUN = 1 << 16  # characters of a run of whitespace inside a line that are kept


def sample_name(path: str) -> str:
    """File name without .gz and one sequence-format extension: 'a/s1.fastq.gz' -> 's1'."""
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    for suffix in SEQUENCE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


class _Replay(io.RawIOBase):
    """A binary stream whose first bytes (`head`) were read already, then the rest of `rest`."""

    def __init__(self, head: bytes, rest):
        self.head, self.rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        return self.rest.readinto(buffer)


@contextlib.contextmanager
def open_sample(path: str):
    """The text of one sample (`-`: standard input), from one open: gzip data, recognised by
    its magic bytes, is decompressed on the way."""
    try:
        raw = sys.stdin.buffer if path == STDIN else open(path, "rb")
    except OSError as exc:
        raise cannot_read(path, exc) from None
    try:
        head = b""
        while len(head) < len(GZIP_MAGIC):  # a pipe may hand over one byte at a time
            try:
                more = raw.read(len(GZIP_MAGIC) - len(head))
            except OSError as exc:
                raise cannot_read(path, exc) from None
            if not more:
                break
            head += more
        stream = io.BufferedReader(_Replay(head, raw))
        if head == GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")
        yield io.TextIOWrapper(stream, encoding="utf-8")  # universal newlines, as open()
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()


def _decode_problem(exc: Exception) -> str:
    if isinstance(exc, EOFError):
        return f"gzip data truncated ({exc})"
    if isinstance(exc, (gzip.BadGzipFile, zlib.error)):
        return f"corrupt gzip data ({exc})"
    if isinstance(exc, UnicodeDecodeError):
        return "not a text file (bytes that are not UTF-8)"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot read ({exc.strerror})"
    return str(exc)


_READ_ERRORS = (ValueError, EOFError, OSError, zlib.error)  # UnicodeDecodeError is a ValueError


class _Lines:
    """The lines of a text stream as pieces of at most CHUNK characters.

    `read` gives (text, ends_line): text without its newline, and whether the line ends
    there; None at the end of the stream. `ahead` is a piece read before (by the sniffing).
    """

    def __init__(self, handle, ahead: tuple[str, bool]):
        self.handle, self.ahead = handle, ahead

    def read(self) -> tuple[str, bool] | None:
        if self.ahead is not None:
            piece, self.ahead = self.ahead, None
            return piece
        text = self.handle.readline(CHUNK)
        if not text:
            return None
        if text.endswith("\n"):
            return text[:-1], True
        return text, len(text) < CHUNK  # shorter without a newline: the file's last line

    def rest_of_line(self, piece: tuple[str, bool] | None):
        """The texts of the line that starts with `piece`, up to its end."""
        while piece is not None:
            yield piece[0]
            if piece[1]:
                return
            piece = self.read()

    def stripped(self, piece: tuple[str, bool], drop: str = ""):
        """_stripped of the line that starts with `piece`."""
        if not piece[1]:
            return _stripped(self.rest_of_line(piece), drop)
        text = piece[0]  # the whole line: the usual case, done at once
        for char in drop:
            text = text.replace(char, "")
        text = text.rstrip()
        return (text,) if text else ()

    def header(self, piece: tuple[str, bool]) -> str:
        """The line that starts with `piece`, less its first character and its trailing
        whitespace (a header's title); at most MAX_HEADER characters."""
        if piece[1]:
            return piece[0][1:].rstrip()
        texts, size = [], 0
        for text in self.rest_of_line(piece):
            size += len(text)
            if size > MAX_HEADER:
                raise ValueError(f"header line longer than {MAX_HEADER:,} characters")
            texts.append(text)
        return "".join(texts)[1:].rstrip()


def _stripped(texts, drop: str = ""):
    """The texts of one line without the line's trailing whitespace (str.rstrip of the whole
    line) and without the characters of `drop`.

    A run of whitespace is held back until text follows it (then it was inside the line);
    of a longer run only its first MAX_BLANK_RUN characters are kept, so that memory stays
    bounded (a sequence with such a run is refused by its first blank anyway).
    """
    held = ""
    for text in texts:
        for char in drop:
            text = text.replace(char, "")
        body = text.rstrip()
        if body:
            yield held + body
            held = text[len(body):][:MAX_BLANK_RUN]
        else:
            held = (held + text)[:MAX_BLANK_RUN]


def _stripped_length(texts) -> int:
    """len(line.rstrip()) of one line given as texts."""
    length = held = 0
    for text in texts:
        body = text.rstrip()
        if body:
            length += held + len(body)
            held = len(text) - len(body)
        else:
            held += len(text)
    return length


class _Parser:
    """Records of a FASTA or FASTQ stream: (title, letters) where `letters` yields the
    sequence in pieces and must be read (or dropped) before the next record is asked for.

    `number` is the record being read, for error messages: a record's last line (FASTA:
    the header line after it; FASTQ: the header of the next record, or the end of the file)
    still belongs to it.
    """

    def __init__(self, lines: _Lines):
        self.lines = lines
        self.number = 1

    def fasta(self):
        """As Biopython's SimpleFastaParser: a sequence is its lines without their trailing
        whitespace, joined, without spaces."""
        line = self.lines.read()  # starts with '>' (sniffed)
        while line is not None:
            title = self.lines.header(line)
            following = []

            def letters():
                while True:
                    first = self.lines.read()
                    if first is None or first[0].startswith(">"):
                        following.append(first)
                        return
                    yield from self.lines.stripped(first, drop=" ")

            sequence = letters()
            yield title, sequence
            for _ in sequence:  # what the caller left unread
                pass
            line = following[0]
            self.number += line is not None

    def fastq(self):
        """As Biopython's FastqGeneralIterator: sequence and quality may span lines; the
        quality has as many characters as the sequence has letters."""
        line = self.lines.read()  # starts with '@' (sniffed)
        while True:
            if not line[0].startswith("@"):
                raise ValueError("Records in Fastq files should start with '@' character")
            title = self.lines.header(line)
            plus, count = [], [0]

            def letters():
                while True:
                    first = self.lines.read()
                    if first is None:
                        raise ValueError("End of file without quality information." if count[0]
                                         else "Unexpected end of file")
                    if first[0].startswith("+"):
                        plus.append(first)
                        return
                    for text in self.lines.stripped(first):
                        if " " in text or "\t" in text:
                            raise ValueError("Whitespace is not allowed in the sequence.")
                        count[0] += len(text)
                        yield text

            sequence = letters()
            yield title, sequence
            for _ in sequence:
                pass
            caption = self.lines.header(plus[0])
            if caption and caption != title:
                raise ValueError("Sequence and quality captions differ.")
            line = self._quality(title, count[0])
            if line is None:
                return
            self.number += 1

    def _quality(self, title: str, length: int):
        """Read the quality lines of a sequence of `length` letters; the first piece of the
        next record's header, or None at the end of the file."""
        quality, line, seen = 0, None, False
        while True:
            line = self.lines.read()
            if line is None:
                if not seen:
                    raise ValueError("Unexpected end of file")
                break
            seen = True
            # a line starting with '@' is quality data until the quality is complete
            if line[0].startswith("@") and quality >= length:
                break
            quality += (len(line[0].rstrip()) if line[1] else
                        _stripped_length(self.lines.rest_of_line(line)))
        if quality != length:
            raise ValueError(f"Lengths of sequence and quality values differs for {title} "
                             f"({length} and {quality}).")
        return line


def _first_piece(handle) -> tuple[str, bool] | None:
    """The stream's first piece from its first non-blank character on; None if all blank."""
    while True:
        text = handle.readline(CHUNK)
        if not text:
            return None
        start = text.lstrip()
        if start:
            if start.endswith("\n"):
                return start[:-1], True
            return start, len(text) < CHUNK


def _guarded(path: str, parser: _Parser, letters):
    """`letters`, with a read error becoming a UserError naming the record."""
    try:
        yield from letters
    except _READ_ERRORS as exc:
        raise UserError(f"{path}:record {parser.number}: {_decode_problem(exc)}") from None


def read_records(path: str):
    """Yield (number, header, letters) for each record of one sample, read once as a stream.

    `letters` yields the record's sequence in pieces (see the module docstring); read it
    before asking for the next record. The format and gzip are sniffed from the stream;
    every read or parse error is a UserError naming the file and the record.
    """
    with open_sample(path) as handle:
        try:
            first = _first_piece(handle)
        except _READ_ERRORS as exc:
            raise UserError(f"{path}: {_decode_problem(exc)}") from None
        if first is None:  # an empty sample (a failed library, a QC that kept nothing)
            return
        start = first[0][0]
        if start not in ">@":
            raise UserError(f"{path}: not FASTA or FASTQ (starts with {start!r}, not '>' or '@')")
        parser = _Parser(_Lines(handle, first))
        records = parser.fasta() if start == ">" else parser.fastq()
        try:
            for title, letters in records:
                yield parser.number, title, _guarded(path, parser, letters)
        except _READ_ERRORS as exc:
            raise UserError(f"{path}:record {parser.number}: {_decode_problem(exc)}") from None


def record_id(path: str, number: int, title: str) -> tuple[str, int]:
    """(id, abundance) from a header: first word, its `;size=N` removed and returned
    (fasta.split_size)."""
    words = title.split(maxsplit=1)
    if not words:
        raise UserError(f"{path}:record {number}: empty record id")
    name, size = split_size(words[0], f"{path}:{words[0]}")
    if size < 1:
        raise UserError(f"{path}:{name}: abundance ;size={size} is below 1")
    return name, size
