"""Result writers: CSV, TSV, JSON lines (and parquet where pandas/pyarrow can), written atomically."""

from __future__ import annotations

import io
import json
import math
from typing import Iterable, Sequence

from ..errors import MedoptError
from .output import check_output, csv_lines, output_file, write_output

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
    table = [list(columns), *([_text(row.get(c)) for c in columns] for row in rows)]
    out.writelines(csv_lines(table, "," if fmt == "csv" else "\t"))
    return out.getvalue()


def write_rows(rows: Sequence[dict], columns: Sequence[str], fmt: str, path, *, what: str = "-o",
               inputs=()) -> None:
    text = format_rows(rows, columns, fmt)
    write_output(path, text, what, inputs=inputs, binary=False)


def rows_frame(rows: Sequence[dict], columns: Sequence[str]):
    """The rows as a pandas DataFrame with ``columns`` (in that order)."""
    import pandas as pd

    return pd.DataFrame([[row.get(c) for c in columns] for row in rows], columns=list(columns))


def write_parquet(rows: Sequence[dict], columns: Sequence[str], path, *, what: str = "-o", inputs=()) -> None:
    """The rows as a parquet file (pyarrow), by the rules of :mod:`medopt.io.output` (a regular file only)."""
    check_output(path, what, inputs=inputs, binary=True)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise MedoptError("parquet output needs pyarrow (pip install pyarrow)") from None
    frame = rows_frame(rows, columns)
    with output_file(path, what, inputs=inputs, binary=True, compress=False) as handle:
        frame.to_parquet(handle, index=False, engine="pyarrow")


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
