"""The results store of ``medopt matrix``: one SQLite file, one row per (pair, topic, metric, method).

Rows arrive in batches (one batch per finished task) and each batch is written in
one transaction, so a process killed at any moment leaves whole batches or
nothing; the primary key makes a repeated row a no-op (``INSERT OR IGNORE``).
The database runs in WAL mode with ``synchronous=NORMAL``: a commit survives the
process being killed (only an operating-system crash could lose the last ones).

``assignment`` is JSON ``{docid: grade}`` of the unjudged documents given a
positive grade; every other unjudged document of the two depth-cut lists is at 0.
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
from pathlib import Path
from typing import Iterable, Iterator

from .errors import MedoptError
from .io.trec import write_atomic

COLUMNS = ("run_a", "run_b", "topic", "metric", "method", "solver", "value", "direction", "certified",
           "upper_bound", "status", "seconds", "assignment")
KEY = ("run_a", "run_b", "topic", "metric", "method")
EXPORT_FORMATS = ("csv", "tsv", "jsonl", "parquet")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    run_a TEXT NOT NULL, run_b TEXT NOT NULL, topic TEXT NOT NULL, metric TEXT NOT NULL, method TEXT NOT NULL,
    solver TEXT, value REAL, direction TEXT, certified INTEGER, upper_bound REAL, status TEXT,
    seconds REAL, assignment TEXT,
    PRIMARY KEY (run_a, run_b, topic, metric, method)
);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class ResultStore:
    """A results database; safe to reopen and to append to from one writer at a time."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            self.connection = sqlite3.connect(str(self.path), isolation_level=None)
            self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute("PRAGMA synchronous=NORMAL")
            self.connection.execute("PRAGMA cache_size=-65536")       # 64 MB: the key index stays in memory
            self.connection.execute("PRAGMA wal_autocheckpoint=10000")  # fewer, larger checkpoints
            self.connection.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise MedoptError(f"{self.path}: not a medopt results store ({error})") from None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.connection.close()

    def count(self) -> int:
        return self.connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def insert(self, rows: Iterable[tuple]) -> None:
        """Insert rows (tuples in COLUMNS order) in one transaction; rows already stored are kept as they are."""
        connection = self.connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            connection.executemany(
                f"INSERT OR IGNORE INTO results VALUES ({', '.join('?' * len(COLUMNS))})", rows)
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def stored_topics(self, run_a: str, run_b: str, metric: str) -> set[tuple[str, str]]:
        """(topic, method) of the rows already stored for one pair and metric."""
        cursor = self.connection.execute(
            "SELECT topic, method FROM results WHERE run_a = ? AND run_b = ? AND metric = ?", (run_a, run_b, metric))
        return set(cursor.fetchall())

    def settings(self) -> dict:
        return dict(self.connection.execute("SELECT name, value FROM settings").fetchall())

    def check_settings(self, settings: dict) -> None:
        """Record the job's settings, or refuse to mix rows computed under different ones."""
        stored = self.settings()
        clashes = [f"{k}: stored {stored[k]}, now {v}" for k, v in settings.items() if k in stored and stored[k] != v]
        if clashes:
            raise MedoptError(f"{self.path} holds results computed with other settings ({'; '.join(clashes)}); "
                              "use a new --store")
        self.connection.execute("BEGIN IMMEDIATE")
        self.connection.executemany("INSERT OR IGNORE INTO settings VALUES (?, ?)", list(settings.items()))
        self.connection.execute("COMMIT")

    def rows(self, where: str = "", parameters: tuple = ()) -> Iterator[dict]:
        """Every stored row as a dict (certified as bool), in key order."""
        cursor = self.connection.execute(
            f"SELECT {', '.join(COLUMNS)} FROM results {where} ORDER BY run_a, run_b, metric, method, topic",
            parameters)
        for values in cursor:
            row = dict(zip(COLUMNS, values))
            row["certified"] = bool(row["certified"])
            yield row


def open_existing(path) -> ResultStore:
    if not Path(path).is_file():
        raise MedoptError(f"{path}: no such results store")
    return ResultStore(path)


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)  # repr: the shortest text that reads back exactly
    return "" if value is None else str(value)


def export_results(store_path, output, fmt: str | None = None, *, with_assignment: bool = True) -> int:
    """Write a store's rows to CSV, TSV, JSON lines or parquet (``fmt`` default: from the file name)."""
    output = Path(output)
    suffix = output.name[:-3] if output.name.endswith(".gz") else output.name
    fmt = fmt or {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".parquet": "parquet"}.get(
        Path(suffix).suffix, "")
    if fmt not in EXPORT_FORMATS:
        raise MedoptError(f"{output}: cannot tell the format from the name; pass --format "
                          f"({', '.join(EXPORT_FORMATS)})")
    columns = COLUMNS if with_assignment else COLUMNS[:-1]
    with open_existing(store_path) as store:
        rows = store.rows()
        if fmt == "parquet":
            return _write_parquet(rows, columns, output)
        count = 0

        def lines():
            nonlocal count
            if fmt == "jsonl":
                for row in rows:
                    count += 1
                    yield json.dumps({c: row[c] for c in columns}) + "\n"
                return
            buffer = _LineBuffer()
            writer = csv.writer(buffer, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
            writer.writerow(columns)
            yield buffer.take()
            for row in rows:
                count += 1
                writer.writerow([_text(row[c]) for c in columns])
                yield buffer.take()

        write_atomic(output, lines())
        return count


class _LineBuffer:
    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def take(self) -> str:
        text, self.parts = "".join(self.parts), []
        return text


def _write_parquet(rows, columns, output: Path) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MedoptError("parquet export needs pyarrow (pip install pyarrow)") from None
    data = {c: [] for c in columns}
    for row in rows:
        for c in columns:
            data[c].append(row[c])
    types = {"value": pa.float64(), "upper_bound": pa.float64(), "seconds": pa.float64(), "certified": pa.bool_()}
    table = pa.table({c: pa.array(data[c], type=types.get(c, pa.string())) for c in columns})
    temporary = output.with_name(f".{output.name}.tmp")
    pq.write_table(table, temporary)
    temporary.replace(output)
    return table.num_rows
