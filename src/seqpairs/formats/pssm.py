"""Position-specific scoring matrices of PSI-BLAST's ASCII format (`psiblast ...
-out_ascii_pssm FILE`, BLAST+ 2.x), as the score tables `seqpairs psse` scores queries with.

The format, line by line:
  - a blank line and a title ("Last position-specific scoring matrix computed, ...");
  - the header: the 20 column letters (A R N D C Q E G H I L K M F P S T W Y V), once for
    the scores and once more for the weighted observed percentages;
  - one row per query position: its number (1, 2, ... m, in order), the query letter, 20
    integer scores, 20 integer percentages, the information per position and the relative
    weight of gapless real matches to pseudocounts (two decimals);
  - a blank line, then the K and Lambda values: a "K Lambda" heading and lines such as
    "Standard Ungapped 0.1380 0.3268".
Only the scores are kept; every other field is checked to be a number of its kind, and a
file without the K/Lambda lines (one cut short after a row) is refused, so that no row is
silently lost. Lines before the header are its title (text, no position rows).

Each score goes to the scheme's code of the letter its column is headed with, never by the
column's place. PSI-BLAST prints 20 columns only: a scheme letter without one (B, Z, X and
* of BLOSUM62's alphabet) takes the scheme's own substitution score of that row's query
letter against it, which is what the scheme scores there without a PSSM.

Every malformed input is a one-line UserError `FILE:LINE: problem`.
"""
from __future__ import annotations

import os
import re
from itertools import zip_longest

import numpy as np

from ..errors import UserError, cannot_read
from ..scoring.scheme import MAX_COST

COLUMNS = 20  # scores (and percentages) of a row
ROW_FIELDS = 2 + 2 * COLUMNS + 2  # position, letter, scores, percentages, information, weight
ROW = "position, query letter, 20 scores, 20 percentages, information, weight"
_INTEGER = re.compile(r"[-+]?[0-9]+")
_DECIMAL = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)")
_HEADING = ["K", "Lambda"]
# a row whose 40 integers and 2 decimals are well formed (what _row_scores checks one by one)
_GOOD_ROW = re.compile(r"\s*\S+\s+\S+(\s+[-+]?[0-9]+){" + str(2 * COLUMNS) + r"}(\s+"
                       + _DECIMAL.pattern + r"){2}\s*")


def read_pssm(path, scheme) -> tuple[str, np.ndarray]:
    """(query letters as printed, scores): an int32 array [m, len(scheme.alphabet)] whose
    row i scores query position i + 1 against each scheme letter code."""
    lines = _lines(path)
    alphabet = scheme.alphabet
    k = 0
    while k < len(lines) and not _is_header(lines[k]):
        if _is_row(lines[k]):
            raise UserError(f"{path}:{k + 1}: a position row before the header line of "
                            "column letters")
        k += 1
    if k == len(lines):
        raise UserError(f"{path}:{max(k, 1)}: end of file before the header line of the "
                        "20 column letters (A R N D ...)")
    header_line = k + 1
    header = lines[k].upper().split()
    letters = header[:COLUMNS]
    if (len(header) != 2 * COLUMNS or header[COLUMNS:] != letters
            or len(set(letters)) != COLUMNS):
        raise UserError(f"{path}:{header_line}: the header must name 20 distinct column "
                        f"letters twice (scores, then percentages), got {' '.join(header)}")
    outside = [c for c in letters if c not in alphabet]
    if outside:
        raise UserError(f"{path}:{header_line}: column letter {outside[0]} is not in the "
                        f"scheme's alphabet {alphabet}")
    columns = [alphabet.index(c) for c in letters]

    query, rows = [], []
    k += 1
    while k < len(lines) and lines[k].strip():
        query.append(_row_letter(lines[k], len(rows) + 1, alphabet, f"{path}:{k + 1}"))
        rows.append(_row_scores(lines[k], letters, f"{path}:{k + 1}"))
        k += 1
    if not rows:
        raise UserError(f"{path}:{header_line}: no position rows after the header (an "
                        "empty matrix)")
    _check_trailer(path, lines, k)

    codes = np.array([alphabet.index(c) for c in query])
    scores = scheme.matrix("int32")[codes]  # letters without a column: the scheme's scores
    scores[:, columns] = np.array(rows, dtype=np.int32)
    return "".join(query), scores


def read_pssms(folder, ids, sequences, scheme) -> list[np.ndarray]:
    """read_pssm's scores of each query id from `folder/<id>.pssm`, in the ids' order; the
    PSSM's query letters must be the query's sequence (letters as strings, any case)."""
    out = []
    for qid, sequence in zip(ids, sequences, strict=True):
        path = os.path.join(folder, f"{qid}.pssm")
        if not os.path.exists(path):
            raise UserError(f"{path}: no such file (the PSSM of query {qid})")
        query, scores = read_pssm(path, scheme)
        pairs = zip_longest(query.upper(), sequence.upper())
        k = next((k for k, (a, b) in enumerate(pairs) if a != b), None)
        if k is not None:
            def shown(letters):
                return repr(letters[k]) if k < len(letters) else f"none ({len(letters)} letters)"

            raise UserError(f"{path}: position {k + 1}: query letter {shown(query)} in the "
                            f"PSSM, {shown(sequence)} in query {qid}'s sequence")
        out.append(scores)
    return out


def _lines(path) -> list[str]:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as exc:  # a folder, no permission, ...
        raise cannot_read(path, exc) from None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(f"{path}:{line}: not ASCII text, so not a PSI-BLAST PSSM") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _is_header(line: str) -> bool:
    tokens = line.split()
    return bool(tokens) and all(len(t) == 1 and t.isalpha() for t in tokens)


def _is_row(line: str) -> bool:
    tokens = line.split()
    return bool(tokens) and _INTEGER.fullmatch(tokens[0]) is not None


def _row_letter(line: str, position: int, alphabet: str, where: str) -> str:
    tokens = line.split()
    if len(tokens) != ROW_FIELDS:
        raise UserError(f"{where}: {len(tokens)} fields, expected {ROW_FIELDS} ({ROW})")
    if tokens[0] != str(position):
        raise UserError(f"{where}: position {tokens[0]}, expected {position} (positions run "
                        "1, 2, ... in order)")
    letter = tokens[1].upper()
    if len(letter) != 1 or letter not in alphabet:
        raise UserError(f"{where}: query letter {tokens[1]!r} is not in the scheme's "
                        f"alphabet {alphabet}")
    return letter


def _row_scores(line: str, letters: list[str], where: str) -> list[int]:
    tokens = line.split()
    if _GOOD_ROW.fullmatch(line):  # the usual row, in one match; else field by field
        scores = [int(text) for text in tokens[2:2 + COLUMNS]]
        if max(map(abs, scores)) <= MAX_COST:
            return scores
    scores = []
    for letter, text in zip(letters, tokens[2:2 + COLUMNS]):
        if not _INTEGER.fullmatch(text):
            raise UserError(f"{where}: score {text!r} of column {letter} is not an integer")
        if abs(int(text)) > MAX_COST:
            raise UserError(f"{where}: score {int(text)} of column {letter} is beyond "
                            f"+-{MAX_COST}")
        scores.append(int(text))
    for letter, text in zip(letters, tokens[2 + COLUMNS:2 + 2 * COLUMNS]):
        if not _INTEGER.fullmatch(text):
            raise UserError(f"{where}: percentage {text!r} of column {letter} is not an "
                            "integer")
    for name, text in zip(("information", "weight"), tokens[-2:]):
        if not _DECIMAL.fullmatch(text):
            raise UserError(f"{where}: {name} {text!r} is not a number")
    return scores


def _check_trailer(path, lines: list[str], end: int) -> None:
    """Lines after the matrix (from index `end`, a blank line): blank, the K/Lambda heading
    and `NAME... K LAMBDA` lines only, the heading present."""
    heading = False
    for k in range(end, len(lines)):
        tokens = lines[k].split()
        if not tokens:
            continue
        if tokens == _HEADING:
            heading = True
        elif _is_row(lines[k]) or _is_header(lines[k]):
            raise UserError(f"{path}:{k + 1}: matrix lines after the blank line that ends "
                            f"the matrix (line {end + 1}); one matrix per file")
        elif not (heading and len(tokens) >= 3 and not _DECIMAL.fullmatch(tokens[0])
                  and all(_DECIMAL.fullmatch(t) for t in tokens[-2:])):
            raise UserError(f"{path}:{k + 1}: not a K/Lambda line of a PSSM's end: "
                            f"{lines[k].strip()[:60]}")
    if not heading:
        raise UserError(f"{path}:{len(lines)}: end of file before the K/Lambda lines that "
                        "end a PSSM (is the file cut short?)")
