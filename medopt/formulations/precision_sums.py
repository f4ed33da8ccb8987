"""MED for SSP@k, AP@k and AP(norm=min)@k: sums of precisions, linearised exactly.

Relevance b_d (grade >= rel) is linear in x.  The sum of precisions of list X,
SP(X) = sum_i b_{x_i} P@i = sum_i (1/i) b_{x_i} (1 + sum_{j<i} b_{x_j})
      = sum_i b_{x_i} / i + sum_{j<i} y[x_j, x_i] / i,
is quadratic; each product of two unjudged relevances is a binary
y[d, e] = b_d b_e, exact because both factors are 0 or 1.  A product with a judged
document is the other factor or 0.  One y per unordered pair of documents, with its
net weight in N = sign (SP(A) - SP(B)) (pairs in both lists combine; a zero weight
drops the pair).  Only the binding side of the linearisation is kept: y <= b_d and
y <= b_e for a positive weight, y >= b_d + b_e - 1 for a negative one (the maximiser
drives y to the product either way, common.binary_and).

SSP@k = SP / k: a MILP.  AP@k = SP / R, R = #relevant documents of the collection
(judged anywhere + assigned), and AP(norm=min)@k = SP / min(k, R): ratios, solved
by enumerating R (each case fixes R = r, or R >= k for norm=min) or by Dinkelbach
on N - lam * D, with D = R (linear) or min(k, R) = sum_{m<=k} u[m] for the unary
encoding u[m] = [m <= R] (u[m] <= u[m-1], sum_m u[m] = R), or (strategy 'capped', the
default for norm=min) by Dinkelbach on the AP@k model with the cap k a piece of its own:
N - lam min(k, R) = max(N - lam k, N - lam R) for lam >= 0 (solvers/exact.solve_capped).
R = 0 means no relevant document: both scores and the difference are 0.
"""

from __future__ import annotations

from dataclasses import replace

import pyomo.environ as pyo

from ..metrics import parse_metric
from ..solvers.direct import Linear, LinearModel, Row
from .base import Case, DinkelbachMatrix, Formulation
from .common import binary_and, count_at_least, direction_sign, judged_count, new_model, relevant_at


def pair_weights(instance, direction) -> dict:
    """Net coefficient of b_d b_e in N = sign * (SP(A) - SP(B)), per unordered pair of unjudged documents."""
    sign = direction_sign(direction)
    weights = {}
    for ranking, side in ((instance.a, sign), (instance.b, -sign)):
        for i, later in enumerate(ranking, start=1):
            for earlier in ranking[: i - 1]:
                if earlier in instance.judgments or later in instance.judgments:
                    continue
                key = tuple(sorted((earlier, later)))
                weights[key] = weights.get(key, 0.0) + side / i
    return weights


def relevance_products(m, instance, direction):
    """Declare y[d, e] for every pair of unjudged documents whose product N needs.

    Under rank dominance (Instance.reduced) grade(d) >= grade(e) makes b_d b_e = b_e:
    such a pair needs no product variable, its weight goes to b_e's linear term."""
    weights, m.dominated_weight = {}, {}
    for (d, e), w in pair_weights(instance, direction).items():
        if abs(w) <= 1e-15:
            continue
        lower = e if instance.dominates(d, e) else d if instance.dominates(e, d) else None
        if lower is None:
            weights[(d, e)] = w
        else:
            m.dominated_weight[lower] = m.dominated_weight.get(lower, 0.0) + w
    m.pair_weight = weights
    relevance = {d: relevant_at(m, instance, d) for d in {d for pair in weights for d in pair}}
    pairs = {k: (relevance[k[0]], relevance[k[1]]) for k in weights}
    signs = {k: 1 if w > 0 else -1 for k, w in weights.items()}
    if isinstance(m, LinearModel):
        m.both_relevant = {}
        m.binary_and("both_relevant", pairs, signs)
    else:
        binary_and(m, "both_relevant", pairs, doc="y[d,e] = b_d * b_e", signs=signs)


def numerator_expression(m, instance, direction):
    """N = sign * (SP(A) - SP(B)): the linear terms b_d / i, the products with a judged document
    (constants, or one relevance times the judged relevant documents ranked above), and every pair
    of unjudged documents once with its net weight."""
    sign, judgments, relevant = direction_sign(direction), instance.judgments, instance.metric.is_relevant
    total = 0
    for ranking, side in ((instance.a, sign), (instance.b, -sign)):
        judged_above, unjudged_above = 0, []  # judged relevant / unjudged documents ranked above
        for i, doc in enumerate(ranking, start=1):
            weight = side / i
            if doc not in judgments:
                total += relevant_at(m, instance, doc) * (weight * (1 + judged_above))
                unjudged_above.append(doc)
            elif relevant(judgments[doc]):
                total += weight * (1 + judged_above)
                total += sum(relevant_at(m, instance, e) for e in unjudged_above) * weight
                judged_above += 1
    total += sum(w * relevant_at(m, instance, d) for d, w in m.dominated_weight.items())
    return total + sum(w * m.both_relevant[k] for k, w in m.pair_weight.items())


class PrecisionSums(Formulation):
    family_name = "sum of precisions (SSP, AP, AP(norm=min))"
    ratio = True  # AP; SSP shares the module with a constant denominator (strategies_for)
    strategies = ("enumerate", "dinkelbach")
    warm_start = {"AP": "greedy"}
    # CP-SAT for AP and AP(norm=min) from depth 50: on the DL-HARD benchmark (k = 100, no judgments,
    # 20 instances) HiGHS took up to 56.5 s (AP) and 62.4 s, uncertified (AP(norm=min)), on one topic
    # whose Dinkelbach MILPs need ~20 s of root cuts; CP-SAT certified all, max 2.7 s and 7.1 s,
    # medians 1.25 / 2.46 s (HiGHS 1.14 / 1.28 s); with the qrels both have medians 0.11-0.14 s.
    # At k = 20 (10 x 50 instances a row, all certified) HiGHS is as fast or faster: AP(norm=min) medians
    # 0.044 / 0.043 s (qrels / none) against CP-SAT's 0.047 / 0.054 s; AP 0.037 / 0.034 against 0.033 / 0.045 s.
    default_solver = {"AP": ("cpsat", 50)}

    def _base(self, instance, direction, name):
        m = new_model(instance, direction, name)
        relevance_products(m, instance, direction)
        m.numerator = pyo.Expression(expr=numerator_expression(m, instance, direction),
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

    def dinkelbach_matrix(self, instance, direction):
        """build_ratio's Dinkelbach model (N, D and their rows, lam left to the caller) written with
        solvers/direct.py's LinearModel instead of Pyomo, from the same expression code: the same
        columns and rows, row for row (tests/test_exact.py::test_ap_dinkelbach_matrix_is_the_pyomo_model).
        One AP(norm=min)@100 direction (DL-HARD qrels): ~18 ms this way, 60-140 ms through Pyomo's
        expressions and LinearStandardFormCompiler."""
        m = LinearModel(instance)
        relevance_products(m, instance, direction)
        numerator = numerator_expression(m, instance, direction)
        count = count_at_least(m, instance, instance.metric.p("rel"))
        cutoff = self.min_cutoff(instance)
        if cutoff is None:
            denominator = count
        else:  # min(k, R) by the unary u[j] = [R >= j]; known for j up to the judged relevant count
            judged = judged_count(instance, instance.metric.p("rel"))
            u = {j: 1.0 for j in range(1, judged + 1)}
            for j in range(judged + 1, judged + len(instance.unjudged) + 1):
                u[j] = m.column(("u", j))
                if j > judged + 1:
                    m.add(u[j] <= u[j - 1])
            m.add(Row(Linear.total(u.values()) - count, 0.0, 0.0))
            denominator = Linear.total(u[j] for j in u if j <= cutoff)
        return DinkelbachMatrix(m.matrix(), *m.vector(numerator), *m.vector(denominator), m.assignment)

    def min_cutoff(self, instance):
        """k when the normaliser is min(k, R), else None."""
        metric = instance.metric
        return metric.cutoff if metric.family == "AP" and metric.p("norm") == "min" else None

    def strategies_for(self, instance):
        if instance.metric.family == "SSP":
            return ("direct",)
        return self.strategies + (("capped",) if self.min_cutoff(instance) is not None else ())

    def capped(self, instance):
        """AP(norm=min)@k = SP / min(k, R) as (the AP@k instance, k): the ratio SP / R of the same
        assignments, capped (solvers.exact.solve_capped).  Measured at the final lam of three DL-HARD
        AP(norm=min)@100 instances (CP-SAT, qrels), one Dinkelbach step of the unary model against the
        AP and SSP pieces' models: 1.95 / 3.68 / 5.99 / 1.74 s a direction against 0.95 + 0.47 /
        1.43 + 0.75 / 1.10 + 0.49 / 1.23 + 0.51 s."""
        rel, k = instance.metric.p("rel"), instance.metric.cutoff
        return replace(instance, metric=parse_metric(f"AP(rel={rel})@{k}")), float(k)

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
