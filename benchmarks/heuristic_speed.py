"""Seconds of the AP heuristics (greedy, tabu) on notebook 05's workloads and at depth 1000 (docs/explanation/benchmarks.md).

Three workloads: 300 random instances of depth 3-8 (``random_instances(77, 300, max_grade=1)``) and,
when the DL-HARD folder (``--data``, harness.DL_HARD by default) is there, AP@50 and AP@100 of two run pairs on its first six judged topics
with the qrels, and AP at trec_eval's depth (all 1000 ranks; greedy only, the exact solver's seed) of
the same pairs and topics.  Prints each method's seconds per workload, the sum of its values and a
digest of its answers (values and the documents made relevant), which must not change between two
versions of the code.

    .venv/bin/python benchmarks/heuristic_speed.py [--data DL-HARD folder] [--log FILE]
"""

from __future__ import annotations

import hashlib
import itertools
import time
from pathlib import Path

import medopt
from medopt.io.trec import read_qrels, read_run
from medopt.synthetic.random_instances import random_instances

import harness

METHODS = ("greedy", "tabu")
RUNS = ("bm25", "bm25+rm3", "bm25+bert-mp", "bm25+t5-mp(zs)")


def random_workload():
    for case in random_instances(77, 300, max_grade=1):
        yield f"AP@{case.k}", case.a, case.b, case.judgments


def dl_hard_workload(data: Path, metrics):
    runs = {name: read_run(data / "baselines" / "doc" / f"{name}.run") for name in RUNS}
    qrels = read_qrels(data / "dl_hard-doc.qrels")
    topics = sorted(set(runs[RUNS[0]].rankings) & set(qrels))[:6]
    for metric, ((x, y), topic) in itertools.product(metrics, itertools.product(((RUNS[0], RUNS[2]), (RUNS[1], RUNS[3])),
                                                                                 topics)):
        yield metric, runs[x].rankings[topic], runs[y].rankings[topic], qrels[topic]


def main(argv=None) -> None:
    parser = harness.parser(__doc__, data=harness.DL_HARD, log="")
    args = parser.parse_args(argv)
    log = harness.Log(args.log, key=lambda r: (r["workload"], r["method"]))
    workloads = {"random, depth 3-8": (list(random_workload()), METHODS)}
    if (args.data / "dl_hard-doc.qrels").is_file():
        workloads["DL-HARD AP@50, AP@100"] = (list(dl_hard_workload(args.data, ("AP@50", "AP@100"))), METHODS)
        workloads["DL-HARD AP, depth 1000"] = (list(dl_hard_workload(args.data, ("AP",))), ("greedy",))
    print(f"{'workload':24s} {'method':7s} {'instances':>9s} {'seconds':>8s}  sum of values, digest")
    for name, (cases, methods) in workloads.items():
        for method in methods:
            answers = []
            started = time.perf_counter()
            for metric, a, b, judged in cases:
                result = medopt.med(metric, a, b, judged, max_grade=1, method=method)
                answers.append((result.value, sorted(d for d, g in result.assignment.items() if g)))
            seconds = time.perf_counter() - started
            digest = hashlib.md5(repr(answers).encode()).hexdigest()[:12]
            print(f"{name:24s} {method:7s} {len(cases):9d} {seconds:8.2f}  {sum(v for v, _ in answers)!r}, {digest}")
            log.write({"workload": name, "method": method, "instances": len(cases), "seconds": seconds,
                       "sum_of_values": sum(v for v, _ in answers), "digest": digest})
    log.close()


if __name__ == "__main__":
    main()
