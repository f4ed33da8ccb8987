"""The results store of ``medopt matrix``: one SQLite file, one row per (pair, topic, metric, method).

Rows arrive in batches (one batch per finished task) and each batch is written in
one transaction, so a process killed at any moment leaves whole batches or
nothing; the primary key makes a repeated row a no-op, except that a row stored
uncertified is replaced by a new computation of it (``--retry-timeouts``).
The database runs in WAL mode with ``synchronous=NORMAL``: a commit survives the
process being killed (only an operating-system crash could lose the last ones).

``assignment`` is JSON ``{docid: grade}`` of the unjudged documents given a
positive grade; every other unjudged document of the two depth-cut lists is at 0.
``time_limit`` is the per-MED time limit the row was computed under (NULL: none, or a
method that takes none); ``solver`` the solver that computed it.  A store made with
``--range`` also holds both ends of each difference range (RANGE_COLUMNS: ``low``, ``high``,
their proven bounds, certificates and assignments, the same JSON as ``assignment``); the MED
columns are then MED = max(high, -low), certified when both ends are.
A companion measure asked for with ``-m 'RBO(p=0.9)'`` (SPEC 9) has rows of its own: method ``rbo``,
status ``companion``, no MED (``value`` and ``certified`` NULL) and its values in COMPANION_COLUMNS
(``rbo_min``, ``rbo_residual``, ``rbo_ext``).

A store is marked as medopt's (``PRAGMA application_id``); a file that is neither a
medopt store (or one written before the mark, recognised by its tables) nor an empty
database is refused when opened, and so is a store another process keeps locked for
longer than the busy timeout (``MEDOPT_STORE_TIMEOUT`` seconds, default 30).
"""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
from pathlib import Path
from typing import Iterable, Iterator

from .errors import MedoptError, option
from .io.paths import check_output_file
from .io.trec import write_atomic

COLUMNS = ("run_a", "run_b", "topic", "metric", "method", "solver", "value", "direction", "certified",
           "upper_bound", "status", "seconds", "assignment", "time_limit",
           "low", "high", "low_bound", "high_bound", "low_certified", "high_certified", "low_assignment",
           "high_assignment", "rbo_min", "rbo_residual", "rbo_ext")
RANGE_COLUMNS = COLUMNS[14:22]  # the difference range's ends (SPEC 7): NULL in a store made without --range
COMPANION_COLUMNS = COLUMNS[22:]  # a companion's values (RBO, SPEC 9): NULL in a MED row
KEY = ("run_a", "run_b", "topic", "metric", "method")
EXPORT_FORMATS = ("csv", "tsv", "jsonl", "parquet")
APPLICATION_ID = 0x4D65644F  # "MedO": PRAGMA application_id of a medopt results store
_SQLITE_HEADER = b"SQLite format 3\x00"
_FIRST_COLUMNS = COLUMNS[:13]  # the columns of the first stores (time_limit and the ranges came later: added on open)
# settings a store records; one made before a setting existed was made with its default
SETTING_DEFAULTS = {"range": "False", "spans_sha256": "none"}
_RETRYABLE = "certified = 0 AND status != 'heuristic'"  # a heuristic's row is uncertified by nature

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    run_a TEXT NOT NULL, run_b TEXT NOT NULL, topic TEXT NOT NULL, metric TEXT NOT NULL, method TEXT NOT NULL,
    solver TEXT, value REAL, direction TEXT, certified INTEGER, upper_bound REAL, status TEXT,
    seconds REAL, assignment TEXT, time_limit REAL,
    low REAL, high REAL, low_bound REAL, high_bound REAL, low_certified INTEGER, high_certified INTEGER,
    low_assignment TEXT, high_assignment TEXT, rbo_min REAL, rbo_residual REAL, rbo_ext REAL,
    PRIMARY KEY (run_a, run_b, topic, metric, method)
);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def busy_timeout() -> float:
    """Seconds to wait for a store another process holds locked (MEDOPT_STORE_TIMEOUT, default 30)."""
    text = os.environ.get("MEDOPT_STORE_TIMEOUT", "30")
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise MedoptError(f"MEDOPT_STORE_TIMEOUT={text!r}: expected a number of seconds >= 0")
    return seconds


def check_store_file(path) -> None:
    """Refuse at once a path that is not a file SQLite could hold a medopt store in (nothing is opened)."""
    path = Path(path)
    if path.is_dir():
        raise MedoptError(f"{path}: is a directory, not a results store")
    if path.exists():
        try:
            with open(path, "rb") as handle:
                head = handle.read(len(_SQLITE_HEADER))
        except OSError as error:
            raise MedoptError(f"{path}: cannot read: {error.strerror or error}") from None
        if head and head != _SQLITE_HEADER:
            raise MedoptError(f"{path}: not a medopt results store (not an SQLite database)")


class ResultStore:
    """A results database; safe to reopen and to append to from one writer at a time.

    ``write=False`` opens an existing store to read it: nothing is created or changed.
    """

    def __init__(self, path, *, write: bool = True, timeout: float | None = None):
        self.path = Path(path)
        self.timeout = busy_timeout() if timeout is None else timeout
        if not write and not self.path.is_file():
            raise MedoptError(f"{self.path}: no such results store")
        check_store_file(self.path)
        self.connection = None
        try:
            self.connection = sqlite3.connect(str(self.path), isolation_level=None, timeout=self.timeout)
            self.columns = self._check_schema()
            if write:
                self._prepare()
        except sqlite3.Error as error:
            self.close()
            raise self._error(error) from None
        except BaseException:
            self.close()
            raise

    def _error(self, error: sqlite3.Error) -> MedoptError:
        text = str(error)
        if "locked" in text or "busy" in text:
            return MedoptError(f"{self.path}: the store is locked by another process (waited {self.timeout:g} s; "
                               "MEDOPT_STORE_TIMEOUT sets the wait): let that job finish, or choose another --store")
        if isinstance(error, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
            return MedoptError(f"{self.path}: not a medopt results store ({text})")
        return MedoptError(f"{self.path}: results store error: {text}")

    def _check_schema(self) -> tuple:
        """The columns of the results table; refuses a database that is not a medopt store."""
        connection = self.connection
        tables = {name: tuple(c[1] for c in connection.execute(f'PRAGMA table_info("{name}")'))
                  for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        mark = connection.execute("PRAGMA application_id").fetchone()[0]
        marked = mark == APPLICATION_ID
        if not tables and mark in (0, APPLICATION_ID):
            return ()  # an empty database: a new store
        if (marked or set(tables) == {"results", "settings"}) and set(_FIRST_COLUMNS) <= set(tables.get("results", ())):
            return tables["results"]
        found = ", ".join(sorted(tables)) or "no tables"
        raise MedoptError(f"{self.path}: not a medopt results store (an SQLite database holding {found}); "
                          "choose another --store")

    def _prepare(self) -> None:
        """WAL mode, the tables and the mark on a new store; the time_limit column on an older one."""
        connection = self.connection
        if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA cache_size=-65536")       # 64 MB: the key index stays in memory
        connection.execute("PRAGMA wal_autocheckpoint=10000")  # fewer, larger checkpoints
        if self.columns and set(COLUMNS) <= set(self.columns) and \
                connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID:
            return
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in filter(str.strip, _SCHEMA.split(";")):  # not executescript: it would commit
                connection.execute(statement)
            for column in COLUMNS:
                if self.columns and column not in self.columns:  # a store from an older medopt
                    kind = "TEXT" if column.endswith("assignment") else "REAL"
                    connection.execute(f"ALTER TABLE results ADD COLUMN {column} {kind}")
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
        self.columns = COLUMNS

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def _execute(self, sql: str, parameters=()):
        try:
            return self.connection.execute(sql, parameters)
        except sqlite3.Error as error:
            raise self._error(error) from None

    def count(self) -> int:
        if not self.columns:
            return 0
        return self._execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def insert(self, rows: Iterable[tuple]) -> None:
        """Insert rows (tuples in COLUMNS order) in one transaction. A row already stored is kept as it is,
        unless it is uncertified: then the new computation replaces it."""
        updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c not in KEY)
        sql = (f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
               f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {updates} WHERE results.certified = 0")
        connection = self.connection
        width = len(COLUMNS)
        rows = (row + (None,) * (width - len(row)) for row in rows)  # a MED row stops before the companion columns
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(sql, rows)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        except sqlite3.Error as error:
            raise self._error(error) from None

    def stored_topics(self, run_a: str, run_b: str, metric: str, *, retry: bool = False) -> set[tuple[str, str]]:
        """(topic, method) of the rows already stored for one pair and metric; with ``retry``, less the
        uncertified rows a new computation may settle (a time limit reached, a solver stopped early)."""
        if not self.columns:
            return set()
        where = f" AND NOT ({_RETRYABLE})" if retry else ""
        cursor = self._execute(
            f"SELECT topic, method FROM results WHERE run_a = ? AND run_b = ? AND metric = ?{where}",
            (run_a, run_b, metric))
        return set(cursor.fetchall())

    def stored_and_retried(self, run_a: str, run_b: str, metric: str, *, retry: bool = False) -> tuple[set, set]:
        """(topic, method) pairs of one pair and metric that a job need not compute (stored), and those of
        them stored uncertified that ``retry`` computes again (retried: no longer in the first set)."""
        stored = self.stored_topics(run_a, run_b, metric)
        if not retry:
            return stored, set()
        kept = self.stored_topics(run_a, run_b, metric, retry=True)
        return kept, stored - kept

    def retryable(self) -> int:
        """How many stored rows ``retry`` would compute again."""
        if not self.columns:
            return 0
        return self._execute(f"SELECT COUNT(*) FROM results WHERE {_RETRYABLE}").fetchone()[0]

    def settings(self) -> dict:
        if not self.columns:
            return {}
        return dict(self._execute("SELECT name, value FROM settings").fetchall())

    def clashes(self, settings: dict) -> list[str]:
        """Settings that differ from those of the rows stored (none while the store holds no row)."""
        if not self.count():
            return []
        stored = dict(SETTING_DEFAULTS, **self.settings())
        return [f"{k}: stored {stored[k]}, now {v}" for k, v in settings.items() if k in stored and stored[k] != v]

    def check_settings(self, settings: dict) -> None:
        """Refuse to mix rows computed under different settings, or record the job's settings (those of
        a store that holds no row yet are replaced)."""
        clashes = self.clashes(settings)
        if clashes:
            raise MedoptError(f"{self.path} holds results computed with other settings ({'; '.join(clashes)}); "
                              "use a new --store")
        empty = not self.count()
        try:
            self.connection.execute("BEGIN IMMEDIATE")
            self.connection.executemany(f"INSERT OR {'REPLACE' if empty else 'IGNORE'} INTO settings VALUES (?, ?)",
                                        list(settings.items()))
            self.connection.execute("COMMIT")
        except sqlite3.Error as error:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            raise self._error(error) from None

    def rows(self, where: str = "", parameters: tuple = ()) -> Iterator[dict]:
        """Every stored row as a dict (certified as bool), in key order."""
        if not self.columns:
            return
        selected = [c if c in self.columns else f"NULL AS {c}" for c in COLUMNS]
        cursor = self._execute(
            f"SELECT {', '.join(selected)} FROM results {where} ORDER BY run_a, run_b, metric, method, topic",
            parameters)
        for values in cursor:
            row = dict(zip(COLUMNS, values))
            for column in ("certified", "low_certified", "high_certified"):
                if row[column] is not None:
                    row[column] = bool(row[column])
            yield row


def open_existing(path) -> ResultStore:
    """An existing store, opened to read (refused when missing or not a medopt store)."""
    return ResultStore(path, write=False)


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


def export_results(store_path, output, fmt: str | None = None, *, with_assignment: bool = True) -> int:
    """Write a store's rows to CSV, TSV, JSON lines or parquet (``fmt`` default: from the file name)."""
    output = Path(output)
    fmt = export_format(output, fmt)
    check_output_file(output)
    columns = COLUMNS if with_assignment else tuple(c for c in COLUMNS if c != "assignment")
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
    types = {"value": pa.float64(), "upper_bound": pa.float64(), "seconds": pa.float64(), "certified": pa.bool_(),
             "time_limit": pa.float64(), "low_certified": pa.bool_(), "high_certified": pa.bool_()}
    types.update({c: pa.float64() for c in ("low", "high", "low_bound", "high_bound", *COMPANION_COLUMNS)})
    table = pa.table({c: pa.array(data[c], type=types.get(c, pa.string())) for c in columns})
    temporary = output.with_name(f".{output.name}.tmp")
    try:
        pq.write_table(table, temporary)
        temporary.replace(output)
    finally:
        if temporary.exists():
            temporary.unlink()
    return table.num_rows
