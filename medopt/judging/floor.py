"""A proven floor on judging: the fewest judgments with which ANY policy, even one that knows every
grade, can have k of the pairs decided (SPEC 7), on the judging simulation's terms
(``medopt.judging.simulation``: the qrels are the assessor, a document they do not list is grade 0).

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

**Step 1b: a tighter low extreme.**  Let O be the qrels' relevant documents (grade > 0) outside L_t
and outside S0 that lie in the other compared pairs' lists on t.  Once every document of O is judged,
J_out's relevant documents contain S0_out + O, so the same argument gives s D_t(x; J_out) <= E1_s(x)
:= max(s D_t(x; S0_out + O), s D_t(x; Q_out)); before that only E_s holds.

**Step 2: one deviation.**  For d in W_t and a grade v in {0..G}, x = g* with d := v is a completion
the range minimises over, so s low_t(J) <= E_s(g*[d := v]); also s low_t(J) <= E_s(g*) (no deviation).
With P_t = E_s(g*) and delta_t(d) = P_t - min_v E_s(g*[d := v]) (>= 0, v = g*(d) being one choice):
s low_t(J) <= P_t - max_{d in W_t} delta_t(d) (max over no document: 0); the same with E1_s (P1_t,
delta1_t) once O is judged.  Decided on side s implies sum_t u_t > 0 for u_t = those bounds' minimum.

**Step 2b: all deviations at once (nDCG and the dot-product families P, DCG, SDCG, RBP).**  There
s D_t(x; J_out) = N(x) / Z(x, J_out) with N(x) = s sum_{d in L_t} c_d(x_d) a sum over the documents
(c_d(v) = gain(v) (w_A(d) - w_B(d)), w the rank weight, 0 beyond the cut) and Z the normaliser (IDCG;
1 for the dot products).  For each d in L_t \\ S0 take its worst grade v_d = argmin_v s c_d(v) and
delta'_t(d) = s (c_d(g*_d) - c_d(v_d)) >= 0.  For the judged set J, x = g* with every d of W_t := v_d is
a completion, so s low_t(J) <= N(x) / Z(x, J_out) with N(x) = y(J) := N* - sum_{d in W_t} delta'_t(d)
exactly (N* = N(g*)).  Z is non-decreasing in each grade and in J_out, so Z(x, J_out) lies in
[z_low, z_high]: z_low with every such d at min(g*_d, v_d) and S0_out, z_high with max(g*_d, v_d) and
Q_out; and when Z > 0 it is at least the smallest positive Z of one document (z_low is raised to it;
when Z = 0, N = 0 and D = 0).  Hence s low_t(J) <= psi(y(J)), psi(y) = y / z_low for y >= 0 and y / z_high
for y < 0, which is non-decreasing in y.  Unlike step 2 this credits every unjudged document of the
topic, not only the largest; the decomposition is checked against the evaluator at g* and not used
(None) where it does not reproduce it (an RBP residual, for instance).

**Step 3: the fewest judgments (``floor``).**  A MILP such that every J deciding k pairs gives a
feasible point of cost |J - S0|: its optimum (or any proven dual bound of it) is then at most the
judgments of every policy (the converse is not needed).  Variables: binary j_{t,d} (judged; S0's
documents are not variables: judged for free), binary z_{p,s} (pair p counted decided on side s),
per (p, s, t) a continuous u_t and, per level (E_s, and E1_s when O is not empty), a staircase: the
level's deltas sorted decreasing delta_1 >= delta_2 >= ..., w_l in [0, 1] with w_l <= w_{l-1} and
w_l <= j_{t,d_l}, u_t <= P_t - delta_1 + sum_l (delta_l - delta_{l+1}) w_l (delta after the last: 0).
At the point of J, w_l = 1 iff d_1..d_l are all judged, so the right side is P_t - max over the
unjudged delta, as step 2.  Level E1 adds f in [0, 1], f >= 1 - sum_{d in O} (1 - j_{t,d}) (f = 1 once
O is judged) and relaxes its row by M (1 - f) with M large enough to make it void at f = 0.  Then
Step 2b adds u_t <= psi(N* - sum_d delta'_t(d) (1 - j_{t,d})): one linear row when psi is one line
over y's range, else two rows and a binary choosing the line (psi is the larger of the two lines).
Then sum_t u_t >= -eta - M' (1 - z_{p,s}), z_{p,+} + z_{p,-} <= 1, sum z >= k; minimise sum j.  The strict
"> 0" is relaxed to ">= -eta", eta = 1e-9 (covering the rounding of P and delta; also the simulation's
own verdict, which compares a floating sum with 0): a weaker condition, so the floor can only be
smaller (safe).  When HiGHS stops at its time limit the floor is its proven dual bound, rounded up
(the judgments are integers), and ``optimal`` is False; its incumbent is then an upper end of the
MILP's optimum, not of the true fewest judgments.

**Remarks.**  The brief's "assume Delta* > 0 (else negate)" misses a case: with only part of the
qrels judged outside the lists, the true completion's mean can have the other sign than Delta*, so a
pair can be decided on the side Delta* does not predict; both sides are kept.  The floor is valid for
the simulation's policies, whose low end is a proven bound at most the exact one (decided there implies
decided exactly).  It is a relaxation (one deviation per topic, the normaliser at its worst extreme),
so the true fewest judgments may be much larger; the MILP's incumbent bounds how much this floor can
ever prove.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..errors import MedoptError
from ..core.instance import build_instance
from ..metrics import parse_metric
from ..metrics.base import log2_discount

FAMILIES = ("nDCG", "AP", "R", "P", "DCG", "SDCG", "RR", "SP", "SSP", "Success", "SN_DCG", "SN_AP", "ERR", "RBP")
ETA = 1e-9  # "sum u > 0" relaxed to ">= -ETA" (step 3): only weakens the condition
SIGNS = (1, -1)


@dataclass
class Deviations:
    """One pair on one topic, one side s: P_t and delta_t(d) (zeros left out) for the documents d that
    may be unjudged (the lists' documents outside S0); ``top1`` and ``deltas1`` the same once every
    document of ``outside`` is judged (step 1b; None when ``outside`` is empty)."""

    top: float
    deltas: dict
    top1: float | None = None
    deltas1: dict | None = None
    outside: tuple = ()
    linear: "Linear | None" = None


@dataclass
class Linear:
    """Step 2b's data for one pair, topic and side: s * D_t <= psi(top - sum of ``deltas`` of the
    unjudged documents), psi(y) = y / z_low for y >= 0 and y / z_high for y < 0."""

    top: float
    deltas: dict
    z_low: float
    z_high: float

    def bound(self, unjudged) -> float:
        y = self.top - sum(self.deltas.get(d, 0.0) for d in unjudged)
        return y / self.z_low if y >= 0 else y / self.z_high


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
               start: Mapping[str, int] | None = None, *, max_grade: int, others=()) -> dict[int, Deviations]:
    """{s: Deviations} for s = +1 (the low end must rise above 0) and -1 (the high end below 0), one
    topic: ``truth`` the assessor's grades (unlisted: 0), ``start`` the judgments given for free,
    ``others`` the documents of the other pairs' lists (step 1b's O: those of them the qrels grade)."""
    metric = check_metric(metric)
    start = dict(start or {})
    wrong = sorted(d for d, g in start.items() if g != truth.get(d, 0))
    if wrong:
        raise MedoptError(f"the start judgments must be the assessor's grades; they differ on {wrong[:5]}")
    lists = build_instance(metric, a, b, {}, max_grade=max_grade)
    in_list = set(lists.a) | set(lists.b)
    outside_start = {d: g for d, g in start.items() if d not in in_list}
    outside_all = dict(outside_start, **{d: g for d, g in truth.items() if d not in in_list})
    pool = tuple(sorted({d for d in others if d not in in_list and d not in start and truth.get(d, 0) > 0}))
    lows = [outside_start] + ([dict(outside_start, **{d: truth[d] for d in pool})] if pool else [])
    top = build_instance(metric, a, b, outside_all, max_grade=max_grade)
    levels = [(build_instance(metric, a, b, judged, max_grade=max_grade), top) for judged in lows]
    grades = {d: min(truth.get(d, 0), max_grade) for d in lists.unjudged}
    free = [d for d in lists.unjudged if d not in start]
    result = {}
    for sign in SIGNS:
        linear = _linear(metric, sign, levels[0], grades, free, max_grade)
        found = []
        for extremes in levels:
            def best(assignment, sign=sign, extremes=extremes):  # E_s: the larger of two extremes (step 1)
                return max(sign * extreme.differences(assignment)["a"] for extreme in extremes)

            peak, deltas = best(grades), {}
            for doc in free:
                lowest = min(best(dict(grades, **{doc: v})) for v in range(max_grade + 1))
                if peak - lowest > 0:
                    deltas[doc] = peak - lowest
            found.extend((peak, deltas))
        result[sign] = Deviations(*found, outside=pool, linear=linear)
    return result


def _numerator(metric, instance):
    """(term, normaliser): M(A) - M(B) = sum_d term(d, grade of d) / normaliser(collection's grades) on
    ``instance`` for the families whose numerator is a sum over the documents (step 2b), else None."""
    grading = instance.grading
    if metric.family == "nDCG":
        weight, gain = log2_discount, (lambda g: metric.gain(g, grading))
        normaliser = (lambda grades: metric.ideal_dcg(grades, grading))
    elif hasattr(metric, "rank_weights") and hasattr(metric, "unit_gain") and not instance.residual:
        weights = metric.rank_weights(max(len(instance.a), len(instance.b)))
        weight, gain = (lambda rank: weights[rank - 1]), (lambda g: metric.unit_gain(g, grading))
        normaliser = (lambda grades: 1.0)
    else:
        return None
    rank_a, rank_b = instance.rank_a, instance.rank_b

    def term(d, g):
        net = (weight(rank_a[d]) if d in rank_a else 0.0) - (weight(rank_b[d]) if d in rank_b else 0.0)
        return gain(g) * net

    return term, normaliser


def _linear(metric, sign, extremes, grades, free, max_grade) -> Linear | None:
    """Step 2b for one side: the numerator's top and deltas and the normaliser's two extremes."""
    low_side, high_side = extremes
    found = _numerator(metric, low_side)
    if found is None:
        return None
    term, normaliser = found
    top = sign * sum(term(d, g) for d, g in grades.items())
    deltas, lowered, raised = {}, dict(grades), dict(grades)
    for d in free:
        worst = min(range(max_grade + 1), key=lambda v: sign * term(d, v))
        delta = sign * (term(d, grades[d]) - term(d, worst))
        if delta > 0:
            deltas[d] = delta
            lowered[d], raised[d] = min(grades[d], worst), max(grades[d], worst)
    z_low = normaliser(low_side.collection(lowered))
    z_high = normaliser(high_side.collection(raised))
    one_document = (normaliser({"_": g}) for g in range(1, max_grade + 1))  # Z of a lone document per grade
    smallest = min((z for z in one_document if z > 0), default=0.0)
    if z_high <= 0 or smallest <= 0:
        return None
    for extreme in extremes:  # the decomposition must reproduce the evaluator (else: no step 2b)
        value = extreme.differences(grades)["a"]
        z = normaliser(extreme.collection(grades))
        if z > 0 and abs(sign * value * z - top) > 1e-9 * max(1.0, abs(top)):
            return None
    return Linear(top, deltas, max(z_low, smallest), z_high)


def pair_deviations(metric, rankings: Mapping[str, Mapping[str, Sequence[str]]], pairs, topics: Sequence[str],
                    qrels: Mapping[str, Mapping[str, int]], start: Mapping[str, Mapping[str, int]] | None = None,
                    *, max_grade: int | None = None) -> dict:
    """{(pair, topic): {s: Deviations}} for every pair and topic (``deviations``; O from ``pairs``)."""
    metric = check_metric(metric)
    if max_grade is None:
        max_grade = max([1, *(g for t in topics for g in qrels.get(t, {}).values())])
    start = start or {}
    table = {}
    for t in topics:
        cut = {name: build_instance(metric, rankings[name].get(t, ()), (), {}, max_grade=max_grade).a
               for pair in pairs for name in pair}
        pool = {d for ranking in cut.values() for d in ranking}
        for pair in pairs:
            table[pair, t] = deviations(metric, rankings[pair[0]].get(t, ()), rankings[pair[1]].get(t, ()),
                                        qrels.get(t, {}), start.get(t, {}), max_grade=max_grade, others=pool)
    return table


def floor(metric, rankings: Mapping[str, Mapping[str, Sequence[str]]], pairs, topics: Sequence[str],
          qrels: Mapping[str, Mapping[str, int]], start: Mapping[str, Mapping[str, int]] | None = None, *,
          k: int, max_grade: int | None = None, time_limit: float = 60.0, table: dict | None = None,
          decided: Mapping | None = None) -> Floor:
    """The floor on the judgments beyond ``start`` with which k of ``pairs`` are decided (module
    docstring, step 3).  ``table``: ``pair_deviations``'s answer for these pairs, when computed.
    ``decided``: pair -> the sides (+1, -1) it may be decided on, for pairs that must be among the k
    (the floor is then over the judged sets deciding those pairs on those sides and k in all)."""
    pairs = [tuple(p) for p in pairs]
    if not 0 <= k <= len(pairs):
        raise MedoptError(f"k must be between 0 and the {len(pairs)} pairs, got {k!r}")
    table = table if table is not None else pair_deviations(metric, rankings, pairs, topics, qrels, start,
                                                            max_grade=max_grade)
    started = time.perf_counter()
    if k == 0:
        return Floor(0, 0, 0, True, 0.0, "k = 0")
    docs = sorted({(t, d) for (_, t), sides in table.items() for dev in sides.values()
                   for d in (*dev.deltas, *(dev.deltas1 or ()), *dev.outside,
                             *(dev.linear.deltas if dev.linear else ()))})
    sides = [(p, s) for p in pairs for s in SIGNS]
    model = _Model()
    column = {key: model.column(0.0, 1.0, True, 1.0) for key in docs}  # j_{t,d}: judged, cost 1
    decided = {tuple(p): tuple(allowed) for p, allowed in (decided or {}).items()}
    chosen = [model.column(float((decided.get(p) or ()) == (s,)), float(p not in decided or s in decided[p]), True)
              for p, s in sides]  # z_{p,s}
    for index, (p, s) in enumerate(sides):
        uppers = []
        for t in topics:
            dev = table[p, t][s]
            levels = [(dev.top, dev.deltas)] + ([(dev.top1, dev.deltas1)] if dev.outside else [])
            floor_u = min(top - max(deltas.values(), default=0.0) for top, deltas in levels)
            if dev.linear:
                floor_u = min(floor_u, dev.linear.bound(dev.linear.deltas))
            u = model.column(floor_u, dev.top, False)  # u_t >= s low_t's bound, the larger the better
            uppers.append(u)
            if dev.linear:
                _linear_rows(model, u, dev.linear, {d: column[t, d] for d in dev.linear.deltas})
            for level, (top, deltas) in enumerate(levels):
                # u <= top - delta_1 + sum_l step_l w_l, w_l <= w_{l-1}, w_l <= j_{d_l}
                ordered = sorted(deltas.items(), key=lambda item: -item[1])
                row, previous = {u: 1.0}, None
                for rank, (d, delta) in enumerate(ordered):
                    w = model.column(0.0, 1.0, False)
                    row[w] = -(delta - (ordered[rank + 1][1] if rank + 1 < len(ordered) else 0.0))
                    model.row({w: 1.0, column[t, d]: -1.0}, -math.inf, 0.0)
                    if previous is not None:
                        model.row({w: 1.0, previous: -1.0}, -math.inf, 0.0)
                    previous = w
                first = ordered[0][1] if ordered else 0.0
                if level == 0:
                    model.row(row, -math.inf, top - first)
                else:  # only once every document of O is judged: f >= 1 - sum_{d in O} (1 - j_d)
                    f = model.column(0.0, 1.0, False)
                    model.row({f: 1.0, **{column[t, d]: -1.0 for d in dev.outside}}, 1.0 - len(dev.outside), math.inf)
                    big = max(0.0, dev.top - (top - first))
                    model.row({**row, f: big}, -math.inf, top - first + big)
        # decided on side s: sum_t u_t >= -eta, unless z = 0
        big = max(0.0, -sum(model.low[u] for u in uppers))
        model.row({**{u: 1.0 for u in uppers}, chosen[index]: -big}, -ETA - big, math.inf)
    for i, p in enumerate(pairs):
        model.row({chosen[2 * i]: 1.0, chosen[2 * i + 1]: 1.0}, float(p in decided), 1.0)
    model.row({z: 1.0 for z in chosen}, k, math.inf)
    return model.solve(k, len(docs), chosen, sides, time_limit, started)


def _linear_rows(model, u, linear: Linear, judged: dict) -> None:
    """u <= psi(y), y = top - sum_d delta_d (1 - j_d) (step 3, last paragraph)."""
    y_low, y_high = linear.top - sum(linear.deltas.values()), linear.top
    if y_high <= 0 or y_low >= 0:  # psi is one line over [y_low, y_high]
        z = linear.z_high if y_high <= 0 else linear.z_low
        model.row({u: 1.0, **{judged[d]: -delta / z for d, delta in linear.deltas.items()}}, -math.inf, y_low / z)
        return
    big = (1 / linear.z_low - 1 / linear.z_high) * max(y_high, -y_low)
    piece = model.column(0.0, 1.0, True)  # 1: the line y / z_low (y >= 0), 0: y / z_high
    for z, sign in ((linear.z_low, 1.0), (linear.z_high, -1.0)):
        row = {u: 1.0, **{judged[d]: -delta / z for d, delta in linear.deltas.items()}, piece: sign * big}
        model.row(row, -math.inf, y_low / z + (big if sign > 0 else 0.0))


class _Model:
    """A MILP being built column by column, solved by HiGHS (solvers.backends.solve_highs: Ctrl-C, the
    time limit, and the proven dual bound also when the limit stops it without a solution)."""

    def __init__(self):
        self.low, self.high, self.integral, self.cost = [], [], [], []
        self.rows, self.row_low, self.row_high = [], [], []

    def column(self, low: float, high: float, integral: bool, cost: float = 0.0) -> int:
        self.low.append(low)
        self.high.append(high)
        self.integral.append(integral)
        self.cost.append(cost)
        return len(self.low) - 1

    def row(self, coefficients: dict, low: float, high: float) -> None:
        self.rows.append(coefficients)
        self.row_low.append(low)
        self.row_high.append(high)

    def solve(self, k, n_docs, chosen, sides, time_limit, started) -> Floor:
        import numpy as np
        from scipy.sparse import coo_matrix

        from ..modeling.matrix import MatrixModel  # deferred, as every solver import: HiGHS loads on first use
        from ..solvers.backends import solve_highs  # (the same)

        entries = [(r, c, v) for r, row in enumerate(self.rows) for c, v in row.items()]
        rows, cols, values = zip(*entries)
        matrix = coo_matrix((values, (rows, cols)), shape=(len(self.rows), len(self.low))).tocsr()
        model = MatrixModel(-np.array(self.cost), 0.0, matrix, np.array(self.row_low), np.array(self.row_high),
                            np.array(self.low), np.array(self.high), np.array(self.integral),
                            list(range(len(self.low))))  # HiGHS maximises -(judgments)
        outcome = solve_highs(model, time_limit)
        seconds = time.perf_counter() - started
        if outcome.status == "infeasible":  # fewer than k pairs can be decided by any judging
            return Floor(k, math.inf, None, True, seconds, "infeasible: fewer than k pairs can ever be decided")
        found, decided = None, {}
        if outcome.x is not None:
            found = int(round(outcome.x[:n_docs].sum()))
            decided = {p: s for z, (p, s) in zip(chosen, sides) if outcome.x[z] > 0.5}
        # proven, also when the time limit stopped HiGHS (its bound on -judgments)
        bound = max(0, math.ceil(-outcome.bound - 1e-6)) if math.isfinite(outcome.bound) else 0
        optimal = outcome.status == "optimal" and bound == found
        return Floor(k, bound, found, optimal, seconds, outcome.status, decided)
