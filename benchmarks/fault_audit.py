"""Replay the fault audits of issues 18 and 50 and print the counts their closing notes need.

    .venv/bin/python benchmarks/fault_audit.py [--only TEXT] [--no-interrupts] [--log audit.jsonl]

The counts are printed for the whole table and for each class of case (``Case.klass``: issue-18, and
issue 50's output, reader and exit classes), with data loss (a preserved file replaced or changed)
and hangs (a process case killed at its timeout) among them.

Part 1 runs every case of ``tests/fault_cases.py`` (the table ``tests/cli/test_faults.py`` runs): every
malformed run and qrels file through every command and engine, bad / foreign / locked stores,
unwritable outputs, bad options.  Each case must end in exit status 2, one stderr line
``medopt: error: ...``, no traceback and nothing left in its working directory.

Part 2 interrupts running commands with SIGINT and SIGTERM (compare; matrix in-process, on the
process pool and on Dask; an exact HiGHS solve) and measures the time from the signal to the exit,
which must carry status 130 / 143 and the one line ``medopt: interrupted``.

Prints: cases, tracebacks, leftovers, wrong exit codes, other failures; interrupts, their wrong
endings and the largest latency.  Exit status 1 when any count that should be 0 is not.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import harness

fault_cases = harness.tests_module("fault_cases")  # the table tests/cli/test_faults.py runs
cases, run_case = fault_cases.cases, fault_cases.run_case

KEYS = ("cases", "tracebacks", "leftovers", "wrong exit codes", "not one error line", "internal errors",
        "data loss", "hangs", "failed")


def audit_cases(only: str | None, log, by_class: dict) -> Counter:
    counts = Counter()
    for case in cases():
        if only and only not in case.name and only not in case.klass:
            continue
        with tempfile.TemporaryDirectory() as folder:
            outcome = run_case(case, Path(folder))
        problems = outcome.problems()
        mine = by_class.setdefault(case.klass, Counter())
        for key, value in _counts(outcome, problems).items():
            mine[key] += value
        counts["cases"] += 1
        counts["tracebacks"] += outcome.traceback
        counts["leftovers"] += bool(outcome.leftovers)
        counts["wrong exit codes"] += outcome.status != 2
        counts["internal errors"] += "internal error" in outcome.stderr
        lines = outcome.error_lines
        counts["not one error line"] += not (len(lines) == 1 and lines[0].startswith("medopt: error: "))
        counts["failed"] += bool(problems)
        counts["data loss"] += bool(outcome.changed)
        counts["hangs"] += outcome.hang
        if problems:
            print(f"  FAIL {case.name}: {'; '.join(problems)}", file=sys.stderr)
        if log:
            log.write({"case": case.name, "args": case.args, "status": outcome.status, "stderr": outcome.stderr,
                       "leftovers": outcome.leftovers, "problems": problems, "seconds": round(outcome.seconds, 3)})
    return counts


def _counts(outcome, problems) -> Counter:
    lines = outcome.error_lines
    return Counter({"cases": 1, "tracebacks": int(outcome.traceback), "leftovers": int(bool(outcome.leftovers)),
                    "wrong exit codes": int(outcome.status != 2),
                    "internal errors": int("internal error" in outcome.stderr),
                    "not one error line": int(not (len(lines) == 1 and lines[0].startswith("medopt: error: "))),
                    "data loss": int(bool(outcome.changed)), "hangs": int(outcome.hang),
                    "failed": int(bool(problems))})


# ---------------------------------------------------------------------------
# interrupts


def _inputs(folder: Path) -> list:
    from medopt.synthetic.generate import generate_qrels, generate_runs
    from medopt.io.trec import write_qrels, write_run

    paths = []
    runs = generate_runs(3, 400, 9, seed=21)
    for name, rankings in runs.items():
        paths.append(str(folder / f"{name}.run"))
        write_run(paths[-1], rankings, name)
    deep = generate_runs(2, 2, 100, seed=5)
    for name, rankings in deep.items():
        write_run(str(folder / f"deep-{name}.run"), rankings, name)
    write_qrels(str(folder / "deep.qrels"), generate_qrels(deep, seed=5, max_grade=1, judged_fraction=0.05))
    return paths


def _rows(store: Path) -> int:
    try:
        with sqlite3.connect(store) as connection:
            return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


def interrupts(log) -> tuple[Counter, float]:
    counts, worst = Counter(), 0.0
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        paths = _inputs(folder)
        matrix = ["matrix", *paths, "-m", "AP@7", "--method", "enumerate", "--chunk-size", "2", "--no-progress"]
        jobs = {
            "compare enumerate": (["compare", *paths[:2], "-m", "AP@9", "--method", "enumerate"], 1.5),
            "compare exact, HiGHS": (["compare", str(folder / "deep-run0.run"), str(folder / "deep-run1.run"),
                                       "--qrels", str(folder / "deep.qrels"), "-m", "AP@100", "--method", "exact",
                                       "--solver", "highs", "--time-limit", "none"], 3.0),
            "matrix in-process": (matrix + ["-j", "1"], None),
            "matrix pool": (matrix + ["-j", "2"], None),
            "matrix dask": (matrix + ["--engine", "dask", "-j", "2"], None),
        }
        for name, (args, wait) in jobs.items():
            for number in (signal.SIGINT, signal.SIGTERM):
                store = folder / f"s-{counts['interrupts']}.sqlite"
                command = [sys.executable, "-m", "medopt.cli", *args]
                if args[0] == "matrix":
                    command += ["--store", str(store)]
                job = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       text=True)
                if wait is None:  # matrix: as soon as rows are committed
                    deadline = time.monotonic() + 60
                    while _rows(store) == 0 and job.poll() is None and time.monotonic() < deadline:
                        time.sleep(0.02)
                else:
                    time.sleep(wait)
                job.send_signal(number)
                sent = time.monotonic()
                try:
                    job.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    job.kill()
                    job.wait()
                latency = time.monotonic() - sent
                stderr = job.stderr.read()
                expected = 130 if number == signal.SIGINT else 143
                finished = job.returncode == 0
                wrong = not finished and (job.returncode != expected or stderr.strip() != "medopt: interrupted")
                counts["interrupts"] += 1
                counts["finished before the signal"] += finished
                counts["wrong endings"] += wrong
                if not finished:
                    worst = max(worst, latency)
                label = f"{name}, {signal.Signals(number).name}"
                print(f"  {label}: exit {job.returncode} after {latency:.2f} s"
                      f"{' (finished first)' if finished else ''}{' WRONG: ' + stderr.strip()[:200] if wrong else ''}",
                      file=sys.stderr)
                if log:
                    log.write({"interrupt": label, "status": job.returncode, "latency": round(latency, 3),
                               "stderr": stderr})
    return counts, worst


def main() -> int:
    parser = harness.parser(__doc__, log="")
    parser.add_argument("--only", help="run the cases whose name holds this text")
    parser.add_argument("--no-interrupts", action="store_true", help="skip part 2")
    options = parser.parse_args()
    if options.log:
        options.log.unlink(missing_ok=True)  # one audit per log
    log = harness.Log(options.log, key=lambda record: record.get("case") or record.get("interrupt")) \
        if options.log else None
    started = time.perf_counter()
    print(f"fault audit (issue 18) at {harness.code_version()}", file=sys.stderr)
    by_class = {}
    counts = audit_cases(options.only, log, by_class)
    bad = sum(counts[k] for k in KEYS if k != "cases")
    lines = [f"cases: {counts['cases']}", f"tracebacks: {counts['tracebacks']}", f"leftovers: {counts['leftovers']}",
             f"wrong exit codes: {counts['wrong exit codes']}", f"not one error line: {counts['not one error line']}",
             f"internal errors: {counts['internal errors']}", f"data loss: {counts['data loss']}",
             f"hangs: {counts['hangs']}", f"failed cases: {counts['failed']}"]
    for klass, mine in sorted(by_class.items()):
        lines.append(f"  {klass}: " + ", ".join(f"{k} {mine[k]}" for k in KEYS))
    if not options.no_interrupts:
        stops, worst = interrupts(log)
        bad += stops["wrong endings"]
        lines += [f"interrupts: {stops['interrupts']} ({stops['finished before the signal']} finished first)",
                  f"interrupts ended wrong: {stops['wrong endings']}", f"max interrupt latency: {worst:.2f} s"]
    lines.append(f"seconds: {time.perf_counter() - started:.1f}")
    print("\n".join(lines))
    if log:
        log.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
