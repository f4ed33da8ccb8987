"""RR (trec_eval ``recip_rank``, depth 1000) on TREC DL 2020 with its qrels: the solver path before, RR's
kernel (medopt/kernels/rr.py) after (issue 56).

1. Before: a few seeded (pair, topic) instances through ``medopt.med(..., method="exact")`` and
   ``medopt.difference_range(..., method="exact")``, the exact models ``auto`` took for RR until the kernel;
   seconds per instance.  The same instances through ``method="rr"`` (one instance at a time), with the
   values compared.
2. After, the batch path: a seeded subset of ``--runs`` runs loaded once (``load_runset``), then every
   pair x judged topic through the batch kernel (``fastpath.med_columns`` and ``range_columns``, method
   ``rr``): instances per second of the kernel; then ``run_matrix`` end to end (reading the files, the
   kernel, writing every row to a new store), MED and ``--range``, instances per second of the whole job,
   and the seconds of its phases: reading the runs, computing and storing the rows (``matrix._execute``)
   and the per-pair summary after them (``matrix.pair_summary``, exact rational means).

    flock /work/heavy.lock python benchmarks/rr_throughput.py              # 20 runs, 6 solver instances
    flock /work/heavy.lock python benchmarks/rr_throughput.py --runs 83 --before 10
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

import harness
from harness import DL_2020

METRIC = "RR"


def main() -> None:
    parser = harness.parser(__doc__, data=DL_2020, log="benchmarks/results/rr_throughput.jsonl", seed=harness.SEED)
    parser.add_argument("--runs", type=int, default=20, help="runs in the seeded subset (default 20; DL 2020 has 83)")
    parser.add_argument("--before", type=int, default=6, help="instances through the exact solver (default 6)")
    parser.add_argument("--jobs", type=int, default=1, help="workers of the run_matrix jobs (default 1)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per solver instance (default 60)")
    args = parser.parse_args()

    import medopt
    from medopt.batch import Settings, run_matrix
    from medopt.batch.blocks import med_columns, range_columns
    from medopt.batch.runset import load_runset
    from medopt.io.trec import read_qrels
    from medopt.metrics import parse_metric

    runs_all = sorted((Path(args.data) / "runs").glob("*.run.gz"))
    qrels_path = Path(args.data) / "qrels.dl20-passage.txt"
    if len(runs_all) < 2 or not qrels_path.exists():
        raise SystemExit(f"TREC DL 2020 runs or qrels not found under {args.data}")
    order = np.random.default_rng(args.seed).permutation(len(runs_all))
    runs = [runs_all[i] for i in sorted(order[:args.runs])]
    qrels = read_qrels(qrels_path)
    log = harness.Log(args.log, key=lambda record: record["case"])

    started = time.perf_counter()
    runset = load_runset([str(p) for p in runs], qrels)
    load_seconds = time.perf_counter() - started
    judged = np.isin(np.array(runset.topics), list(qrels))
    metric = parse_metric(METRIC)
    pairs = [(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    blocks = [(i, j, runset.common_topics(i, j)[judged[runset.common_topics(i, j)]]) for i, j in pairs]
    instances = sum(len(t) for _, _, t in blocks)

    # -- before: the solver, a few instances --------------------------------------------------------
    rng = np.random.default_rng(args.seed)
    chosen = [blocks[k] for k in rng.choice(len(blocks), size=min(args.before, len(blocks)), replace=False)]
    before = []
    for i, j, topics in chosen:
        t = int(rng.choice(topics))
        case = (metric, runset.ranking(i, t), runset.ranking(j, t), runset.judgments(t))
        top = int(runset.max_grade[t])
        solved = medopt.med(*case, max_grade=top, method="exact", time_limit=args.time_limit)
        ranged = medopt.difference_range(*case, max_grade=top, method="exact", time_limit=args.time_limit)
        kernel = medopt.med(*case, max_grade=top, method="rr")
        both = medopt.difference_range(*case, max_grade=top, method="rr")
        agree = (abs(solved.value - kernel.value) <= 1e-9 and abs(ranged.low - both.low) <= 1e-9
                 and abs(ranged.high - both.high) <= 1e-9) if solved.certified and ranged.certified else None
        before.append({"pair": [runs[i].name, runs[j].name], "topic": runset.topics[t], "exact_med": solved.seconds,
                       "exact_range": ranged.seconds, "certified": solved.certified and ranged.certified,
                       "rr_med": kernel.seconds, "rr_range": both.seconds, "agree": agree})
        print(f"before {runs[i].name} vs {runs[j].name} topic {runset.topics[t]}: exact MED {solved.seconds:.3f} s, "
              f"range {ranged.seconds:.3f} s (certified {solved.certified and ranged.certified}); rr MED "
              f"{kernel.seconds * 1e3:.2f} ms, range {both.seconds * 1e3:.2f} ms; agree {agree}")
    exact_med = [b["exact_med"] for b in before]
    log.write({"case": f"before {args.runs} runs", "instances": before, "exact_med": harness.summary(exact_med),
               "exact_range": harness.summary([b["exact_range"] for b in before]),
               "rr_med_one_at_a_time": harness.summary([b["rr_med"] for b in before])})

    # -- after: the batch kernel over every pair x judged topic ---------------------------------------
    figures = {}
    for name, call in (("med", lambda i, j, t: med_columns(runset, i, j, metric, "rr", t)),
                       ("range", lambda i, j, t: range_columns(runset, i, j, metric, t, "rr"))):
        call(*blocks[0])  # the first call builds the runset's assignment strings once
        timing, _ = harness.timed(lambda: [call(i, j, t) for i, j, t in blocks], repeats=3)
        figures[name] = instances / timing["median"]
        print(f"after, kernel {name}: {instances:,} instances in {timing['median']:.3f} s (median of 3): "
              f"{figures[name]:,.0f} per second; peak RSS {timing['peak_rss_mb']:.0f} MB")
        log.write({"case": f"kernel {name} {args.runs} runs", "instances": instances, "timing": timing,
                   "per_second": figures[name], "load_seconds": load_seconds})

    # -- after: run_matrix end to end, with the seconds of its phases ----------------------------------
    import medopt.batch.matrix as matrix
    phases: dict = {}

    def timing_of(name, function):
        def timed_call(*args, **kwargs):
            begun = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - begun
        return timed_call

    matrix._execute = timing_of("compute and store", matrix._execute)
    matrix.pair_summary = timing_of("pair summary", matrix.pair_summary)
    for ranges in (False, True):
        phases.clear()
        with tempfile.TemporaryDirectory() as folder:
            store = Path(folder) / "rr.sqlite"
            timing, report = harness.timed(lambda: run_matrix(
                [str(p) for p in runs], [METRIC], qrels=str(qrels_path), store=store, jobs=args.jobs,
                settings=Settings(ranges=ranges), progress=False))
        rows, read = report.computed, report.read_seconds
        label = "range" if ranges else "med"
        print(f"after, run_matrix {label} (-j {args.jobs}): {timing['median']:.2f} s wall for {instances:,} instances "
              f"({instances / timing['median']:,.0f} per second; {rows:,} rows; reading the {len(runs)} runs {read:.2f} s "
              f"of it: {rows / max(timing['median'] - read, 1e-9):,.0f} rows per second without it); peak RSS {timing['peak_rss_mb']:.0f} MB")
        compute = phases.get("compute and store", float("nan"))
        print(f"  phases: compute and store {compute:.2f} s ({rows / compute:,.0f} rows per second), pair summary "
              f"{phases.get('pair summary', float('nan')):.2f} s")
        log.write({"case": f"matrix {label} {args.runs} runs j{args.jobs}", "instances": instances, "rows": rows,
                   "read_seconds": read, "phases": dict(phases), "timing": timing, "per_second": instances / timing["median"], "load_seconds": load_seconds})
    log.close()


if __name__ == "__main__":
    main()
