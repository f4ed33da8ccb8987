"""The enumeration oracle's cost per assignment (docs/explanation/benchmarks.md, the test suite's time).

Two fixed pairs of rankings of depth 10, three documents judged: with G = 1 (12 unjudged documents,
4,096 assignments) for the binary metrics and G = 2 (11 unjudged documents, 177,147 assignments) for
the graded ones.  Prints, per metric, the assignments, the seconds of ``enumerate_directions`` and
the microseconds per assignment, and each direction's maximum (which must not change between two
versions of the code).

    .venv/bin/python benchmarks/enumeration_speed.py
"""

from __future__ import annotations

import time

import medopt
from medopt.exact.enumeration import enumerate_directions

import harness

BINARY = ([f"d{i}" for i in range(12)], [f"d{i}" for i in (3, 1, 13, 14, 0, 5, 15, 16, 7, 17, 18, 2)])
GRADED = ([f"d{i}" for i in range(10)], [f"d{i}" for i in (3, 1, 13, 14, 0, 5, 15, 7, 2, 9)])
JUDGED = {"d0": 1, "d5": 0, "d17": 2}
METRICS = (("AP@10", 1), ("SSP@10", 1), ("R@10", 1), ("P@10", 1), ("SN_AP@10", 1), ("nDCG@10", 2),
           ("RBP(p=0.8)", 2), ("ERR@10", 2), ("Q@10", 2), ("SN_DCG@10", 2))


def main(argv=None) -> None:
    args = harness.parser(__doc__, log="").parse_args(argv)
    log = harness.Log(args.log, key=lambda record: record["metric"])
    print(f"{'metric':12s} {'assignments':>11s} {'seconds':>8s} {'us each':>8s}  maximum a, maximum b")
    for name, top in METRICS:
        a, b = BINARY if top == 1 else GRADED
        instance = medopt.build_instance(name, a, b, JUDGED, max_grade=top)
        started = time.perf_counter()
        best, _, details = enumerate_directions(instance, max_assignments=10 ** 7)
        seconds = time.perf_counter() - started
        count = details["assignments"]
        print(f"{name:12s} {count:11,d} {seconds:8.2f} {1e6 * seconds / count:8.1f}  "
              f"{best['a'][0]!r}, {best['b'][0]!r}")
        log.write({"metric": name, "assignments": count, "seconds": seconds, "maximum_a": float(best["a"][0]),
                   "maximum_b": float(best["b"][0])})
    log.close()


if __name__ == "__main__":
    main()
