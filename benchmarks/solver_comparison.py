"""The three exact solvers (HiGHS, CP-SAT, SCIP) side by side on the hard DL-HARD instances (issue 57).

Each instance runs once per solver in a fresh process (imports and a warm-up on tiny instances paid
before the clock starts), with a time limit (default 60 s); one JSON line per run is appended to
--log: certified, seconds, value, proven bound, and the driver's details.  ``--scan`` first runs every
seeded pair of benchmarks/exact_depth.py on the given topics with the default solver and a short limit,
and compares the solvers on the instances still open after it (the hard ones).

    python benchmarks/solver_comparison.py --metric AP --topics 273695 190044 --scan 8
    python benchmarks/solver_comparison.py --metric "Q(beta=1)@100" --topics 86606 --pairs 2
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import harness
from harness import DL_HARD, dl_hard_runs, select_pairs

SOLVERS = ("highs", "cpsat", "scip")

ONE = """
import json, sys, time
import medopt
from medopt.io.trec import read_qrels, read_run
metric, first, second, topic, solver, limit, qrels = sys.argv[1:8]
a, b = read_run(first).rankings[topic], read_run(second).rankings[topic]
judgments = read_qrels(qrels).get(topic, {})
for s in ("highs", "cpsat", "scip"):
    for m in ("AP@3", "Q(beta=1)@3"):
        medopt.med(m, ["d1", "d2", "d3"], ["d3", "d4"], {"d1": 1}, method="exact", solver=s)
started = time.perf_counter()
r = medopt.med(metric, a, b, judgments, method="exact", solver=None if solver == "default" else solver,
               time_limit=float(limit))
print(json.dumps(dict(seconds=time.perf_counter() - started, used=r.solver, certified=r.certified, value=r.value,
                      bound=r.upper_bound, details={k: v for k, v in r.details.items()
                                                    if isinstance(v, (int, float, str))})))
"""


def run(metric, first, second, topic, solver, limit, data) -> dict:
    out = subprocess.run([sys.executable, "-c", ONE, metric, str(first), str(second), topic, solver, str(limit),
                          str(data / "dl_hard-doc.qrels")], capture_output=True, text=True, timeout=limit * 3 + 120)
    row = dict(metric=metric, a=Path(first).stem, b=Path(second).stem, topic=topic, solver=solver, limit=limit)
    if out.returncode != 0:
        return dict(row, error=out.stderr[-500:])
    return dict(row, **json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv=None):
    parser = harness.parser(__doc__, data=DL_HARD, log="benchmarks/results/solver_comparison.jsonl")
    parser.add_argument("--metric", required=True)
    parser.add_argument("--topics", nargs="+", required=True)
    parser.add_argument("--pairs", type=int, default=10, help="of exact_depth's seeded pairs, the first N")
    parser.add_argument("--scan", type=float, default=None, metavar="SECONDS",
                        help="first the default solver at this limit; compare on the instances still open")
    parser.add_argument("--keep", type=int, default=1, help="with --scan: per topic, the N widest gaps")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=SOLVERS)
    args = parser.parse_args(argv)
    pairs = select_pairs(dl_hard_runs(args.data), 10)[: args.pairs]
    log = Path(args.log)
    log.parent.mkdir(parents=True, exist_ok=True)

    def write(row):
        with log.open("a") as stream:
            stream.write(json.dumps(dict(row, at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))) + "\n")
        print(json.dumps(row), flush=True)

    chosen = [(first, second, topic) for topic in args.topics for first, second in pairs]
    if args.scan is not None:
        scanned = []
        for first, second, topic in chosen:
            row = run(args.metric, first, second, topic, "default", args.scan, args.data)
            write(dict(row, scan=True))
            if not row.get("certified", True) and "bound" in row:
                scanned.append((row["bound"] - row["value"], first, second, topic))
        chosen = []
        for topic in args.topics:
            widest = sorted((s for s in scanned if s[3] == topic), key=lambda s: s[0], reverse=True)[: args.keep]
            chosen += [(first, second, topic) for _, first, second, _ in widest]
    for first, second, topic in chosen:
        for solver in args.solvers:
            write(run(args.metric, first, second, topic, solver, args.time_limit, args.data))


if __name__ == "__main__":
    main()
