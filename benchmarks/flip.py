"""Flip distances (SPEC 11) on TREC DL 2020: seconds per pair and the share certified.

40 run pairs drawn with a fixed seed from the 83 TREC DL 2020 passage runs, over the topics the
qrels judge (54), for trec_eval's P.10, ndcg_cut.10, recip_rank and map (depth 1000), each pair
with a time limit of 120 s (issue 52's targets: P.10, ndcg_cut.10, recip_rank median <= 1 s,
map median <= 20 s, every pair certified within 120 s).  Prints, per metric: pairs, median and
largest seconds, certified share, the pairs that never flip, the median F / N; per pair one line
with --verbose.

    python benchmarks/flip.py                          # the full benchmark (long: do not run on a shared box)
    python benchmarks/flip.py --pairs 3 --metrics P.10 # a few pairs
    python benchmarks/flip.py --dl-hard --metrics ndcg_cut.10 map   # DL-HARD, all 91 pairs

``--dl-hard``: the 14 DL-HARD document runs (every pair, over the 50 judged topics) instead of DL 2020;
the summary line then also gives the deciles of F / N.  ``--budget S``: stop a metric's pairs after S
seconds of wall time (the pairs done are reported, the rest counted as not run).
"""

from __future__ import annotations

import itertools
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import medopt
from medopt.io.frames import as_run
from medopt.io.trec import read_qrels

import harness

METRICS = ["P.10", "ndcg_cut.10", "recip_rank", "map"]


def pairs(data: Path, count: int, seed: int = 52) -> list[tuple[Path, Path]]:
    """This benchmark's own draw of run pairs (random.Random(seed), as its figures were measured)."""
    runs = sorted((data / "runs").glob("*.run*"))
    every = list(itertools.combinations(runs, 2))
    return random.Random(seed).sample(every, count)


def main(argv=None) -> int:
    parser = harness.parser(__doc__, data=harness.DL_2020, log="")
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--metrics", nargs="+", default=METRICS)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--dl-hard", action="store_true", help="every pair of the DL-HARD document runs")
    parser.add_argument("--budget", type=float, default=None, help="wall seconds per metric (default: none)")
    args = parser.parse_args(argv)
    if args.dl_hard:
        runs_found = harness.dl_hard_runs()
        qrels = read_qrels(harness.DL_HARD / "dl_hard-doc.qrels")
        chosen = list(itertools.combinations(runs_found, 2))
    else:
        if not args.data.exists():
            print(f"no TREC DL 2020 data at {args.data}", file=sys.stderr)
            return 2
        qrels = read_qrels(args.data / "qrels.dl20-passage.txt")
        chosen = pairs(args.data, args.pairs)
    log = harness.Log(args.log, key=lambda r: (r["metric"], r["a"], r["b"]))
    runs = {path: as_run(str(path)) for pair in chosen for path in pair}
    for metric in args.metrics:
        seconds, certified, never, shares = [], 0, 0, []
        started = time.perf_counter()
        for a, b in chosen:
            if args.budget is not None and time.perf_counter() - started > args.budget:
                break
            result = medopt.flip_distance(metric, runs[a], runs[b], qrels, time_limit=args.time_limit)
            seconds.append(result.seconds)
            certified += result.certified
            never += result.never
            if result.distance is not None and result.documents:
                shares.append(result.distance / result.documents)
            log.write({"metric": metric, "a": a.name, "b": b.name, "seconds": result.seconds,
                       "certified": result.certified, "never": result.never, "distance": result.distance,
                       "lower_bound": result.lower_bound, "documents": result.documents,
                       "time_limit": args.time_limit})
            if args.verbose:
                print(f"  {metric} {a.name} {b.name}: F={result.distance} >= {result.lower_bound} N={result.documents} "
                      f"D_L={result.reference:+.4f} {'certified' if result.certified else 'open'} "
                      f"{result.seconds:.2f}s {sorted(set(result.curves.values()))}", flush=True)
        print(f"{metric}: {len(seconds)} of {len(chosen)} pairs run, median {statistics.median(seconds):.2f}s, "
              f"max {max(seconds):.2f}s, certified {certified}/{len(seconds)}, never {never}, median F/N "
              f"{statistics.median(shares) if shares else float('nan'):.4f}", flush=True)
        if shares:
            deciles = np.percentile(shares, np.arange(0, 101, 10))
            print(f"  F/N deciles (0..100%) over the {len(shares)} pairs with a witness: "
                  + " ".join(f"{d:.4f}" for d in deciles), flush=True)
    log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
