"""MED for SSP@k, SP@k, AP@k and AP(norm=min)@k: sums of precisions, linearised exactly.

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

SSP@k = SP / k and SP@k = SP (unnormalised): a MILP, the same one scaled.  SP is no dot
product (b_d b_e products), so the closed form of the dot-product metrics does not apply to it.
AP@k = SP / R, R = #relevant documents of the collection
(judged anywhere + assigned), and AP(norm=min)@k = SP / min(k, R): ratios, solved
by enumerating R (each case fixes R = r, or R >= k for norm=min) or by Dinkelbach
on N - lam * D, with D = R (linear) or min(k, R) = sum_{m<=k} u[m] for the unary
encoding u[m] = [m <= R] (u[m] <= u[m-1], sum_m u[m] = R), or (strategy 'capped', the
default for norm=min) by Dinkelbach on the AP@k model with the cap k a piece of its own:
N - lam min(k, R) = max(N - lam k, N - lam R) for lam >= 0 (exact/dinkelbach.solve_capped).
R = 0 means no relevant document: both scores and the difference are 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...core.instance import judged_count
from ...core.deadlines import Ticker
from ...metrics import parse_metric
from ...modeling import (binaries, binary_and, count_at_least, equal, expression, new_matrix, new_model, objective,
                        relevant_at, row, rows, total)
from ..base import (CappedRatio, Case, CaseModels, DinkelbachMatrix, DinkelbachModels, DirectMatrix, DirectModel,
                   Formulation, ModelSize, grade_variables, register)
from .bounds import PrecisionBounds, pair_arrays, pair_count, relevance_linear


def relevance_products(m, instance, direction, scales=(1.0, 1.0)):
    """Declare y[d, e] for every pair of unjudged documents whose product N needs (``scales``: pair_arrays).

    Under rank dominance (reductions.reduce) grade(d) >= grade(e) makes b_d b_e = b_e:
    such a pair needs no product variable, its weight goes to b_e's linear term."""
    weights, m.dominated_weight = {}, {}
    tick = Ticker()
    unjudged = instance.unjudged
    first, second, pair_weight = pair_arrays(instance, direction, scales)
    for d, e, w in zip(first.tolist(), second.tolist(), pair_weight.tolist()):
        tick()  # (a loop over every pair: the deadline is checked as it goes)
        d, e = unjudged[d], unjudged[e]
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
    binary_and(m, "both_relevant", pairs, doc="y[d,e] = b_d * b_e", signs=signs)


def numerator_expression(m, instance, direction, scales=(1.0, 1.0)):
    """N = sign * (SP(A) - SP(B)): the constant and linear terms of relevance_linear (the terms b_d / i
    and the products with a judged document), and every pair of unjudged documents once with its net
    weight.  With ``scales`` (s_A, s_B): sign * (s_A SP(A) - s_B SP(B)), the products declared by
    relevance_products with the same scales."""
    constant, terms = relevance_linear(instance, direction, scales)
    numerator = constant + total(w * relevant_at(m, instance, d) for d, w in terms)
    numerator += sum(w * relevant_at(m, instance, d) for d, w in m.dominated_weight.items())
    tick = Ticker()  # one term per product: hundreds of thousands at depth 1000

    def products():
        for k, w in m.pair_weight.items():
            tick()
            yield w * m.both_relevant[k]

    return numerator + total(products())  # one sum node (modeling.total), not a chain of them


@dataclass(frozen=True)
class RelevantCount(Case):
    """R fixed: R = r, or R >= r (norm=min with r >= k, where min(k, R) = k)."""

    r: int = 0
    at_least: bool = False


@register
class PrecisionSums(PrecisionBounds, Formulation, DirectModel, CaseModels, DinkelbachModels, CappedRatio):
    families = ("SSP", "SP", "AP")
    examples = ("AP@10", "AP(norm=min)@10", "SSP@10", "SP@10")
    title = "sum of precisions (SSP, SP, AP, AP(norm=min))"
    cpsat_depth = 50  # the depth from which AP and AP(norm=min) solve on CP-SAT by default (docs render it)

    def preferred_solver(self, instance):
        """CP-SAT for AP and AP(norm=min) from depth ``cpsat_depth`` (the longer cut list), HiGHS otherwise
        (measured: docs/explanation/solvers.md#which-solver-runs-which-family)."""
        depth = max(len(instance.a), len(instance.b))
        return "cpsat" if instance.metric.family == "AP" and depth >= self.cpsat_depth else None

    def model_size(self, instance, strategy):
        """The products y[d, e] dominate: one per pair of unjudged documents of a cut list (a pair in
        both lists has one), each with its column, up to two rows over y and the two relevances (a
        grade variable per grade >= rel each) and an objective entry."""
        pairs = pair_count(instance)
        relevance = max(0, instance.max_grade - instance.metric.p("rel") + 1)
        return ModelSize(pairs * (4 + 2 * relevance) + 6 * grade_variables(instance),
                         "pyomo" if strategy == "enumerate" else "matrix",
                         what=f"{pairs:,} products of pairs of unjudged documents")

    def strategies(self, instance):
        if instance.metric.family in ("SSP", "SP"):
            return ("direct",)
        return ("enumerate", "dinkelbach") + (("capped",) if self.min_cutoff(instance) is not None else ())

    def _base(self, m, instance, direction):
        """Products, N and R on a model of either builder: the part every AP and SSP model shares."""
        relevance_products(m, instance, direction)
        numerator = expression(m, "numerator", numerator_expression(m, instance, direction),
                               doc="N: signed difference of the sums of precisions SP(A) - SP(B)")
        relevant = expression(m, "relevant_count", count_at_least(m, instance, instance.metric.p("rel")),
                              doc="R: relevant documents of the collection")
        return numerator, relevant

    # -- SSP and SP: not a ratio ---------------------------------------------------
    def scale(self, instance) -> float:
        """SSP@k = SP / k; SP@k = SP."""
        return 1.0 / instance.metric.cutoff if instance.metric.family == "SSP" else 1.0

    def build_direct(self, instance, direction):
        family = instance.metric.family
        m = new_model(instance, direction, f"{family} MILP")
        numerator, _ = self._base(m, instance, direction)
        objective(m, numerator * self.scale(instance),
                  doc="maximise SP(better)/k - SP(other)/k" if family == "SSP" else "maximise SP(better) - SP(other)")
        return m

    def direct_matrix(self, instance, direction):
        """build_direct's model from the same code, written straight into a matrix (modeling.new_matrix)
        instead of Pyomo: the same rows, row for row (tests/limits/test_limits.py::test_ssp_direct_matrix_is_the_pyomo_model),
        built in a fraction of the time and with deadline checks all the way (Pyomo's build and
        compile of an SSP@1000 model took seconds per direction: docs/limits.md#time-limits)."""
        m = new_matrix(instance)
        numerator, _ = self._base(m, instance, direction)
        matrix = m.matrix()
        c, constant = m.vector(numerator)
        matrix.c, matrix.offset = c * self.scale(instance), constant * self.scale(instance)
        return DirectMatrix(matrix, m.assignment)

    # -- AP: ratio -------------------------------------------------------------
    def build_case(self, instance, direction, case):
        m = new_model(instance, direction, f"AP, {case.label}")
        numerator, relevant = self._base(m, instance, direction)
        row(m, "fix_relevant_count", relevant >= case.r if case.at_least else equal(relevant, case.r),
            doc="the case's R")
        expression(m, "denominator", case.denominator, doc="R or min(k, R): a constant here")
        objective(m, numerator * (1.0 / case.denominator), doc="maximise N / D: the AP difference in this case")
        return m

    def dinkelbach_rows(self, m, instance, direction):
        """N, R and D = R or min(k, R) on a model of either builder, written once: min(k, R) by the
        unary u[j] = [R >= j], known (1) for j up to the judged relevant count.  (N, D)."""
        numerator, relevant = self._base(m, instance, direction)
        cutoff = self.min_cutoff(instance)
        if cutoff is None:
            return numerator, expression(m, "denominator", relevant, doc="D = R")
        judged = judged_count(instance, instance.metric.p("rel"))
        u = {j: 1.0 for j in range(1, judged + 1)}
        u.update(binaries(m, "u", range(judged + 1, judged + len(instance.unjudged) + 1), doc="u[m] = 1 iff R >= m"))
        rows(m, "unary_order", {j: u[j] <= u[j - 1] for j in u if j > judged + 1}, doc="u[m] <= u[m-1]")
        row(m, "unary_count", equal(total(u.values()), relevant), doc="sum_m u[m] = R")
        return numerator, expression(m, "denominator", total(u[j] for j in u if j <= cutoff), doc="D = min(k, R)")

    def build_dinkelbach(self, instance, direction, lam):
        m = new_model(instance, direction, f"AP, Dinkelbach step lam={lam!r}")
        numerator, denominator = self.dinkelbach_rows(m, instance, direction)
        objective(m, numerator - lam * denominator, doc="Dinkelbach: maximise N - lam * D")
        return m

    def dinkelbach_matrix(self, instance, direction):
        """build_dinkelbach's model (N, D and their rows, lam left to the caller) from the same code,
        written straight into a matrix (modeling.new_matrix) instead of Pyomo: the same columns and rows, row for row
        (tests/exact/test_exact.py::test_ap_dinkelbach_matrix_is_the_pyomo_model), without Pyomo's cost
        per expression (measured: docs/explanation/precision-sums.md#dinkelbach-for-ap-and-apnormmin)."""
        m = new_matrix(instance)
        numerator, denominator = self.dinkelbach_rows(m, instance, direction)
        return DinkelbachMatrix(m.matrix(), *m.vector(numerator), *m.vector(denominator), m.assignment)

    def min_cutoff(self, instance):
        """k when the normaliser is min(k, R), else None."""
        metric = instance.metric
        return metric.cutoff if metric.family == "AP" and metric.p("norm") == "min" else None

    def capped(self, instance):
        """AP(norm=min)@k = SP / min(k, R) as (the AP@k instance, k): the ratio SP / R of the same
        assignments, capped (exact.dinkelbach.solve_capped)."""
        rel, k = instance.metric.p("rel"), instance.metric.cutoff
        return replace(instance, metric=parse_metric(f"AP(rel={rel})@{k}")), float(k)

    def cases(self, instance):
        judged = judged_count(instance, instance.metric.p("rel"))
        cutoff = self.min_cutoff(instance)
        for r in range(max(1, judged), judged + len(instance.unjudged) + 1):
            if cutoff is not None and r >= cutoff:
                yield RelevantCount(label=f"R >= {r}", denominator=float(cutoff), r=r, at_least=True)
                return
            yield RelevantCount(label=f"R = {r}", denominator=float(r), r=r, at_least=False)
