"""Brute force over every assignment of grades 0..G to the unjudged documents.

The oracle every exact method is tested against: it shares nothing with the
models but the metric evaluators.  Only unjudged documents in the top k of
either list are enumerated: a deeper document does not enter either score, and
making it relevant could only raise R (or the ideal DCG), which scales both
scores of a recall-based metric down together and cannot widen the gap.

Each assignment's difference is the evaluator's: ``Metric.score`` of each list, through
``Instance.differences_of``.  A list's score is asked of the evaluator once for each value of what it
can read (``ListScores``), so an assignment that changes only documents outside a list, or, for a
recall-based metric, swaps grades between them, costs two lookups instead of two evaluations.

Size limit: at most ``max_assignments`` (default 250,000) assignments, i.e.
(G + 1) ** n for n unjudged documents; larger instances raise TooLargeError.
With ``time_limit`` (seconds) the search stops when it is up: the best assignment
found so far is returned with the trivial bound and status ``timeout`` (never
certified).
"""

from __future__ import annotations

import itertools
import math
import operator
import time

from ..core.bounds import trivial_bound
from ..errors import MedoptError, TooLargeError
from ..core.instance import Instance
from ..core.result import End, MedResult, RangeResult, certify, certify_range

DEFAULT_MAX_ASSIGNMENTS = 250_000


def enumerate_directions(instance: Instance, *, max_assignments: int = DEFAULT_MAX_ASSIGNMENTS,
                         time_limit: float | None = None) -> tuple[dict, bool, dict]:
    """Every assignment tried: ({direction: (its best difference, an assignment reaching it)},
    whether time ran out first, details)."""
    started = time.perf_counter()
    deadline = None if time_limit is None else started + time_limit
    docs = instance.unjudged
    grades = range(instance.max_grade + 1)
    count = len(grades) ** len(docs)
    if count > max_assignments:
        raise TooLargeError(
            f"method 'enumerate' would try {len(grades)}^{len(docs)} = {count:,} assignments of "
            f"{len(docs)} unjudged documents, above its limit of {max_assignments:,}; use method='exact'")
    best, tried, timed_out = {}, 0, False
    collection = dict(instance.judgments)  # holds the assignment last scored by the evaluator
    score_a, score_b = ListScores(instance, instance.a, collection), ListScores(instance, instance.b, collection)
    for values in itertools.product(grades, repeat=len(docs)):
        tried += 1
        if deadline is not None and not tried % 256 and time.perf_counter() > deadline:
            timed_out = True
            break
        if instance.limits and not instance.satisfies_limits(dict(zip(docs, values))):
            continue
        for direction, value in instance.differences_of(score_a(values), score_b(values)).items():
            if direction not in best or value > best[direction][0]:
                best[direction] = (value, dict(zip(docs, values)))
    if not best and not timed_out:
        raise MedoptError("no assignment satisfies the relevance limits")
    details = {"assignments": count} if not timed_out else {"assignments": count, "tried": tried - 1}
    return best, timed_out, details


class ListScores:
    """One list's score under each assignment of the unjudged documents (a tuple of grades, in the
    order of ``instance.unjudged``), asked of the evaluator once for each value of what it reads.

    What a score reads (``Metric.score``'s contract, metrics/base.py): the grades of the list's
    documents and, for a recall-based metric, the collection's grades, through R and the ideal gain
    profile, that is through how many documents take each grade; no metric tells unranked documents
    apart (``tests/core/test_registry.py`` checks that a metric not declared recall-based ignores every
    grade outside its list).  The judged grades are fixed, so the key is the grades assigned to the
    list's unjudged documents and, for a recall-based metric, how many unjudged documents take each
    grade.  Two assignments with one key give the evaluator collections that agree on all it reads,
    so the score remembered is the score the evaluator returns.  ``collection`` (the judgments, shared
    by the two lists) is brought up to the assignment before each evaluation."""

    def __init__(self, instance: Instance, ranking, collection: dict):
        self.metric, self.grading, self.ranking, self.collection = instance.metric, instance.grading, ranking, collection
        self.docs = instance.unjudged
        listed = set(ranking)
        positions = [i for i, doc in enumerate(self.docs) if doc in listed]
        self.listed = operator.itemgetter(*positions) if positions else (lambda values: ())
        self.counted = tuple(range(instance.max_grade + 1)) if instance.metric.recall_based else ()
        self.scores: dict = {}

    def __call__(self, values: tuple) -> float:
        key = self.listed(values)
        if self.counted:
            key = (key, tuple(map(values.count, self.counted)))
        score = self.scores.get(key)
        if score is None:
            self.collection.update(zip(self.docs, values))
            score = self.scores[key] = self.metric.score(self.ranking, self.collection, self.grading)
        return score


def enumerate_med(instance: Instance, *, max_assignments: int = DEFAULT_MAX_ASSIGNMENTS,
                  time_limit: float | None = None) -> MedResult:
    started = time.perf_counter()
    best, timed_out, details = enumerate_directions(instance, max_assignments=max_assignments, time_limit=time_limit)
    if not best:  # time ran out before any assignment met the limits
        best = {"a": (None, {d: 0 for d in instance.unjudged})}
    direction = max(best, key=lambda d: -math.inf if best[d][0] is None else best[d][0])
    value, assignment = best[direction]
    if timed_out:
        return certify(instance, assignment, direction, upper_bound=trivial_bound(instance), status="timeout",
                       method="enumerate", solver=None, started=started, claimed=value, details=details)
    return certify(instance, assignment, direction, upper_bound=value, status="optimal",
                   method="enumerate", solver=None, started=started, claimed=value, details=details)


def enumerate_range(instance: Instance, *, max_assignments: int = DEFAULT_MAX_ASSIGNMENTS,
                    time_limit: float | None = None) -> RangeResult:
    """Both ends of the difference range by brute force (SPEC 7); with time up, the best found in
    each direction under the trivial bound, uncertified."""
    started = time.perf_counter()
    best, timed_out, details = enumerate_directions(instance, max_assignments=max_assignments, time_limit=time_limit)
    zero = {d: 0 for d in instance.unjudged}
    ends = {}
    for direction in ("a", "b"):
        value, assignment = best.get(direction, (None, zero))
        ends[direction] = End(assignment, trivial_bound(instance) if timed_out else value,
                              "timeout" if timed_out else "optimal", value)
    return certify_range(instance, ends, method="enumerate", solver=None, started=started, details=details)
