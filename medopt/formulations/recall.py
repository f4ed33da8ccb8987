"""MED for R@k, Rprec and Rprec@k: relevant documents counted down to a cut, over a divisor, the
cut and the divisor both set by R.

b_d = [grade(d) >= rel] is linear in x (a constant for a judged document), and so are
R = J + sum_{d unjudged} b_d (J judged relevant documents of the collection: recall-based) and,
for a fixed cut c, C_c(X) = sum_{i <= c} b_{x_i}, the relevant documents among X's first c ranks.

R@k = C_k(X) / R: linear-fractional, N = sign (C_k(A) - C_k(B)) over D = R.
  enumerate:  a case fixes R = r (r = max(1, J) .. J + #unjudged): max N / r s.t. R = r.
  dinkelbach: max N - lam R, lam raised to the ratio of each solution.
Rprec = C_R(X) / R and Rprec@k = C_min(k,R)(X) / min(k, R): the cut moves with R, so the model
is written per case only.  A case fixes R = r and with it the cut and the divisor, c = D = r
(Rprec, and Rprec@k for r < k): max sign (C_r(A) - C_r(B)) / r s.t. R = r.  For Rprec@k the
values R >= k share c = D = k: one case R >= k.
R = 0 (no relevant document): both scores are 0 (the driver covers those assignments).

Case bounds (bounded_cases).  In a case N = const_c + sum_d net_d b_d over the unjudged documents,
net_d = sign ([d among A's first c] - [d among B's first c]), with exactly U = r - J of the b_d at 1
(at least U in a case R >= r), so N <= const_c + Top(U), the sum of the U largest nets (the
largest such sum over u >= U).  Divided by the case's constant D this bounds the case's optimum;
limits and dominance rows only shrink the feasible set.  Cases are solved best bound first and the
search stops at the first bound that does not beat the difference already reached.

None of the three is a dot product (R moves with the assignment), so the closed form of the
dot-product metrics does not apply.  Without limits R@k has a closed form of its own
(metrics/recall.py, with its proof), which ``auto`` takes; Rprec has none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from medopt.modeling.pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from ..core.instance import judged_count
from ..modeling import (LinearModel, count_at_least, direction_sign, equal, expression, new_model, relevant_at, row,
                        total)
from .base import Case, CaseModels, DinkelbachMatrix, DinkelbachModels, Formulation, register


@dataclass(frozen=True)
class RelevantCut(Case):
    """R fixed (R = r, or R >= r when ``at_least``), and with it the ranks counted (``cut``; None: the
    whole cut list) and the divisor (``denominator``)."""

    r: int = 0
    at_least: bool = False
    cut: int | None = None


def cut_and_divisor(metric, r: int) -> tuple[int | None, int]:
    """The ranks counted (None: the whole cut list) and the divisor when R = r >= 1 (SPEC 3, written
    here apart from the evaluator's)."""
    if metric.family == "R":
        return None, r
    cut = r if metric.cutoff is None else min(metric.cutoff, r)
    return cut, cut


def cut_count_difference(m, instance, direction, cut):
    """N = sign (C_c(A) - C_c(B)): relevant documents among the first ``cut`` ranks (None: all)."""
    sign = direction_sign(direction)
    counted = lambda ranking: total(relevant_at(m, instance, d) for d in ranking[:cut])
    return sign * (counted(instance.a) - counted(instance.b))


@register
class CutCounts(Formulation, CaseModels, DinkelbachModels):
    families = ("R", "Rprec")
    examples = ("R@10", "Rprec@10", "Rprec")
    title = "relevant counts down to a cut set by R (R@k, Rprec, Rprec@k)"

    def strategies(self, instance):
        """R@k: Dinkelbach, or the cases best bound first (the default: usually one or two solves).
        Rprec: the cases only (its numerator changes with R)."""
        return ("dinkelbach", "enumerate") if instance.metric.family == "R" else ("enumerate",)

    def cases(self, instance):
        metric = instance.metric
        judged = judged_count(instance, metric.p("rel"))
        for r in range(max(1, judged), judged + len(instance.unjudged) + 1):
            if metric.family == "Rprec" and metric.cutoff is not None and r >= metric.cutoff:
                yield RelevantCut(label=f"R >= {r}", denominator=float(metric.cutoff), r=r, at_least=True,
                                  cut=metric.cutoff)
                return
            cut, divisor = cut_and_divisor(metric, r)
            yield RelevantCut(label=f"R = {r}", denominator=float(divisor), r=r, cut=cut)

    def build_case(self, instance, direction, case):
        m = new_model(instance, direction, f"{instance.metric.family}, {case.label}")
        numerator = expression(m, "numerator", cut_count_difference(m, instance, direction, case.cut),
                               doc="N: signed difference of the relevant documents counted down to the case's cut")
        relevant = expression(m, "relevant_count", count_at_least(m, instance, instance.metric.p("rel")),
                              doc="R: relevant documents of the collection")
        row(m, "fix_relevant_count", relevant >= case.r if case.at_least else equal(relevant, case.r),
            doc="the case's R")
        m.denominator = pyo.Expression(expr=case.denominator, doc="the case's divisor (R or min(k, R)): a constant")
        m.objective = pyo.Objective(expr=numerator * (1.0 / case.denominator), sense=pyo.maximize,
                                    doc="maximise N / D: the difference in this case")
        return m

    def bounded_cases(self, instance, direction):
        """The cases with the bound of the module's docstring, best first."""
        sign = direction_sign(direction)
        unjudged, relevant = instance.unjudged, instance.metric.is_relevant
        judged = judged_count(instance, instance.metric.p("rel"))
        whole = max(len(instance.a), len(instance.b))  # a cut below every rank of both lists
        far = np.iinfo(np.int64).max  # the rank of an absent document: below every cut (a cut may exceed the lists)
        rank_a, rank_b = instance.rank_a, instance.rank_b
        at_a = np.array([rank_a.get(d, far) for d in unjudged], dtype=np.int64)
        at_b = np.array([rank_b.get(d, far) for d in unjudged], dtype=np.int64)

        def judged_relevant(ranking):  # prefix counts: [0, first 1 rank, first 2 ranks, ...]
            flags = [1 if d in instance.judgments and relevant(instance.judgments[d]) else 0 for d in ranking]
            return np.concatenate([[0], np.cumsum(flags, dtype=np.int64)])

        prefix_a, prefix_b = judged_relevant(instance.a), judged_relevant(instance.b)
        bounded = []
        for case in self.cases(instance):
            cut = whole if case.cut is None else case.cut
            constant = sign * (prefix_a[min(cut, len(instance.a))] - prefix_b[min(cut, len(instance.b))])
            nets = sign * ((at_a <= cut).astype(np.int64) - (at_b <= cut).astype(np.int64))
            top = np.concatenate([[0], np.cumsum(np.sort(nets)[::-1])])  # top[u]: the u largest nets
            u = case.r - judged
            best = top[u:].max() if case.at_least else top[u]
            bounded.append(((constant + best) / case.denominator, case))
        bounded.sort(key=lambda pair: -pair[0])  # stable: equal bounds keep the order of R
        return iter([(float(bound), case) for bound, case in bounded])

    def dinkelbach_rows(self, m, instance, direction):
        """N and D = R on a model of either builder (R@k only)."""
        numerator = expression(m, "numerator", cut_count_difference(m, instance, direction, None),
                               doc="N: signed difference of the relevant documents in the two top k")
        denominator = expression(m, "denominator", count_at_least(m, instance, instance.metric.p("rel")),
                                 doc="D = R: relevant documents of the collection")
        return numerator, denominator

    def build_dinkelbach(self, instance, direction, lam):
        m = new_model(instance, direction, f"R@k, Dinkelbach step lam={lam!r}")
        numerator, denominator = self.dinkelbach_rows(m, instance, direction)
        m.objective = pyo.Objective(expr=numerator - lam * denominator, sense=pyo.maximize,
                                    doc="Dinkelbach: maximise N - lam * R")
        return m

    def dinkelbach_matrix(self, instance, direction):
        """build_dinkelbach's model (lam left to the caller) from the same code, with modeling.LinearModel."""
        m = LinearModel(instance)
        numerator, denominator = self.dinkelbach_rows(m, instance, direction)
        return DinkelbachMatrix(m.matrix(), *m.vector(numerator), *m.vector(denominator), m.assignment)
