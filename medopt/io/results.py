"""Result writers: CSV, TSV, JSON lines (and parquet where pandas/pyarrow can), written atomically."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import MedoptError
from .trec import write_atomic

FORMATS = ("csv", "tsv", "jsonl")


def format_rows(rows: Sequence[dict], columns: Sequence[str], fmt: str) -> str:
    """Render rows as text in ``fmt`` (csv, tsv or jsonl)."""
    if fmt not in FORMATS:
        raise MedoptError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out = io.StringIO()
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps({c: _jsonable(row.get(c)) for c in columns}) + "\n")
        return out.getvalue()
    writer = csv.DictWriter(out, fieldnames=list(columns), delimiter="," if fmt == "csv" else "\t",
                            lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _text(row.get(c)) for c in columns})
    return out.getvalue()


def write_rows(rows: Sequence[dict], columns: Sequence[str], fmt: str, path) -> None:
    text = format_rows(rows, columns, fmt)
    write_atomic(path, iter([text]))


def rows_frame(rows: Sequence[dict], columns: Sequence[str]):
    """The rows as a pandas DataFrame with ``columns`` (in that order)."""
    import pandas as pd

    return pd.DataFrame([[row.get(c) for c in columns] for row in rows], columns=list(columns))


def write_parquet(rows: Sequence[dict], columns: Sequence[str], path) -> None:
    """The rows as a parquet file (pyarrow), written to a temporary file beside ``path`` then renamed."""
    path = Path(path)
    if path.exists() and not path.is_file():  # /dev/null and the like: written in place
        rows_frame(rows, columns).to_parquet(path, index=False, engine="pyarrow")
        return
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        rows_frame(rows, columns).to_parquet(temporary, index=False, engine="pyarrow")
        os.replace(temporary, path)
    except ImportError:
        raise MedoptError("parquet output needs pyarrow (pip install pyarrow)") from None
    finally:
        if temporary.exists():
            temporary.unlink()


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.10g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return "" if value is None else str(value)


def _jsonable(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else math.nan
