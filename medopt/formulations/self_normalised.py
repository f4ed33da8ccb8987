"""MED for SN_DCG@k and SN_AP@k (Moffat's self-normalised metrics): each list over a denominator of
its own, solved case by case with both denominators fixed.

Each list X is scored over its own top k: SN_AP@k(X) = SP(X) / R_X, R_X its relevant documents, and
SN_DCG@k(X) = DCG(X) / IDCG_X, IDCG_X the DCG of its own gains sorted decreasing (0 / 0 = 0).  The
denominators differ between the lists, so one direction's difference

    sign * ( N_A / D_A - N_B / D_B )

is not one ratio (Dinkelbach does not apply).  Both denominators are functions of counts.  With the
thresholds h (SN_AP: the grade rel; SN_DCG: every grade, with the step s_h = gain(h) - gain(h-1) >= 0)
and C^X_h = J^X_h + U^X_h the documents of X's top k with grade >= h (J^X_h judged, U^X_h unjudged,
linear in x):

    R_X = C^X_rel,     IDCG_X = sum_h s_h S(C^X_h),     S(m) = sum_{i<=m} 1/log2(i+1)

(the i-th largest gain of X's top k is >= gain(h) exactly when i <= C^X_h: nDCG's ideal, over X's top
k instead of the collection).  A shared document is unjudged and in both top k.  A case fixes, for
every threshold, U^A_h, U^B_h and the count among the shared documents, by the rows

    count_a[h]:       sum_{d unjudged in A's top k} [grade(d) >= h] = the case's count
    count_b[h], count_shared[h]: likewise over B's top k, and over the shared documents,

so both denominators are constants and the case's model is linear: N_X the discounted gains (SN_DCG),
or the sum of precisions with the exact products y[d,e] = b_d b_e of precision_sums (SN_AP), each
list's terms divided by its own D_X.  A list whose case denominator is 0 holds nothing of positive
gain (N_X = 0) and scores 0: its terms are dropped.  The cases cover every assignment, those with a
zero denominator included, and each case's optimum is exact whatever its sign, so a direction's
maximum is the largest case optimum -- a range's end below 0 too.

Case bounds (bounded_cases).  Cases are solved best bound first, and the search stops at the first
case whose bound does not beat the difference already reached; that bound is the certificate for
the rest.  X is the direction's better list, Y the other; an own document is unjudged and in one top k
only.  The cases are grouped by the grades of the shared documents (a multiset sigma; for SN_AP how
many are relevant), a case of a group being the multisets (alpha, beta) of X's and Y's own documents.

SN_DCG: a case's bound is its optimum.  Given (sigma, alpha, beta) -- which fix both denominators and
every relevance limit -- the difference is a constant plus sum_d gain(grade(d)) c_d, with c_d =
w^X_d / D_X for X-own, -w^Y_d / D_Y for Y-own and w^X_d / D_X - w^Y_d / D_Y for shared documents (w the
discounts), and, gain being non-decreasing, each group of documents is best in the rearrangement
order: its grades, largest first, to its documents by decreasing c_d.  A group of cases is bounded by
placing the shared grades best for X and, apart, worst for Y (the lists then separate) and is opened
(its cases bounded) only when that bound beats the difference reached: usually one case model is
solved per direction, the one holding the optimum, and few groups are opened.

SN_AP: with the number of relevant ranks of a list fixed, SP rises when a relevant document moves up
(SP sums 1/j over the pairs i <= j of relevant ranks, and a move up lowers no pair's max(i, j)).  So
with t shared and u own unjudged documents relevant, SP(X) is at most X's SP with its top t shared and
top u own unjudged ranks relevant, and SP(Y) at least Y's with its bottom ones: the case's bound (it
lets X and Y pick different shared documents, and ignores the limits).  Cases no assignment can
fall in (counts beyond a group's size) are never formed.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from itertools import combinations_with_replacement

import numpy as np
from medopt.modeling.pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from ..errors import TooLargeError
from ..core.instance import judged_count
from ..metrics.ap import sum_of_precisions
from ..metrics.base import log2_discount
from ..modeling import direction_sign, equal, gain_at, new_model, rows
from .base import CaseModels, Formulation, ListPairCase, register
from .precision_sums import PrecisionSums, numerator_expression, relevance_products

# grade multisets of one group of documents (shared, or one list's own) enumerated at most, and the
# (own X) x (own Y) grid of one shared multiset; beyond either the instance is refused (value:
# docs/explanation/constants.md)
MAX_GRID = 4_000_000
GROUP_SLACK = 1e-12  # added to a shared multiset's bound, for the rounding in computing it


@dataclass(frozen=True)
class ListCounts(ListPairCase):
    """The counts per threshold h (ascending) of A's and of B's unjudged documents with grade >= h, and of
    the shared ones among them (``counts_shared``): both denominators constants."""

    counts_a: tuple = ()
    counts_b: tuple = ()
    counts_shared: tuple = ()


def thresholds(instance) -> list[tuple[int, float]]:
    """(h, s_h) for the counts a case fixes: SN_AP's rel (s = 1); SN_DCG's every grade, s_h = gain(h) -
    gain(h-1) >= 0 (every grade, so that a case's counts say which grades the documents have)."""
    metric, top = instance.metric, instance.max_grade
    if metric.binary:
        rel = metric.p("rel")
        return [(rel, 1.0)] if rel <= top else []
    gain = lambda g: metric.gain(g, instance.grading)
    return [(g, gain(g) - gain(g - 1)) for g in range(1, top + 1)]


class Side:
    """One list's top k as the cases see it: its judged part, its unjudged ranks (shared with the other
    list's top k, or its own), and the denominator of any counts of its unjudged documents."""

    def __init__(self, instance, ranking, other):
        metric, grading, judgments = instance.metric, instance.grading, instance.judgments
        self.ranking, self.levels = ranking, thresholds(instance)
        other = set(other)
        self.grades = [None if d not in judgments else grading.cap(max(judgments[d], 0)) for d in ranking]
        self.shared = [i for i, d in enumerate(ranking) if d not in judgments and d in other]
        self.own = [i for i, d in enumerate(ranking) if d not in judgments and d not in other]
        self.judged = np.array([sum(1 for g in self.grades if g is not None and g >= h) for h, _ in self.levels],
                               dtype=np.int64)
        self.steps = np.array([s for _, s in self.levels])
        self.prefix = np.concatenate([[0.0], np.cumsum([log2_discount(i) for i in range(1, len(ranking) + 1)])])
        self.binary = metric.binary
        self.relevant = lambda grade: metric.is_relevant(grade)
        self.gain = lambda grade: metric.gain(grade, grading)

    def denominators(self, counts: np.ndarray) -> np.ndarray:
        """D of each row of unjudged counts per threshold: R_X (SN_AP) or IDCG_X (SN_DCG)."""
        totals = counts + self.judged
        if self.binary:
            return totals.sum(axis=1).astype(float)
        return self.prefix[totals] @ self.steps

    def inverses(self, counts: np.ndarray) -> np.ndarray:
        """1 / D of each row (0 where D = 0: the list scores 0)."""
        d = self.denominators(counts)
        return np.divide(1.0, d, out=np.zeros(len(d)), where=d > 0)

    def judged_dcg(self) -> float:
        return sum(self.gain(g) * log2_discount(i + 1) for i, g in enumerate(self.grades) if g is not None)

    def precision_sums(self, best: bool) -> np.ndarray:
        """SN_AP: SP with t shared and u own unjudged ranks relevant, the top ones (``best``) or the bottom
        ones: (t, u) -> SP."""
        shared = self.shared if best else self.shared[::-1]
        own = self.own if best else self.own[::-1]
        table = np.zeros((len(shared) + 1, len(own) + 1))
        for t in range(len(shared) + 1):
            for u in range(len(own) + 1):
                relevant = [g is not None and self.relevant(g) for g in self.grades]
                for i in shared[:t] + own[:u]:
                    relevant[i] = True
                table[t, u] = sum_of_precisions(relevant)
        return table


def grade_multisets(size: int, top: int) -> np.ndarray:
    """Every multiset of ``size`` grades in 0..top, each row its grades in decreasing order."""
    rows_ = list(combinations_with_replacement(range(top, -1, -1), size))
    if len(rows_) > MAX_GRID:
        raise TooLargeError(f"{len(rows_):,} grade multisets of {size} unjudged documents, more than {MAX_GRID:,}: "
                            "use a smaller cutoff or max_grade")
    return np.array(rows_, dtype=np.int64).reshape(len(rows_), size)


class Groups:
    """The assignments of one direction grouped by the grades of the shared documents (one group per
    multiset sigma), each group's cases the multisets (alpha, beta) of X's and Y's own documents:
    ``upper(i)`` bounds every case of group i, ``values(i)`` is the (alpha, beta) grid of their bounds
    (-inf: no assignment).  Counts per threshold: ``shared``, ``own_x``, ``own_y`` (one row each)."""

    def __init__(self, instance, x: Side, y: Side):
        self.instance, self.x, self.y = instance, x, y
        levels = np.array([h for h, _ in x.levels], dtype=np.int64)
        counts = lambda grades: (grades[:, :, None] >= levels[None, None, :]).sum(axis=1)
        if x.binary:  # a multiset is how many documents are relevant
            self.sigmas, self.alphas, self.betas = (np.arange(n + 1)[:, None] if len(levels) else np.zeros((1, 0), int)
                                                    for n in (len(x.shared), len(x.own), len(y.own)))
            self.shared, self.own_x, self.own_y = self.sigmas, self.alphas, self.betas
            self.table_x, self.table_y = x.precision_sums(best=True), y.precision_sums(best=False)
            return
        top = instance.max_grade
        self.sigmas, self.alphas, self.betas = (grade_multisets(n, top) for n in (len(x.shared), len(x.own), len(y.own)))
        if len(self.alphas) * len(self.betas) > MAX_GRID:
            raise TooLargeError(f"{instance.metric}: {len(self.alphas) * len(self.betas):,} pairs of grade multisets "
                                f"of the two lists' own unjudged documents, more than {MAX_GRID:,}: use a smaller "
                                "cutoff or max_grade")
        self.shared, self.own_x, self.own_y = counts(self.sigmas), counts(self.alphas), counts(self.betas)
        self.gains = np.array([x.gain(g) for g in range(top + 1)])
        rank_y = {d: i for i, d in enumerate(y.ranking)}
        self.weight_x = np.array([log2_discount(i + 1) for i in x.shared])  # the shared documents, in X's order
        self.weight_y = np.array([log2_discount(rank_y[x.ranking[i]] + 1) for i in x.shared])
        own_x = np.array(sorted((log2_discount(i + 1) for i in x.own), reverse=True))  # top grades on top ranks
        own_y = np.array(sorted(log2_discount(i + 1) for i in y.own))                  # ... on Y's bottom ranks
        self.fixed_x = x.judged_dcg() + self.gains[self.alphas] @ own_x
        self.fixed_y = y.judged_dcg() + self.gains[self.betas] @ own_y
        self.limits = [(limit, judged_count(instance, limit.grade), (self.alphas >= limit.grade).sum(axis=1)[:, None]
                        + (self.betas >= limit.grade).sum(axis=1)[None, :]) for limit in instance.limits]

    def inverses(self, i: int):
        return self.x.inverses(self.shared[i] + self.own_x), self.y.inverses(self.shared[i] + self.own_y)

    def upper(self, i: int) -> float:
        """SN_AP: the group's largest case bound (they are separable).  SN_DCG: the shared grades placed
        best for X and, apart, worst for Y -- a bound on every case of the group."""
        inverse_x, inverse_y = self.inverses(i)
        if self.x.binary:
            t = int(self.sigmas[i, 0]) if self.sigmas.shape[1] else 0
            return float((self.table_x[t, self.alphas[:, 0] if self.alphas.shape[1] else 0] * inverse_x).max()
                         - (self.table_y[t, self.betas[:, 0] if self.betas.shape[1] else 0] * inverse_y).min())
        grades = self.gains[self.sigmas[i]]
        best_x = (self.fixed_x + grades @ np.sort(self.weight_x)[::-1]) * inverse_x
        worst_y = (self.fixed_y + grades @ np.sort(self.weight_y)) * inverse_y
        return float(best_x.max() - worst_y.min())

    def values(self, i: int) -> np.ndarray:
        """The bound of every case (alpha, beta) of group i: SN_AP the precision-sum tables, SN_DCG the
        case's optimum (the rearrangement of each group's grades, the limits checked)."""
        inverse_x, inverse_y = self.inverses(i)
        if self.x.binary:
            t = int(self.sigmas[i, 0]) if self.sigmas.shape[1] else 0
            column_x = self.alphas[:, 0] if self.alphas.shape[1] else np.zeros(1, int)
            column_y = self.betas[:, 0] if self.betas.shape[1] else np.zeros(1, int)
            return (self.table_x[t, column_x] * inverse_x)[:, None] - (self.table_y[t, column_y] * inverse_y)[None, :]
        sigma = self.sigmas[i]
        coefficients = self.weight_x[None, None, :] * inverse_x[:, None, None] \
            - self.weight_y[None, None, :] * inverse_y[None, :, None]
        value = (self.fixed_x * inverse_x)[:, None] - (self.fixed_y * inverse_y)[None, :] \
            + (-np.sort(-coefficients, axis=2)) @ self.gains[sigma]
        for limit, judged, unjudged in self.limits:  # the collection's documents of grade >= limit.grade
            count = judged + int((sigma >= limit.grade).sum()) + unjudged
            value = np.where((count >= limit.low) & (count <= (np.inf if limit.high is None else limit.high)),
                             value, -np.inf)
        return value


@register
class SelfNormalised(Formulation, CaseModels):
    families = ("SN_DCG", "SN_AP")
    examples = ("SN_AP@10", "SN_DCG@10")
    title = "self-normalised (SN_DCG, SN_AP: each list over its own denominator)"
    covers_zero_denominators = True

    def strategies(self, instance):
        return ("enumerate",)

    def model_size(self, instance, strategy):
        """The count rows (each unjudged document of A, of B and of both, once per threshold, with its grade
        variables of grades >= h) beside the grade variables and the objective; SN_AP adds the products
        of precision_sums."""
        unjudged = set(instance.unjudged)
        in_a, in_b = unjudged.intersection(instance.a), unjudged.intersection(instance.b)
        listed = len(in_a) + len(in_b) + len(in_a & in_b)
        counted = sum(instance.max_grade - h + 1 for h, _ in thresholds(instance))  # x[d, g] with g >= h
        base = PrecisionSums().model_size(instance, "enumerate") if instance.metric.binary \
            else super().model_size(instance, strategy)
        return replace(base, entries=base.entries + listed * counted)

    def bounded_cases(self, instance, direction):
        """Every case some assignment may fall in, best bound first, with its bound (module docstring).
        The groups are opened lazily, best upper bound first: a group whose bound does not beat the
        difference reached is never opened."""
        a, b = Side(instance, instance.a, instance.b), Side(instance, instance.b, instance.a)
        x, y = (a, b) if direction == "a" else (b, a)
        groups = Groups(instance, x, y)
        heap = [(-(groups.upper(i) + GROUP_SLACK), i, None) for i in range(len(groups.sigmas))]
        heapq.heapify(heap)
        while heap:
            key, i, opened = heapq.heappop(heap)
            if opened is None:  # open the group: its cases, best first
                values = groups.values(i).ravel()
                order = np.argsort(-values, kind="stable")
                order = order[values[order] > -np.inf]
                opened = (values[order], order, 0)
            else:
                values, order, at = opened
                row_x, row_y = divmod(int(order[at]), len(groups.betas))
                yield float(values[at]), self.case_of(instance, groups, direction, i, row_x, row_y)
                opened = (values, order, at + 1)
            values, order, at = opened
            if at < len(order):
                heapq.heappush(heap, (-values[at], i, opened))

    def case_of(self, instance, groups: Groups, direction: str, i: int, row_x: int, row_y: int) -> ListCounts:
        shared = groups.shared[i]
        counts_x, counts_y = shared + groups.own_x[row_x], shared + groups.own_y[row_y]
        if direction == "b":
            counts_x, counts_y = counts_y, counts_x
        sides = (groups.x, groups.y) if direction == "a" else (groups.y, groups.x)
        (d_a,), (d_b,) = (side.denominators(c[None, :]) for side, c in zip(sides, (counts_x, counts_y)))
        totals = lambda side, c: ",".join(str(int(v)) for v in c + side.judged) or "-"
        name = "R" if instance.metric.binary else "C"
        return ListCounts(label=f"{name}_A = {totals(sides[0], counts_x)}, {name}_B = {totals(sides[1], counts_y)}, "
                                f"shared {','.join(str(int(v)) for v in shared) or '-'}",
                          denominator=float(d_a), denominator_b=float(d_b), counts_a=tuple(int(v) for v in counts_x),
                          counts_b=tuple(int(v) for v in counts_y), counts_shared=tuple(int(v) for v in shared))

    def cases(self, instance):
        return [case for _, case in self.bounded_cases(instance, "a")]

    def build_case(self, instance, direction, case):
        metric = instance.metric
        m = new_model(instance, direction, f"{metric.family}, {case.label}")
        levels = thresholds(instance)
        in_b = set(instance.b)
        shared = [d for d in instance.a if d not in instance.judgments and d in in_b]
        for name, docs, counts, what in (
                ("count_a", [d for d in instance.a if d not in instance.judgments], case.counts_a, "A's top k"),
                ("count_b", [d for d in instance.b if d not in instance.judgments], case.counts_b, "B's top k"),
                ("count_shared", shared, case.counts_shared, "both top k")):
            if docs and levels:
                rows(m, name, {h: equal(sum(m.x[d, g] for d in docs for g in m.GRADES if g >= h), counts[j])
                               for j, (h, _) in enumerate(levels)},
                     doc=f"the unjudged documents of {what} with grade >= h: the case's count")
        scales = tuple(1.0 / d if d > 0 else 0.0 for d in (case.denominator, case.denominator_b))
        m.denominator_a = pyo.Expression(expr=case.denominator, doc="D_A of this case (a constant; 0: A scores 0)")
        m.denominator_b = pyo.Expression(expr=case.denominator_b, doc="D_B of this case (a constant; 0: B scores 0)")
        if metric.binary:
            relevance_products(m, instance, direction, scales)
            difference = numerator_expression(m, instance, direction, scales)
            what = "SP(A) / R_A - SP(B) / R_B"
        else:
            sign = direction_sign(direction)
            dcg = lambda ranking, scale: scale * sum(log2_discount(i) * gain_at(m, instance, d)
                                                     for i, d in enumerate(ranking, start=1))
            difference = sign * (dcg(instance.a, scales[0]) - dcg(instance.b, scales[1]))
            what = "DCG(A) / IDCG_A - DCG(B) / IDCG_B"
        m.objective = pyo.Objective(expr=difference, sense=pyo.maximize,
                                    doc=f"maximise the signed {what}, both denominators the case's constants")
        return m
