"""Fault injection (issue 18): every failure of every command is one line, exit status 2, no traceback,
nothing left behind; interrupts (SIGINT, SIGTERM) leave a consistent, resumable store; stores that are
locked, foreign or old; warnings a user wants; and property-based fuzzing of the whole command line.

The table of cases is shared with ``benchmarks/fault_audit.py`` (``tests/fault_cases.py``)."""

from __future__ import annotations

import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault_cases import GOOD_RUNS, QRELS, cases, listing, run_case  # noqa: E402

from medopt.cli import main  # noqa: E402
from medopt.errors import InputFormatError, MedoptError, TooLargeError  # noqa: E402
from medopt.io.store import COLUMNS, ResultStore  # noqa: E402

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_fault_case(case, tmp_path):
    outcome = run_case(case, tmp_path)
    assert outcome.problems() == [], outcome.stderr


def test_the_table_covers_every_command_and_engine():
    names = {case.name.split("/")[0] for case in CASES}
    assert {"compare", "matrix-j1", "matrix-pool", "matrix-pool-process", "matrix-dask", "certify",
            "plot-judged-fraction", "export-results", "plot-heatmap", "matrix-resume"} <= names
    assert len(CASES) > 150


# ---------------------------------------------------------------------------
# errors cross processes intact


def _raise_input_error(path):
    raise InputFormatError(path, 7, "bad line")


def test_errors_pickle_with_their_attributes():
    error = pickle.loads(pickle.dumps(InputFormatError("x.run", 3, "score 'nan' is not a finite number")))
    assert type(error) is InputFormatError and (error.path, error.line) == ("x.run", 3)
    assert str(error) == "x.run:3: score 'nan' is not a finite number"
    for kind in (MedoptError, TooLargeError):
        again = pickle.loads(pickle.dumps(kind("message")))
        assert type(again) is kind and str(again) == "message"
    with ProcessPoolExecutor(1) as pool:  # the reader pool's way: raised in a worker, re-raised here
        with pytest.raises(InputFormatError, match=r"^y\.run:7: bad line$"):
            pool.submit(_raise_input_error, "y.run").result()


# ---------------------------------------------------------------------------
# the store: kept when it holds rows, settings of an empty store, retry, migration


def write_inputs(folder: Path) -> None:
    for name, text in GOOD_RUNS.items():
        (folder / name).write_text(text)
    (folder / "q.txt").write_text(QRELS)


def cli(folder: Path, *args, env=None):
    previous = os.getcwd()
    os.chdir(folder)
    try:
        return CliRunner(env=env).invoke(main, [str(a) for a in args])
    finally:
        os.chdir(previous)


def test_failed_job_then_fixed_inputs_runs_without_resume(tmp_path):
    """Audit item 3: a failed job left a store with settings, and the fixed job was refused."""
    write_inputs(tmp_path)
    (tmp_path / "bad.qrels").write_text("1 0 d11\n")
    args = ["matrix", "a.run", "b.run", "--qrels", "bad.qrels", "-m", "P@5", "-j", "1", "--store", "s.sqlite"]
    failed = cli(tmp_path, *args)
    assert failed.exit_code == 2 and "bad.qrels:1" in failed.stderr
    assert not (tmp_path / "s.sqlite").exists()
    (tmp_path / "bad.qrels").write_text(QRELS)
    assert cli(tmp_path, *args).exit_code == 0


def test_store_with_rows_is_kept_when_a_task_fails(tmp_path):
    write_inputs(tmp_path)
    (tmp_path / "big.run").write_text("".join(f"1 Q0 x{i} {i + 1} {30 - i} rz\n" for i in range(25)))
    result = cli(tmp_path, "matrix", "a.run", "b.run", "big.run", "-m", "AP@20", "--method", "enumerate", "-j", "1",
                 "--store", "s.sqlite")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "above its limit" in line and "3 MED(s) computed before it are stored in s.sqlite" in line
    with ResultStore(tmp_path / "s.sqlite") as store:
        assert store.count() == 3


def test_settings_of_an_empty_store_are_replaced(tmp_path):
    write_inputs(tmp_path)
    with ResultStore(tmp_path / "s.sqlite") as store:  # a store an older medopt left with settings, no rows
        store.check_settings({"qrels_sha256": "something else"})
    result = cli(tmp_path, "matrix", "a.run", "b.run", "--qrels", "q.txt", "-m", "P@5", "-j", "1", "--store",
                 "s.sqlite", "--resume")
    assert result.exit_code == 0, result.output


def test_retry_timeouts_recomputes_uncertified_rows(tmp_path):
    write_inputs(tmp_path)
    base = ["matrix", "a.run", "b.run", "c.run", "--qrels", "q.txt", "-m", "AP@3", "-j", "1", "--store", "s.sqlite"]
    assert cli(tmp_path, *base, "--time-limit", "30").exit_code == 0
    with ResultStore(tmp_path / "s.sqlite") as store:
        rows = {(r["run_a"], r["run_b"], r["topic"]): r for r in store.rows()}
    assert {r["time_limit"] for r in rows.values()} == {30.0} and all(r["certified"] for r in rows.values())
    with sqlite3.connect(tmp_path / "s.sqlite") as connection:  # as a job under a too small limit leaves them
        connection.execute("UPDATE results SET certified = 0, status = 'timeout', value = -1 WHERE topic = '2'")
    resumed = cli(tmp_path, *base, "--resume")
    assert resumed.exit_code == 0 and "0 MED(s) computed, 9 already stored" in resumed.stderr
    retried = cli(tmp_path, *base, "--resume", "--retry-timeouts", "--time-limit", "none")
    assert retried.exit_code == 0, retried.output
    assert "3 MED(s) computed (3 of them again: stored uncertified), 6 already stored" in retried.stderr
    with ResultStore(tmp_path / "s.sqlite") as store:
        again = {(r["run_a"], r["run_b"], r["topic"]): r for r in store.rows()}
    assert again.keys() == rows.keys()
    for key, row in again.items():
        assert row["certified"] and row["value"] == rows[key]["value"]
        assert row["time_limit"] == (None if key[2] == "2" else 30.0)


def test_default_time_limit_is_recorded(tmp_path):
    write_inputs(tmp_path)
    assert cli(tmp_path, "matrix", "a.run", "b.run", "-m", "AP@3", "-m", "P@3", "-j", "1").exit_code == 0
    with ResultStore(tmp_path / "medopt-matrix.sqlite") as store:
        limits = {(r["metric"], r["solver"]): r["time_limit"] for r in store.rows()}
    assert limits[("P@3", "numpy")] is None  # the closed form takes no limit
    assert {v for (m, _), v in limits.items() if m == "AP@3"} == {60.0}


OLD_SCHEMA = """
CREATE TABLE results (
    run_a TEXT NOT NULL, run_b TEXT NOT NULL, topic TEXT NOT NULL, metric TEXT NOT NULL, method TEXT NOT NULL,
    solver TEXT, value REAL, direction TEXT, certified INTEGER, upper_bound REAL, status TEXT,
    seconds REAL, assignment TEXT,
    PRIMARY KEY (run_a, run_b, topic, metric, method)
);
CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def test_stores_of_an_older_medopt_still_open(tmp_path):
    write_inputs(tmp_path)
    with sqlite3.connect(tmp_path / "old.sqlite") as connection:
        connection.executescript(OLD_SCHEMA)
        connection.execute("INSERT INTO results VALUES ('ra', 'rb', '1', 'P@5', 'closed-form', 'numpy', 0.5, 'a', 1, "
                           "0.5, 'optimal', 0.001, '{}')")
    exported = cli(tmp_path, "export-results", "--store", "old.sqlite", "-o", "old.csv")
    assert exported.exit_code == 0, exported.output
    header, row = (tmp_path / "old.csv").read_text().splitlines()
    assert header.split(",") == list(COLUMNS) and row.endswith(",")  # no time limit recorded
    resumed = cli(tmp_path, "matrix", "a.run", "b.run", "-m", "P@5", "-j", "1", "--store", "old.sqlite", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "2 MED(s) computed, 1 already stored" in resumed.stderr
    with ResultStore(tmp_path / "old.sqlite") as store:
        assert store.count() == 3 and set(store.columns) == set(COLUMNS)


# ---------------------------------------------------------------------------
# plots, warnings


def test_heatmap_of_metrics_over_different_runs(tmp_path):
    """Audit item 6: after --resume with another metric on fewer runs, the heatmap crashed in matplotlib."""
    write_inputs(tmp_path)
    assert cli(tmp_path, "matrix", "a.run", "b.run", "c.run", "-m", "P@5", "-j", "1", "--store", "s.sqlite").exit_code == 0
    assert cli(tmp_path, "matrix", "a.run", "b.run", "-m", "P@3", "-j", "1", "--store", "s.sqlite",
               "--resume").exit_code == 0
    result = cli(tmp_path, "plot", "--store", "s.sqlite", "-o", "h.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "h.png").read_bytes().startswith(b"\x89PNG")


def warnings_of(result) -> list:
    return [line for line in result.stderr.splitlines() if line.startswith("medopt: warning:")]


QRELS_COMMANDS = (["compare", "a.run", "b.run"], ["matrix", "a.run", "b.run", "-j", "1"],
                  ["certify", "a.run", "b.run", "--heuristic", "closed-form"])


@pytest.mark.parametrize("qrels, fragment", [
    ("", "holds no judgments"),
    ("# only a comment\n", "holds no judgments"),
    ("9 0 x 1\n", "judges none of the 3 topic(s)"),
])
def test_qrels_with_no_topic_to_average_over_are_refused(tmp_path, qrels, fragment):
    """SPEC 10: a mean over the judged topics the runs retrieved has no topic here: one line, exit 2."""
    write_inputs(tmp_path)
    (tmp_path / "w.txt").write_text(qrels)
    for command in QRELS_COMMANDS:
        result = cli(tmp_path, *command, "--qrels", "w.txt", "-m", "P@5")
        assert result.exit_code == 2 and fragment in result.stderr and result.stderr.count("\n") == 1, result.output
        assert not (tmp_path / "medopt-matrix.sqlite").exists()


def test_qrels_judging_some_topics_warn_once(tmp_path):
    write_inputs(tmp_path)
    (tmp_path / "w.txt").write_text("1 0 d11 1\n")
    for command in QRELS_COMMANDS:
        result = cli(tmp_path, *command, "--qrels", "w.txt", "-m", "P@5")
        assert result.exit_code == 0, result.output
        assert len(warnings_of(result)) == 1 and "2 of 3 run topic(s) left out" in warnings_of(result)[0]
        (tmp_path / "medopt-matrix.sqlite").unlink(missing_ok=True)


def test_judged_topics_only_by_default(tmp_path):
    write_inputs(tmp_path)
    (tmp_path / "w.txt").write_text("1 0 d11 1\n3 0 d30 0\n")
    result = cli(tmp_path, "compare", "a.run", "b.run", "--qrels", "w.txt", "-m", "P@5", "-q")
    assert result.exit_code == 0, result.output
    assert [line.split(",")[2] for line in result.stdout.splitlines()[1:]] == ["1", "3", "all"]
    matrix = cli(tmp_path, "matrix", "a.run", "b.run", "--qrels", "w.txt", "-m", "P@5", "-j", "1")
    assert matrix.exit_code == 0 and "2 MED(s) computed" in matrix.stderr


def test_duplicate_metrics_are_computed_once(tmp_path):
    write_inputs(tmp_path)
    result = cli(tmp_path, "compare", "a.run", "b.run", "-m", "P@5", "-m", "P.5", "-q")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 1 + 3 + 1
    assert warnings_of(result) == ["medopt: warning: metric 'P.5' is P@5, given already as 'P@5': computed once"]
    matrix = cli(tmp_path, "matrix", "a.run", "b.run", "-m", "P@5", "-m", "P.5", "-j", "1")
    assert matrix.exit_code == 0 and "3 MED(s) computed" in matrix.stderr and len(warnings_of(matrix)) == 1


def test_time_limit_zero_or_none_means_no_limit(tmp_path):
    write_inputs(tmp_path)
    for value in ("0", "none"):
        result = cli(tmp_path, "compare", "a.run", "b.run", "-m", "AP@3", "--method", "exact", "--time-limit", value)
        assert result.exit_code == 0, result.output


def test_output_to_special_files(tmp_path):
    write_inputs(tmp_path)
    assert cli(tmp_path, "compare", "a.run", "b.run", "-m", "P@5", "-o", "/dev/null").exit_code == 0
    assert listing(tmp_path) == {"a.run", "b.run", "c.run", "q.txt"}


# ---------------------------------------------------------------------------
# interrupts: SIGTERM is Ctrl-C (one line, exit 143, the store consistent and resumable)


ATTEMPT_TOPICS = (200, 800, 3200)  # a job that beat the signal is tried again, longer


def long_job(folder: Path, topics: int = 200) -> list:
    from medopt.synthetic.generate import generate_runs
    from medopt.io.trec import write_run

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, rankings in generate_runs(3, topics, 8, seed=11).items():
        paths.append(str(folder / f"{name}.run"))
        write_run(paths[-1], rankings, name)
    return paths


def rows_in(store: Path) -> int:
    try:
        with sqlite3.connect(store) as connection:
            return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.parametrize("engine", [["-j", "1"], ["-j", "2"], ["--engine", "dask", "-j", "2"]],
                         ids=["in-process", "pool", "dask"])
def test_sigterm_stops_the_job_and_resume_completes_it(tmp_path, engine):
    for attempt, topics in enumerate(ATTEMPT_TOPICS):
        if sigterm_then_resume(tmp_path / f"attempt{attempt}", engine, topics):
            return
    pytest.fail("the job finished before SIGTERM landed, at every length tried")


def sigterm_then_resume(tmp_path: Path, engine: list, topics: int) -> bool:
    """False when the whole job finished before the signal landed (nothing tested)."""
    import psutil

    paths = long_job(tmp_path, topics)
    store = tmp_path / "s.sqlite"
    command = [sys.executable, "-m", "medopt.cli", "matrix", *paths, "-m", "AP@6", "--method", "enumerate",
               "--chunk-size", "2", "--store", str(store), "--no-progress", *engine]
    job = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while rows_in(store) == 0 and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    children = psutil.Process(job.pid).children(recursive=True)
    job.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    job.wait(timeout=30)
    latency = time.monotonic() - sent
    if job.returncode == 0:
        return False
    assert job.returncode == 143 and job.stderr.read().strip() == "medopt: interrupted"
    assert latency < 10
    _, alive = psutil.wait_procs(children, timeout=15)
    assert not alive, "workers outlived the job"
    partial = rows_in(store)
    assert 0 < partial < 3 * topics
    resume = command[:-len(engine)] + ["-j", "2", "--resume"]  # resumable by any engine
    resumed = subprocess.run(resume, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    with ResultStore(store) as results:
        keys = [(r["run_a"], r["run_b"], r["topic"]) for r in results.rows()]
    assert len(keys) == len(set(keys)) == 3 * topics
    return True


def test_sigterm_during_compare(tmp_path):
    for attempt, topics in enumerate(ATTEMPT_TOPICS):
        folder = tmp_path / f"attempt{attempt}"
        paths = long_job(folder, topics)
        job = subprocess.Popen([sys.executable, "-m", "medopt.cli", "compare", *paths[:2], "-m", "AP@8", "--method",
                                "enumerate", "-o", "out.csv"], stderr=subprocess.PIPE, text=True, cwd=folder)
        time.sleep(1.0)
        job.send_signal(signal.SIGTERM)
        job.wait(timeout=60)
        if job.returncode != 0:
            break
    else:
        pytest.fail("compare finished before SIGTERM landed, at every length tried")
    assert job.returncode == 143 and job.stderr.read().strip() == "medopt: interrupted"
    assert not (folder / "out.csv").exists() and not list(folder.glob(".out.csv*"))


# ---------------------------------------------------------------------------
# fuzzing the command line: random arguments, random small files


VALID_RUN = st.sets(st.tuples(st.sampled_from("12"), st.sampled_from(["d1", "d2", "d3", "d4", "d5"])),
                    min_size=1, max_size=8).map(
    lambda entries: "\n".join(f"{t} Q0 {d} {i + 1} {9 - i} r" for i, (t, d) in enumerate(sorted(entries))))
NOISY_RUN = st.lists(st.one_of(
    st.sampled_from(["1 Q0 d1 1 2.0 r", "1 Q0 d2 2 1.0 r", "2 Q0 d1 1 1 r", "1 Q0 d3 3 0.5 s", "2 Q0 d9 2 0 r"]),
    st.lists(st.sampled_from(["1", "2", "Q0", "d1", "d2", "x", "nan", "-1", "1e999", "r", "\xff", "#"]),
             max_size=7).map(" ".join),
), max_size=6).map("\n".join)
RUN_TEXT = st.one_of(VALID_RUN, VALID_RUN, VALID_RUN, NOISY_RUN)
QRELS_TEXT = st.lists(st.one_of(
    st.sampled_from(["1 0 d1 1", "1 0 d2 0", "2 0 d1 2", "2 0 d9 1", "# comment", "1 0 d3 3"]),
    st.lists(st.sampled_from(["1", "0", "d1", "x", "-1", "2", "99999999999999999999"]), max_size=5).map(" ".join),
), max_size=5).map("\n".join)
FILES = ["a.run", "b.run", "q.txt", "nope.run", "adir", "s.sqlite", "out.csv", "out.png", "out.xyz", "nodir/o.csv"]
VALUES = {
    "-m": ["P@2", "P.2", "nDCG@3", "AP@3", "RR@2", "ERR@2", "RBP(p=0.8)", "SSP@2", "P@", "XYZ@1", "map", "AP@2"],
    "--qrels": ["q.txt", "a.run", "nope.txt", "adir"],
    "--store": ["s.sqlite", "a.run", "adir", "nodir/s.sqlite", "q.txt"],
    "-o": ["out.csv", "out.png", "out.xyz", "nodir/o.csv", "adir", "out.jsonl", "out.pdf"],
    "--out": ["outdir", "a.run", "nodir/x"],
    "--format": ["csv", "tsv", "jsonl", "parquet", "xml"],
    "--time-limit": ["nan", "-1", "0", "1", "none", "inf", "abc", "5"],
    "--method": ["auto", "enumerate", "exact", "closed-form", "greedy", "nope", "alg1", "tabu"],
    "--kind": ["heatmap", "scatter", "distribution", "judged-fraction", "pie"],
    "--max-grade": ["0", "1", "2", "-1", "x"],
    "--heuristic": ["greedy", "tabu(iterations=5)", "closed-form", "nope", "tc-err(p=1)"],
    "--generate": ["1", "2", "0"],
    "--fractions": ["0,50", "x", "150", "nan"],
    "--pad": ["free", "none", "x"],
    "--at-most": ["1:1", "x:y", "0:1"],
    "--chunk-size": ["1", "0"],
    "--example": ["moffat-x3x4", "nope"],
    "--seed": ["1", "x"],
}
FLAGS = ["--resume", "--retry-timeouts", "-c", "--no-progress", "--residual", "--no-fast-path",
         "--honour-rank", "--no-assignment", "-h"]


def options_of(command: str) -> set:
    return {name for param in main.commands[command].params for name in getattr(param, "opts", [])
            + getattr(param, "secondary_opts", [])}


def tokens_for(command: str):
    """Option groups the command takes (a value drawn from good and bad ones), now and then a stray token."""
    known = options_of(command)
    valued = sorted(o for o in VALUES if o in known)
    flags = sorted(f for f in FLAGS if f in known or f == "-h")
    group = st.one_of(
        *([st.sampled_from(valued).flatmap(lambda o: st.sampled_from(VALUES[o]).map(lambda v: [o, v]))] if valued else []),
        *([st.sampled_from(flags).map(lambda f: [f])] if flags else []),
    )
    noise = st.sampled_from(FILES + ["--frobnicate", "-m", "--retry-timeouts"]).map(lambda t: [t])
    return st.lists(st.one_of(group, group, group, noise), max_size=4).map(lambda gs: [t for g in gs for t in g])


COMMANDS = st.sampled_from(["compare", "compare", "matrix", "matrix", "certify", "plot", "export-results", "metric",
                            "export"])


@settings(max_examples=int(os.environ.get("MEDOPT_FUZZ_EXAMPLES", 60)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), COMMANDS, RUN_TEXT, RUN_TEXT, QRELS_TEXT)
def test_fuzz_the_command_line(data, command, run_a, run_b, qrels):
    tokens = data.draw(tokens_for(command), label="options")
    positional = data.draw(st.sampled_from([["a.run", "b.run"], ["a.run", "b.run"], [], ["a.run"], ["nope.run",
                                                                                                   "adir"]]))
    if command == "metric":
        positional = data.draw(st.lists(st.sampled_from(VALUES["-m"]), min_size=1, max_size=2))
    metric = data.draw(st.sampled_from([[], ["-m", "P@2"], ["-m", "AP@3"], ["-m", "nDCG@3", "--qrels", "q.txt"]]))
    if command in ("export-results", "export", "metric"):
        metric = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "a.run").write_text(run_a, encoding="utf-8", errors="surrogateescape")
        (folder / "b.run").write_text(run_b, encoding="utf-8", errors="surrogateescape")
        (folder / "q.txt").write_text(qrels)
        (folder / "adir").mkdir()
        args = [command, *positional, *metric, *tokens]
        if command in ("matrix", "plot") and "-j" not in tokens:
            args += ["-j", "1"]  # no process pool per example: keeps the fuzzing fast
        if command in ("compare", "matrix", "certify") and "--time-limit" not in tokens:
            args += ["--time-limit", "5"]
        if command == "certify" and "--generate" in tokens:
            args += ["--k", "3"]
        result = cli(folder, *args)
    event(f"exit status {result.exit_code}")
    event(result.stderr.splitlines()[-1][:40] if result.stderr.strip() else "no stderr")
    assert result.exit_code in (0, 1, 2), (args, result.output)
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert "Traceback" not in result.output and "internal error" not in result.output, (args, result.output)
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if not line.startswith("medopt: warning:")]
        assert len(errors) == 1 and errors[0].startswith("medopt: error: "), (args, result.stderr)
