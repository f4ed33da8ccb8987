"""Per-instance time of nDCG methods on DL-HARD topic pairs (docs/explanation/benchmarks.md, the nDCG profile search).

Draws ``--pairs`` (run pair, topic) picks of the 14 DL-HARD document runs with
``numpy.random.default_rng(--seed)`` and times one ``medopt.med`` call per pick and method (the
instance built, solved, re-scored and certified inside the timing; Pyomo and the solvers loaded
before it).  Prints the median, 90th percentile, largest and total time per method and depth, how
many answers are certified, and on how many picks the methods' values agree.  With ``--kernels``,
also the matrix fast path's array kernel of each method over all 91 pairs x 50 topics (best of
three, the runs read once before).

    python benchmarks/ndcg_profiles.py                                   # exact vs ndcg-profiles, @20 and @100
    python benchmarks/ndcg_profiles.py --max-grade 1 --methods alg1 ndcg-profiles --ks 10 20 100 --kernels
"""

from __future__ import annotations

import itertools
import time

import numpy as np

import medopt
from medopt.io.trec import read_qrels, read_run

import harness
from harness import DL_HARD, dl_hard_runs


def main(argv=None) -> None:
    parser = harness.parser(__doc__, data=DL_HARD, log="", seed=2026)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--ks", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--methods", nargs="+", default=["exact", "ndcg-profiles"])
    parser.add_argument("--max-grade", type=int, default=None, help="cap every topic's G (default: its qrels')")
    parser.add_argument("--kernels", action="store_true", help="also time the methods' matrix array kernels")
    args = parser.parse_args(argv)
    log = harness.Log(args.log, key=lambda r: (r["metric"], r["method"]))
    runs = [read_run(p) for p in dl_hard_runs(args.data)]
    qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    pairs = list(itertools.combinations(range(len(runs)), 2))
    topics = sorted(set(runs[0].rankings) & set(qrels))
    rng = np.random.default_rng(args.seed)
    picks = [(pairs[i], topics[t]) for i, t in zip(rng.integers(len(pairs), size=args.pairs),
                                                    rng.integers(len(topics), size=args.pairs))]
    medopt.med("nDCG@3", ["a", "b"], ["b", "c"], {"a": 2}, method="exact")  # load Pyomo and the solvers once
    for k in args.ks:
        metric, values = f"nDCG@{k}", {}
        for name in args.methods:
            times, values[name] = [], []
            for (i, j), topic in picks:
                started = time.perf_counter()
                result = medopt.med(metric, runs[i].rankings[topic], runs[j].rankings[topic], qrels[topic],
                                    max_grade=args.max_grade, method=name)
                times.append(time.perf_counter() - started)
                values[name].append((result.value, result.certified))
            spent = harness.summary(times)
            print(f"{metric} {name}: median {spent['median'] * 1e3:.2f} ms, p90 {spent['p90'] * 1e3:.2f} ms, "
                  f"max {spent['max'] * 1e3:.1f} ms, total {sum(times):.2f} s, "
                  f"certified {sum(c for _, c in values[name])}/{len(picks)}")
            log.write({"metric": metric, "method": name, "picks": len(picks), "seed": args.seed,
                       "certified": sum(c for _, c in values[name]), "total": sum(times), **spent})
        first = values[args.methods[0]]
        for name in args.methods[1:]:
            same = sum(abs(a[0] - b[0]) <= 1e-9 for a, b in zip(first, values[name]))
            print(f"{metric}: {args.methods[0]} and {name} equal on {same}/{len(picks)}")
        if args.kernels:
            time_kernels(args, metric)
    log.close()


def time_kernels(args, metric: str) -> None:
    from medopt.batch.fastpath import med_columns
    from medopt.batch.runset import load_runset
    from medopt.metrics import parse_metric

    paths = dl_hard_runs(args.data)
    runset = load_runset(paths, read_qrels(args.data / "dl_hard-doc.qrels"), max_grade=args.max_grade)
    for name in args.methods:
        if name not in ("alg1", "ndcg-profiles"):
            continue
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            for i, j in itertools.combinations(range(len(paths)), 2):
                med_columns(runset, i, j, parse_metric(metric), name, runset.common_topics(i, j))
            best = min(best, time.perf_counter() - started)
        print(f"{metric} {name} kernel: {best:.3f} s for all pairs x topics")


if __name__ == "__main__":
    main()
