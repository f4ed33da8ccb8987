"""The per-topic movement curves c_t(h) of a flip distance (their proofs: medopt.flip)."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from .. import api
from ..heuristics.closed_form import document_weights
from ..core.instance import RelevanceLimit, judged_count
from ..methods import is_dot_product
from ..core.result import TOLERANCE

# completions of one topic enumerated for an exact curve of a non-linear family (above: a bound only)
ENUMERATION_LIMIT = 50_000


class Topic:
    """One topic: its instance (the changeable documents unjudged), the reference, its movement curve.

    ``values[h]``: the largest movement reached with at most h changes (a completion re-scored, or the
    proved closed form's value); ``bounds[h]``: a proven upper bound on c_t(h).  Past the points
    computed: the values stay (a completion at distance <= h is one at distance <= h + 1) and the
    bound is the far end's (``complete``: the curve is constant from its last point)."""

    def __init__(self, topic, instance, changeable, reference, cost, sign):
        self.topic, self.instance, self.changeable, self.reference = topic, instance, changeable, reference
        self.cost, self.sign = cost, sign        # cost(doc, grade): distance of one document's grade
        self.reference_difference = self.difference(reference)
        self.values, self.bounds, self.witnesses = [0.0], [0.0], [dict(reference)]
        self.rebuild = None                      # h -> completion, for curves whose witnesses are made on demand
        self.kind, self.complete = "", False
        self.far_bound, self.far_value, self.far_witness = math.inf, 0.0, None

    def difference(self, assignment) -> float:
        score_a, score_b = self.instance.scores(assignment)
        return score_a - score_b

    def movement(self, assignment) -> float:
        return self.sign * (self.reference_difference - self.difference(assignment))

    def distance(self, assignment) -> int:
        return sum(self.cost(d, assignment.get(d, 0)) for d in self.changeable)

    @property
    def horizon(self) -> int:
        """The points past which the curve is known to be constant (or the largest distance)."""
        if self.complete:
            return len(self.values) - 1
        return len(self.changeable) * max(self.cost(d, g) for d in self.changeable[:1]
                                          for g in range(self.instance.max_grade + 1)) if self.changeable else 0

    def value(self, h: int) -> float:
        return self.values[min(h, len(self.values) - 1)]

    def bound(self, h: int) -> float:
        if h < len(self.bounds):
            return self.bounds[h]
        return self.bounds[-1] if self.complete else self.far_bound

    def witness(self, h: int) -> dict:
        if self.rebuild is not None:
            return self.rebuild(min(h, len(self.values) - 1))
        return self.witnesses[min(h, len(self.witnesses) - 1)]

    def offer(self, h: int, bound: float, assignment) -> None:
        """Point h of the curve: a completion reached (its movement re-scored here) and a proven bound
        on the movement with at most h changes."""
        while len(self.values) <= h:  # points not computed: the best one below, bounded by the far end
            self.values.append(self.values[-1])
            self.witnesses.append(self.witnesses[-1])
            self.bounds.append(self.far_bound)
        if assignment is not None and self.distance(assignment) <= h:
            moved = self.movement(assignment)
            for i in range(h, len(self.values)):
                if moved > self.values[i]:
                    self.values[i], self.witnesses[i] = moved, dict(assignment)
        self.bounds[h] = max(min(self.bounds[h], bound), self.values[h])


def cost_of(reference, distance: str):
    """cost(doc, grade): the distance of one document's grade from its reference (a function of the
    reference grade and the grade only)."""
    if distance == "grades":
        return lambda doc, grade: abs(grade - reference[doc])
    return lambda doc, grade: int(grade != reference[doc])


# ---------------------------------------------------------------------------
# curves


def separable_curve(topic: Topic) -> None:
    """The exact curve of a dot-product metric: a group knapsack over the documents (module docstring).
    best[c] is the largest movement at total cost exactly c over the documents seen; each document
    adds one of its options (a grade other than its reference: cost, movement) or none."""
    instance = topic.instance
    metric, grading = instance.metric, instance.grading
    weights_a, weights_b = document_weights(instance)
    items = []
    for doc in topic.changeable:
        w = weights_a.get(doc, 0.0) - weights_b.get(doc, 0.0)
        base = metric.unit_gain(topic.reference[doc], grading)
        options = [(topic.cost(doc, g), topic.sign * w * (base - metric.unit_gain(g, grading)), g)
                   for g in range(grading.max_grade + 1) if topic.cost(doc, g) > 0]
        options = [o for o in options if o[1] > 0]
        if options:
            items.append((doc, options))
    budget = sum(max(c for c, _, _ in options) for _, options in items)
    best = np.full(budget + 1, -np.inf)
    best[0] = 0.0
    choices = []
    for _, options in items:
        new, pick = best.copy(), np.full(budget + 1, -1, dtype=np.int64)
        for index, (c, move, _) in enumerate(options):
            shifted = np.full(budget + 1, -np.inf)
            shifted[c:] = best[:budget + 1 - c] + move
            better = shifted > new
            new[better], pick[better] = shifted[better], index
        best = new
        choices.append(pick)
    reached = np.maximum.accumulate(best)  # with at most h: the best over total costs <= h

    def rebuild(h: int) -> dict:
        cost = int(np.flatnonzero(best[: h + 1] == reached[h])[-1])
        assignment = dict(topic.reference)
        for (doc, options), pick in zip(reversed(items), reversed(choices)):
            index = int(pick[cost])
            if index >= 0:
                c, _, grade = options[index]
                assignment[doc] = grade
                cost -= c
        return assignment

    topic.values = [float(v) for v in reached]
    topic.bounds = list(topic.values)
    topic.rebuild, topic.kind, topic.complete = rebuild, "closed-form", True


# families whose score depends only on the rank of the first relevant document (module docstring):
# the score of a list whose first relevant document is at 0-based position p < n (at n: none, score 0)
FIRST_RELEVANT = {"RR": lambda p: 1.0 / (p + 1), "Success": lambda p: 1.0}


def first_relevant_curve(topic: Topic) -> None:
    """The exact curve of RR and Success: a scan over the states (p, q), the positions of the first
    relevant document in A and in B (n_A, n_B: none).

    Proof.  Under a completion X, M(A) depends only on p(X), the first position of A's counted ranks
    holding a relevant document (grade >= rel), and M(B) only on q(X); so the movement is a function
    mov(p, q).  X is in state (p, q) iff every document of N(p, q) = A[:p] u B[:q] is non-relevant and
    A[p] (p < n_A) and B[q] (q < n_B) are relevant.  A document's distance from the reference is its
    own cost(d, grade) and the distance adds over documents, so the fewest changes reaching (p, q) is
    cost(p, q) = sum_{d in N} cn(d) + sum_{d in {A[p], B[q]}} cr(d), with cn(d) (cr(d)) the least
    cost(d, g) over the grades g that are not (are) relevant; a document that may not change costs 0
    on its own side and cannot cross (infinite); a document required on both sides (A[p] in B[:q], B[q]
    in A[:p]) makes the state unreachable.  Every completion in state (p, q) is at distance >= cost(p, q),
    and the completion that sets each required document to its cheapest grade on its side (the others at
    the reference) is in state (p, q) at distance exactly cost(p, q).  So

        c_t(h) = max { mov(p, q) : cost(p, q) <= h },

    every point exact (its own bound).  The costs of all states at once: prefix sums of cn along A and
    along B, minus the documents counted twice (those of A[:p] that are in B[:q]: a 2-D prefix sum over
    the shared documents' position pairs)."""
    instance, sign = topic.instance, topic.sign
    metric, top = instance.metric, instance.max_grade
    value = FIRST_RELEVANT[metric.family]
    relevant = [metric.is_relevant(g) for g in range(top + 1)]
    changeable = set(topic.changeable)

    by_reference = {}  # a document's cost(d, g) depends on d only through its reference grade (cost_of)

    def sides(doc):
        """(cn, cr, grade reaching cn, grade reaching cr): the least cost to be non-relevant / relevant."""
        if doc not in changeable:
            fixed = metric.is_relevant(instance.judgments.get(doc, 0))
            return (math.inf, 0.0, None, None) if fixed else (0.0, math.inf, None, None)
        grade = topic.reference[doc]
        if grade not in by_reference:
            costs = [(topic.cost(doc, g), g) for g in range(top + 1)]
            off = min((c for c in costs if not relevant[c[1]]), default=(math.inf, None))
            on = min((c for c in costs if relevant[c[1]]), default=(math.inf, None))
            by_reference[grade] = (float(off[0]), float(on[0]), off[1], on[1])
        return by_reference[grade]

    lists = (tuple(instance.a), tuple(instance.b))
    info = {d: sides(d) for d in dict.fromkeys(lists[0] + lists[1])}
    first = [{}, {}]
    for side, ranking in enumerate(lists):
        for position, doc in enumerate(ranking):
            first[side].setdefault(doc, position)
    # the states reachable on a side stop at the first document that cannot be non-relevant
    ends = []
    for ranking in lists:
        end = next((i for i, d in enumerate(ranking) if math.isinf(info[d][0])), len(ranking))
        ends.append(end)
    end_a, end_b = ends
    shape = (end_a + 1, end_b + 1)
    prefix = [np.concatenate(([0.0], np.cumsum([info[d][0] for d in ranking[:end]])))
              for ranking, end in zip(lists, ends)]
    twice = np.zeros(shape)
    for doc, x in first[0].items():  # a shared document in A[:p] and B[:q] counted once
        y = first[1].get(doc)
        if y is not None and x < end_a and y < end_b and info[doc][0] > 0:
            twice[x + 1, y + 1] += info[doc][0]
    twice = twice.cumsum(axis=0).cumsum(axis=1)
    cost = prefix[0][:, None] + prefix[1][None, :] - twice
    n_a, n_b = len(lists[0]), len(lists[1])
    at_a = [lists[0][p] if p < n_a else None for p in range(end_a + 1)]
    at_b = [lists[1][q] if q < n_b else None for q in range(end_b + 1)]
    on_a = np.array([0.0 if d is None else info[d][1] for d in at_a])
    on_b = np.array([0.0 if d is None else info[d][1] for d in at_b])
    cost = cost + on_a[:, None] + on_b[None, :]
    for p, doc in enumerate(at_a):  # the same document at A[p] and B[q]: its cost once
        q = None if doc is None else first[1].get(doc)
        if q is not None and q <= end_b and at_b[q] == doc and math.isfinite(info[doc][1]):
            cost[p, q] -= info[doc][1]
    for p, doc in enumerate(at_a):  # A[p] required relevant and non-relevant (in A[:p] or B[:q])
        if doc is None:
            continue
        if first[0][doc] < p:
            cost[p, :] = math.inf
        q = first[1].get(doc)
        if q is not None:
            cost[p, q + 1:] = math.inf
    for q, doc in enumerate(at_b):
        if doc is None:
            continue
        if first[1][doc] < q:
            cost[:, q] = math.inf
        p = first[0].get(doc)
        if p is not None:
            cost[p + 1:, q] = math.inf
    score_a = np.array([value(p) if p < n_a else 0.0 for p in range(end_a + 1)])
    score_b = np.array([value(q) if q < n_b else 0.0 for q in range(end_b + 1)])
    movement = sign * (topic.reference_difference - (score_a[:, None] - score_b[None, :]))
    finite = np.isfinite(cost)
    levels = np.rint(cost[finite]).astype(np.int64)
    best = np.full(int(levels.max()) + 1 if levels.size else 1, -np.inf)
    np.maximum.at(best, levels, movement[finite])
    best[0] = max(best[0], 0.0)  # the reference itself (distance 0, movement 0)
    reached = np.maximum.accumulate(best)

    def rebuild(h: int) -> dict:
        assignment = dict(topic.reference)
        target = reached[h]
        if target <= 0.0:
            return assignment
        within = np.where(finite & (cost <= h + 0.5) & (movement >= target - TOLERANCE), cost, math.inf)
        p, q = (int(i) for i in np.unravel_index(np.argmin(within), within.shape))
        for doc in lists[0][:p] + lists[1][:q]:
            if doc in changeable and info[doc][2] is not None and relevant[assignment[doc]]:
                assignment[doc] = info[doc][2]
        for doc in (at_a[p], at_b[q]):
            if doc is not None and doc in changeable and not relevant[assignment[doc]]:
                assignment[doc] = info[doc][3]
        return assignment

    topic.values = [float(v) for v in reached]
    topic.bounds = list(topic.values)
    topic.rebuild, topic.kind, topic.complete = rebuild, "closed-form", True


def enumerated_curve(topic: Topic) -> None:
    """Every completion of the changeable documents re-scored: the exact curve, by brute force."""
    docs = topic.changeable
    best = {}
    for grades in itertools.product(range(topic.instance.max_grade + 1), repeat=len(docs)):
        assignment = dict(zip(docs, grades))
        h = topic.distance(assignment)
        moved = topic.movement(assignment)
        if h not in best or moved > best[h][0]:
            best[h] = (moved, assignment)
    running = (0.0, dict(topic.reference))
    topic.values, topic.bounds, topic.witnesses = [], [], []
    for h in range(max(best) + 1):
        if h in best and best[h][0] > running[0]:
            running = best[h]
        topic.values.append(running[0])
        topic.bounds.append(running[0])
        topic.witnesses.append(running[1])
    topic.kind, topic.complete = "enumerate", True


class LimitedCurve:
    """Points c_t(h) by the family's exact model under relevance limits (reference 0 on every unjudged
    document: module docstring), solved one h at a time.

    Document distance: the distance of X is n_1(X) = #(unjudged with grade >= 1), so "distance <= h" is
    the one limit #(grade >= 1) <= judged_1 + h.  Grade distance (G > 1): the distance is
    sum_g n_g(X) with n_g(X) = #(unjudged with grade >= g), n_1 >= n_2 >= ... >= n_G.  c_t(h) is the
    larger of c_t(h - 1) and the best X at distance exactly h; each such X meets the limits
    #(grade >= g) <= judged_g + n_g of its own split (n_1, ..., n_G) of h, and every X meeting a
    split's limits is at distance <= h.  So c_t(h) = max(c_t(h - 1), max over the splits of h into G
    non-increasing parts with n_1 <= the unjudged documents of the range end under the split's limits):
    exact, and every split's bound is proven."""

    def __init__(self, topic: Topic, solve, grades: bool):
        self.topic, self.solve = topic, solve
        self.levels = topic.instance.max_grade if grades else 1
        self.judged = [judged_count(topic.instance, g) for g in range(1, self.levels + 1)]
        self.most = len(topic.changeable) * self.levels  # the largest distance
        topic.kind = "exact"

    def splits(self, h: int):
        """(n_1, ..., n_G) non-increasing, summing to h, n_1 <= the changeable documents."""
        def parts(total, count, cap):
            if count == 0:
                if total == 0:
                    yield ()
                return
            for first in range(min(total, cap), -1, -1):
                if first * count < total:
                    break
                for rest in parts(total - first, count - 1, first):
                    yield (first, *rest)
        yield from parts(h, self.levels, len(self.topic.changeable))

    def extend(self, h: int, deadline) -> bool:
        """Compute point h unless the curve is known there; False when the time ran out first."""
        topic = self.topic
        if topic.complete or (h < len(topic.values) and topic.bounds[h] - topic.values[h] <= TOLERANCE):
            return True
        if h >= self.most or topic.value(h - 1) >= topic.far_bound - TOLERANCE:
            # every document at its farthest, or the far end reached: the far end from here on
            while len(topic.values) <= h:
                topic.offer(len(topic.values), topic.far_bound, None)
            topic.bounds[h] = max(min(topic.bounds[h], topic.far_bound), topic.values[h])
            topic.values, topic.bounds = topic.values[: h + 1], topic.bounds[: h + 1]
            topic.witnesses = topic.witnesses[: h + 1]
            topic.complete = True
            return True
        best = topic.bound(h - 1)
        for split in self.splits(h):
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left <= 0:
                return False  # the point's bound stays the far end's
            limits = tuple(RelevanceLimit(g, 0, judged + n) for g, (judged, n) in
                           enumerate(zip(self.judged, split), start=1))
            result = self.solve(limits=limits, time_limit=left)
            _, end_bound, assignment = end_of(result, topic.sign)
            topic.offer(h, topic.far_bound, assignment)
            best = max(best, topic.sign * (topic.reference_difference - end_bound))
        topic.offer(h, best, None)
        return True


def end_of(result, sign: int):
    """The end of a difference range against a reference of sign ``sign`` (the low end for a positive
    reference): its value, proven bound and completion."""
    if sign > 0:
        return result.low, result.low_bound, result.low_assignment
    return result.high, result.high_bound, result.high_assignment


def solver_for(metric, curve: Topic):
    """The topic's difference range (SPEC 7) under side limits, by the family's exact method."""
    instance = curve.instance

    def solve(*, limits, time_limit):
        return api.difference_range(metric, instance.full_a, instance.full_b, dict(instance.judgments),
                                    max_grade=instance.max_grade, limits=limits, time_limit=time_limit)
    return solve


def has_closed_form(metric) -> bool:
    """Whether the metric's curves are computed whole, exactly, without a model (dot products, RR,
    Success): their last point is then the topic's far end against the reference."""
    return is_dot_product(metric) or metric.family in FIRST_RELEVANT


def fill_curve(curve: Topic, metric, distance: str, scope: str, solve, lazy: dict) -> None:
    """Choose how the topic's curve is computed (module docstring) and compute what is computed at once."""
    if is_dot_product(metric):
        separable_curve(curve)
        return
    if metric.family in FIRST_RELEVANT:
        first_relevant_curve(curve)
        return
    zero_reference = scope == "unjudged" and all(g == 0 for g in curve.reference.values())
    if zero_reference:
        lazy[curve.topic] = LimitedCurve(curve, solve, grades=distance == "grades" and curve.instance.max_grade > 1)
    elif (curve.instance.max_grade + 1) ** len(curve.changeable) <= ENUMERATION_LIMIT:
        enumerated_curve(curve)
        return
    else:
        curve.kind = "bound"  # the far end only: its completion, and its bound for every h >= 1
    if curve.far_witness is not None:
        curve.offer(curve.distance(curve.far_witness), curve.far_bound, curve.far_witness)
    if curve.kind == "bound":
        curve.bounds = [0.0] + [curve.far_bound] * (len(curve.values) - 1)
        if len(curve.values) == 1:
            curve.offer(1, curve.far_bound, None)
        curve.complete = True
