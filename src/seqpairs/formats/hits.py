"""The table `seqpairs align` writes: one row per alignment kept, the columns a user names
(BLAST's tabular names where BLAST has the column), tab-separated with a header.

Each column says whether it needs the traced alignment (pairs.align.Runs); coordinates are
1-based and inclusive as in BLAST's outfmt 6 (0 where the alignment holds no letter of
that sequence: a local score of 0, a semi-global query against gaps only).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UserError
from .atomic import atomic_open
from .tables import fast_text, write_tsv


@dataclass(frozen=True)
class Column:
    help: str
    traced: bool  # needs the alignment itself, not only score and coordinates
    values: Callable  # (Table) -> array or list of the column's values


@dataclass
class Table:
    """What the columns are made from: the hits (pairs.align.Hits), the ids and lengths of
    the query and target sequences, and functions giving a query's or a target's letters
    by its index."""

    hits: object
    query_ids: np.ndarray
    target_ids: np.ndarray
    query_lengths: np.ndarray
    target_lengths: np.ndarray
    query_letters: Callable  # (query index) -> str
    target_letters: Callable  # (target index) -> str
    ops: str  # the run codes' letters (backends.alignments.WINDOW_OPS)


def _columns_of_runs(table: Table) -> np.ndarray:
    runs = table.hits.runs
    total = np.r_[0, np.cumsum(runs.lengths, dtype=np.int64)]
    return total[runs.offsets[1:]] - total[runs.offsets[:-1]]


def _cigar(table: Table) -> np.ndarray:
    from . import bulk  # Numba

    runs = table.hits.runs
    return bulk.runs_text(runs.offsets, runs.ops, runs.lengths, table.ops)


def _aligned(table: Table, query_side: bool) -> list[str]:
    """The alignment's letters of one side, '-' for gaps."""
    hits, runs = table.hits, table.hits.runs
    out = []
    for k in range(len(hits.score)):
        index = hits.query[k] if query_side else hits.target[k]
        start = hits.qstart[k] if query_side else hits.tstart[k]
        letters = (table.query_letters if query_side else table.target_letters)(index)
        position, pieces = max(start, 1) - 1, []
        for r in range(runs.offsets[k], runs.offsets[k + 1]):
            op, length = table.ops[runs.ops[r]], int(runs.lengths[r])
            if op in "=X" or (op == "I") == query_side:
                pieces.append(letters[position:position + length])
                position += length
            else:
                pieces.append("-" * length)
        out.append("".join(pieces))
    return out


def _identity(table: Table) -> np.ndarray:
    columns = _columns_of_runs(table)
    return np.round(100 * table.hits.runs.matches / np.maximum(columns, 1), 3)


COLUMNS = {
    "qseqid": Column("query id", False, lambda t: t.query_ids[t.hits.query]),
    "sseqid": Column("target id", False, lambda t: t.target_ids[t.hits.target]),
    "score": Column("alignment score (integer)", False, lambda t: t.hits.score),
    "qstart": Column("first query letter aligned (1-based)", False, lambda t: t.hits.qstart),
    "qend": Column("last query letter aligned", False, lambda t: t.hits.qend),
    "sstart": Column("first target letter aligned", False, lambda t: t.hits.tstart),
    "send": Column("last target letter aligned", False, lambda t: t.hits.tend),
    "qlen": Column("query length", False, lambda t: t.query_lengths[t.hits.query]),
    "slen": Column("target length", False, lambda t: t.target_lengths[t.hits.target]),
    "length": Column("alignment columns", True, _columns_of_runs),
    "nident": Column("identical letter pairs", True, lambda t: t.hits.runs.matches),
    "mismatch": Column("different letter pairs", True, lambda t: t.hits.runs.mismatches),
    "gapopen": Column("gap openings", True, lambda t: t.hits.runs.openings),
    "pident": Column("percent identity: 100 nident / length", True, _identity),
    "cigar": Column("CIGAR, =/X/I/D (I: query letter, D: target letter against a gap; "
                    "* for an empty alignment)", True, _cigar),
    "qaln": Column("the query's aligned letters, - for gaps", True,
                   lambda t: _aligned(t, True)),
    "saln": Column("the target's aligned letters", True, lambda t: _aligned(t, False)),
    "evalue": Column("NaN: not computed (the column keeps BLAST's layout)", False,
                     lambda t: ["NaN"] * len(t.hits.score)),
    "bitscore": Column("NaN: not computed (the score column holds the raw score)", False,
                       lambda t: ["NaN"] * len(t.hits.score)),
}
DEFAULT = "qseqid,sseqid,score,qstart,qend,sstart,send"
# BLAST's outfmt 6 (its 12 standard columns, in its order)
PRESETS = {
    "blast6": "qseqid,sseqid,pident,length,mismatch,gapopen,qstart,qend,sstart,send,evalue,"
              "bitscore",
}


def parse_columns(text: str) -> list[str]:
    """The column names of --columns: names separated by commas, or a preset's name."""
    names = [name.strip() for name in PRESETS.get(text, text).split(",") if name.strip()]
    unknown = [name for name in names if name not in COLUMNS]
    if unknown or not names:
        raise UserError(f"--columns: unknown column {', '.join(unknown) or '(none given)'}; "
                        f"known: {', '.join(COLUMNS)} or {', '.join(PRESETS)}")
    return names


def traced(names: list[str]) -> bool:
    return any(COLUMNS[name].traced for name in names)


def _as_text(values):
    """Floats as the text write_tsv gives them (tables.fast_text), as fixed-width bytes
    that formats/bulk.py's writer takes; any other values as they are."""
    if isinstance(values, np.ndarray) and values.dtype == np.float64:
        return np.array(fast_text(pd.Series(values)), dtype="S")
    return values


def _as_strings(values):
    """Fixed-width bytes as strings (write_tsv's path); any other values as they are."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "S":
        return values.astype(str).astype(object)
    return values


def write(path: str, table: Table, names: list[str]) -> None:
    """The named columns of the table (ids as strings or fixed-width bytes): integer and
    id columns by formats/bulk.py on all cores, any other table by write_tsv, the same
    bytes."""
    from . import bulk  # Numba: imported when a table is written

    values = [_as_text(COLUMNS[name].values(table)) for name in names]
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    buffers = bulk.table_bytes(names, arrays) if len(arrays) == len(values) else None
    if buffers is not None:
        with atomic_open(path, "wb") as fh:
            for buffer in buffers:
                fh.write(buffer)
        return
    write_tsv(path, pd.DataFrame({name: _as_strings(v) for name, v in zip(names, values)}))
