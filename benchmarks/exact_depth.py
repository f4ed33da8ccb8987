"""Exact MED at real depth (issue 4): a fixed, seeded benchmark on the DL-HARD document runs.

10 run pairs x 50 topics, k = 20 and 100, with no judgments and with the DL-HARD qrels, for
AP@k, AP(norm=min)@k, SSP@k, nDCG@k (graded), ERR@k (graded) and Q(beta=1)@k, per solver,
each instance with a time limit (60 s).  Prints per metric, k, judgments and solver:
instances, certified fraction, median / 90th percentile / max seconds, and the same for the
best heuristic of that metric where one exists (its value is a lower bound; 'hit' is the
fraction of instances where it reached the certified maximum).

Every instance is appended to a JSON-lines log as it finishes, so an interrupted run
continues where it stopped (--log, on by default); the table is printed from the log.

    python benchmarks/exact_depth.py                       # the full benchmark (hours)
    python benchmarks/exact_depth.py --pairs 2 --topics 10 --ks 20   # a quick subset
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import medopt
from medopt.errors import MedoptError
from medopt.io.trec import read_qrels, read_run

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dl-hard"
METRICS = ["AP@{k}", "AP(norm=min)@{k}", "SSP@{k}", "nDCG@{k}", "ERR@{k}", "Q(beta=1)@{k}"]
HEURISTICS = {"AP": "greedy", "SSP": "tabu", "nDCG": "alg1", "ERR": "tc-err"}
SEED = 20261122


def select_pairs(runs: list[Path], count: int, seed: int = SEED) -> list[tuple[Path, Path]]:
    pairs = list(itertools.combinations(runs, 2))
    order = np.random.default_rng(seed).permutation(len(pairs))
    return [pairs[i] for i in order[:count]]


def percentile(values, q):
    return float(np.percentile(values, q)) if values else float("nan")


def run_instance(metric, a, b, judgments, solver, time_limit):
    family = medopt.parse_metric(metric).family
    row = {}
    started = time.perf_counter()
    exact = medopt.med(metric, a, b, judgments, method="exact", solver=solver, time_limit=time_limit)
    row.update(exact_seconds=time.perf_counter() - started, exact_value=exact.value, certified=exact.certified,
               status=exact.status, bound=exact.upper_bound)
    heuristic = HEURISTICS.get(family)
    if heuristic and heuristic in medopt.METHODS:
        started = time.perf_counter()
        try:
            fast = medopt.med(metric, a, b, judgments, method=heuristic)
            row.update(heuristic=heuristic, heuristic_seconds=time.perf_counter() - started,
                       heuristic_value=fast.value)
        except MedoptError as error:
            row.update(heuristic=heuristic, heuristic_error=str(error))
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--ks", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--metrics", nargs="+", default=METRICS, help="templates with {k}")
    parser.add_argument("--judgments", nargs="+", default=["dl-hard", "none"], choices=["dl-hard", "none"])
    parser.add_argument("--solvers", nargs="+", default=["highs", "cpsat"])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--log", type=Path, default=Path("benchmarks/results/exact_depth.jsonl"))
    parser.add_argument("--fresh", action="store_true", help="ignore instances already in the log")
    args = parser.parse_args(argv)

    runs = sorted((args.data / "baselines" / "doc").glob("*.run"))
    if len(runs) < 2:
        sys.exit(f"DL-HARD runs not found under {args.data}")
    pairs = select_pairs(runs, args.pairs)
    qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    loaded = {p: read_run(p) for p in {p for pair in pairs for p in pair}}
    args.log.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if args.log.exists() and not args.fresh:
        for line in args.log.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by an interruption
            done[row["key"]] = row
    with args.log.open("a") as log:
        for k, template, judged, solver in itertools.product(args.ks, args.metrics, args.judgments, args.solvers):
            metric = template.format(k=k)
            for first, second in pairs:
                run_a, run_b = loaded[first], loaded[second]
                topics = sorted(set(run_a.rankings) & set(run_b.rankings), key=int)[: args.topics]
                for topic in topics:
                    key = f"{first.stem}|{second.stem}|{topic}|{metric}|{judged}|{solver}|{args.time_limit:g}"
                    if key in done:
                        continue
                    judgments = qrels.get(topic, {}) if judged == "dl-hard" else {}
                    row = run_instance(metric, run_a.rankings[topic], run_b.rankings[topic], judgments, solver,
                                       args.time_limit)
                    row.update(key=key, metric=metric, k=k, judgments=judged, solver=solver)
                    log.write(json.dumps(row) + "\n")
                    log.flush()
                    done[key] = row
                print(f"done {metric} {judged} {solver} {first.stem} vs {second.stem}", file=sys.stderr, flush=True)
    print_table([r for r in done.values() if r["k"] in args.ks and r["solver"] in args.solvers
                 and r["judgments"] in args.judgments and r["key"].endswith(f"|{args.time_limit:g}")], args.time_limit)


def print_table(rows, time_limit):
    groups = {}
    for row in rows:
        groups.setdefault((row["metric"], row["k"], row["judgments"], row["solver"]), []).append(row)
    header = (f"{'metric':<18} {'judgments':<8} {'solver':<6} {'n':>5} {'cert%':>6} {'median':>8} {'p90':>8} "
              f"{'max':>8} | {'heuristic':<9} {'hit%':>6} {'median':>8} {'p90':>8} {'max':>8}")
    print(f"exact: seconds per instance, certified within {time_limit:g} s; heuristic: lower bound, hit = reached the certified maximum")
    print(header)
    print("-" * len(header))
    for (metric, k, judged, solver), group in sorted(groups.items(), key=lambda g: (g[0][1], g[0][0], g[0][2], g[0][3])):
        seconds = [r["exact_seconds"] for r in group]
        certified = sum(r["certified"] for r in group) / len(group)
        line = (f"{metric:<18} {judged:<8} {solver:<6} {len(group):>5} {100 * certified:>6.1f} "
                f"{statistics.median(seconds):>8.3f} {percentile(seconds, 90):>8.3f} {max(seconds):>8.3f}")
        fast = [r for r in group if "heuristic_seconds" in r]
        if fast:
            hits = [r for r in fast if r["certified"]]
            hit = sum(abs(r["heuristic_value"] - r["exact_value"]) <= 1e-9 for r in hits) / len(hits) if hits else float("nan")
            times = [r["heuristic_seconds"] for r in fast]
            line += (f" | {fast[0]['heuristic']:<9} {100 * hit:>6.1f} {statistics.median(times):>8.4f} "
                     f"{percentile(times, 90):>8.4f} {max(times):>8.4f}")
        print(line)


if __name__ == "__main__":
    main()
