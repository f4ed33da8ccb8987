"""A proven floor on judging: the fewest judgments with which ANY policy, even one that knows every
grade, can have k of the pairs decided (SPEC 7), on the judging simulation's terms
(``medopt.judging_simulation``: the qrels are the assessor, a document they do not list is grade 0).

**Setting.**  A pair p = (A, B), a topic t, the true grades g* (the qrels; unlisted: 0), the start
judgments S0 (judged for free, at their true grades) and a judged set J >= S0.  For a grade vector x
of the documents of the two cut lists L_t (the metric's top k of A and of B) and a set J_out of
judged documents outside L_t, D_t(x; J_out) = M(A) - M(B) scored by the project's evaluator
(``Instance.differences``) with J_out at its true grades.  The difference range's low end is
low_t(J) = min over x of D_t(x; J_out(J)), x fixed at g* on J n L_t and free in {0..G} on
W_t = L_t \\ J.  The pair is decided when sum_t low_t > 0 or sum_t high_t < 0; high_t is the low end
of -D_t, so everything below is done for both signs s = +1, -1 of s * D_t.

**The metrics (FAMILIES).**  For each of them, and for fixed x, s * D_t = N(x) / Z(x, J_out) with N
not depending on J_out and Z > 0 non-decreasing in J_out whenever N != 0: nDCG (N = s (DCG_A - DCG_B),
Z = IDCG over the collection), AP and recall (N = s * the difference of the sums, Z = R, or min(k, R)
for AP(norm=min)), and the families whose score does not depend on J_out at all (Z = 1).  (When Z = 0
no document of L_t is relevant under x, so N = 0 and both scores are 0, SPEC 3.)  Other families
(Q, whose numerator holds the ideal gain; Rprec, whose cut depends on R) raise MedoptError.

**Step 1: J_out is between two extremes.**  J_out(J) contains S0's documents outside L_t, and, where
it matters, only documents of the qrels (an unlisted document is grade 0 and adds nothing to Z): so
Z(x, S0_out) <= Z(x, J_out) <= Z(x, Q_out), Q_out = every qrels document outside L_t.  N / Z with a
fixed sign of N is monotone in Z, so s D_t(x; J_out) <= E_s(x) := max(s D_t(x; S0_out),
s D_t(x; Q_out)), whatever J_out any policy produced (judging documents outside the lists included).

**Step 2: one deviation.**  For d in W_t and a grade v in {0..G}, x = g* with d := v is a completion
the range minimises over, so s low_t(J) <= E_s(g*[d := v]); also s low_t(J) <= E_s(g*) (no deviation).
With P_t = E_s(g*) and delta_t(d) = P_t - min_v E_s(g*[d := v]) (>= 0, v = g*(d) being one choice):
s low_t(J) <= P_t - max_{d in W_t} delta_t(d) (max over no document: 0).  Decided on side s therefore
implies sum_t max_{d in W_t} delta_t(d) < sum_t P_t.

**Step 3: the fewest judgments.**  With theta_t = max_{d in W_t} delta_t(d), a judged set J satisfies
that condition iff every document d with delta_t(d) > theta_t is judged, for thresholds with
sum_t theta_t < sum_t P_t.  For k pairs at once, a document of a topic shared by several pairs being
judged once, the floor is the optimum of the MILP (``floor``): binary j_{t,d} (judged, 1 for S0's
documents), binary z_{p,s} (pair p counted decided on side s), continuous theta_{p,s,t} >= 0 with
theta_{p,s,t} >= delta_{p,s,t}(d) (1 - j_{t,d}), sum_t theta_{p,s,t} <= sum_t P_{p,s,t} + eta +
M_{p,s} (1 - z_{p,s}), z_{p,+} + z_{p,-} <= 1, sum z >= k; minimise the judgments beyond S0.  Every
judged set that decides k pairs gives a feasible point (theta at its max, z at the decided sides),
so the optimum is at most any policy's count.  The strict "<" is relaxed to "<= + eta", eta = 1e-9
(covering the rounding of P and delta): a weaker condition, so the floor can only be smaller (safe).
When HiGHS stops at its time limit the floor is its proven dual bound, rounded up (the judgments are
integers), and ``optimal`` is False.

**Remarks.**  The brief's "assume Delta* > 0 (else negate)" misses a case: with only part of the
qrels judged outside the lists, the true completion's mean can have the other sign than Delta*, so a
pair can be decided on the side Delta* does not predict; both sides are kept.  The floor is valid for
the simulation's policies, whose low end is a proven bound at most the exact one (decided there implies
decided exactly).  It is a relaxation: one deviation per topic, so the true minimum may be larger.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .errors import MedoptError
from .instance import build_instance
from .metrics import parse_metric

FAMILIES = ("nDCG", "AP", "R", "P", "DCG", "SDCG", "RR", "SP", "SSP", "Success", "SN_DCG", "SN_AP", "ERR", "RBP")
ETA = 1e-9  # the relaxation of "sum theta < sum P" (step 3): only weakens the condition
SIGNS = (1, -1)


@dataclass
class Deviations:
    """One pair on one topic, one side s: P_t and delta_t(d) for the documents d that may be unjudged
    (the lists' documents outside S0), zeros left out."""

    top: float
    deltas: dict


@dataclass
class Floor:
    """The floor for ``k`` pairs: ``judgments`` (proven: no policy decides k pairs with fewer, beyond
    the start), ``incumbent`` (HiGHS's best solution, None if none), ``optimal`` (the two agree),
    ``sides`` (pair -> +1 / -1 decided in the incumbent), ``seconds``, ``status``."""

    k: int
    judgments: int
    incumbent: int | None
    optimal: bool
    seconds: float
    status: str
    sides: dict = field(default_factory=dict)


def check_metric(metric):
    metric = parse_metric(metric)
    if metric.family not in FAMILIES:
        raise MedoptError(f"the judging floor takes {', '.join(FAMILIES)} (a difference N / Z with Z "
                          f"non-decreasing in the judgments outside the lists), not {metric}")
    return metric


def deviations(metric, a: Sequence[str], b: Sequence[str], truth: Mapping[str, int],
               start: Mapping[str, int] | None = None, *, max_grade: int) -> dict[int, Deviations]:
    """{s: Deviations} for s = +1 (the low end must rise above 0) and -1 (the high end below 0), one
    topic: ``truth`` the assessor's grades (unlisted: 0), ``start`` the judgments given for free."""
    metric = check_metric(metric)
    start = dict(start or {})
    lists = build_instance(metric, a, b, {}, max_grade=max_grade)
    in_list = set(lists.a) | set(lists.b)
    outside_start = {d: g for d, g in start.items() if d not in in_list}
    outside_all = dict(outside_start, **{d: g for d, g in truth.items() if d not in in_list})
    extremes = [build_instance(metric, a, b, judged, max_grade=max_grade) for judged in (outside_start, outside_all)]
    grades = {d: min(truth.get(d, 0), max_grade) for d in lists.unjudged}

    def best(assignment, sign):  # E_s: the larger of the two extremes (step 1)
        return max(sign * extreme.differences(assignment)["a"] for extreme in extremes)

    free = [d for d in lists.unjudged if d not in start]
    result = {}
    for sign in SIGNS:
        top = best(grades, sign)
        deltas = {}
        for doc in free:
            lowest = min(best(dict(grades, **{doc: v}), sign) for v in range(max_grade + 1))
            if top - lowest > 0:
                deltas[doc] = top - lowest
        result[sign] = Deviations(top, deltas)
    return result


def pair_deviations(metric, rankings: Mapping[str, Mapping[str, Sequence[str]]], pairs, topics: Sequence[str],
                    qrels: Mapping[str, Mapping[str, int]], start: Mapping[str, Mapping[str, int]] | None = None,
                    *, max_grade: int | None = None) -> dict:
    """{(pair, topic): {s: Deviations}} for every pair and topic (``deviations``)."""
    metric = check_metric(metric)
    if max_grade is None:
        max_grade = max([1, *(g for t in topics for g in qrels.get(t, {}).values())])
    start = start or {}
    return {(pair, t): deviations(metric, rankings[pair[0]].get(t, ()), rankings[pair[1]].get(t, ()),
                                  qrels.get(t, {}), start.get(t, {}), max_grade=max_grade)
            for pair in pairs for t in topics}


def floor(metric, rankings: Mapping[str, Mapping[str, Sequence[str]]], pairs, topics: Sequence[str],
          qrels: Mapping[str, Mapping[str, int]], start: Mapping[str, Mapping[str, int]] | None = None, *,
          k: int, max_grade: int | None = None, time_limit: float = 60.0, table: dict | None = None) -> Floor:
    """The floor on the judgments beyond ``start`` with which k of ``pairs`` are decided (module
    docstring, step 3).  ``table``: ``pair_deviations``'s answer, when already computed."""
    pairs = [tuple(p) for p in pairs]
    if not 0 <= k <= len(pairs):
        raise MedoptError(f"k must be between 0 and the {len(pairs)} pairs, got {k!r}")
    table = table if table is not None else pair_deviations(metric, rankings, pairs, topics, qrels, start,
                                                            max_grade=max_grade)
    started = time.perf_counter()
    if k == 0:
        return Floor(0, 0, 0, True, 0.0, "k = 0")
    docs = sorted({(t, d) for (_, t), sides in table.items() for dev in sides.values() for d in dev.deltas})
    column = {key: i for i, key in enumerate(docs)}
    sides = [(p, s) for p in pairs for s in SIGNS]
    n_docs, n_sides = len(docs), len(sides)
    thetas = {(p, s, t): n_docs + n_sides + i for i, (p, s, t) in
              enumerate((p, s, t) for p, s in sides for t in topics)}
    n = n_docs + n_sides + len(thetas)
    rows, lower, upper = [], [], []

    def add(coefficients: dict, low: float, high: float) -> None:
        rows.append(coefficients)
        lower.append(low)
        upper.append(high)

    for index, (p, s) in enumerate(sides):
        total = sum(table[p, t][s].top for t in topics)
        worst = sum(max(table[p, t][s].deltas.values(), default=0.0) for t in topics)
        big = max(0.0, worst - total) + 1.0
        for t in topics:
            theta = thetas[p, s, t]
            for d, delta in table[p, t][s].deltas.items():  # theta + delta j >= delta
                add({theta: 1.0, column[t, d]: delta}, delta, math.inf)
        # sum theta + M z <= sum P + eta + M
        add({**{thetas[p, s, t]: 1.0 for t in topics}, n_docs + index: big}, -math.inf, total + ETA + big)
    for i, p in enumerate(pairs):
        add({n_docs + 2 * i: 1.0, n_docs + 2 * i + 1: 1.0}, -math.inf, 1.0)
    add({n_docs + i: 1.0 for i in range(n_sides)}, k, math.inf)
    return _solve(n, n_docs, n_sides, rows, lower, upper, sides, k, time_limit, started)


def _solve(n, n_docs, n_sides, rows, lower, upper, sides, k, time_limit, started) -> Floor:
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import lil_matrix

    matrix = lil_matrix((len(rows), n))
    for r, coefficients in enumerate(rows):
        for c, value in coefficients.items():
            matrix[r, c] = value
    cost = np.zeros(n)
    cost[:n_docs] = 1.0
    integral = np.zeros(n)
    integral[:n_docs + n_sides] = 1
    upper_bounds = np.full(n, np.inf)
    upper_bounds[:n_docs + n_sides] = 1.0
    answer = milp(cost, constraints=LinearConstraint(matrix.tocsr(), lower, upper), integrality=integral,
                  bounds=Bounds(np.zeros(n), upper_bounds),
                  options={"time_limit": time_limit, "mip_rel_gap": 0.0, "disp": False})
    seconds = time.perf_counter() - started
    if answer.status == 2:  # infeasible: fewer than k pairs can be decided by any judging
        return Floor(k, math.inf, None, True, seconds, "infeasible: fewer than k pairs can ever be decided")
    dual = getattr(answer, "mip_dual_bound", None)
    if answer.x is None:
        found, chosen = None, {}
    else:
        found = int(round(answer.x[:n_docs].sum()))
        chosen = {p: s for i, (p, s) in enumerate(sides) if answer.x[n_docs + i] > 0.5}
    if dual is not None and math.isfinite(dual):  # proven, also when the time limit stopped HiGHS
        bound = max(0, math.ceil(dual - 1e-6))
    else:
        bound = found if answer.status == 0 else 0
    return Floor(k, bound, found, answer.status == 0 and bound == found, seconds, answer.message, chosen)
