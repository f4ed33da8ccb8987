"""A whole track at trec_eval's defaults (issue 56): every pair of a track's runs x judged topic at
``map``, ``ndcg``, ``P.10`` and ``recip_rank`` with the qrels, MED and then ``--range``.

One ``medopt matrix`` job per metric and mode (``med``, ``range``), run in this process through
:func:`medopt.batch.run_matrix` on ``-j`` local workers into a fresh store, with a time limit per
instance.  Each record holds the wall time, instances per second, the certified share, the stored
per-instance seconds (median, mean, max), the peak resident memory of this process and its workers
together, and the full track's projected wall time: the subset's wall time scaled by the instances of
the full track over those of the subset (topics judged and retrieved by a pair are nearly all judged
topics: the projection scales by pairs).

    python benchmarks/whole_track.py                          # the whole of DL 2020 (83 runs: days today)
    python benchmarks/whole_track.py --runs 4 -j 2 --time-limit 60 --log benchmarks/results/whole_track.jsonl
    python benchmarks/whole_track.py --runs 10 --metrics map --no-range

``--runs N`` draws a seeded subset of N runs (``numpy.random.default_rng(seed)``); the log's key is
(track, runs, seed, metric, mode, time limit, jobs), so a rerun skips what is there (``--fresh``
measures again).
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import harness
from harness import DL_2020

METRICS = ["map", "ndcg", "P.10", "recip_rank"]


def track_files(data: Path) -> tuple[list[Path], Path]:
    runs = sorted((Path(data) / "runs").glob("*.run*"))
    qrels = sorted(Path(data).glob("qrels*"))
    if len(runs) < 2 or not qrels:
        sys.exit(f"no track under {data}: expected runs/*.run[.gz] and a qrels* file "
                 f"(set {harness.DATA_VARIABLE} or pass --data)")
    return runs, qrels[0]


def subset(runs: list[Path], count: int | None, seed: int) -> list[Path]:
    if count is None or count >= len(runs):
        return runs
    if count < 2:
        sys.exit("--runs: at least 2")
    chosen = np.random.default_rng(seed).choice(len(runs), size=count, replace=False)
    return [runs[i] for i in sorted(chosen)]


class PeakTreeRSS(harness.PeakRSS):
    """The largest resident set of this process and its children (the pool's workers) together, in MB."""

    def _sample(self):
        while True:
            total = self.process.memory_info().rss
            for child in self.process.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except Exception:  # noqa: BLE001 -- a worker that ended between the listing and the read
                    pass
            self.peak = max(self.peak, total)
            if self._stop.wait(self.interval):
                return


def stored_rows(store: Path) -> list[dict]:
    from medopt.io.store import ResultStore

    with ResultStore(store, write=False) as results:
        return list(results.rows())


def measure(runs: list[Path], qrels: Path, metric: str, ranges: bool, jobs: int, time_limit: float,
            folder: Path) -> dict:
    from medopt.batch import Settings, run_matrix

    store = folder / f"{metric}-{'range' if ranges else 'med'}.sqlite"
    settings = Settings(time_limit=time_limit, ranges=ranges)
    with PeakTreeRSS() as memory:
        started = time.perf_counter()
        report = run_matrix([str(p) for p in runs], [metric], qrels=str(qrels), store=store, settings=settings,
                            jobs=jobs, progress=False, warn=lambda message: None)
        wall = time.perf_counter() - started
    rows = stored_rows(store)
    store.unlink()
    seconds = [r["seconds"] for r in rows if r["seconds"] is not None]
    certified = [r["certified"] if not ranges else (r["low_certified"] and r["high_certified"]) for r in rows]
    methods = {}
    for r in rows:
        methods[r["method"]] = methods.get(r["method"], 0) + 1
    return {"instances": len(rows), "wall_seconds": wall, "read_seconds": report.read_seconds, "instances_per_second": len(rows) / wall if wall else None,
            "certified_share": sum(map(bool, certified)) / len(rows) if rows else None,
            "instance_seconds": {"median": statistics.median(seconds) if seconds else None,
                                 "mean": statistics.fmean(seconds) if seconds else None,
                                 "max": max(seconds, default=None),
                                 "sum": math.fsum(seconds)},
            "methods": methods, "peak_rss_mb": memory.mb}


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 360 else f"{seconds:.0f} s"


def main() -> None:
    made = harness.parser(__doc__, data=DL_2020, log="benchmarks/results/whole_track.jsonl", fresh=True,
                          seed=harness.SEED)
    made.add_argument("--runs", type=int, default=None, help="a seeded subset of this many runs (default all)")
    made.add_argument("-j", "--jobs", type=int, default=2)
    made.add_argument("--time-limit", type=float, default=60.0, help="seconds per instance (default 60)")
    made.add_argument("--metrics", nargs="+", default=METRICS)
    made.add_argument("--no-range", action="store_true", help="MED only (no --range jobs)")
    args = made.parse_args()
    every, qrels = track_files(args.data)
    runs = subset(every, args.runs, args.seed)
    pairs, full_pairs = len(runs) * (len(runs) - 1) // 2, len(every) * (len(every) - 1) // 2
    track = Path(args.data).name
    print(f"{track}: {len(runs)} of {len(every)} runs ({pairs} of {full_pairs} pairs), -j {args.jobs}, "
          f"{args.time_limit:g} s per instance", flush=True)
    modes = [False] if args.no_range else [False, True]
    records = []
    with harness.Log(args.log, key=lambda r: tuple(r["key"]), fresh=args.fresh) as log, \
            tempfile.TemporaryDirectory(prefix="whole-track-") as folder:
        for metric in args.metrics:
            for ranges in modes:
                mode = "range" if ranges else "med"
                key = (track, len(runs), args.seed, metric, mode, args.time_limit, args.jobs)
                if key in log and not args.fresh:
                    records.append(log.done[key])
                    continue
                result = measure(runs, qrels, metric, ranges, args.jobs, args.time_limit, Path(folder))
                read = result["read_seconds"]  # reading scales with the runs, the rest with the pairs
                result["projected_full_seconds"] = (read * len(every) / len(runs)
                                                    + (result["wall_seconds"] - read) * full_pairs / pairs)
                records.append(log.write({"key": list(key), "track": track, "runs": [p.name for p in runs],
                                          "pairs": pairs, "full_pairs": full_pairs, "metric": metric, "mode": mode,
                                          "jobs": args.jobs, "time_limit": args.time_limit, **result}))
                print(f"  {metric:<11} {mode:<5} {result['instances']:>6} inst  {result['wall_seconds']:8.1f} s  "
                      f"{result['instances_per_second']:9.1f}/s  certified {result['certified_share']:.1%}  "
                      f"per inst median {result['instance_seconds']['median']:.4f} s mean "
                      f"{result['instance_seconds']['mean']:.4f} s max {result['instance_seconds']['max']:.2f} s  "
                      f"peak {result['peak_rss_mb']:.0f} MB  full track {hours(result['projected_full_seconds'])}",
                      flush=True)
    for mode in ("med", "range"):
        chosen = [r for r in records if r["mode"] == mode]
        if chosen:
            total = sum(r["projected_full_seconds"] for r in chosen)
            print(f"full track, {mode}, {len(chosen)} metric(s): projected {hours(total)} on -j {args.jobs} "
                  f"({total * args.jobs / 3600:.1f} core-hours)")


if __name__ == "__main__":
    main()
