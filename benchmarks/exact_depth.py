"""Exact MED at real depth (issue 4): a fixed, seeded benchmark on the DL-HARD document runs.

10 run pairs x 50 topics, k = 20 and 100, with no judgments and with the DL-HARD qrels, for
AP@k, AP(norm=min)@k, SSP@k, nDCG@k (graded), ERR@k (graded) and Q(beta=1)@k, per solver,
each instance with a time limit (60 s).  Graded means grades 0..3, the DL-HARD scale, in both
settings (with no judgments a topic would otherwise be binary, SPEC 1).  Prints per metric, k, judgments and solver:
instances, certified fraction, median / 90th percentile / max seconds, and the same for the
best heuristic of that metric where one exists (its value is a lower bound; 'hit' is the
fraction of instances where it reached the certified maximum).  ``--solvers default`` measures
what ``medopt`` does when no solver is asked for (its pick per metric family and depth), and ``--solvers auto``
what ``medopt.med`` does when no method is asked for either (nDCG: the profile search, no model).

Instances run in --jobs worker processes at once (default 2), a fresh process per instance
(``--reuse-workers``: each worker solves instance after instance, and a peak RSS is then its process's
so far).  The exact solve is timed in the worker, ``medopt.med``'s call alone (no process start, no
import, the warm-up before it): ``--repeats N`` calls it N times (default 1) and logs their median as
``exact_seconds`` (``exact_repeats``: each call), so that a first call's one-off costs and a moment's
load do not decide a 0.03 s instance.  Each finished instance is appended by the main process as one flushed line to a JSON-lines log
(--log), so Ctrl-C or kill loses at most the instances in flight and a rerun continues where it
stopped (--fresh ignores the log); the table is printed from the log, with the wall time and
the number of instances solved in this run.

Each instance's peak resident memory (its own worker process's RSS, sampled every 10 ms while it
runs, imports and the warm-up included) is logged and the table gives the largest per group.  ``--preset depth1000`` is trec_eval's
depth: AP and RR over the whole run (1000 ranks), AP(norm=min)@1000, SSP@1000, nDCG@1000 and
ERR@1000, plus Q(beta=1)@100.

    python benchmarks/exact_depth.py                       # the full benchmark (hours)
    python benchmarks/exact_depth.py --pairs 2 --topics 10 --ks 20   # a quick subset
    python benchmarks/exact_depth.py --preset depth1000 --solvers default
"""

from __future__ import annotations

import importlib
import itertools
import multiprocessing
import os
import signal
import statistics
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import closing
from pathlib import Path

import numpy as np
from tqdm import tqdm

import medopt
from medopt.errors import MedoptError
from medopt.io.trec import read_qrels, read_run
from medopt.kernels.precision_chains import chain_max
from medopt.solvers.roof_dual import DescentNetwork

import harness
from harness import DL_HARD, Log, dl_hard_runs, percentile, read_log, select_pairs, timed

METRICS = ["AP@{k}", "AP(norm=min)@{k}", "SSP@{k}", "nDCG@{k}", "ERR@{k}", "Q(beta=1)@{k}"]
GRADED = {"nDCG", "ERR"}  # graded metrics: unjudged documents may take any DL-HARD grade 0..3
GRADE_SCALE = 3  # the DL-HARD qrels' top grade; without it a topic's scale is its own top judged grade (SPEC 1)
HEURISTICS = {"AP": "greedy", "SSP": "tabu", "nDCG": "alg1", "ERR": "tc-err"}
# trec_eval's default depth: templates without {k} are metrics over the whole run (or a fixed cutoff)
DEPTH_1000 = ["AP", "AP(norm=min)@{k}", "SSP@{k}", "nDCG@{k}", "ERR@{k}", "RR", "Q(beta=1)@100"]


def scale_tag(metric) -> str:
    """Graded metrics run on the DL-HARD scale: their log keys say so (older logs used each topic's own)."""
    return f"|G{GRADE_SCALE}" if medopt.parse_metric(metric).family in GRADED else ""


def run_instance(metric, a, b, judgments, solver, time_limit, repeats=1):
    family = medopt.parse_metric(metric).family
    row = {"repeats": repeats}
    grades = {"max_grade": GRADE_SCALE} if family in GRADED else {}
    # "auto": medopt's own pick of method (nDCG: the profile search) and solver; else the exact driver
    method = "auto" if solver == "auto" else "exact"

    def solve():
        return medopt.med(metric, a, b, judgments, method=method, solver=None if solver in ("default", "auto") else solver,
                          time_limit=time_limit, **grades)

    started = time.perf_counter()
    try:
        timing, exact = timed(solve, repeats)
    except Exception as error:  # an unattended run logs a failing instance (uncertified) and goes on
        row.update(exact_seconds=time.perf_counter() - started, exact_value=None, certified=False, status="error",
                   bound=None, error=f"{type(error).__name__}: {error}")
        return row
    row.update(exact_seconds=timing["median"], exact_repeats=timing["seconds"], exact_value=exact.value,
               certified=exact.certified, status=exact.status, bound=exact.upper_bound, used_solver=exact.solver,
               used_method=exact.method, peak_rss_mb=timing["peak_rss_mb"])
    heuristic = HEURISTICS.get(family)
    if heuristic and heuristic in medopt.METHODS:
        started = time.perf_counter()
        try:
            fast = medopt.med(metric, a, b, judgments, method=heuristic, **grades)
            row.update(heuristic=heuristic, heuristic_seconds=time.perf_counter() - started,
                       heuristic_value=fast.value)
        except MedoptError as error:
            row.update(heuristic=heuristic, heuristic_error=str(error))
    return row


def warm_up(solvers=("highs", "cpsat")):
    """Import and first-call costs (Pyomo, HiGHS, CP-SAT: about a second; Numba's compiled loops, loaded
    from its cache: 0.3-0.7 s) paid before any instance is timed, so a process's first instance is not
    charged with them; ``solvers``: those the run asks for ('default' and 'auto' pick among HiGHS and CP-SAT)."""
    for metric in ("AP@3", "nDCG@3", "ERR@3", "Q(beta=1)@3"):
        for solver in solvers:
            medopt.med(metric, ["d1", "d2", "d3"], ["d3", "d4"], {"d1": 1}, method="exact", solver=solver,
                       max_grade=2)
    # what the instances above are too small to reach: the Q boxes' descent, the AP count boxes and the
    # roof dual's max-flow library (about 15 ms to import on a first AP@20 call)
    DescentNetwork(2, np.array([0]), np.array([1]), np.array([1.0])).bound(0.0, np.array([1.0, -2.0]))
    chain_max(np.array([2]), np.array([0]), np.array([0]), np.array([0.5]), 1.0, 0, 1)
    importlib.import_module("ortools.graph.python.max_flow")


def warm_up_solvers(solvers) -> tuple:
    """The concrete solvers of a run's --solvers ('default' and 'auto' stand for HiGHS and CP-SAT)."""
    named = [s for s in solvers if s not in ("default", "auto")]
    if len(named) < len(solvers):
        named += ["highs", "cpsat"]
    return tuple(dict.fromkeys(named))


def _start_worker(parent, solvers):
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides what an interrupt stops
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    warm_up(solvers)


def _exit_with_parent(parent):
    """A main process killed outright (SIGKILL) cannot stop its pool: each worker leaves when it is gone
    (a forkserver's child: its parent is the server, so it watches the main process's pid)."""
    while True:
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(1)
        time.sleep(0.5)


def task_for(runs, qrels, first, second, topic, metric, judged, solver, time_limit, repeats=1):
    """One instance as its worker needs it: the two rankings and the topic's judgments, not the runs."""
    judgments = qrels.get(topic, {}) if judged == "dl-hard" else {}
    return metric, runs[first].rankings[topic], runs[second].rankings[topic], judgments, solver, time_limit, repeats


def _worker_solve(task):
    return run_instance(*task)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def solved(todo, jobs, solvers=("highs", "cpsat"), reuse=False):
    """Yield (key, row) for each instance of ``todo`` as it finishes, on a pool of ``jobs`` worker
    processes, each of which solves one instance and exits, so that an instance's peak RSS is its own
    (a process that solved an AP@1000 instance keeps that memory, and the next instance would be charged
    with it); ``reuse``: each worker solves instance after instance (no process start per instance).
    Workers come from a forkserver with medopt imported, and warm up (``solvers``) before their first instance.
    Pending instances are cancelled and running ones stopped when the caller stops (an interrupt, an error)."""
    if not todo:
        return
    # forkserver: children forked from a clean single-threaded server (a fork of a process whose solvers
    # have started threads is not safe), with medopt already imported.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["medopt"])
    # Workers start with SIGINT ignored (inherited through fork and exec), so a Ctrl-C while they start
    # cannot print tracebacks; the pool starts its processes with the first tasks submitted.
    # At most two tasks per worker are queued, so stopping drops the rest without cancelling them.
    tasks, pending = iter(todo), {}

    def submit():
        for key, task in itertools.islice(tasks, 2 * jobs - len(pending)):
            pending[pool.submit(_worker_solve, task)] = key

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pool = ProcessPoolExecutor(min(jobs, len(todo)), mp_context=context, initializer=_start_worker,
                                   initargs=(os.getpid(), solvers), max_tasks_per_child=None if reuse else 1)
        submit()
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        while pending:
            # a timeout, so that the main thread gets to run its signal handlers (Ctrl-C, SIGTERM)
            # while long solves are in flight, not only when one of them finishes
            finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in finished:
                yield pending.pop(future), future.result()
            submit()
    finally:
        if pending:  # stopped early: stop the solves in flight (their results are lost anyway)
            for future in pending:
                future.cancel()
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def main(argv=None):
    parser = harness.parser(__doc__, data=DL_HARD, log="benchmarks/results/exact_depth.jsonl", fresh=True)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--ks", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--metrics", nargs="+", default=METRICS, help="templates with {k}")
    parser.add_argument("--preset", choices=["depth1000"], default=None,
                        help="depth1000: --ks 1000 and trec_eval-depth metrics (AP, RR whole run; Q(beta=1)@100)")
    parser.add_argument("--judgments", nargs="+", default=["dl-hard", "none"], choices=["dl-hard", "none"])
    parser.add_argument("--solvers", nargs="+", default=["highs", "cpsat"], choices=["highs", "cpsat", "scip", "default", "auto"],
                        help="'default': the exact driver with the solver medopt picks when none is asked for (per "
                             "metric family and depth); 'auto': what medopt.med does with no method given (its exact "
                             "method per metric: nDCG's profile search, else the exact driver)")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=2,
                        help="worker processes at once (default 2); each solves one instance and exits")
    parser.add_argument("--repeats", type=int, default=1,
                        help="solves of each instance in its worker; the log's exact_seconds is their median")
    parser.add_argument("--reuse-workers", action="store_true",
                        help="a worker solves instance after instance (peak RSS: its process's so far)")
    parser.add_argument("--compare", type=Path, metavar="LOG",
                        help="another run's log (an older commit, say): also print before / after on the instances both hold")
    args = parser.parse_args(argv)
    if args.preset == "depth1000":
        args.ks, args.metrics = [1000], DEPTH_1000
    if args.jobs < 1 or args.repeats < 1:
        parser.error("--jobs and --repeats must be at least 1")

    pairs = select_pairs(dl_hard_runs(args.data), args.pairs)
    qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    loaded = {str(p): read_run(p) for p in sorted({p for pair in pairs for p in pair})}
    log = Log(args.log, fresh=args.fresh)
    done = log.done

    todo, labels, wanted, skipped = [], {}, set(), 0
    for k, template, judged, solver in itertools.product(args.ks, args.metrics, args.judgments, args.solvers):
        metric = template.format(k=k)
        for first, second in pairs:
            run_a, run_b = loaded[str(first)], loaded[str(second)]
            topics = sorted(set(run_a.rankings) & set(run_b.rankings), key=int)[: args.topics]
            for topic in topics:
                key = f"{first.stem}|{second.stem}|{topic}|{metric}{scale_tag(metric)}|{judged}|{solver}|{args.time_limit:g}"
                wanted.add(key)
                if key in done:
                    skipped += 1
                    continue
                todo.append((key, task_for(loaded, qrels, str(first), str(second), topic, metric, judged, solver,
                                           args.time_limit, args.repeats)))
                labels[key] = dict(key=key, metric=metric, k=k, judgments=judged, solver=solver,
                                   workers="reused" if args.reuse_workers else "one per instance")

    started, count, certified, interrupted = time.perf_counter(), 0, 0, False
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)  # kill: stop as cleanly as Ctrl-C
    bar = tqdm(total=skipped + len(todo), initial=skipped, unit="inst", file=sys.stderr, dynamic_ncols=True,
               mininterval=1.0, desc="exact_depth", disable=not todo)
    try:
        with log, closing(solved(todo, args.jobs, warm_up_solvers(args.solvers), args.reuse_workers)) as results:
            for key, row in results:
                row.update(labels[key])
                done[key] = log.write(row)
                count += 1
                certified += bool(row["certified"])
                bar.set_postfix_str(f"{row['metric']} {row['judgments']} {row['solver']}", refresh=False)
                bar.update()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
        signal.signal(signal.SIGTERM, previous_term)
    wall = time.perf_counter() - started

    rows = [done[key] for key in wanted if key in done]  # this command's set, from the log
    print_table(rows, args.time_limit)
    if args.compare:
        print()
        print_comparison(rows, read_log(args.compare))
    print(f"this run: {count} instance{'' if count == 1 else 's'} solved ({certified} certified) in {wall:.1f} s wall with --jobs {args.jobs}; "
          f"{skipped} already in {args.log}" + (f"; interrupted, {len(todo) - count} left for a rerun" if interrupted
                                                 else ""))
    if interrupted:
        sys.exit(130)


def instance_id(key: str) -> str:
    """A log key without its solver: the same instance measured by any solver (or any commit)."""
    prefix, _solver, limit = key.rsplit("|", 2)
    return f"{prefix}|{limit}"


def paired(rows, baseline: dict) -> dict:
    """(metric, k, judgments, solver before, solver after) -> [(before row, after row)] over the instances
    both hold: an after row is paired with the baseline's row of the same key (the same solver) when it
    has one, else with the baseline's only row of that instance (a --solvers default run against a
    highs run, say); an instance the baseline holds with several other solvers is left out."""
    before = {}
    for row in baseline.values():
        before.setdefault(instance_id(row["key"]), []).append(row)
    groups = {}
    for row in rows:
        same = baseline.get(row["key"])
        others = before.get(instance_id(row["key"]), [])
        old = same if same is not None else (others[0] if len(others) == 1 else None)
        if old is not None:
            groups.setdefault((row["metric"], row["k"], row["judgments"], old["solver"], row["solver"]), []).append((old, row))
    return groups


WORSE = 1.10  # a median after / before above this is marked (issue 51: no median worse by more than 10%)


def comparison_table(rows, baseline: dict) -> tuple[list, list]:
    """Before (``baseline``, another log) and after (``rows``) on the instances both hold, per group:
    (header, rows) with each side's certified %, median and max seconds and the medians' ratio."""
    header = ["metric", "judgments", "n", "before", "cert%", "median", "max", "after", "cert%", "median", "max",
              "after/before"]
    table = []
    for (metric, _k, judged, old_solver, solver), pairs in sorted(
            paired(rows, baseline).items(), key=lambda g: (g[0][1], g[0][0], g[0][2], g[0][3], g[0][4])):
        cells = [metric, judged, len(pairs)]
        medians = []
        for side, name in ((0, old_solver), (1, solver)):
            seconds = [p[side]["exact_seconds"] for p in pairs]
            medians.append(statistics.median(seconds))
            cells += [name, f"{100 * sum(p[side]['certified'] for p in pairs) / len(pairs):.1f}",
                      f"{medians[-1]:.3f}", f"{max(seconds):.3f}"]
        ratio = medians[1] / medians[0] if medians[0] > 0 else float("inf")
        table.append(cells + [f"{ratio:.2f}" + (" *" if ratio > WORSE else "")])
    return header, table


def print_comparison(rows, baseline: dict):
    header, table = comparison_table(rows, baseline)
    if not table:
        print("before / after: no instance of this set is in the compared log")
        return
    commits = sorted({str(r.get("commit")) for r in baseline.values()})
    print(f"before ({', '.join(commits)}) / after on the same instances: certified %, median and max seconds "
          f"(* : after / before above {WORSE:g})")
    print(harness.text_table(header, table))


def summary_table(rows) -> tuple[list, list]:
    """Per metric, k, judgments and solver: (header, rows) of the exact solves' certified %, median, p90 and
    max seconds and largest peak RSS, and the heuristic's hit % and seconds where the metric has one."""
    groups = {}
    for row in rows:
        groups.setdefault((row["metric"], row["k"], row["judgments"], row["solver"]), []).append(row)
    header = ["metric", "judgments", "solver", "n", "cert%", "median", "p90", "max", "RSS MB",
              "heuristic", "hit%", "median", "p90", "max"]
    table = []
    for (metric, _k, judged, solver), group in sorted(groups.items(), key=lambda g: (g[0][1], g[0][0], g[0][2], g[0][3])):
        seconds = [r["exact_seconds"] for r in group]
        memory = [r["peak_rss_mb"] for r in group if r.get("peak_rss_mb") is not None]  # older logs lack it
        cells = [metric, judged, solver, len(group), f"{100 * sum(r['certified'] for r in group) / len(group):.1f}",
                 f"{statistics.median(seconds):.3f}", f"{percentile(seconds, 90):.3f}", f"{max(seconds):.3f}",
                 f"{max(memory):.0f}" if memory else ""]
        fast = [r for r in group if "heuristic_seconds" in r]
        if fast:
            hits = [r for r in fast if r["certified"]]
            hit = sum(abs(r["heuristic_value"] - r["exact_value"]) <= 1e-9 for r in hits) / len(hits) if hits else float("nan")
            times = [r["heuristic_seconds"] for r in fast]
            cells += [fast[0]["heuristic"], f"{100 * hit:.1f}", f"{statistics.median(times):.4f}",
                      f"{percentile(times, 90):.4f}", f"{max(times):.4f}"]
        else:
            cells += [""] * 5
        errors = sum(r.get("status") == "error" for r in group)
        if errors:
            cells[0] += f" ({errors} failed: see the log)"
        table.append(cells)
    return header, table


def print_table(rows, time_limit):
    print(f"exact: seconds per instance, certified within {time_limit:g} s, largest peak RSS of an instance's "
          f"process; heuristic: lower bound, hit = reached the certified maximum")
    print(harness.text_table(*summary_table(rows)))


def tables(records: list[dict], baseline: list[dict] | None = None) -> tuple[list, list]:
    """The table a page of the docs shows from this script's log (docs/hooks.py): the summary of
    ``records``, or with ``baseline`` (another log's records) the before / after comparison."""
    if baseline is None:
        return summary_table(records)
    return comparison_table(records, {r["key"]: r for r in baseline})


if __name__ == "__main__":
    main()
