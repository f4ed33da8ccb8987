"""Issue 50: one output writer, readers that agree and are bounded, exits that are one line.

The table cases (tests/fault_cases.py, class issue-50/...) cover the refusals; these tests cover what
a table row cannot: a planted link, CSV quoting, the two readers' agreement, time and memory of a
gzip bomb, signals at any moment and during a lock wait."""

from __future__ import annotations

import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from fault_cases import cli_in, write_inputs, _blank_bomb  # noqa: E402


ROOT = Path(__file__).resolve().parents[2]


cli = cli_in  # medopt ARGS run from a folder (fault_cases)


def program(folder: Path, *args, **options):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "medopt.cli", *map(str, args)], cwd=folder, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **options)


@pytest.mark.parametrize("command", [
    ["export-results", "--store", "s.sqlite", "-o", "x.parquet"],
    ["compare", "a.run", "b.run", "-m", "P@5", "--format", "parquet", "-o", "x.parquet"],
    ["plot", "--store", "s.sqlite", "-o", "x.png"],
])
def test_a_planted_link_is_never_written_through(tmp_path, command):
    write_inputs(tmp_path)
    assert cli(tmp_path, "matrix", "a.run", "b.run", "c.run", "-m", "P@5", "-j", "1", "--store", "s.sqlite").exit_code == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = command[-1]
    for name in (f".{target}.tmp", f".{target}.tmp{Path(target).suffix}"):  # the names the old writers used
        os.symlink(victim, tmp_path / name)
    result = cli(tmp_path, *command)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "precious"
    assert (tmp_path / target).is_file() and (tmp_path / target).stat().st_size > 0


def test_a_carriage_return_in_a_file_name_is_quoted_in_csv(tmp_path):
    text = "".join(f"{t} Q0 d{t}{i} {i + 1} {10 - i} same\n" for t in (1, 2) for i in range(4))
    (tmp_path / "x\ry.run").write_text(text)
    (tmp_path / "b.run").write_text(text.replace("d11 ", "d19 "))
    result = cli(tmp_path, "compare", "x\ry.run", "b.run", "-m", "P@3", "-o", "out.csv")
    assert result.exit_code == 0, result.output
    with open(tmp_path / "out.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and {r["run_a"] for r in rows} == {"x\ry.run"} and {r["run_b"] for r in rows} == {"b.run"}
    assert {r["metric"] for r in rows} == {"P@3"}


def test_a_failed_certify_leaves_no_directory(tmp_path, monkeypatch):
    import medopt.cli.certify as command

    write_inputs(tmp_path)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(command, "write_rows", full)
    result = cli(tmp_path, "certify", "a.run", "b.run", "-m", "P@5", "--heuristic", "closed-form", "--out", "res")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert not (tmp_path / "res").exists()


# ---------------------------------------------------------------------------
# the fast path's reader and compare's reader agree

VARIANTS = {
    "plain": lambda line: line,
    "crlf": lambda line: line.replace("\n", "\r\n"),
    "tabs": lambda line: line.replace(" ", "\t"),
    "vertical-tab": lambda line: line.replace(" ", " \x0b"),
    "unit-separator": lambda line: line.replace(" ", "\x1f"),
    "nbsp-in-docid": lambda line: line.replace("d11", "d1\u00a01"),
    "nfd-docid": lambda line: line.replace("d11", "de\u0301"),
    "nfc-docid": lambda line: line.replace("d11", "d\u00e9"),
    "nul-trailing": lambda line: line.replace("d11 ", "d11\x00 "),
    "nul-inside": lambda line: line.replace("d11", "d\x0011"),
    "bom": lambda line: line,
}


def _outcome(compute):
    """The values computed, or the one-line message of the error (the same for both paths)."""
    from medopt.errors import MedoptError

    try:
        return compute()
    except MedoptError as error:
        return ("error", " ".join(str(error).split()))


def _through_the_readers(folder: Path) -> dict:
    """compare's way: read_run / read_qrels, then medopt.med on each common topic."""
    from medopt import med
    from medopt.io.trec import read_qrels, read_run

    a, b, qrels = read_run(folder / "a.run"), read_run(folder / "b.run"), read_qrels(folder / "q.txt")
    return {topic: med("nDCG@5", a.rankings[topic], b.rankings[topic], qrels.get(topic, {}), max_grade=2).value
            for topic in sorted(set(a.rankings) & set(b.rankings))}


def _through_the_fast_path(folder: Path) -> dict:
    """matrix's way: the array reader and the fast path's kernels, rows into a store."""
    from medopt.batch import Settings, run_matrix
    from medopt.io.store import ResultStore

    store = folder / "m.sqlite"
    store.unlink(missing_ok=True)
    run_matrix([str(folder / "a.run"), str(folder / "b.run")], ["nDCG@5"], qrels=str(folder / "q.txt"),
               store=store, settings=Settings(max_grade=2), jobs=1, progress=False, warn=lambda message: None)
    with ResultStore(store) as results:
        return {row["topic"]: row["value"] for row in results.rows()}


@pytest.mark.parametrize("where", ["run", "qrels"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_fast_path_and_compare_read_the_same_values(tmp_path, variant, where):
    change = VARIANTS[variant]
    run_a = "".join(change(f"{t} Q0 d{t}{i} {i + 1} {10 - i} ra\n") for t in (1, 2) for i in range(5))
    run_b = "".join(f"{t} Q0 d{t}{(i * 3) % 7} {i + 1} {10 - i} rb\n" for t in (1, 2) for i in range(5))
    plain_a = "".join(f"{t} Q0 d{t}{i} {i + 1} {10 - i} ra\n" for t in (1, 2) for i in range(5))
    qrels = "".join(f"{t} 0 d{t}{i} {i % 3}\n" for t in (1, 2) for i in range(0, 7, 2)) + "1 0 d11 2\n1 0 ZZZFREE 0\n"
    bom = "\ufeff" if variant == "bom" else ""
    if where == "run":
        (tmp_path / "a.run").write_bytes((bom + run_a).encode())
        (tmp_path / "q.txt").write_text(qrels)
    else:
        (tmp_path / "a.run").write_text(plain_a)
        (tmp_path / "q.txt").write_bytes((bom + "".join(change(line + "\n") for line in qrels.splitlines())).encode())
    (tmp_path / "b.run").write_text(run_b)
    compared = _outcome(lambda: _through_the_readers(tmp_path))
    fast = _outcome(lambda: _through_the_fast_path(tmp_path))
    if isinstance(compared, dict) and isinstance(fast, dict):
        assert fast.keys() == compared.keys() and fast
        for key in fast:
            assert fast[key] == pytest.approx(compared[key], abs=1e-9), key
    else:
        assert compared == fast
    if "nul" in variant:  # refused by both, naming the file and the line
        assert compared[0] == "error" and "NUL" in compared[1]


# ---------------------------------------------------------------------------
# bounded reading


@pytest.mark.parametrize("where", ["run", "qrels"])
def test_a_gzip_bomb_ends_in_one_line_within_seconds_and_little_memory(tmp_path, where):
    write_inputs(tmp_path)
    (tmp_path / "bomb.gz").write_bytes(_blank_bomb(2048))  # 2 GiB of newlines in 2 MB
    args = ["a.run", "bomb.gz"] if where == "run" else ["a.run", "b.run", "--qrels", "bomb.gz"]
    measure = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
               "print(done.stderr, end='')")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "medopt.cli", "matrix", *args, "-m",
                           "P@5", "-j", "1", "--store", "s.sqlite"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    seconds = time.monotonic() - started
    status, rss = done.stdout.splitlines()[0].split()
    errors = done.stdout.splitlines()[1:]
    assert status == "2" and len(errors) == 1 and "gzip bomb" in errors[0], done.stdout
    assert seconds < 20 and int(rss) < 500 * 1024, (seconds, rss)


def test_jobs_are_capped_at_the_cores(monkeypatch):
    from medopt.batch.engines import cores, worker_count

    monkeypatch.delenv("MEDOPT_OVERSUBSCRIBE", raising=False)
    assert worker_count(1000) == cores() and worker_count(1) == 1
    monkeypatch.setenv("MEDOPT_OVERSUBSCRIBE", "1")
    assert worker_count(1000) == 1000


# ---------------------------------------------------------------------------
# signals


def test_an_interrupt_at_any_moment_after_startup_is_one_line(tmp_path):
    """From the first line of medopt on (the interpreter's own start, some 30 ms, is before it), while the
    command runs: a job of 200 topics enumerated at AP@10 (many seconds; AP@6 over 8-deep runs ended
    within 0.8 s, the last delay), long enough that no signal lands after it ended (an interpreter that is
    finishing has put the default handlers back)."""
    from medopt.io.trec import write_run
    from medopt.synthetic.generate import generate_runs

    for name, rankings in generate_runs(2, 200, 12, seed=11).items():
        write_run(tmp_path / f"{name}.run", rankings, name)
    runs = sorted(str(p) for p in tmp_path.glob("*.run"))
    # a first run compiles and caches what the command imports (a fresh clone has no .pyc yet), so that the
    # delays below measure medopt's start, not the compiler's
    assert program(tmp_path, "metric", "P@10").communicate(timeout=120)[1] == ""
    endings = []
    for delay in (0.35, 0.45, 0.6, 0.8):  # (a loaded machine starts Python slowly)
        job = program(tmp_path, "compare", *runs, "-m", "AP@10", "--method", "enumerate",
                      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(delay)
        job.send_signal(signal.SIGINT)
        stderr = job.communicate(timeout=60)[1]
        endings.append((job.returncode, stderr.strip()))
    assert endings and set(endings) == {(130, "medopt: interrupted")}


@pytest.mark.parametrize("number, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_an_interrupt_ends_a_wait_on_a_locked_store_within_two_seconds(tmp_path, number, status):
    write_inputs(tmp_path)
    assert cli(tmp_path, "matrix", "a.run", "b.run", "-m", "P@5", "-j", "1", "--store", "s.sqlite").exit_code == 0
    lock = sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    lock.execute("DELETE FROM settings WHERE name = 'no such setting'")
    try:
        job = program(tmp_path, "matrix", "a.run", "b.run", "-m", "P@5", "-m", "P@3", "-j", "1", "--store",
                      "s.sqlite", "--resume", preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(2.5)  # well into the wait (30 s by default)
        sent = time.monotonic()
        job.send_signal(number)
        stderr = job.communicate(timeout=30)[1]
        latency = time.monotonic() - sent
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert (job.returncode, stderr.strip()) == (status, "medopt: interrupted")
    assert latency < 2.0
