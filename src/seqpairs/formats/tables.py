"""TSV tables in and out: every stage reads and writes its tables here, so that a missing
file, a file that is no TSV or a header without a needed column is one error line."""
from __future__ import annotations

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


def write_tsv(path, table: pd.DataFrame) -> None:
    """`table` with its header and no index, written atomically (atomic.atomic_open)."""
    with atomic_open(path) as fh:
        table.to_csv(fh, sep="\t", index=False)
