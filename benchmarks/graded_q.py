"""The Q-measure on a collection with five grades (issue 57): DL-HARD with a seeded half of each topic's
grade-3 judgments raised to 4 (G = 4), Q(beta=1)@k on exact_depth's seeded pairs, per instance (--jobs at
once, each in a fresh process) the certified flag, seconds, value and proven bound (JSON lines in --log).

    python benchmarks/graded_q.py --pairs 2 --topics 10 --time-limit 60
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import harness
from harness import DL_HARD, dl_hard_runs, select_pairs
from medopt.io.trec import read_qrels, read_run

RAISE_SEED = 57


def raised_qrels(qrels: dict, seed: int = RAISE_SEED) -> dict:
    """Each topic's grade-3 judgments, sorted by document id, half of them (rounded down) drawn by
    ``numpy.random.default_rng([seed, topic])`` and raised to 4; every other judgment as it was."""
    raised = {}
    for topic, judged in qrels.items():
        threes = sorted(d for d, g in judged.items() if g == 3)
        rng = np.random.default_rng([seed, int(topic)] if str(topic).isdigit() else [seed])
        chosen = set(rng.choice(threes, size=len(threes) // 2, replace=False).tolist()) if threes else set()
        raised[topic] = {d: (4 if d in chosen else g) for d, g in judged.items()}
    return raised


ONE = """
import json, sys, time
import medopt
metric, a, b, judgments, solver, limit = sys.argv[1:7]
a, b, judgments = json.loads(a), json.loads(b), json.loads(judgments)
for s in ("highs", "cpsat"):
    medopt.med("Q(beta=1)@3", ["d1", "d2", "d3"], ["d3", "d4"], {"d1": 4}, method="exact", solver=s, max_grade=4)
started = time.perf_counter()
r = medopt.med(metric, a, b, judgments, method="exact", solver=None if solver == "default" else solver,
               time_limit=float(limit), max_grade=4)
print(json.dumps(dict(seconds=time.perf_counter() - started, certified=r.certified, value=r.value,
                      bound=r.upper_bound, used=r.solver)))
"""


def main(argv=None):
    parser = harness.parser(__doc__, data=DL_HARD, log="benchmarks/results/graded_q.jsonl")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solver", default="default", choices=["default", "highs", "cpsat", "scip"])
    parser.add_argument("--jobs", type=int, default=2, help="instances at once, each in its own process")
    args = parser.parse_args(argv)
    qrels = raised_qrels(read_qrels(args.data / "dl_hard-doc.qrels"))
    metric = f"Q(beta=1)@{args.k}"
    log = Path(args.log)
    log.parent.mkdir(parents=True, exist_ok=True)
    tasks = []
    for first, second in select_pairs(dl_hard_runs(args.data), 10)[: args.pairs]:
        run_a, run_b = read_run(first), read_run(second)
        topics = sorted(set(run_a.rankings) & set(run_b.rankings), key=int)[: args.topics]
        tasks += [(first, second, topic, list(run_a.rankings[topic]), list(run_b.rankings[topic])) for topic in topics]

    def one(task):
        first, second, topic, a, b = task
        judged = qrels.get(topic, {})
        out = subprocess.run([sys.executable, "-c", ONE, metric, json.dumps(a), json.dumps(b), json.dumps(judged),
                              args.solver, str(args.time_limit)], capture_output=True, text=True,
                             timeout=args.time_limit * 3 + 120)
        row = dict(metric=metric, a=first.stem, b=second.stem, topic=topic, solver=args.solver, limit=args.time_limit,
                   fours=sum(g == 4 for g in judged.values()), threes=sum(g == 3 for g in judged.values()))
        row.update(json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else
                   dict(error=out.stderr[-500:], certified=False))
        return row

    rows = []
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for row in pool.map(one, tasks):
            rows.append(row)
            with log.open("a") as stream:
                stream.write(json.dumps(dict(row, at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))) + "\n")
            print(json.dumps(row), flush=True)
    certified = [r for r in rows if r.get("certified")]
    seconds = [r["seconds"] for r in rows if "seconds" in r]
    print(f"{metric}, G = 4: {len(certified)} of {len(rows)} certified; median "
          f"{statistics.median(seconds) if seconds else float('nan'):.2f} s")


if __name__ == "__main__":
    main()
