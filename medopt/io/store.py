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
longer than the busy timeout (``MEDOPT_STORE_TIMEOUT`` seconds, default 30).  A store is
opened with ``trusted_schema=OFF`` and refused when it holds a trigger or a view (medopt
makes none: a trigger could rewrite the rows as they are stored); a name SQLite would read
as a URI or an in-memory database (``file:...``, ``:memory:``) is refused.  A store opened to
read is never created nor changed, and can be read from a read-only file or directory.

One job writes a store at a time, and a job's settings and the identity of its inputs
(``inputs``: size, mtime and BLAKE2b of each run, the qrels and the spans, a run under its
name in the store) are written in the transaction of its first rows: :meth:`ResultStore.claim`
takes the write lock before anything is computed and keeps it until those rows are stored, so
a second job started beside it sees them and is refused if its settings differ.
"""

from __future__ import annotations

# size: one SQLite schema and every transaction on it (open, claim, insert, read) in one place, so that
# the rules keeping a store from mixing or going stale are read together; the identity of inputs and the
# one-line refusals are in medopt.io.provenance, the exports' file formats in medopt.io.export.
import math
import os
import sqlite3
import urllib.parse
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import MedoptError
from .export import EXPORT_FORMATS, export_format, write_rows  # noqa: F401 (EXPORT_FORMATS, export_format: the API)
from .output import store_files
from .provenance import Input, Review, identify, match_inputs, one_method, refuse_review  # noqa: F401 (the API)

COLUMNS = ("run_a", "run_b", "topic", "metric", "method", "solver", "value", "direction", "certified",
           "upper_bound", "status", "seconds", "assignment", "time_limit",
           "low", "high", "low_bound", "high_bound", "low_certified", "high_certified", "low_assignment",
           "high_assignment", "rbo_min", "rbo_residual", "rbo_ext")
RANGE_COLUMNS = COLUMNS[14:22]  # the difference range's ends (SPEC 7): NULL in a store made without --range
COMPANION_COLUMNS = COLUMNS[22:]  # a companion's values (RBO, SPEC 9): NULL in a MED row
KEY = ("run_a", "run_b", "topic", "metric", "method")
# the per-pair summary (batch/summary.py) in the ``pairs`` table
PAIR_COLUMNS = ("run_a", "run_b", "metric", "method", "topics", "score_a", "score_b", "diff", "judged_a",
                "judged_b", "med", "certified", "low", "high", "low_bound", "high_bound", "verdict")
# the parquet type of each column that is not text (io.export.write_rows), the store's and the summaries'
PARQUET_TYPES = {**{c: "float64" for c in ("value", "upper_bound", "seconds", "time_limit", "low", "high", "low_bound",
                                          "high_bound", *COMPANION_COLUMNS, "score_a", "score_b", "diff", "judged_a",
                                          "judged_b", "med")},
                 **{c: "bool_" for c in ("certified", "low_certified", "high_certified", "flip_certified")},
                 **{c: "int64" for c in ("topics", "flip_distance", "flip_documents")}}
# a pair's flip distance (SPEC 11), stored beside its summary by ``matrix --flip`` (NULL in a job without it)
FLIP_COLUMNS = ("flip_distance", "flip_documents", "flip_certified")
STORED_PAIR_COLUMNS = PAIR_COLUMNS + FLIP_COLUMNS  # the ``pairs`` table's columns
APPLICATION_ID = 0x4D65644F  # "MedO": PRAGMA application_id of a medopt results store
_SQLITE_HEADER = b"SQLite format 3\x00"
_FIRST_COLUMNS = COLUMNS[:13]  # the columns of the first stores (time_limit and the ranges came later: added on open)
# settings a store records; one made before a setting existed was made with its default
SETTING_DEFAULTS = {"range": "False", "spans_sha256": "none"}
_RETRYABLE = "certified = 0 AND status != 'heuristic'"  # a heuristic's row is uncertified by nature

# The statements that make a store, in order: a table added later is one more statement here (an older
# store gets it when opened to write).  medopt makes no trigger and no view: a store holding one is refused.
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS results (
    run_a TEXT NOT NULL, run_b TEXT NOT NULL, topic TEXT NOT NULL, metric TEXT NOT NULL, method TEXT NOT NULL,
    solver TEXT, value REAL, direction TEXT, certified INTEGER, upper_bound REAL, status TEXT,
    seconds REAL, assignment TEXT, time_limit REAL,
    low REAL, high REAL, low_bound REAL, high_bound REAL, low_certified INTEGER, high_certified INTEGER,
    low_assignment TEXT, high_assignment TEXT, rbo_min REAL, rbo_residual REAL, rbo_ext REAL,
    PRIMARY KEY (run_a, run_b, topic, metric, method)
)""",
    "CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # the identity of each input a store's rows were computed from (kind: run, qrels or spans; name: a
    # run's name in the store, '' for the qrels and the spans)
    """CREATE TABLE IF NOT EXISTS inputs (
    kind TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    blake2b TEXT NOT NULL, PRIMARY KEY (kind, name)
)""",
    # the per-pair summary of the results (batch/summary.py), made anew at the end of every job
    f"CREATE TABLE IF NOT EXISTS pairs ({', '.join(STORED_PAIR_COLUMNS)}, PRIMARY KEY (run_a, run_b, metric, method))",
)
TABLES = ("results", "settings", "inputs", "pairs")  # the tables SCHEMA makes
_FOREIGN_OBJECTS = ("trigger", "view")      # kinds of schema object medopt never makes


def _file_identity(path: Path) -> tuple:
    status = os.stat(path)
    return status.st_dev, status.st_ino


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
    text = os.fspath(path)
    if text in ("", ":memory:") or text.lower().startswith("file:"):
        raise MedoptError(f"--store {text!r}: a store is a file name (not a URI nor an in-memory database, which "
                          "keeps nothing); e.g. --store ./results.sqlite")
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

    ``write=False`` opens an existing store to read it (``mode=ro``): nothing is created or changed.
    """

    def __init__(self, path, *, write: bool = True, timeout: float | None = None):
        self.path = Path(path)
        self.timeout = busy_timeout() if timeout is None else timeout
        self._claimed = False  # a job's claim (settings, inputs) is written but not committed yet
        check_store_file(self.path)
        if not write and not self.path.is_file():
            raise MedoptError(f"{self.path}: no such results store")
        self.connection = None
        try:
            self.connection = self._connect(write)
            self.identity = _file_identity(self.path)
            self.columns = self._check_schema()
            if write:
                self._prepare()
        except sqlite3.Error as error:
            self.close()
            raise self._error(error) from None
        except BaseException:
            self.close()
            raise

    def _connect(self, write: bool) -> sqlite3.Connection:
        """A connection through a URI of the resolved path (no part of the name is read as an option), with
        ``trusted_schema=OFF``.  To read: ``mode=rw`` (never creating the file; its last connection
        then removes the ``-wal`` and ``-shm`` files), else ``mode=ro``, else ``immutable=1`` where
        SQLite cannot make the ``-shm`` beside the store (a read-only directory) and no ``-wal`` holds rows
        the file lacks."""
        location = "file:" + urllib.parse.quote(os.path.abspath(self.path))
        modes = ["mode=rwc"] if write else ["mode=rw", "mode=ro", "mode=ro&immutable=1"]
        for attempt, mode in enumerate(modes):
            connection = sqlite3.connect(f"{location}?{mode}", uri=True, isolation_level=None, timeout=self.timeout)
            try:
                connection.execute("PRAGMA trusted_schema=OFF")
                connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return connection
            except sqlite3.OperationalError as error:
                connection.close()
                wal = self.path.with_name(self.path.name + "-wal")
                if write or attempt == len(modes) - 1 or "unable to open" not in str(error):
                    raise
                if modes[attempt + 1].endswith("immutable=1") and wal.exists() and wal.stat().st_size:
                    raise MedoptError(f"{self.path}: cannot read it here: its rows in {wal.name} need a "
                                      f"{self.path.name}-shm that cannot be made in this directory; copy the "
                                      f"store with its -wal to a writable directory") from None
        raise AssertionError("unreachable")

    def _error(self, error: sqlite3.Error) -> MedoptError:
        text = str(error)
        if "locked" in text or "busy" in text:
            return MedoptError(f"{self.path}: the store is locked by another process (waited {self.timeout:g} s; "
                               "MEDOPT_STORE_TIMEOUT sets the wait): let that job finish, or choose another --store")
        if isinstance(error, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
            return MedoptError(f"{self.path}: not a medopt results store ({text})")
        return MedoptError(f"{self.path}: results store error: {text}")

    def _check_schema(self) -> tuple:
        """The columns of the results table; refuses a database that is not a medopt store, and a store
        holding a trigger or a view (medopt makes none)."""
        connection = self.connection
        self.tables = set()
        foreign = connection.execute(
            f"SELECT type, name FROM sqlite_master WHERE type IN ({', '.join('?' * len(_FOREIGN_OBJECTS))}) "
            "ORDER BY type, name", _FOREIGN_OBJECTS).fetchall()
        if foreign:
            shown = ", ".join(f"{kind} {name!r}" for kind, name in foreign)
            raise MedoptError(f"{self.path}: refused: the store holds {shown}, which medopt did not make (it could "
                              "change the rows as they are stored or read); choose another --store")
        tables = {name: tuple(c[1] for c in connection.execute(f'PRAGMA table_info("{name}")'))
                  for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        mark = connection.execute("PRAGMA application_id").fetchone()[0]
        marked = mark == APPLICATION_ID
        if not tables and mark in (0, APPLICATION_ID):
            return ()  # an empty database: a new store
        if (marked or set(tables) == {"results", "settings"}) and set(_FIRST_COLUMNS) <= set(tables.get("results", ())):
            self.tables = set(tables)
            return tables["results"]
        found = ", ".join(sorted(tables)) or "no tables"
        raise MedoptError(f"{self.path}: not a medopt results store (an SQLite database holding {found}); "
                          "choose another --store")

    def _prepare(self) -> None:
        """WAL mode, the tables and the mark on a new store; the tables and columns an older one lacks."""
        connection = self.connection
        if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA cache_size=-65536")       # 64 MB: the key index stays in memory
        connection.execute("PRAGMA wal_autocheckpoint=10000")  # fewer, larger checkpoints
        if self.columns and set(COLUMNS) <= set(self.columns) and set(TABLES) <= self.tables and \
                connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID:
            return
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in SCHEMA:
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
        self.columns, self.tables = COLUMNS, set(TABLES)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Close the connection; a claim no row followed is rolled back."""
        if self.connection is not None:
            self._claimed = False
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
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
        """Insert rows (tuples in COLUMNS order) in one transaction (that of the job's claim, for its first
        rows). A row already stored is kept as it is, unless it is uncertified: then the new computation
        replaces it."""
        updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c not in KEY)
        sql = (f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
               f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {updates} WHERE results.certified = 0")
        connection = self.connection
        width = len(COLUMNS)
        rows = (row + (None,) * (width - len(row)) for row in rows)  # a MED row stops before the companion columns
        try:
            if not self._claimed:
                connection.execute("BEGIN IMMEDIATE")
            self._claimed = False
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

    def pair_order(self, names: list, i: int, j: int) -> tuple[int, int]:
        """(i, j), or (j, i) when the store holds the pair that way round only (runs given in another order
        on --resume): a pair's rows keep one orientation."""
        if not self.columns:
            return i, j
        held = "SELECT EXISTS (SELECT 1 FROM results WHERE run_a = ? AND run_b = ?)"
        if self._execute(held, (names[j], names[i])).fetchone()[0] and \
                not self._execute(held, (names[i], names[j])).fetchone()[0]:
            return j, i
        return i, j

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

    def inputs(self) -> list[Input]:
        """The recorded identity of each input (none in an older medopt's store)."""
        if "inputs" not in self.tables:
            return []
        cursor = self._execute("SELECT kind, path, size, mtime_ns, blake2b, name FROM inputs ORDER BY kind, name")
        return [Input(*row) for row in cursor.fetchall()]

    def clashes(self, settings: dict) -> list[str]:
        """Settings that differ from those of the rows stored (none while the store holds no row)."""
        if not self.count():
            return []
        stored = dict(SETTING_DEFAULTS, **self.settings())
        return [f"{k}: stored {stored[k]}, now {v}" for k, v in settings.items() if k in stored and stored[k] != v]

    def review(self, settings: dict, inputs: list[Input], *, refresh: bool = False) -> Review:
        """Compare a job's settings and inputs (runs unnamed: matched to the stored runs by path, or by
        content for a moved file) with what the stored rows were computed from; nothing is changed.
        With ``refresh`` the rows of the changed inputs do not count (they are to be computed again)."""
        review = match_inputs(self.inputs(), inputs, self.count())
        if not review.rows:
            return review
        if refresh and any(item.kind != "run" for item, _ in review.changed):  # every row depends on the qrels
            return Review(0, review.changed, review.names, recorded=review.recorded)
        review.clashes = self.clashes(settings)
        return review

    def claim(self, settings: dict, inputs: list[Input], *, resume: bool = False, refresh: bool = False,
              names=None, warn=None) -> Review:
        """Take the store for a job: under the write lock, refuse a store holding rows (unless ``resume``),
        rows of other settings, or rows of changed inputs (unless ``refresh``: then those rows are deleted,
        to be computed again); then write the settings and the inputs (each run named by ``names(review)``:
        a path -> name mapping).  The lock is kept, and the writes not committed, until the first rows are
        inserted (:meth:`insert`) or :meth:`release` is called: a job started beside this one waits, then
        sees its settings."""
        connection = self.connection
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise self._error(error) from None
        try:
            if not self.path.exists() or _file_identity(self.path) != self.identity:
                raise MedoptError(f"{self.path}: the store was removed meanwhile (another job that failed); "
                                  "run the job again")
            review = self.review(settings, inputs, refresh=refresh)
            refuse_review(self.path, review, resume=resume, refresh=refresh)
            if refresh and review.changed:
                self._forget(review, warn)
            empty = not self.count()
            if empty:  # what a store without rows records is no one's
                self._execute("DELETE FROM inputs")
            named = names(review) if names else {}
            self._execute_many(f"INSERT OR {'REPLACE' if empty else 'IGNORE'} INTO settings VALUES (?, ?)",
                               list(settings.items()))
            for item in inputs:
                if item.kind == "run":
                    item = item.named(named.get(item.path, Path(item.path).name))
                    self._execute("DELETE FROM inputs WHERE kind = 'run' AND path = ?", (item.path,))
                self._execute("INSERT OR REPLACE INTO inputs (kind, name, path, size, mtime_ns, blake2b) VALUES "
                              "(?, ?, ?, ?, ?, ?)", (item.kind, item.name, item.path, item.size, item.mtime_ns,
                                                     item.blake2b))
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        self._claimed = True
        return review

    def _forget(self, review: Review, warn) -> None:
        """Delete the rows computed from the changed inputs (--refresh), saying which."""
        changed_runs = [stored.name for item, stored in review.changed if item.kind == "run"]
        if any(item.kind != "run" for item, _ in review.changed):
            files = ", ".join(item.shown for item, _ in review.changed if item.kind != "run")
            count = self.count()
            self._execute("DELETE FROM results")
            self._execute("DELETE FROM inputs")
            if warn:
                warn(f"{files} changed since the rows were computed: all {count} stored rows are dropped: this "
                     "job computes again those of its metrics and method (--refresh)")
            return
        for name in changed_runs:
            count = self._execute("SELECT COUNT(*) FROM results WHERE run_a = ? OR run_b = ?",
                                  (name, name)).fetchone()[0]
            self._execute("DELETE FROM results WHERE run_a = ? OR run_b = ?", (name, name))
            if warn:
                path = next(item.shown for item, stored in review.changed if stored.name == name)
                warn(f"{path} (run {name}) changed since its rows were computed: its {count} stored rows are "
                     "dropped: this job computes again those of its metrics and method (--refresh)")

    def release(self) -> None:
        """Commit a claim no row followed (a job with nothing to compute)."""
        if self._claimed:
            self._claimed = False
            try:
                self.connection.execute("COMMIT")
            except sqlite3.Error as error:
                raise self._error(error) from None

    def _execute_many(self, sql: str, parameters):
        try:
            return self.connection.executemany(sql, parameters)
        except sqlite3.Error as error:
            raise self._error(error) from None

    def check_settings(self, settings: dict) -> None:
        """Refuse to mix rows computed under different settings, or record the job's settings (those of
        a store that holds no row yet are replaced)."""
        self.claim(settings, [], resume=True)
        self.release()

    def replace_pairs(self, rows: list[dict], runs) -> None:
        """The ``pairs`` table (the per-pair summary, PAIR_COLUMNS, and the flip columns when the rows have
        them: FLIP_COLUMNS, else NULL) of the pairs of ``runs`` made anew from ``rows``, in one transaction
        (the pairs of other runs, from an earlier job, are kept)."""
        names = ", ".join(STORED_PAIR_COLUMNS)
        runs = sorted(runs)
        among = ", ".join("?" * len(runs))
        try:
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                self.connection.execute(SCHEMA[-1])
                present = {c[1] for c in self.connection.execute('PRAGMA table_info("pairs")')}
                for column in FLIP_COLUMNS:  # a pairs table from an older medopt
                    if column not in present:
                        self.connection.execute(f"ALTER TABLE pairs ADD COLUMN {column}")
                self.connection.execute(f"DELETE FROM pairs WHERE run_a IN ({among}) AND run_b IN ({among})",
                                        runs + runs)
                self.connection.executemany(
                    f"INSERT INTO pairs ({names}) VALUES ({', '.join('?' * len(STORED_PAIR_COLUMNS))})",
                    [tuple(row[c] for c in PAIR_COLUMNS) + tuple(row.get(c) for c in FLIP_COLUMNS) for row in rows])
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")
        except sqlite3.Error as error:
            raise self._error(error) from None

    def pairs(self) -> list[dict]:
        """The stored per-pair summary (empty when the job wrote none), with the flip columns (None where
        the job computed none, and in a pairs table from an older medopt)."""
        exists = self._execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pairs'").fetchone()
        if not exists:
            return []
        present = {c[1] for c in self._execute('PRAGMA table_info("pairs")')}
        selected = tuple(c if c in present else "NULL" for c in STORED_PAIR_COLUMNS)
        cursor = self._execute(f"SELECT {', '.join(selected)} FROM pairs ORDER BY run_a, run_b, metric, method")
        rows = [dict(zip(STORED_PAIR_COLUMNS, values)) for values in cursor]
        for row in rows:
            row["certified"] = bool(row["certified"])
            if row["flip_certified"] is not None:
                row["flip_certified"] = bool(row["flip_certified"])
        return rows

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


def remove_if_unused(path) -> bool:
    """Delete a store's files if it holds no row and no other job uses it (checked under the write lock,
    taken without waiting): what a job that failed before its first row does with the store it made."""
    path = Path(path)
    try:
        connection = sqlite3.connect("file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=rw", uri=True,
                                     isolation_level=None, timeout=0)
    except sqlite3.Error:
        return False
    try:
        connection.execute("PRAGMA trusted_schema=OFF")
        connection.execute("BEGIN IMMEDIATE")
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables - set(TABLES) or ("results" in tables and
                                    connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]):
            return False
        for name in (path, *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))):
            if name.exists():
                name.unlink()
        return True
    except sqlite3.Error:
        return False  # locked by another job, or not a store: kept
    finally:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        connection.close()


def open_existing(path) -> ResultStore:
    """An existing store, opened to read (refused when missing or not a medopt store)."""
    return ResultStore(path, write=False)


def export_results(store_path, output, fmt: str | None = None, *, with_assignment: bool = True) -> int:
    """Write a store's rows to CSV, TSV, JSON lines or parquet (``fmt`` default: from the file name)."""
    columns = COLUMNS if with_assignment else tuple(c for c in COLUMNS if c != "assignment")
    with open_existing(store_path) as store:
        return write_rows(store.rows(), columns, output, fmt, inputs=store_files(store_path),
                          types=PARQUET_TYPES)


def export_pairs(store_path, output, fmt: str | None = None) -> int:
    """Write a store's per-pair summary (the ``pairs`` table) to CSV, TSV, JSON lines or parquet; the flip
    columns too when the job that made it computed them (``matrix --flip``)."""
    with open_existing(store_path) as store:
        rows = store.pairs()
    flips = any(row["flip_certified"] is not None for row in rows)
    return write_rows(iter(rows), STORED_PAIR_COLUMNS if flips else PAIR_COLUMNS, output, fmt,
                      inputs=store_files(store_path), types=PARQUET_TYPES)


def export_rows(rows, columns, output, fmt: str | None = None, *, inputs=()) -> int:
    """Write rows (dicts) with ``columns`` to CSV, TSV, JSON lines or parquet (matrix --test's and --flip's
    summaries)."""
    return write_rows(iter(rows), tuple(columns), output, fmt, inputs=inputs, types=PARQUET_TYPES)
