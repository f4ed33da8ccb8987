"""Tan & Clarke's brute force for MED-ERR (Section V): a lower bound, exact in a stated case.

For direction a (A the better list): free documents take the top grade G when
they are in A's top k only and 0 when in B's only; bound documents (unjudged, in
both lists' top k) take G or 0, trying every combination of at most ``p`` of
them at G, among the bound documents down to rank ``depth`` of A (deeper ones
stay at 0).  Direction b is the mirror image.  The best of both is returned.

Why it is exact when every bound document is tried (at most ``p`` of them, all
within ``depth``): ERR of one list is linear in the stopping probability c_d of
each single document (it appears once in each list), so the difference is linear
in c_d and some optimum puts c_d at an end of its range, gain(0) = 0 or
gain(G); and ERR(X) = ... + reach_i (c_i / i + (1 - c_i) T) with T <= 1/(i + 1)
the ERR of the rest from rank i + 1 on, so ERR(X) rises with c_i: a free document
is best at G in the better list and at 0 in the worse one.  So trying every
subset of bound documents covers an optimum; the value is then also a proven
upper bound (reported as such; the status stays ``heuristic``).

Evaluation: let P[i] be the reach of (0-based) rank i and U[i] the sum of the
contributions of ranks < i under the base gains.  When the base-0 documents at
ranks s_1 < ... < s_m take gain g, ranks between s_j and s_{j+1} keep their
contributions scaled by (1 - g)^j, and rank s_j adds (1 - g)^(j-1) P[s_j] g / (s_j + 1):
O(m) per combination instead of O(k).  Answers are re-scored independently by
:func:`certify`.
"""

from __future__ import annotations

import itertools
import time

from ..errors import MedoptError
from ..core.instance import Instance
from ..core.result import MedResult, certify
from ..core.bounds import trivial_bound

DEFAULT_P = 5
DEFAULT_DEPTH = 30


class CascadeList:
    """Base reach and prefix sums of one list's ERR contributions, for O(m) re-evaluation."""

    def __init__(self, gains: list):
        self.reach = []                 # P[i] = prod_{j < i} (1 - c_j)
        self.prefix = [0.0]             # U[i] = sum_{j < i} P[j] c_j / (j + 1)
        reach = 1.0
        for index, gain in enumerate(gains):
            self.reach.append(reach)
            self.prefix.append(self.prefix[-1] + reach * gain / (index + 1))
            reach *= 1.0 - gain

    def err_with(self, positions, gain: float) -> float:
        """ERR when the base-0 documents at sorted ``positions`` take ``gain``."""
        total, factor, start = 0.0, 1.0, 0
        for position in positions:
            total += factor * (self.prefix[position] - self.prefix[start])
            total += factor * self.reach[position] * gain / (position + 1)
            factor *= 1.0 - gain
            start = position + 1
        return total + factor * (self.prefix[-1] - self.prefix[start])


def _integer(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise MedoptError(f"tc-err: {name} must be an integer >= {low}, got {value!r}")
    return value


def tc_err(instance: Instance, *, p: int = DEFAULT_P, depth: int = DEFAULT_DEPTH,
           time_limit: float | None = None) -> MedResult:
    """With ``time_limit`` (seconds) the search stops when it is up (``details["timed_out"]``)."""
    started = time.perf_counter()
    deadline = None if time_limit is None else started + time_limit
    timed_out = False
    metric, grading = instance.metric, instance.grading
    _integer("p", p, 0)
    _integer("depth", depth, 1)
    top_grade = grading.max_grade
    top_gain = metric.gain(top_grade, grading)
    bound_docs = set(instance.bound_docs)
    best, exhaustive, tried = None, True, 0
    for direction in ("a", "b"):
        better, worse = (instance.a, instance.b) if direction == "a" else (instance.b, instance.a)
        in_better = set(better)
        base = {d: (top_grade if d in in_better else 0) for d in instance.free_docs}
        base.update({d: 0 for d in bound_docs})
        grades = instance.collection(base)
        lists = [CascadeList([metric.gain(grades.get(d, 0), grading) for d in ranking]) for ranking in (better, worse)]
        rank_worse = {d: i for i, d in enumerate(worse)}
        candidates = [(i, d) for i, d in enumerate(better[:depth]) if d in bound_docs]
        exhaustive &= len(candidates) == len(bound_docs) and len(bound_docs) <= p
        for size in range(min(p, len(candidates)) + 1):
            for combination in itertools.combinations(candidates, size):
                if size and deadline is not None and not tried % 256 and time.perf_counter() > deadline:
                    timed_out = True  # the time limit: the best combination so far stands
                    break
                positions_better = [i for i, _ in combination]
                positions_worse = sorted(rank_worse[d] for _, d in combination)
                value = lists[0].err_with(positions_better, top_gain) - lists[1].err_with(positions_worse, top_gain)
                tried += 1
                if best is None or value > best[0]:
                    best = (value, direction, base, [d for _, d in combination])
            if timed_out:
                break
    exhaustive &= not timed_out
    value, direction, base, chosen = best
    assignment = dict(base)
    assignment.update({d: top_grade for d in chosen})
    proven = exhaustive and 0.0 <= top_gain <= 1.0
    bound = value if proven else trivial_bound(instance)
    return certify(instance, assignment, direction, upper_bound=bound, status="heuristic", method="tc-err",
                   solver=None, started=started, claimed=value,
                   details={"combinations": tried, "exhaustive": proven, "p": p, "depth": depth,
                            "timed_out": timed_out})
