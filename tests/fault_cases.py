"""The fault audit of issue 18 as a table: every malformed input through every command and engine,
unwritable outputs, bad stores (foreign, locked, not SQLite), bad options.

Each case runs in a fresh working directory holding tiny good inputs (three runs of three topics,
their qrels, a good store) plus the case's own files, and must end in exit status 2, exactly one
stderr line starting ``medopt: error:``, no traceback, and no file or directory that was not there
before.  ``tests/cli/test_faults.py`` runs the table under pytest; ``benchmarks/fault_audit.py`` replays
it and prints the counts.  Cases run in-process (click's CliRunner) unless processes matter: the
default ``-j`` reads runs and computes on a process pool (forked from the caller, so errors cross a
process boundary either way), Dask starts a cluster, and stdout on /dev/full needs a real stdout.
"""

from __future__ import annotations

import gzip
import io
import os
import sqlite3
import stat
import subprocess
import sys
import tarfile
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path

GOOD_RUNS = {
    "a.run": "".join(f"{t} Q0 d{t}{i} {i + 1} {10 - i} ra\n" for t in (1, 2, 3) for i in range(5)),
    "b.run": "".join(f"{t} Q0 d{t}{(i * 2) % 7} {i + 1} {10 - i} rb\n" for t in (1, 2, 3) for i in range(5)),
    "c.run": "".join(f"{t} Q0 d{t}{(i * 3) % 8} {i + 1} {10 - i} rc\n" for t in (1, 2, 3) for i in range(5)),
}
QRELS = "".join(f"{t} 0 d{t}{i} {i % 2}\n" for t in (1, 2, 3) for i in range(0, 8, 2))
GOOD_LINE = "1 Q0 d11 1 2.0 rx\n"


def _truncated_gzip() -> bytes:
    data = gzip.compress(GOOD_RUNS["a.run"].encode() * 40)
    return data[: len(data) // 2]


def _tar(gzipped: bool) -> bytes:
    """A TAR archive of a run file, as CLEF distributes runs: its header is what a reader meets first."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gzipped else "w") as archive:
        data = GOOD_RUNS["a.run"].encode()
        info = tarfile.TarInfo("runs/a.run")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# name -> bytes of the bad file; None: no such file; "DIR": a directory in its place
BAD_RUNS = {
    "empty": b"",
    "blank-lines": b"\n  \n\t\n",
    "missing-column": (GOOD_LINE + "1 Q0 d12 2 1.0\n").encode(),
    "extra-column": (GOOD_LINE + "1 Q0 d12 2 1.0 rx extra\n").encode(),
    "nan-score": (GOOD_LINE + "1 Q0 d12 2 nan rx\n").encode(),
    "inf-score": (GOOD_LINE + "1 Q0 d12 2 inf rx\n").encode(),
    "huge-score": (GOOD_LINE + "1 Q0 d12 2 1e999 rx\n").encode(),
    "duplicate-docid": (GOOD_LINE + "1 Q0 d11 2 1.0 rx\n").encode(),
    "bad-rank": (GOOD_LINE + "1 Q0 d12 2.5 1.0 rx\n").encode(),
    "non-utf8": GOOD_LINE.encode() + b"1 Q0 d\xff\xfe 2 1.0 rx\n",
    "truncated-gz": _truncated_gzip(),
    "nonexistent": None,
    "directory": "DIR",
    "tar-header": _tar(False),
    "tar-gz": _tar(True),
}
BAD_QRELS = {
    "missing-column": b"1 0 d11\n",
    "extra-column": b"1 0 d11 1 extra\n",
    "bad-grade": b"1 0 d11 high\n",
    "conflicting-duplicate": b"1 0 d11 1\n1 0 d11 2\n",
    "non-utf8": b"1 0 d\xff 1\n",
    "truncated-gz": _truncated_gzip(),
    "nonexistent": None,
    "directory": "DIR",
    "tar-header": _tar(False),
}


def _foreign_store(tables: str) -> bytes:
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"medopt-foreign-{os.getpid()}-{threading.get_ident()}.db"
    path.unlink(missing_ok=True)
    connection = sqlite3.connect(str(path))
    connection.executescript(tables)
    connection.commit()
    connection.close()
    data = path.read_bytes()
    path.unlink()
    return data


_MEDOPT_TABLES = """
CREATE TABLE results (run_a TEXT NOT NULL, run_b TEXT NOT NULL, topic TEXT NOT NULL, metric TEXT NOT NULL,
    method TEXT NOT NULL, solver TEXT, value REAL, direction TEXT, certified INTEGER, upper_bound REAL, status TEXT,
    seconds REAL, assignment TEXT, PRIMARY KEY (run_a, run_b, topic, metric, method));
CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
PRAGMA application_id = 1298490447;
"""

BAD_STORES = {
    "text-file": GOOD_RUNS["a.run"].encode(),
    # a crafted store: a trigger that rewrites every new row (certified 0.999), a view
    "trigger": _foreign_store(_MEDOPT_TABLES + "CREATE TRIGGER t AFTER INSERT ON results BEGIN UPDATE results SET "
                              "value = 0.999, certified = 1 WHERE rowid = new.rowid; END;"),
    "view": _foreign_store(_MEDOPT_TABLES + "CREATE VIEW v AS SELECT * FROM results;"),
    "foreign-results-table": _foreign_store("CREATE TABLE results (a, b); INSERT INTO results VALUES (1, 2);"),
    "foreign-other-table": _foreign_store("CREATE TABLE people (name TEXT);"),
    "truncated-sqlite": b"SQLite format 3\x00" + b"\x00" * 40,
    "directory": "DIR",
}


# two topics, 25 unjudged documents a side: method enumerate refuses it inside the task (TooLargeError)
BIG = {"big.run": "".join(f"{t} Q0 x{i} {i + 1} {30 - i} r1\n" for t in (1, 2) for i in range(25)).encode(),
       "big2.run": "".join(f"{t} Q0 y{i} {i + 1} {30 - i} r2\n" for t in (1, 2) for i in range(25)).encode()}


@dataclass
class Case:
    """One command line in a working directory holding the good inputs and ``files``."""

    name: str
    args: list
    files: dict = field(default_factory=dict)   # extra files: name -> bytes | None (absent) | "DIR"
    process: bool = False                       # run as a real process (pool start method, Dask, stdout)
    stdout: str | None = None                   # process cases: a file to send stdout to ("/dev/full")
    env: dict = field(default_factory=dict)
    lock_store: bool = False                    # hold a write transaction on s.sqlite while the case runs
    good_store: bool = False                    # a finished store s.sqlite among the inputs
    changed: dict = field(default_factory=dict)  # files written after the good store: inputs changed since
    klass: str = "issue-18"                     # the audit the case belongs to, and its class there
    preserved: tuple = ()                       # files that must be exactly as they were (bytes, file type)
    listener: bool = False                      # a TCP listener that is no Dask scheduler: LISTENER in args
    timeout: float = 120                        # process cases: seconds before the case counts as a hang


def _with(args, bad) -> list:
    return [bad if a == "BAD" else a for a in args]


def _blank_bomb(megabytes: int) -> bytes:
    """A small .gz of ``megabytes`` MiB of newlines (a gzip bomb, decompressing some 1000 times its size)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\n" * (1 << 20)
    return b"".join([*(packer.compress(block) for _ in range(megabytes)), packer.flush()])


_BOMBS: dict = {}


def bomb() -> bytes:
    if "bomb" not in _BOMBS:
        _BOMBS["bomb"] = _blank_bomb(512)
    return _BOMBS["bomb"]


def issue_50_cases() -> list[Case]:
    """The second fault audit (issue 50): outputs that must never replace an input, a store or a special
    file, readers that must refuse special files, bombs and NUL bytes, exits that must be one line."""
    one = ["-m", "P@5"]
    table = []

    def output(name, args, files=None, **extra):
        table.append(Case(name, args, files or {}, klass="issue-50/output", **extra))

    output("compare/-o/is-run-a", ["compare", "a.run", "b.run", *one, "-o", "a.run"], preserved=("a.run",))
    output("compare/-o/is-qrels", ["compare", "a.run", "b.run", "--qrels", "q.txt", *one, "-o", "./q.txt"],
           preserved=("q.txt",))
    output("compare/-o/hard-link-to-run", ["compare", "a.run", "b.run", *one, "-o", "h.csv"], {"h.csv": "LINK:a.run"},
           preserved=("a.run", "h.csv"))
    output("compare/-o/parquet-is-run", ["compare", "a.run", "b.run", *one, "--format", "parquet", "-o", "b.run"],
           preserved=("b.run",))
    output("compare/-o/trailing-slash", ["compare", "a.run", "b.run", *one, "-o", "newdir/"])
    output("compare/-o/fifo-nobody-reads", ["compare", "a.run", "b.run", *one, "-o", "f.csv"], {"f.csv": "FIFO"},
           preserved=("f.csv",), process=True, timeout=30)
    output("compare/-o/device-parquet", ["compare", "a.run", "b.run", *one, "--format", "parquet", "-o", "n.parquet"],
           {"n.parquet": "DEVICE"}, preserved=("n.parquet",))
    output("bounds/-o/is-run", ["bounds", "a.run", "b.run", "--qrels", "q.txt", *one, "-o", "a.run"],
           preserved=("a.run",))
    output("judge-next/-o/is-qrels", ["judge-next", "a.run", "b.run", "--qrels", "q.txt", "-m", "P@5", "-o", "q.txt"],
           preserved=("q.txt",))
    output("matrix/-o/is-store", ["matrix", "a.run", "b.run", *one, "-j", "1", "--store", "out.csv", "-o", "out.csv"])
    output("matrix/--heatmap/is-store", ["matrix", "a.run", "b.run", *one, "-j", "1", "--store", "s.png",
                                         "--heatmap", "s.png"])
    output("matrix/--store/is-a-run", ["matrix", "a.run", "b.run", *one, "-j", "1", "--store", "b.run"],
           preserved=("b.run",))
    output("matrix/-o/is-a-run", ["matrix", "a.run", "b.run", *one, "-j", "1", "-o", "a.run.csv"],
           {"a.run.csv": "LINK:a.run"}, preserved=("a.run",))
    output("matrix/-o/fifo", ["matrix", "a.run", "b.run", *one, "-j", "1", "-o", "m.parquet"], {"m.parquet": "FIFO"},
           preserved=("m.parquet",))
    output("export-results/-o/is-store", ["export-results", "--store", "s.sqlite", "--format", "csv", "-o",
                                          "s.sqlite"], good_store=True, preserved=("s.sqlite",))
    output("export-results/-o/device-parquet", ["export-results", "--store", "s.sqlite", "-o", "node.parquet"],
           {"node.parquet": "DEVICE"}, good_store=True, preserved=("node.parquet",))
    output("export-results/-o/directory-slash", ["export-results", "--store", "s.sqlite", "-o", "d.csv/"],
           good_store=True)
    output("plot/-o/device", ["plot", "--store", "s.sqlite", "-o", "node.png"], {"node.png": "DEVICE"},
           good_store=True, preserved=("node.png",))
    output("plot-judged-fraction/-o/is-qrels", ["plot", "--kind", "judged-fraction", "a.run", "b.run", "--qrels",
                                                "q.png", *one, "-o", "q.png"], {"q.png": QRELS.encode()},
           preserved=("q.png",))
    output("export/-o/device", ["export", "-m", "AP@2", "--example", "moffat-x3x4", "-o", "node.lp"],
           {"node.lp": "DEVICE"}, preserved=("node.lp",))
    output("certify/--out/file-is-a-run", ["certify", "summary.csv", "b.run", *one, "--heuristic", "closed-form",
                                           "--out", "."], {"summary.csv": GOOD_RUNS["a.run"].encode()},
           preserved=("summary.csv",))

    def reader(name, args, files, **extra):
        table.append(Case(name, args, files, klass="issue-50/reader", **extra))

    nul_qrels = QRELS.encode() + b"1 0 d11\x00 1\n"
    nul_run = GOOD_RUNS["a.run"].encode().replace(b"d10 1 10", b"d10\x00 1 10")
    for command, run_args, tail in (("compare", ["compare", "a.run"], []),
                                    ("matrix-j1", ["matrix", "a.run", "c.run"], ["-j", "1"])):
        def with_run(run):
            return [*run_args, run, *tail, *one]

        def with_qrels(qrels):
            return [*run_args, "b.run", *tail, "--qrels", qrels, *one]

        reader(f"{command}/run/fifo", with_run("f.run"), {"f.run": "FIFO"}, process=True, timeout=30)
        reader(f"{command}/qrels/fifo", with_qrels("f.qrels"), {"f.qrels": "FIFO"}, process=True, timeout=30)
        reader(f"{command}/run/nul-byte", with_run("n.run"), {"n.run": nul_run})
        reader(f"{command}/qrels/nul-byte", with_qrels("n.qrels"), {"n.qrels": nul_qrels})
        reader(f"{command}/run/gzip-bomb", with_run("bomb.run.gz"), {"bomb.run.gz": bomb}, process=True, timeout=60)
        reader(f"{command}/qrels/gzip-bomb", with_qrels("bomb.qrels.gz"), {"bomb.qrels.gz": bomb}, process=True,
               timeout=60)

    def exit_case(name, args, files=None, **extra):
        table.append(Case(name, args, files or {}, klass="issue-50/exit", **extra))

    exit_case("matrix-j1/metric/cutoff-overflow", ["matrix", "a.run", "b.run", "-m", "nDCG@9223372036854775808",
                                                   "-j", "1"])
    exit_case("compare/metric/cutoff-overflow", ["compare", "a.run", "b.run", "-m", "P@99999999999999999999"])
    exit_case("compare/metric/q-beta-1e308", ["compare", "a.run", "b.run", "--qrels", "q.txt", "-m",
                                              "Q(beta=1e308)@5"])
    exit_case("matrix-j1/runs/same-file-twice", ["matrix", "a.run", "./a.run", "b.run", *one, "-j", "1"])
    exit_case("compare/stdout/closed", ["compare", "a.run", "b.run", *one], process=True, stdout="CLOSED")
    exit_case("matrix-dask/--scheduler/not-an-address", ["matrix", "a.run", "b.run", *one, "--engine", "dask",
                                                         "--scheduler", "not an address"], process=True)
    exit_case("matrix-dask/--scheduler/not-a-scheduler", ["matrix", "a.run", "b.run", *one, "--engine", "dask",
                                                          "--scheduler", "LISTENER"], process=True, listener=True,
              env={"MEDOPT_DASK_TIMEOUT": "2"})
    return table


def cases() -> list[Case]:
    """The audit's classes, every case expecting exit 2, one error line, no traceback, nothing left."""
    table = []
    one = ["-m", "P@5"]
    for kind, data in BAD_RUNS.items():
        bad = f"bad-{kind}.run" + (".gz" if kind in ("truncated-gz", "tar-gz") else "")
        files = {bad: data}
        table += [
            Case(f"compare/run/{kind}", _with(["compare", "a.run", "BAD", *one], bad), files),
            Case(f"matrix-j1/run/{kind}", _with(["matrix", "a.run", "b.run", "BAD", *one, "-j", "1"], bad), files),
            Case(f"matrix-pool/run/{kind}", _with(["matrix", "a.run", "b.run", "BAD", *one], bad), files),
            Case(f"certify/run/{kind}", _with(["certify", "a.run", "BAD", *one, "--heuristic", "closed-form"], bad),
                 files),
            Case(f"plot-judged-fraction/run/{kind}", _with(["plot", "--kind", "judged-fraction", "a.run", "BAD",
                                                            "--qrels", "q.txt", *one, "-o", "f.png"], bad), files),
        ]
    for kind in ("empty", "nan-score", "non-utf8"):  # a real process: the pool's own start method
        bad = f"bad-{kind}.run"
        table.append(Case(f"matrix-pool-process/run/{kind}", ["matrix", "a.run", "b.run", bad, *one, "-j", "2"],
                          {bad: BAD_RUNS[kind]}, process=True))
    table += [  # Dask: a reader error, and an error raised inside a Dask task
        Case("matrix-dask/run/nan-score", ["matrix", "a.run", "b.run", "bad.run", *one, "--engine", "dask", "-j", "2"],
             {"bad.run": BAD_RUNS["nan-score"]}, process=True),
        Case("matrix-dask/task-error", ["matrix", "big.run", "big2.run", "-m", "AP@20", "--method", "enumerate",
                                        "--engine", "dask", "-j", "2"], BIG, process=True),
        Case("matrix-pool/task-error", ["matrix", "big.run", "big2.run", "-m", "AP@20", "--method", "enumerate",
                                        "--chunk-size", "1", "-j", "2"], BIG),
        Case("matrix-j1/task-error", ["matrix", "big.run", "big2.run", "-m", "AP@20", "--method", "enumerate",
                                      "-j", "1"], BIG),
    ]
    for kind, data in BAD_QRELS.items():
        bad = f"bad-{kind}.qrels" + (".gz" if kind == "truncated-gz" else "")
        files = {bad: data}
        table += [
            Case(f"compare/qrels/{kind}", ["compare", "a.run", "b.run", "--qrels", bad, *one], files),
            Case(f"matrix-j1/qrels/{kind}", ["matrix", "a.run", "b.run", "--qrels", bad, *one, "-j", "1"], files),
            Case(f"certify/qrels/{kind}", ["certify", "a.run", "b.run", "--qrels", bad, *one], files),
            Case(f"plot-judged-fraction/qrels/{kind}", ["plot", "--kind", "judged-fraction", "a.run", "b.run",
                                                        "--qrels", bad, *one, "-o", "f.png"], files),
        ]
    for kind, data in BAD_STORES.items():
        files = {"bad.sqlite": data}
        table += [
            Case(f"export-results/store/{kind}", ["export-results", "--store", "bad.sqlite", "-o", "x.csv"], files),
            Case(f"plot-heatmap/store/{kind}", ["plot", "--store", "bad.sqlite", "-o", "x.png"], files),
            Case(f"matrix-resume/store/{kind}", ["matrix", "a.run", "b.run", *one, "-j", "1", "--store", "bad.sqlite",
                                                 "--resume"], files),
        ]
    table += [
        Case("export-results/store/nonexistent", ["export-results", "--store", "none.sqlite", "-o", "x.csv"]),
        Case("plot-heatmap/store/nonexistent", ["plot", "--store", "none.sqlite", "-o", "x.png"]),
        Case("matrix-resume/store/locked", ["matrix", "a.run", "b.run", "--qrels", "q.txt", *one, "-m", "P@3", "-j",
                                            "1", "--store", "s.sqlite", "--resume"], good_store=True, lock_store=True,
             env={"MEDOPT_STORE_TIMEOUT": "0.3"}),
        Case("matrix/store/not-resumed", ["matrix", "a.run", "b.run", "--qrels", "q.txt", *one, "-j", "1", "--store",
                                          "s.sqlite"], good_store=True),
        Case("matrix/store/other-settings", ["matrix", "a.run", "b.run", *one, "-j", "1", "--store", "s.sqlite",
                                             "--resume"], good_store=True),
    ]
    # stores that would mix or go stale (issue 50): a changed run or qrels, another method, one file given
    # twice, names SQLite reads as a URI or an in-memory database
    resume = ["matrix", "a.run", "b.run", "--qrels", "q.txt", *one, "-j", "1", "--store", "s.sqlite", "--resume"]
    table += [
        Case("matrix-resume/changed-run", resume, good_store=True,
             changed={"a.run": GOOD_RUNS["a.run"].replace("d10 1", "zz 1").encode()}),
        Case("matrix-resume/changed-qrels", resume, good_store=True, changed={"q.txt": (QRELS + "1 0 zz 1\n").encode()}),
        Case("matrix-resume/other-qrels-file", [*resume[:4], "q2.txt", *resume[5:]], {"q2.txt": b"1 0 d11 1\n"},
             good_store=True),
        Case("matrix-resume/other-method", [*resume, "--method", "exact"], good_store=True),
        Case("matrix/run/same-file-twice", ["matrix", "a.run", "./a.run", *one, "-j", "1"]),
        Case("matrix/--refresh/without-resume", ["matrix", "a.run", "b.run", *one, "-j", "1", "--refresh"]),
        Case("matrix/--add-method/without-resume", ["matrix", "a.run", "b.run", *one, "-j", "1", "--add-method"]),
    ]
    for kind, name in (("memory", ":memory:"), ("uri-memory", "file:x?mode=memory"), ("uri", "file:s.sqlite?mode=ro"),
                       ("empty-name", "")):
        table += [
            Case(f"matrix/--store/{kind}", ["matrix", "a.run", "b.run", *one, "-j", "1", "--store", name]),
            Case(f"export-results/--store/{kind}", ["export-results", "--store", name, "-o", "x.csv"],
                 good_store=True),
            Case(f"plot/--store/{kind}", ["plot", "--store", name, "-o", "x.png"], good_store=True),
        ]
    # output paths: missing directory, /proc, a directory, a file as the parent, a bad suffix, stdout full
    for where, target in (("missing-dir", "nodir/out"), ("proc", "/proc/medopt-out"), ("parent-is-file", "a.run/out")):
        table += [
            Case(f"compare/-o/{where}", ["compare", "a.run", "b.run", *one, "-o", f"{target}.csv"]),
            Case(f"matrix/-o/{where}", ["matrix", "a.run", "b.run", *one, "-j", "1", "-o", f"{target}.csv"]),
            Case(f"matrix/--heatmap/{where}", ["matrix", "a.run", "b.run", *one, "-j", "1", "--heatmap",
                                               f"{target}.png"]),
            Case(f"matrix/--store/{where}", ["matrix", "a.run", "b.run", *one, "-j", "1", "--store",
                                             f"{target}.sqlite"]),
            Case(f"export-results/-o/{where}", ["export-results", "--store", "s.sqlite", "-o", f"{target}.csv"],
                 good_store=True),
            Case(f"plot/-o/{where}", ["plot", "--store", "s.sqlite", "-o", f"{target}.png"], good_store=True),
            Case(f"plot-judged-fraction/-o/{where}", ["plot", "--kind", "judged-fraction", "a.run", "b.run", "--qrels",
                                                      "q.txt", *one, "-o", f"{target}.png"]),
            Case(f"certify/--out/{where}", ["certify", "a.run", "b.run", *one, "--out", target]),
        ]
    table += [
        Case("compare/-o/is-a-directory", ["compare", "a.run", "b.run", *one, "-o", "adir"], {"adir": "DIR"}),
        Case("matrix/-o/unknown-format", ["matrix", "a.run", "b.run", *one, "-j", "1", "-o", "out.xyz"]),
        Case("matrix/--heatmap/not-an-image", ["matrix", "a.run", "b.run", *one, "-j", "1", "--heatmap", "h.jpg"]),
        Case("plot/-o/not-an-image", ["plot", "--store", "s.sqlite", "-o", "x.jpg"], good_store=True),
        Case("certify/--out/is-a-file", ["certify", "a.run", "b.run", *one, "--out", "a.run"]),
        Case("compare/stdout/dev-full", ["compare", "a.run", "b.run", *one], process=True, stdout="/dev/full"),
        Case("certify/stdout/dev-full", ["certify", "a.run", "b.run", *one, "--heuristic", "closed-form"],
             process=True, stdout="/dev/full"),
    ]
    # options and topics
    for value in ("nan", "inf", "-1", "abc"):
        table += [Case(f"compare/--time-limit/{value}", ["compare", "a.run", "b.run", *one, "--time-limit", value]),
                  Case(f"matrix/--time-limit/{value}", ["matrix", "a.run", "b.run", *one, "--time-limit", value]),
                  Case(f"certify/--time-limit/{value}", ["certify", "a.run", "b.run", *one, "--time-limit", value])]
    table += [
        Case("compare/metric/malformed", ["compare", "a.run", "b.run", "-m", "P@"]),
        Case("matrix/metric/malformed", ["matrix", "a.run", "b.run", "-m", "nDCG@0", "-j", "1"]),
        Case("matrix/topics/none-in-common", ["matrix", "a.run", "other.run", *one, "-j", "1"],
             {"other.run": b"9 Q0 x 1 1 ro\n"}),
        Case("compare/topics/none-in-common", ["compare", "a.run", "other.run", *one], {"other.run": b"9 Q0 x 1 1 ro\n"}),
        Case("matrix/--retry-timeouts/without-resume", ["matrix", "a.run", "b.run", *one, "--retry-timeouts"]),
        Case("compare/--topics/none-compared", ["compare", "a.run", "b.run", *one, "--topics", "77"]),
        Case("matrix/qrels/nothing-judged-of-the-runs", ["matrix", "a.run", "b.run", *one, "-j", "1", "--qrels",
                                                         "q9.txt"], {"q9.txt": b"9 0 x 1\n"}),
        Case("compare/qrels/no-judgments", ["compare", "a.run", "b.run", *one, "--qrels", "q0.txt"],
             {"q0.txt": b"# nothing\n"}),
        Case("matrix/--engine/scheduler-without-dask", ["matrix", "a.run", "b.run", *one, "--scheduler",
                                                        "tcp://127.0.0.1:1"]),
        Case("matrix/one-run", ["matrix", "a.run", *one, "-j", "1"]),
        Case("compare/usage/missing-run", ["compare", "a.run", *one]),
        Case("compare/usage/unknown-option", ["compare", "a.run", "b.run", *one, "--frobnicate"]),
        Case("matrix/usage/missing-metric", ["matrix", "a.run", "b.run"]),
        Case("plot/--fractions/nan", ["plot", "--kind", "judged-fraction", "a.run", "b.run", "--qrels", "q.txt", *one,
                                      "--fractions", "nan", "-o", "f.png"]),
        Case("export-results/--format/unknown-name", ["export-results", "--store", "s.sqlite", "-o", "x.xyz"],
             good_store=True),
    ]
    return table + issue_50_cases()


# ---------------------------------------------------------------------------
# running a case


@dataclass
class Outcome:
    status: int
    stderr: str
    traceback: bool      # a Python traceback printed, or an exception escaped the command
    leftovers: list      # paths (relative to the working directory) that were not there before
    seconds: float = 0.0
    changed: list = field(default_factory=list)  # preserved files that were replaced or changed (data loss)
    hang: bool = False   # killed at the timeout

    @property
    def error_lines(self) -> list:
        return [line for line in self.stderr.splitlines() if line.strip()]

    def problems(self) -> list[str]:
        """What this outcome breaks of the audit's rule (empty: the case passes)."""
        found = []
        if self.traceback:
            found.append("traceback")
        if self.status != 2:
            found.append(f"exit status {self.status}, not 2")
        lines = self.error_lines
        if len(lines) != 1 or not lines[0].startswith("medopt: error: "):
            found.append(f"stderr is not one 'medopt: error:' line: {lines[:4]}")
        elif "internal error" in lines[0]:
            found.append("internal error")
        if self.leftovers:
            found.append(f"left behind: {self.leftovers}")
        if self.changed:
            found.append(f"data loss: {self.changed} replaced or changed")
        if self.hang:
            found.append("hang")
        return found


def prepare(directory: Path, case: Case) -> None:
    """The good inputs, the case's files and (when asked) a finished store, in ``directory``."""
    for name, text in GOOD_RUNS.items():
        (directory / name).write_text(text)
    (directory / "q.txt").write_text(QRELS)
    for name, data in case.files.items():
        if data is None:
            continue
        if callable(data):
            data = data()
        if data == "DIR":
            (directory / name).mkdir()
        elif data == "FIFO":
            os.mkfifo(directory / name)
        elif data == "DEVICE":  # a character device (1, 3: what /dev/null is) where permitted, else a FIFO
            try:
                os.mknod(directory / name, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            except (PermissionError, OSError):
                os.mkfifo(directory / name)
        elif isinstance(data, str) and data.startswith("LINK:"):  # a hard link to another of the files
            os.link(directory / data[5:], directory / name)
        else:
            (directory / name).write_bytes(data)
    if case.good_store:
        from medopt.batch import run_matrix

        run_matrix([str(directory / "a.run"), str(directory / "b.run")], ["P@5"], qrels=str(directory / "q.txt"),
                   store=directory / "s.sqlite", jobs=1, progress=False)
    for name, data in case.changed.items():
        (directory / name).write_bytes(data)


def listing(directory: Path) -> set:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}


def snapshot(directory: Path, names) -> dict:
    """File type and bytes (regular files) of each name: what a case must leave as it was."""
    found = {}
    for name in names:
        path = directory / name
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            found[name] = None
            continue
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
        found[name] = (stat.S_IFMT(info.st_mode), info.st_ino, data)
    return found


class _Lock:
    """A write transaction held on a store by another connection (another writer)."""

    def __init__(self, path: Path):
        self.connection = sqlite3.connect(str(path), isolation_level=None)
        self.connection.execute("BEGIN IMMEDIATE")
        self.connection.execute("DELETE FROM settings WHERE name = 'no such setting'")

    def release(self):
        self.connection.execute("ROLLBACK")
        self.connection.close()


def run_case(case: Case, directory: Path, timeout: float = 120) -> Outcome:
    """Run one case with ``directory`` (prepared, otherwise empty) as the working directory."""
    import time

    prepare(directory, case)
    before = listing(directory)
    kept = snapshot(directory, case.preserved)
    lock = _Lock(directory / "s.sqlite") if case.lock_store else None
    listener = None
    if case.listener:  # accepts connections and never answers
        import socket

        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        case = Case(**{**case.__dict__, "args": [address if a == "LISTENER" else a for a in case.args]})
    started = time.perf_counter()
    try:
        if case.process:
            status, stderr, escaped = _run_process(case, directory, min(timeout, case.timeout))
        else:
            status, stderr, escaped = _run_in_process(case, directory)
    finally:
        if lock:
            lock.release()
        if listener:
            listener.close()
    seconds = time.perf_counter() - started
    leftovers = sorted(listing(directory) - before)
    after = snapshot(directory, case.preserved)
    changed = [name for name in case.preserved if after[name] != kept[name]]
    return Outcome(status, stderr, escaped or "Traceback" in stderr, leftovers, seconds, changed, status == -999)


def _run_process(case: Case, directory: Path, timeout: float):
    env = {**os.environ, **case.env}
    env.pop("MEDOPT_DEBUG", None)
    closed = case.stdout == "CLOSED"
    out = open(case.stdout, "w") if case.stdout and not closed else subprocess.DEVNULL
    try:
        done = subprocess.run([sys.executable, "-m", "medopt.cli", *case.args], cwd=directory, env=env,
                              stdout=out, stderr=subprocess.PIPE, text=True, timeout=timeout,
                              preexec_fn=(lambda: os.close(1)) if closed else None)
    except subprocess.TimeoutExpired as expired:
        stderr = expired.stderr.decode() if isinstance(expired.stderr, bytes) else (expired.stderr or "")
        return -999, stderr, False
    finally:
        if case.stdout and not closed:
            out.close()
    return done.returncode, done.stderr, False


_CWD_LOCK = threading.Lock()


def _run_in_process(case: Case, directory: Path):
    from click.testing import CliRunner

    from medopt.cli import main

    runner = CliRunner()
    with _CWD_LOCK:
        previous = os.getcwd()
        saved = {k: os.environ.get(k) for k in (*case.env, "MEDOPT_DEBUG")}
        os.environ.update(case.env)
        os.environ.pop("MEDOPT_DEBUG", None)
        os.chdir(directory)
        try:
            result = runner.invoke(main, case.args)
        finally:
            os.chdir(previous)
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
    return result.exit_code, result.stderr, escaped


def write_inputs(folder: Path) -> None:
    """The good runs and qrels of the fault table, written into ``folder``."""
    for name, text in GOOD_RUNS.items():
        (folder / name).write_text(text)
    (folder / "q.txt").write_text(QRELS)


def cli_in(folder: Path, *args):
    """``medopt ARGS`` through click's runner, run from ``folder``."""
    from click.testing import CliRunner

    from medopt.cli import main

    previous = os.getcwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(main, [str(a) for a in args])
    finally:
        os.chdir(previous)
