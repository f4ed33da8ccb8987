"""Rows written to a file as CSV, TSV, JSON lines or parquet: the exports of ``medopt matrix`` (a store's
rows and per-pair summary, io.store) and its test and flip summaries.

The format is ``fmt`` or told by the file name (``export_format``); the file is written through io.output's
one writer (never over one of the inputs; atomically; ``.gz`` compressed for the text formats).  A float
is written as its shortest exact text (``repr``), NaN as ``nan``, a bool as ``true``/``false`` and None
as an empty field; parquet (pyarrow) types its columns by the ``types`` given (column -> pyarrow type
name), text for the rest.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import MedoptError, option
from .output import check_output, csv_lines, output_file
from .trec import write_atomic

EXPORT_FORMATS = ("csv", "tsv", "jsonl", "parquet")


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)  # repr: the shortest text that reads back exactly
    return "" if value is None else str(value)


def export_format(output, fmt: str | None = None) -> str:
    """The export format: ``fmt``, else told by the file name (.csv, .tsv, .jsonl, .parquet, optionally .gz)."""
    output = Path(output)
    suffix = output.name[:-3] if output.name.endswith(".gz") else output.name
    fmt = fmt or {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".parquet": "parquet"}.get(
        Path(suffix).suffix, "")
    if fmt not in EXPORT_FORMATS:
        raise MedoptError(f"{output}: cannot tell the format from the name; pass {option('fmt', None)} "
                          f"({', '.join(EXPORT_FORMATS)})")
    return fmt


def write_rows(rows, columns, output, fmt: str | None = None, *, inputs=(), types: dict | None = None) -> int:
    """Rows (dicts) with ``columns`` as CSV, TSV, JSON lines or parquet into ``output`` (io.output's one
    writer; never one of ``inputs``); the count of rows written."""
    fmt = export_format(output, fmt)
    check_output(output, "-o", inputs=inputs, binary=fmt == "parquet")
    if fmt == "parquet":
        return _write_parquet(rows, columns, output, inputs, types or {})
    count = 0

    def lines():
        nonlocal count
        if fmt == "jsonl":
            for row in rows:
                count += 1
                yield json.dumps({c: row[c] for c in columns}) + "\n"
            return

        def table():
            nonlocal count
            yield columns
            for row in rows:
                count += 1
                yield [_text(row[c]) for c in columns]

        yield from csv_lines(table(), "," if fmt == "csv" else "\t")

    write_atomic(output, lines(), what="-o", inputs=inputs)
    return count


def _write_parquet(rows, columns, output, inputs, types: dict) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MedoptError("parquet export needs pyarrow (pip install pyarrow)") from None
    data = {c: [] for c in columns}
    for row in rows:
        for c in columns:
            data[c].append(row[c])
    table = pa.table({c: pa.array(data[c], type=getattr(pa, types.get(c, "string"))()) for c in columns})
    with output_file(output, "-o", inputs=inputs, binary=True, compress=False) as handle:
        pq.write_table(table, handle)
    return table.num_rows
