"""Throughput of ``medopt matrix`` on the closed-form fast path (issue 6), end to end from TREC files.

Each measurement runs the ``medopt matrix`` command as a fresh process (reading the TREC
files, computing, committing every row with its assignment to a new SQLite store) and
times it with a wall clock.

1. Generated runs (the seeded generator, medopt.synthetic.generate): by default 16 runs x 10,000
   topics x depth 20 -- 120 pairs, 1.2 million topic pairs per metric -- with binary qrels
   judging half of each pool (so nDCG@20 by Algorithm 1 is exact and certified).  One job
   per metric (P@10, SDCG@20, nDCG@20, RBP(p=0.95)), then one with all four; prints topic-pair
   MEDs per minute.  ``--two-runs`` adds the 2 runs x 500,000 topics variant (reading 20
   million lines dominates there).
2. DL-HARD: all 91 pairs of the 14 document runs x 50 topics x {SDCG@20, nDCG@20,
   RBP(p=0.95), P@10}, without judgments (as Tan & Clarke's C tool is compared), then with
   the DL-HARD qrels (graded 0-3: nDCG@20 exact by the ndcg-profiles method, in the same
   job).  Skipped when ../shared/data is absent.

    python benchmarks/throughput.py                 # about a minute on 2 cores
    python benchmarks/throughput.py --jobs 2 --repeat 3 --two-runs
    python benchmarks/throughput.py --skip-generated --repeat 3 --med-c /path/to/med   # against the C tool

Tan & Clarke's C tool (``med.c``, GPL, not shipped with medopt) is timed only when its compiled
binary is given: looped over the 91 DL-HARD pairs, one process a pair, as the issue timed it, beside
the ``medopt matrix`` job in the same run, with the ratio of the two wall times.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
from harness import DL_HARD

METRICS = ["P@10", "SDCG@20", "nDCG@20", "RBP(p=0.95)"]
MEDOPT = [sys.executable, "-m", "medopt.cli"]


def generate(directory: Path, n_runs: int, n_topics: int, depth: int, seed: int) -> tuple[list[str], str]:
    from medopt.synthetic.generate import generate_qrels, generate_runs
    from medopt.io.trec import write_qrels, write_run

    runs = generate_runs(n_runs, n_topics, depth, seed=seed)
    paths = []
    for name, rankings in runs.items():
        paths.append(str(directory / f"{name}.run"))
        write_run(paths[-1], rankings, name)
    qrels = str(directory / "qrels.txt")
    write_qrels(qrels, generate_qrels(runs, seed=seed, max_grade=1, judged_fraction=0.5))
    return paths, qrels


def timed_job(runs, metrics, store: Path, *, qrels=None, jobs=None, extra=()) -> tuple[float, int]:
    """Wall seconds of one `medopt matrix` process, and the rows it stored."""
    for leftover in store.parent.glob(store.name + "*"):
        leftover.unlink()
    command = MEDOPT + ["matrix", *runs, *[a for m in metrics for a in ("-m", m)], "--store", str(store),
                        "--no-progress", *extra]
    command += ["--qrels", qrels] if qrels else []
    command += ["-j", str(jobs)] if jobs else []
    started = time.perf_counter()
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    with sqlite3.connect(str(store)) as connection:
        rows = connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    return seconds, rows


def best_of(repeat, job, log: harness.Log | None = None, **case):
    """(best, median seconds, the first result's count) of ``repeat`` calls of ``job``; one log record."""
    results = [job() for _ in range(repeat)]
    seconds = [s for s, _ in results]
    if log is not None:
        log.write({**case, "count": results[0][1], "best": min(seconds), **harness.summary(seconds)})
    return min(seconds), statistics.median(seconds), results[0][1]


def load() -> str:
    try:
        return "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "load average unknown"


def throughput(args, work: Path) -> None:
    for n_runs, n_topics in [(args.runs, args.topics)] + ([(2, 500_000)] if args.two_runs else []):
        directory = work / f"gen-{n_runs}x{n_topics}"
        directory.mkdir()
        started = time.perf_counter()
        runs, qrels = generate(directory, n_runs, n_topics, args.depth, args.seed)
        pairs = n_runs * (n_runs - 1) // 2
        print(f"\n{n_runs} runs x {n_topics:,} topics x depth {args.depth} ({pairs} pairs, "
              f"{pairs * n_topics:,} topic pairs per metric), binary qrels; generated in "
              f"{time.perf_counter() - started:.0f} s; {load()}")
        print(f"  {'metric':<28} {'rows':>10} {'best s':>8} {'median s':>9} {'MEDs/minute':>14}")
        for metrics in [[m] for m in METRICS] + [METRICS]:
            label = metrics[0] if len(metrics) == 1 else "all four (one job)"
            best, median, rows = best_of(args.repeat, lambda: timed_job(
                runs, metrics, directory / "store.sqlite", qrels=qrels, jobs=args.jobs), args.log,
                part="generated", runs=n_runs, topics=n_topics, depth=args.depth, metrics=metrics, jobs=args.jobs)
            per_metric = rows / len(metrics)
            print(f"  {label:<28} {rows:>10,} {best:>8.2f} {median:>9.2f} {per_metric / best * 60:>14,.0f}"
                  + ("  per metric" if len(metrics) > 1 else ""))


def c_tool_loop(binary: str, runs: list[str], qrels: str | None) -> tuple[float, int]:
    """Tan & Clarke's C tool (``med run1 run2 [qrels]``, one process a pair) over every pair of the
    runs, as the issue timed it: (wall seconds, pairs)."""
    started, pairs = time.perf_counter(), 0
    for i, first in enumerate(runs):
        for second in runs[i + 1:]:
            subprocess.run([binary, first, second] + ([qrels] if qrels else []), check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            pairs += 1
    return time.perf_counter() - started, pairs


def dl_hard(args, work: Path) -> None:
    runs = sorted(str(p) for p in (DL_HARD / "baselines" / "doc").glob("*.run"))
    if len(runs) < 2:
        print(f"\nDL-HARD: skipped ({DL_HARD} absent)")
        return
    pairs = len(runs) * (len(runs) - 1) // 2
    print(f"\nDL-HARD: {len(runs)} document runs, {pairs} pairs x 50 topics x {', '.join(METRICS)}; {load()}")
    qrels = str(DL_HARD / "dl_hard-doc.qrels")
    for label, given, store in (("no judgments", None, "dl-hard.sqlite"), ("DL-HARD qrels", qrels, "dl-hard-qrels.sqlite")):
        best, median, rows = best_of(args.repeat, lambda: timed_job(runs, METRICS, work / store, qrels=given,
                                                                    jobs=args.jobs),
                                     args.log, part="dl-hard", judgments=label, tool="medopt", jobs=args.jobs)
        print(f"  {label + ':':<15} medopt matrix, {rows:,} rows (4 metrics, one job): wall {best:.2f} s best, "
              f"{median:.2f} s median")
        for binary in args.med_c:
            c_best, c_median, c_pairs = best_of(args.repeat, lambda: c_tool_loop(binary, runs, given), args.log,
                                                part="dl-hard", judgments=label, tool=binary)
            print(f"  {'':<15} C tool {binary} looped over the {c_pairs} pairs: wall {c_best:.2f} s best, "
                  f"{c_median:.2f} s median; medopt / C tool = {best / c_best:.2f} (best), "
                  f"{median / c_median:.2f} (median)")
    if not args.med_c:
        print("  (Tan & Clarke's C tool is not shipped: pass --med-c BINARY to time it side by side)")


def main(argv=None) -> None:
    parser = harness.parser(__doc__, log="")
    parser.add_argument("--runs", type=int, default=16)
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=None, help="workers (default: every core)")
    parser.add_argument("--repeat", type=int, default=1, help="repetitions of each timing (best and median)")
    parser.add_argument("--two-runs", action="store_true", help="also 2 runs x 500,000 topics")
    parser.add_argument("--skip-generated", action="store_true")
    parser.add_argument("--skip-dl-hard", action="store_true")
    parser.add_argument("--med-c", action="append", default=[], metavar="BINARY",
                        help="Tan & Clarke's C tool, compiled (med run1 run2 [qrels]); timed over the DL-HARD pairs "
                             "beside medopt (repeatable: e.g. the tool as published and a build without ERR)")
    args = parser.parse_args(argv)
    print(f"medopt matrix throughput; {os.cpu_count()} cores; jobs {args.jobs or 'all'}")
    with tempfile.TemporaryDirectory(prefix="medopt-throughput-") as temporary, \
            harness.Log(args.log, key=lambda r: (r["part"], r.get("judgments"), str(r.get("metrics")))) as args.log:  # the path, opened
        work = Path(temporary)
        if not args.skip_dl_hard:
            dl_hard(args, work)
        if not args.skip_generated:
            throughput(args, work)


if __name__ == "__main__":
    main()
