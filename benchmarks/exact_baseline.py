"""Exact-solve baseline (issue 3): median / max seconds per topic of method="exact" on the
first two DL-HARD document runs, for MED-AP@k, SSP@k, nDCG@k, ERR@k, k = 10, 20, 50,
with no judgments and with the DL-HARD qrels, per solver.

Each topic gets --time-limit seconds; a configuration stops after --max-timeouts topics
hit the limit (reported as 'limit hit'). Usage:

    python benchmarks/exact_baseline.py [--topics 50] [--time-limit 20] [--ks 10 20 50] [--solvers highs cpsat]
"""

from __future__ import annotations

import time

import medopt
from medopt.io.trec import read_qrels, read_run

import harness
from harness import DL_HARD, dl_hard_runs


def main(argv=None):
    parser = harness.parser(__doc__, data=DL_HARD, log="", fresh=True)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument("--max-timeouts", type=int, default=2)
    parser.add_argument("--ks", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--metrics", nargs="+", default=["AP", "SSP", "nDCG", "ERR"])
    parser.add_argument("--solvers", nargs="+", default=["highs", "cpsat"])
    args = parser.parse_args(argv)
    runs = dl_hard_runs(args.data)[:2]
    # a rerun with the same --log prints the rows already there (the same topics, limit and stop) instead
    log = harness.Log(args.log, key=lambda r: (r["metric"], r["judgments"], r["solver"], r.get("topics"),
                                               r["time_limit"], r.get("max_timeouts")), fresh=args.fresh)
    run_a, run_b = read_run(runs[0]), read_run(runs[1])
    qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    topics = sorted(set(run_a.rankings) & set(run_b.rankings), key=int)[: args.topics]
    print(f"runs: {runs[0].name} vs {runs[1].name}; {len(topics)} topics; limit {args.time_limit:g} s per topic")
    print(f"{'metric':<10} {'judgments':<9} {'solver':<6} {'done':>5} {'certified':>9} {'median s':>9} {'max s':>9}  note")
    for k in args.ks:
        for family in args.metrics:
            metric = f"{family}@{k}"
            for judged in ("none", "dl-hard"):
                for solver in args.solvers:
                    logged = log.done.get((metric, judged, solver, args.topics, args.time_limit, args.max_timeouts))
                    if logged is not None:
                        print(f"{metric:<10} {judged:<9} {solver:<6} {logged['n']:>5} {logged['certified']:>9} "
                              f"{logged['median']:>9.3f} {logged['max']:>9.3f}  (logged)", flush=True)
                        continue
                    seconds, certified, timeouts = [], 0, 0
                    for topic in topics:
                        judgments = qrels.get(topic, {}) if judged == "dl-hard" else {}
                        started = time.perf_counter()
                        result = medopt.med(metric, run_a.rankings[topic], run_b.rankings[topic], judgments,
                                            method="exact", solver=solver, time_limit=args.time_limit)
                        seconds.append(time.perf_counter() - started)
                        certified += result.certified
                        timeouts += result.status == "timeout"
                        if timeouts >= args.max_timeouts:
                            break
                    note = f"limit hit on {timeouts} topic(s); stopped after {len(seconds)}" if timeouts >= args.max_timeouts \
                        else (f"{timeouts} timeout(s)" if timeouts else "")
                    times = harness.summary(seconds)
                    print(f"{metric:<10} {judged:<9} {solver:<6} {len(seconds):>5} {certified:>9} "
                          f"{times['median']:>9.3f} {times['max']:>9.3f}  {note}", flush=True)
                    log.write({"metric": metric, "judgments": judged, "solver": solver, "certified": certified,
                               "timeouts": timeouts, "time_limit": args.time_limit, "topics": args.topics,
                               "max_timeouts": args.max_timeouts, **times})
    log.close()


if __name__ == "__main__":
    main()
