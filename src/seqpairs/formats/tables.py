"""TSV tables in and out: every stage reads and writes its tables here, so that a missing
file, a file that is no TSV or a header without a needed column is one error line."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import UserError, cannot_read
from .atomic import atomic_open


def read_tsv(path, columns=(), text: bool = False, **options) -> pd.DataFrame:
    """A TSV whose header names at least `columns`; `options` go to pandas.read_csv.

    text: every field as it is written, a string (no NA values, no numbers): what a table
    of ids needs, whose ids may read "NA", "nan", "null" or "007"; numbers are then the
    reader's to convert.
    """
    if text:
        options = {**options, "dtype": str, "keep_default_na": False, "na_filter": False}
    try:
        table = pd.read_csv(path, sep="\t", **options)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (IsADirectoryError, ValueError) as exc:  # pandas' parse and decode errors are ValueErrors
        raise UserError(f"{path}: not a TSV file ({str(exc).strip()})") from None
    except OSError as exc:  # no permission, ...
        raise cannot_read(path, exc) from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise UserError(f"{path}:1: no column {', '.join(missing)} in the header "
                        f"({', '.join(map(str, table.columns))})")
    return table


def write_tsv(path, table: pd.DataFrame, na_rep: str = "") -> None:
    """`table` with its header and no index, written atomically (atomic.atomic_open): the
    bytes of pandas' `to_csv(sep="\t", index=False, na_rep=na_rep)`, made here a block of
    rows at a time for the column types the stages write (fast_text), by pandas for any
    other table."""
    columns = [fast_text(table.iloc[:, k], na_rep) for k in range(table.shape[1])]
    names = fast_text(pd.Series(table.columns, dtype=object))
    with atomic_open(path) as fh:
        if table.shape[1] < 2 or names is None or any(c is None for c in columns):
            table.to_csv(fh, sep="\t", index=False, na_rep=na_rep)  # (one column: pandas quotes "")
            return
        fh.write("\t".join(names) + "\n")
        for start in range(0, len(table), ROWS):
            fh.write("".join(map(ROW.format, map("\t".join,
                                                 zip(*(c[start:start + ROWS] for c in columns))))))


ROWS = 1 << 16  # rows joined at a time
ROW = "{}\n"
NEEDS_QUOTES = re.compile('[\t"\n]')  # what pandas' csv writer quotes (QUOTE_MINIMAL)


def fast_text(column: pd.Series, na_rep: str = "") -> list[str] | None:
    """The fields pandas' to_csv(sep="\t", na_rep=na_rep) writes for `column`: integers and
    booleans as str() does, float64 as repr() (NaN as na_rep), strings (missing ones
    na_rep) quoted where they hold a tab, a quote or a newline; None for any other type
    (pandas writes it)."""
    values = column.to_numpy()
    kind = values.dtype.kind
    if kind in "iu" and len(values):
        low, high = int(values.min()), int(values.max())
        if high - low <= 2 * len(values):  # counts: each value's text made once
            texts = np.array([str(v) for v in range(low, high + 1)], dtype=object)
            return texts[values - low].tolist()
        return values.astype(str).tolist()
    if kind in "iu":
        return []
    if kind == "b":
        return np.where(values, "True", "False").tolist()
    if values.dtype == np.float64:
        # identities are ratios of small counts: few distinct values, each formatted once
        bits, back = np.unique(values.view(np.int64), return_inverse=True)
        texts = np.array([na_rep if x != x else repr(x)
                          for x in bits.view(np.float64).tolist()], dtype=object)
        return texts[back.reshape(-1)].tolist()
    if kind != "O":
        return None
    texts = np.where(pd.isna(values), na_rep, values).tolist()
    if pd.api.types.infer_dtype(texts, skipna=False) not in ("string", "empty"):
        return None
    if NEEDS_QUOTES.search("".join(texts)):
        texts = [f'"{t.replace(chr(34), 2 * chr(34))}"' if NEEDS_QUOTES.search(t) else t
                 for t in texts]
    return texts


def read_pair_list(path, query_ids: dict[str, int], target_ids: dict[str, int],
                   query_fasta: str, target_fasta: str) -> pd.DataFrame:
    """A TSV of pairs whose header names query and target columns (ids): those columns and
    query_index, target_index (each id's position among query_ids, target_ids); an id
    that is not there is an error line naming the row and the FASTA."""
    table = read_tsv(path, ("query", "target"), text=True)
    pairs = table[["query", "target"]].copy()
    for column, ids, fasta in (("query", query_ids, query_fasta),
                               ("target", target_ids, target_fasta)):
        index = pd.Series(ids.values(), index=ids.keys(), dtype=np.int64) \
            .reindex(pairs[column].to_numpy())
        unknown = np.flatnonzero(index.isna().to_numpy())
        if unknown.size:
            k = int(unknown[0])
            raise UserError(f"{path}:{k + 2}: {column} {pairs[column].iloc[k]!r} "
                            f"is not in {fasta}")
        pairs[f"{column}_index"] = index.to_numpy(dtype=np.int64)
    return pairs
