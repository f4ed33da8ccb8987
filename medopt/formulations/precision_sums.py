"""MED for SSP@k, AP@k and AP(norm=min)@k: sums of precisions, linearised exactly.

Relevance b_d (grade >= rel) is linear in x.  The sum of precisions of list X,
SP(X) = sum_i b_{x_i} P@i = sum_i (1/i) b_{x_i} (1 + sum_{j<i} b_{x_j})
      = sum_i b_{x_i} / i + sum_{j<i} y[x_j, x_i] / i,
is quadratic; each product of two unjudged relevances is a binary
y[d, e] = b_d b_e (y <= b_d, y <= b_e, y >= b_d + b_e - 1), exact because both
factors are 0 or 1.  A product with a judged document is the other factor or 0.
One y per unordered pair of documents, shared by A and B when both lists hold it.

SSP@k = SP / k: a MILP.  AP@k = SP / R, R = #relevant documents of the collection
(judged anywhere + assigned), and AP(norm=min)@k = SP / min(k, R): ratios, solved
by enumerating R (each case fixes R = r, or R >= k for norm=min) or by Dinkelbach
on N - lam * D, with D = R (linear) or min(k, R) = sum_{m<=k} u[m] for the unary
encoding u[m] = [m <= R] (u[m] <= u[m-1], sum_m u[m] = R).  R = 0 means no
relevant document: both scores and the difference are 0.
"""

from __future__ import annotations

import pyomo.environ as pyo

from .base import Case, Formulation
from .common import binary_and, count_at_least, direction_sign, judged_count, new_model, relevant_at


def relevance_products(m, instance):
    """Declare y[d, e] for every pair of unjudged documents ranked together in A or B."""
    pairs = {}
    for ranking in (instance.a, instance.b):
        for i, later in enumerate(ranking):
            for earlier in ranking[:i]:
                if earlier in instance.judgments or later in instance.judgments:
                    continue
                key = tuple(sorted((earlier, later)))
                pairs[key] = (relevant_at(m, instance, key[0]), relevant_at(m, instance, key[1]))
    binary_and(m, "both_relevant", pairs, doc="y[d,e] = b_d * b_e")


def product_term(m, instance, first, second):
    """b_first * b_second as a linear term."""
    if first in instance.judgments:
        return relevant_at(m, instance, second) if instance.metric.is_relevant(instance.judgments[first]) else 0
    if second in instance.judgments:
        return relevant_at(m, instance, first) if instance.metric.is_relevant(instance.judgments[second]) else 0
    return m.both_relevant[tuple(sorted((first, second)))]


def sum_of_precisions(m, instance, ranking):
    total = 0
    for i, doc in enumerate(ranking, start=1):
        total += relevant_at(m, instance, doc) * (1.0 / i)
        for earlier in ranking[: i - 1]:
            total += product_term(m, instance, earlier, doc) * (1.0 / i)
    return total


class PrecisionSums(Formulation):
    family_name = "sum of precisions (SSP, AP, AP(norm=min))"
    ratio = True  # AP; SSP shares the module with a constant denominator (strategies_for)
    strategies = ("enumerate", "dinkelbach")

    def _base(self, instance, direction, name):
        m = new_model(instance, direction, name)
        relevance_products(m, instance)
        sign = direction_sign(direction)
        m.numerator = pyo.Expression(
            expr=sign * (sum_of_precisions(m, instance, instance.a) - sum_of_precisions(m, instance, instance.b)),
            doc="N: signed difference of the sums of precisions SP(A) - SP(B)")
        m.relevant_count = pyo.Expression(expr=count_at_least(m, instance, instance.metric.p("rel")),
                                          doc="R: relevant documents of the collection")
        return m

    # -- SSP: not a ratio -------------------------------------------------------
    def build(self, instance, direction, *, case=None, lam=None):
        if instance.metric.family == "SSP":
            m = self._base(instance, direction, "SSP MILP")
            m.objective = pyo.Objective(expr=m.numerator * (1.0 / instance.metric.cutoff), sense=pyo.maximize,
                                        doc="maximise SP(better)/k - SP(other)/k")
            return m
        return self.build_ratio(instance, direction, case=case, lam=lam)

    # -- AP: ratio -------------------------------------------------------------
    def build_ratio(self, instance, direction, *, case=None, lam=None):
        cutoff = self.min_cutoff(instance)
        if case is not None:
            m = self._base(instance, direction, f"AP, {case.label}")
            r, at_least = case.fix["R"], case.fix["at_least"]
            m.fix_relevant_count = pyo.Constraint(
                expr=m.relevant_count >= r if at_least else m.relevant_count == r, doc="the case's R")
            m.denominator = pyo.Expression(expr=case.denominator, doc="R or min(k, R): a constant here")
            m.objective = pyo.Objective(expr=m.numerator * (1.0 / case.denominator), sense=pyo.maximize,
                                        doc="maximise N / D: the AP difference in this case")
            return m
        m = self._base(instance, direction, f"AP, Dinkelbach step lam={lam!r}")
        if cutoff is None:
            m.denominator = pyo.Expression(expr=m.relevant_count, doc="D = R")
        else:
            largest = judged_count(instance, instance.metric.p("rel")) + len(instance.unjudged)
            m.UNARY = pyo.RangeSet(1, max(largest, 1))
            m.u = pyo.Var(m.UNARY, domain=pyo.Binary, doc="u[m] = 1 iff R >= m")
            judged = judged_count(instance, instance.metric.p("rel"))
            for j in range(1, judged + 1):
                m.u[j].fix(1)  # judged relevant documents: these counts are known
            m.unary_order = pyo.Constraint(
                m.UNARY, rule=lambda m, j: m.u[j] <= m.u[j - 1] if j > judged + 1 else pyo.Constraint.Skip,
                doc="u[m] <= u[m-1]")
            m.unary_count = pyo.Constraint(expr=sum(m.u[j] for j in m.UNARY) == m.relevant_count,
                                           doc="sum_m u[m] = R")
            m.denominator = pyo.Expression(expr=sum(m.u[j] for j in m.UNARY if j <= cutoff), doc="D = min(k, R)")
        m.objective = pyo.Objective(expr=m.numerator - lam * m.denominator, sense=pyo.maximize,
                                    doc="Dinkelbach: maximise N - lam * D")
        return m

    def min_cutoff(self, instance):
        """k when the normaliser is min(k, R), else None."""
        metric = instance.metric
        return metric.cutoff if metric.family == "AP" and metric.p("norm") == "min" else None

    def strategies_for(self, instance):
        return ("direct",) if instance.metric.family == "SSP" else self.strategies

    def cases(self, instance):
        judged = judged_count(instance, instance.metric.p("rel"))
        cutoff = self.min_cutoff(instance)
        for r in range(max(1, judged), judged + len(instance.unjudged) + 1):
            if cutoff is not None and r >= cutoff:
                yield Case(label=f"R >= {r}", denominator=float(cutoff), fix={"R": r, "at_least": True})
                return
            yield Case(label=f"R = {r}", denominator=float(r), fix={"R": r, "at_least": False})

    def min_denominator(self, instance):
        return 1.0


FORMULATION = PrecisionSums()
