"""Whole-file FASTA reading and table writing on all cores (Numba), for `seqpairs align`'s
millions of records: the same results as formats/fasta.py's Biopython path and
formats/tables.write_tsv, for the inputs they take.

The reader takes the plain FASTA most files are: records that start with '>' at the start
of a line, an ASCII id (the title's first word, no `;size=`, no quote), and sequence lines
of the alphabet's letters in either case; every record 1 to MAX_LENGTH letters, ids
unique. Anything else (standard input, CR line ends, spaces or other bytes in a sequence,
an empty id or sequence, a duplicate id) makes it return None, and the caller reads the
file with Biopython, which gives the same result or the one-line error it names.
"""
from __future__ import annotations

import mmap

import numpy as np
from numba import njit, prange

from ..limits import MAX_LENGTH
from ..scoring.alphabet import NOT_A_LETTER, code_table

NEWLINE, TITLE, TAB, SPACE, QUOTE = 10, 62, 9, 32, 34
SIZE = np.frombuffer(b"size=", np.uint8)  # ids holding it go to fasta.split_size


@njit(parallel=True, cache=True)
def _count_titles(buf, bounds):
    """Records starting in each chunk [bounds[c], bounds[c + 1])."""
    counts = np.zeros(len(bounds) - 1, np.int64)
    for c in prange(len(bounds) - 1):
        k = 0
        for x in range(bounds[c], bounds[c + 1]):
            if buf[x] == TITLE and (x == 0 or buf[x - 1] == NEWLINE):
                k += 1
        counts[c] = k
    return counts


@njit(parallel=True, cache=True)
def _fill_titles(buf, bounds, first, starts):
    for c in prange(len(bounds) - 1):
        k = first[c]
        for x in range(bounds[c], bounds[c + 1]):
            if buf[x] == TITLE and (x == 0 or buf[x - 1] == NEWLINE):
                starts[k] = x
                k += 1


@njit(parallel=True, cache=True)
def _scan(buf, starts, table, size, id_end, seq_start, lengths):
    """Per record: where its id ends and its sequence starts, its letters; returns the
    records the reader does not take (see the module doc), 0 when none."""
    n = len(starts)
    bad = np.zeros(n, np.uint8)
    for r in prange(n):
        stop = starts[r + 1] if r + 1 < n else len(buf)
        x = starts[r] + 1
        while x < stop and buf[x] != NEWLINE and buf[x] != SPACE and buf[x] != TAB:
            if buf[x] < SPACE or buf[x] >= 127 or buf[x] == QUOTE:
                bad[r] = 1
            x += 1
        id_end[r] = x
        if x == starts[r] + 1:
            bad[r] = 1
        for y in range(starts[r] + 1, x - len(size) + 1):
            same = True
            for z in range(len(size)):
                if buf[y + z] != size[z]:
                    same = False
                    break
            if same:
                bad[r] = 1
        while x < stop and buf[x] != NEWLINE:  # the rest of the title
            if (buf[x] < SPACE and buf[x] != TAB) or buf[x] >= 127:
                bad[r] = 1
            x += 1
        seq_start[r] = x + 1
        letters = 0
        for y in range(x + 1, stop):
            if buf[y] != NEWLINE:
                if table[buf[y]] == NOT_A_LETTER:
                    bad[r] = 1
                letters += 1
        lengths[r] = letters
    return bad.sum()


@njit(parallel=True, cache=True)
def _copy(buf, starts, seq_start, table, offsets, codes, id_end, width, names):
    n = len(starts)
    for r in prange(n):
        stop = starts[r + 1] if r + 1 < n else len(buf)
        o = offsets[r]
        for y in range(seq_start[r], stop):
            if buf[y] != NEWLINE:
                codes[o] = table[buf[y]]
                o += 1
        for z in range(id_end[r] - starts[r] - 1):  # the id follows the '>'
            names[r * width + z] = buf[starts[r] + 1 + z]


def _letters_table(alphabet: str) -> np.ndarray:
    """code_table with each letter's lower case too (fasta.records upper-cases)."""
    table = code_table(alphabet)
    lower = np.frombuffer(alphabet.lower().encode("ascii"), np.uint8)
    table[lower] = np.arange(len(alphabet))
    return table


@njit(parallel=True, cache=True)
def _hashes(names, width):
    """FNV-1a of each id (names: n x width bytes)."""
    n = len(names) // width
    out = np.empty(n, np.uint64)
    for r in prange(n):
        h = np.uint64(14695981039346656037)
        for z in range(width):
            h = (h ^ np.uint64(names[r * width + z])) * np.uint64(1099511628211)
        out[r] = h
    return out


def _unique(names: np.ndarray) -> bool:
    """Whether the ids (a fixed-width bytes array) are all different: their hashes sorted,
    and the ids whose hash is met twice compared."""
    hashes = _hashes(names.view(np.uint8), names.itemsize)
    ordered = np.sort(hashes)
    twice = ordered[1:][ordered[1:] == ordered[:-1]]
    if not twice.size:
        return True
    suspects = names[np.isin(hashes, twice)]
    return len(np.unique(suspects)) == len(suspects)


class _Scanned:
    """A file the reader takes, scanned: its bytes, records and their letters."""

    def __init__(self, buf, starts, id_end, seq_start, lengths):
        self.buf, self.starts, self.id_end = buf, starts, id_end
        self.seq_start, self.lengths = seq_start, lengths


def _scan_file(path: str, table: np.ndarray, chunks: int) -> _Scanned | None:
    try:
        with open(path, "rb") as fh:
            if not fh.read(1) == b">":
                return None
            # mapped with its pages in place (the kernel fills them in one go, not 16
            # threads faulting page by page)
            view = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ,
                             flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
    except (OSError, ValueError):  # no such file, a folder, standard input, empty: Biopython
        return None
    buf = np.frombuffer(view, np.uint8)
    bounds = np.linspace(0, len(buf), min(chunks, len(buf)) + 1).astype(np.int64)
    counts = _count_titles(buf, bounds)
    first = np.r_[0, np.cumsum(counts)[:-1]]
    starts = np.empty(int(counts.sum()), np.int64)
    _fill_titles(buf, bounds, first, starts)
    n = len(starts)
    id_end, seq_start, lengths = (np.empty(n, np.int64) for _ in range(3))
    if _scan(buf, starts, table, SIZE, id_end, seq_start, lengths):
        return None
    if lengths.min() < 1 or lengths.max() > MAX_LENGTH:
        return None
    return _Scanned(buf, starts, id_end, seq_start, lengths)


def read_fastas(paths: list[str], alphabet: str, chunks: int = 256):
    """(each file's ids as a fixed-width bytes array, the codes of all their records end
    to end, file after file, and where each record starts) when the reader takes every
    file, else None (module doc)."""
    table = _letters_table(alphabet)
    scanned = []
    for path in paths:
        one = _scan_file(path, table, chunks)
        if one is None:
            return None
        scanned.append(one)
    lengths = np.concatenate([one.lengths for one in scanned])
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    codes = np.empty(int(offsets[-1]), np.uint8)
    names, first = [], 0
    for one in scanned:
        n = len(one.starts)
        width = int((one.id_end - one.starts - 1).max())
        text = np.zeros(n * width, np.uint8)
        _copy(one.buf, one.starts, one.seq_start, table, offsets[first:], codes,
              one.id_end, width, text)
        first += n
        ids = text.view(f"S{width}")
        if not _unique(ids):  # Biopython's path names the first duplicate
            return None
        names.append(ids)
    return names, codes, offsets


@njit(inline="always")
def _width(v):
    """Characters of str(v)."""
    width = 1 if v >= 0 else 2
    v = abs(v)
    while v >= 10:
        v //= 10
        width += 1
    return width


@njit(inline="always")
def _put_int(out, o, v):
    """str(v) into out from o; returns where it ends."""
    width = _width(v)
    if v < 0:
        out[o] = 45
        v = -v
    last = o + width - 1  # digits from the last one back
    while True:
        out[last] = 48 + v % 10
        v //= 10
        last -= 1
        if v == 0:
            break
    return o + width


@njit(parallel=True, cache=True)
def _field_lengths(text, lengths):
    """Each row's text up to its trailing NULs; returns the rows the writer does not take
    (a tab, quote, line end, NUL inside or non-ASCII byte: pandas would quote or differ)."""
    bad = np.zeros(text.shape[0], np.uint8)
    for r in prange(text.shape[0]):
        end = text.shape[1]
        while end > 0 and text[r, end - 1] == 0:
            end -= 1
        for z in range(end):
            b = text[r, z]
            if b == TAB or b == QUOTE or b == NEWLINE or b == 13 or b == 0 or b >= 128:
                bad[r] = 1
        lengths[r] = end
    return bad.sum()


@njit(parallel=True, cache=True)
def _row_lengths(is_text, index, ints, text_lengths, out):
    for r in prange(len(out)):
        total = len(is_text)  # the tabs and the newline
        for c in range(len(is_text)):
            total += text_lengths[index[c], r] if is_text[c] else _width(ints[index[c], r])
        out[r] = total


@njit(parallel=True, cache=True)
def _write_rows(is_text, index, ints, text, text_start, text_lengths, row_offsets, out):
    """Row r at row_offsets[r]: its fields tab-separated (integers as str() writes them,
    texts copied), then a newline."""
    for r in prange(len(row_offsets) - 1):
        o = row_offsets[r]
        for c in range(len(is_text)):
            if c:
                out[o] = TAB
                o += 1
            k = index[c]
            if is_text[c]:
                for z in range(text_lengths[k, r]):
                    out[o + z] = text[r, text_start[k] + z]
                o += text_lengths[k, r]
            else:
                o = _put_int(out, o, ints[k, r])
        out[o] = NEWLINE


@njit(parallel=True, cache=True)
def _runs_width(run_offsets, lengths, out):
    for k in prange(len(run_offsets) - 1):
        width = 0
        for r in range(run_offsets[k], run_offsets[k + 1]):
            width += _width(lengths[r]) + 1
        out[k] = max(width, 1)  # "*" for none


@njit(parallel=True, cache=True)
def _runs_write(run_offsets, ops, lengths, letters, text):
    for k in prange(len(run_offsets) - 1):
        o = 0
        if run_offsets[k] == run_offsets[k + 1]:
            text[k, 0] = 42
        for r in range(run_offsets[k], run_offsets[k + 1]):
            o = _put_int(text[k], o, lengths[r])
            text[k, o] = letters[ops[r]]
            o += 1


def runs_text(run_offsets: np.ndarray, ops: np.ndarray, lengths: np.ndarray,
              letters: str) -> np.ndarray:
    """Each pair's runs as CIGAR text (length, then the op's letter; "*" for none), a
    fixed-width bytes array."""
    n = len(run_offsets) - 1
    widths = np.zeros(n, np.int64)
    _runs_width(run_offsets, lengths, widths)
    text = np.zeros((n, int(widths.max(initial=1))), np.uint8)
    _runs_write(run_offsets, ops, lengths.astype(np.int64),
                np.frombuffer(letters.encode("ascii"), np.uint8), text)
    return text.reshape(-1).view(f"S{text.shape[1]}")


def table_bytes(names: list[str], columns: list[np.ndarray]) -> list | None:
    """The TSV (header, then rows) that tables.write_tsv writes for these columns, as
    buffers to write in turn, when each column is integers or fixed-width ASCII bytes
    without tabs, quotes or line ends; else None."""
    if not columns or any(c.dtype.kind not in "iuS" for c in columns):
        return None
    n = len(columns[0])
    is_text = np.array([c.dtype.kind == "S" for c in columns])
    texts = [c for c in columns if c.dtype.kind == "S"]
    number = [c for c in columns if c.dtype.kind != "S"]
    index = np.zeros(len(columns), np.int64)
    index[is_text] = np.arange(len(texts))
    index[~is_text] = np.arange(len(number))
    ints = np.zeros((len(number), n), np.int64)
    for k, column in enumerate(number):
        ints[k] = column
    widths = [c.itemsize for c in texts]
    text_start = np.r_[0, np.cumsum(widths)].astype(np.int64)
    text = np.zeros((n, int(text_start[-1])), np.uint8)
    text_lengths = np.zeros((len(texts), n), np.int64)
    for k, column in enumerate(texts):
        text[:, text_start[k]:text_start[k + 1]] = \
            np.ascontiguousarray(column).view(np.uint8).reshape(n, widths[k])
        if _field_lengths(text[:, text_start[k]:text_start[k + 1]], text_lengths[k]):
            return None
    row_offsets = np.zeros(n + 1, np.int64)
    _row_lengths(is_text, index, ints, text_lengths, row_offsets[1:])
    np.cumsum(row_offsets, out=row_offsets)
    out = np.empty(int(row_offsets[-1]), np.uint8)
    _write_rows(is_text, index, ints, text, text_start, text_lengths, row_offsets, out)
    return [("\t".join(names) + "\n").encode(), out]
