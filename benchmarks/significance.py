"""The time of SPEC 12's worst-case p-value once the per-topic ranges are known.

1. TREC DL 2020 (54 judged topics, ../shared/data/trec-dl-2020): the first --runs runs (sorted
   by name), every pair, at nDCG@10 (trec_eval's ndcg_cut.10) and P@10: the per-topic difference
   ranges (medopt.significance, which computes them) and then the worst case alone (worst_case on
   those ranges), for the t-test and the sign test; prints per pair p_reference, p_worst, robust
   at 0.05, and the two times.
2. n = 249 topics (Robust04's size), generated ranges: midpoints N(mu, 0.2), widths
   exponential(scale), shifted so the mean range just excludes 0 (the hardest case for the
   t-test: the worst t is small) or with a clear mean; the time of worst_case per pair.

    python benchmarks/significance.py                 # 4 DL 2020 runs (6 pairs), 30 generated pairs
    python benchmarks/significance.py --runs 6 --generated 60
    python benchmarks/significance.py --runs 0 --generated 0 --matrix 10   # 45 pairs, end to end
"""

from __future__ import annotations

import random
import statistics
import time
import warnings

import numpy as np

import medopt
from medopt.core.significance import pvalue, worst_case

import harness

DL2020 = harness.DL_2020
METRICS = ["ndcg_cut.10", "P.10"]


def dl2020(runs: int, log: harness.Log, metrics=METRICS, time_limit=None, sample=None) -> None:
    if not DL2020.exists():
        print(f"{DL2020} absent: the DL 2020 part is skipped")
        return
    from medopt.io.trec import read_qrels, read_run

    paths = sorted((DL2020 / "runs").glob("*.run.gz"))
    paths = sorted(random.Random(sample).sample(paths, runs)) if sample is not None else paths[:runs]
    qrels = read_qrels(DL2020 / "qrels.dl20-passage.txt")
    read = {p.name.removesuffix(".run.gz"): read_run(p) for p in paths}
    print(f"DL 2020: {len(read)} runs, {len(read) * (len(read) - 1) // 2} pairs")
    print(f"{'metric':12} {'test':5} {'pair':40} {'n':>3}  {'p_ref':8}  {'p_worst':8}  robust  ranges_s  worst_s")
    worst_times = {}
    for metric in metrics:
        names = list(read)
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                started = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = medopt.significance(metric, read[names[i]], read[names[j]], qrels, test="t",
                                                 time_limit=time_limit)
                ranges_s = time.perf_counter() - started
                low = [result.ranges[t].low for t in result.topics]
                high = [result.ranges[t].high for t in result.topics]
                sign = 1 if result.mean_reference > 0 else -1
                for test in ("t", "sign"):
                    started = time.perf_counter()
                    worst = worst_case(test, low, high, sign)
                    seconds = time.perf_counter() - started
                    worst_times.setdefault((metric, test), []).append(seconds)
                    p_ref = pvalue(test, list(result.reference.values()))
                    robust = worst.sign_kept and worst.p < 0.05
                    ends_certified = all(r.low_certified and r.high_certified for r in result.ranges.values())
                    print(f"{metric:12} {test:5} {names[i][:19] + '/' + names[j][:19]:40} {len(low):3}  "
                          f"{p_ref:.2e}  {worst.p:.2e}  {robust!s:6}  {ranges_s:8.2f}  {seconds:.4f}")
                    log.write({"part": "dl2020", "metric": metric, "test": test, "a": names[i], "b": names[j],
                               "topics": len(low), "p_reference": p_ref, "p_worst": worst.p, "robust": bool(robust),
                               "ranges_seconds": ranges_s, "worst_seconds": seconds, "certified": result.certified,
                               "ends_certified": ends_certified, "time_limit": time_limit})
    for (metric, test), times in worst_times.items():
        print(f"DL 2020 {metric} {test}: worst case median {statistics.median(times) * 1e3:.2f} ms, "
              f"max {max(times) * 1e3:.2f} ms over {len(times)} pairs")


def matrix(runs: int, log: harness.Log) -> None:
    """medopt.matrix(summary=True, test="t") on the first ``runs`` DL 2020 runs at ndcg_cut.10 and P.10,
    one worker: every pair's ranges (the matrix fast path) and worst case, end to end."""
    paths = sorted((DL2020 / "runs").glob("*.run.gz"))[:runs]
    for metric in METRICS:
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = medopt.matrix([str(p) for p in paths], str(DL2020 / "qrels.dl20-passage.txt"), [metric],
                                  summary=True, test="t", jobs=1)
        seconds = time.perf_counter() - started
        print(f"DL 2020 matrix --test t, {metric}, {len(paths)} runs, {len(frame)} pairs, 1 worker: {seconds:.1f} s "
              f"({seconds / max(len(frame), 1):.3f} s per pair, reading included); significant under the reference "
              f"{int((frame.p_reference < 0.05).sum())}, robustly {int(frame.robust.sum())}", flush=True)
        log.write({"part": "matrix", "metric": metric, "runs": len(paths), "pairs": len(frame), "seconds": seconds,
                   "significant": int((frame.p_reference < 0.05).sum()), "robust": int(frame.robust.sum())})


def generated(pairs: int, log: harness.Log, n: int = 249) -> None:
    rng = np.random.default_rng(249)
    for regime, margin in (("mean just above 0", 1e-3), ("mean 0.02", 0.02), ("clear mean", 0.05)):
        for scale in (0.01, 0.05, 0.2):
            times = {"t": [], "sign": []}
            robust = 0
            for _ in range(pairs):
                mid, width = rng.normal(0.0, 0.2, n), rng.exponential(scale, n)
                low, high = mid - width / 2, mid + width / 2
                shift = margin - low.mean()
                low, high = low + shift, high + shift
                for test, spent in times.items():
                    started = time.perf_counter()
                    worst = worst_case(test, low, high, 1)
                    spent.append(time.perf_counter() - started)
                    robust += test == "t" and worst.p < 0.05
            print(f"n = {n}, {regime}, width scale {scale}: t median {statistics.median(times['t']) * 1e3:.2f} ms "
                  f"max {max(times['t']) * 1e3:.2f} ms; sign median {statistics.median(times['sign']) * 1e3:.2f} ms "
                  f"max {max(times['sign']) * 1e3:.2f} ms ({pairs} pairs, {robust} robust under the t-test)")
            log.write({"part": "generated", "n": n, "regime": regime, "scale": scale, "pairs": pairs, "robust": robust,
                       "t": harness.summary(times["t"]), "sign": harness.summary(times["sign"])})


def main(argv=None) -> None:
    parser = harness.parser(__doc__, log="")
    parser.add_argument("--runs", type=int, default=4, help="DL 2020 runs (every pair of them); 0: none")
    parser.add_argument("--generated", type=int, default=30, help="generated pairs per regime at n = 249")
    parser.add_argument("--metrics", nargs="+", default=METRICS, help="the DL 2020 part's metrics")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds per topic range (DL 2020 part)")
    parser.add_argument("--sample", type=int, default=None,
                        help="draw the --runs DL 2020 runs with random.Random(SAMPLE) instead of the first by name")
    parser.add_argument("--matrix", type=int, default=0, help="also medopt.matrix --test on this many DL 2020 runs")
    args = parser.parse_args(argv)
    worst_case("t", [0.1, 0.2], [0.3, 0.4], 1)  # scipy's import, outside the times
    with harness.Log(args.log, key=lambda r: r["part"]) as log:
        if args.runs:
            dl2020(args.runs, log, args.metrics, args.time_limit, args.sample)
        if args.matrix and DL2020.exists():
            matrix(args.matrix, log)
        if args.generated:
            generated(args.generated, log)


if __name__ == "__main__":
    main()
