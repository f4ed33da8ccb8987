"""Exact against brute force, at scale: MED and both ends of both ranges (SPEC 4, 7) for every
example metric of every registered family, on both solvers.

Instances are seeded random ones (medopt.synthetic.random_instances: graded 0..G with G = 1..2 mostly,
partially judged, lists of different lengths sharing documents, judged documents outside both
lists); a third carry a relevance limit ("at most" or "at least").  For each instance and solver:
the exact MED, the difference range's low and high ends and the score range's low and high ends
(of list A) are compared with enumeration over every assignment; an end counts as agreeing when
its value is within 1e-9 of the enumeration's and it is certified (SPEC 5).  Instances no
assignment satisfies (a limit) must be refused by both; they are counted apart.

Prints one row per metric and solver: instances checked, and per end the number that agree.
Any disagreement is printed in full and makes the exit status 1.

    python benchmarks/oracle.py                          # every example metric, 300 instances each
    python benchmarks/oracle.py --metrics AP@5 nDCG@5 --instances 1000
"""

from __future__ import annotations

import sys
import time

import numpy as np

import medopt
from medopt.errors import MedoptError
from medopt.core.instance import RelevanceLimit
from medopt.metrics import REGISTRY, parse_metric
from medopt.synthetic.random_instances import random_instance

import harness

ENDS = ("med", "high", "low", "score_high", "score_low")


def cases(seed: int, count: int, k: int | None):
    rng = np.random.default_rng(seed)
    for index in range(count):
        case = random_instance(rng, k=k, max_unjudged=6)
        limits = ()
        if index % 3 == 2:
            grade = int(rng.integers(1, case.max_grade + 1))
            limits = ((RelevanceLimit(grade=grade, high=int(rng.integers(0, 3))),) if rng.random() < 0.5
                      else (RelevanceLimit(grade=grade, low=int(rng.integers(1, 4))),))
        yield case, limits


def answers(metric, case, limits, **method) -> dict | None:
    """{end: (value, certified)}, or None when no assignment meets the limits."""
    kwargs = dict(max_grade=case.max_grade, limits=limits, **method)
    try:
        med = medopt.med(metric, case.a, case.b, case.judgments, **kwargs)
        ranged = medopt.difference_range(metric, case.a, case.b, case.judgments, **kwargs)
        score = medopt.score_range(metric, case.a, case.judgments, **kwargs)
    except MedoptError as error:
        if "no assignment satisfies" in str(error):
            return None
        raise
    return {"med": (med.value, med.certified), "high": (ranged.high, ranged.high_certified),
            "low": (ranged.low, ranged.low_certified), "score_high": (score.high, score.high_certified),
            "score_low": (score.low, score.low_certified)}


def check(metric_text: str, solver: str, count: int, seed: int) -> tuple[dict, int, list]:
    metric = parse_metric(metric_text)
    agree, refused, failures = dict.fromkeys(ENDS, 0), 0, []
    for case, limits in cases(seed, count, metric.cutoff):
        oracle = answers(metric, case, limits, method="enumerate")
        exact = answers(metric, case, limits, method="exact", solver=solver)
        if oracle is None or exact is None:
            refused += 1
            if (oracle is None) != (exact is None):
                failures.append((metric_text, solver, "refusal differs", case, limits))
            continue
        for end in ENDS:
            if abs(exact[end][0] - oracle[end][0]) <= 1e-9 and exact[end][1] and oracle[end][1]:
                agree[end] += 1
            else:
                failures.append((metric_text, solver, end, exact[end], oracle[end], case, limits))
    return agree, refused, failures


def main(argv=None) -> None:
    parser = harness.parser(__doc__, log="", fresh=True, seed=20261124)
    parser.add_argument("--metrics", nargs="+",
                        default=[e for family in sorted(REGISTRY) for e in REGISTRY[family].examples])
    parser.add_argument("--solvers", nargs="+", default=["highs", "cpsat"])
    parser.add_argument("--instances", type=int, default=300)
    args = parser.parse_args(argv)
    # a rerun with the same --log skips the (metric, solver) rows already there without a disagreement
    log = harness.Log(args.log, key=lambda r: (r["metric"], r["solver"], r.get("seed"), r.get("requested")),
                      fresh=args.fresh)
    print("| metric | solver | instances | refused by both (limits) | " + " | ".join(ENDS) + " | seconds |")
    print("|---|---|---|---|" + "---|" * len(ENDS) + "---|")
    all_failures = []
    for metric in args.metrics:
        for solver in args.solvers:
            done = log.done.get((metric, solver, args.seed, args.instances))
            if done is not None and not done["disagreements"]:
                print(f"| {metric} | {solver} | {done['instances']} | {done['refused']} | "
                      + " | ".join(f"{done['agree'][e]}" for e in ENDS) + f" | {done['seconds']:.1f} (logged) |")
                continue
            started = time.perf_counter()
            agree, refused, failures = check(metric, solver, args.instances, args.seed)
            checked = args.instances - refused
            log.write({"metric": metric, "solver": solver, "instances": checked, "refused": refused, "seed": args.seed,
                       "requested": args.instances,
                       "agree": agree, "disagreements": len(failures), "seconds": time.perf_counter() - started})
            print(f"| {metric} | {solver} | {checked} | {refused} | "
                  + " | ".join(f"{agree[e]}" for e in ENDS) + f" | {time.perf_counter() - started:.1f} |", flush=True)
            all_failures += failures
    log.close()
    for failure in all_failures:
        print("DISAGREES:", *failure)
    sys.exit(1 if all_failures else 0)


if __name__ == "__main__":
    main()
