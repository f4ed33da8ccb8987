"""Certify the heuristics on DL-HARD (issue 5): every pair of the 14 document runs x 50 topics, with the qrels,
for AP@10, AP@20 (greedy, tabu), SSP@20 (tabu) and ERR@20 (tc-err), against the exact solver.

Every finished (pair, topic, metric) is appended to a JSON-lines log at once, so an interrupted
run continues where it stopped when started again with the same --log. Misses are saved as
counterexample files in --out. Prints the summary table (medopt.campaigns.certify.summarize) with timings
and an estimate of the time the full 91 pairs take. Usage:

    python benchmarks/certify_dlhard.py [--pairs 5] [--time-limit 60] [--solver highs] \
        [--log certify_dlhard.jsonl] [--out certify_dlhard_cx]
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

from tqdm import tqdm

from medopt.campaigns.certify import (SUMMARY_COLUMNS, Case, Settings, certify_case, format_table, plan,
                                     summarize, warm_up)
from medopt.campaigns.counterexamples import save_counterexample
from medopt.io.trec import read_qrels, read_run

import harness
from harness import DL_HARD, Log, dl_hard_runs

METRICS = ["AP@10", "AP@20", "SSP@20", "ERR@20"]


def entry_key(entry: dict) -> tuple:
    """A log entry's (run, run, topic, metric)."""
    return tuple(entry["key"])


def main(argv=None):
    parser = harness.parser(__doc__, data=DL_HARD, log="certify_dlhard.jsonl")
    parser.add_argument("--pairs", type=int, default=None, help="First N pairs only (default: all 91).")
    parser.add_argument("--topics", type=int, default=None, help="First N common topics of each pair.")
    parser.add_argument("--metrics", nargs="+", default=METRICS)
    parser.add_argument("--time-limit", type=float, default=60.0, help="Seconds per exact MED.")
    parser.add_argument("--solver", default="highs", choices=["highs", "cpsat"])
    parser.add_argument("--out", type=Path, default=Path("certify_dlhard_cx"), help="Counterexample directory.")
    args = parser.parse_args(argv)

    paths = dl_hard_runs(args.data)
    runs = [read_run(p) for p in paths]
    names = [p.stem for p in paths]  # file names: several runs share a run id
    qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    pairs = list(itertools.combinations(range(len(runs)), 2))
    chosen = pairs[: args.pairs] if args.pairs else pairs
    settings = Settings(solver=args.solver, time_limit=args.time_limit)
    work = plan(args.metrics, ())
    args.out.mkdir(parents=True, exist_ok=True)
    log = Log(args.log, key=entry_key)
    done = dict(log.done)
    jobs = []
    for i, j in chosen:
        topics = sorted(set(runs[i].rankings) & set(runs[j].rankings), key=int)[: args.topics]
        jobs += [(i, j, topic, metric, heuristics) for topic in topics for metric, heuristics in work
                 if (names[i], names[j], topic, str(metric)) not in done]
    print(f"{len(runs)} runs, {len(chosen)} of {len(pairs)} pairs, metrics {' '.join(args.metrics)}; "
          f"{len(jobs)} instance(s) to compute, {len(done)} in {args.log}; limit {args.time_limit:g} s", flush=True)
    warm_up(work, settings)
    started = time.perf_counter()
    counter = len(list(args.out.glob("cx*.json")))
    with log:
        for i, j, topic, metric, heuristics in tqdm(jobs, unit="instance", file=sys.stderr):
            case = Case(names[i], names[j], topic, runs[i].rankings[topic], runs[j].rankings[topic],
                        dict(qrels.get(topic, {})))
            rows, found = certify_case(case, metric, heuristics, settings)
            for row, data in found:
                counter += 1
                row["counterexample"] = save_counterexample(data, args.out, counter).name
                if row["verdict"] == "above":
                    print(f"BUG: {row['heuristic']} above the exact value: {row}", file=sys.stderr, flush=True)
            log.write({"key": [names[i], names[j], topic, str(metric)], "rows": rows})
    wall = time.perf_counter() - started

    keys = {(names[i], names[j]) for i, j in chosen}
    metrics = {str(m) for m, _ in work}
    entries = [e for k, e in harness.read_log(args.log, entry_key).items() if (k[0], k[1]) in keys and k[3] in metrics]
    rows = [row for entry in entries for row in entry["rows"]]
    summary = summarize(rows)
    print(format_table(summary, SUMMARY_COLUMNS), end="")
    exact_seconds = sum(e["rows"][0]["exact_seconds"] for e in entries)
    heuristic_seconds = sum(r["heuristic_seconds"] for r in rows)
    misses = sum(r["verdict"] == "miss" for r in rows)
    bugs = sum(r["verdict"] == "above" for r in rows)
    per_pair = (exact_seconds + heuristic_seconds) / len(chosen)
    print(f"\n{len(entries)} instances ({len(chosen)} pairs): exact {exact_seconds:.1f} s, heuristics "
          f"{heuristic_seconds:.1f} s; this session {wall:.1f} s wall for {len(jobs)} instance(s); "
          f"{misses} miss(es) saved in {args.out}; {bugs} heuristic value(s) above exact")
    print(f"estimate for all {len(pairs)} pairs: {per_pair * len(pairs) / 3600:.2f} h "
          f"({per_pair:.1f} s per pair, one process)")
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
