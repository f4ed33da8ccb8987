"""MED for nDCG@k (recall-based, Moffat): a ratio of a linear numerator and the ideal DCG.

Numerator (linear):   N(x) = sign * ( sum_i gain(a_i) / log2(i+1) - sum_i gain(b_i) / log2(i+1) ).
Denominator (ideal DCG of the collection).  With C_g the number of documents of the
collection with grade >= g (judged ones anywhere plus assigned ones; linear in x),
the i-th largest gain of the collection is >= gain(g) exactly when i <= C_g, so

    IDCG@k = sum_{g=1..G} (gain(g) - gain(g-1)) * S(min(k, C_g)),   S(m) = sum_{i<=m} 1/log2(i+1).

Unary encoding (Dinkelbach form): the first J_g counts are known (J_g judged documents
of grade >= g); binaries u[g, m], m = J_g+1..J_g+n (n unjudged documents), with
u[g, m] >= u[g, m+1] and J_g + sum_m u[g, m] = C_g, so u[g, m] = [m <= C_g] and
S(min(k, C_g)) = S(min(k, J_g)) + sum_{m<=k} u[g, m] / log2(m+1) exactly.
Objective N - lam * IDCG.

Profile enumeration: a case fixes the capped profile c_g = min(k, C_g) for every g
(C_g = c_g when c_g < k, C_g >= k otherwise); the denominator is then a constant and
the model maximises N / IDCG(c).  Profiles with IDCG = 0 have no relevant document
at all, where both scores and the difference are 0.

Case bounds (bounded_cases).  N is linear with a weight net_d per unjudged document, so a
case's optimum is at most its rearrangement bound: the U_g documents of grade >= g taken
as those of the U_g largest nets (proof in bounded_cases).  Cases are solved best bound
first and the search stops at the first case whose bound does not beat the difference
already reached (the warm start, or an earlier case): that bound is the certificate for
the rest.  Without binding dominance pairs or limits the bound is the case's optimum whenever
the counts it picks are nested (bounded_cases), so usually one model is solved, or none
when the warm start already meets the best bound.
The default strategy while the profile grid has at most 4,000,000 points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medopt.modeling.pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from ..errors import MedoptError
from ..metrics.base import log2_discount
from .base import Case, CaseModels, DinkelbachModels, Formulation, ModelSize, grade_variables, register
from ..core.instance import judged_count
from ..kernels.ndcg_profiles import depth_of_ideal, gain_steps, prefix_discount  # shared with the chain search
from ..modeling import count_at_least, direction_sign, gain_at, new_model


# candidate profiles (before C_1 >= ... >= C_G) enumerated at most; beyond it Dinkelbach is the
# default strategy (value: docs/explanation/constants.md)
MAX_PROFILE_GRID = 4_000_000


def discounted_gain_sum(m, instance, ranking):
    return sum(log2_discount(i) * gain_at(m, instance, d) for i, d in enumerate(ranking, start=1))


@dataclass(frozen=True)
class IdealProfile(Case):
    """The capped ideal profile fixed: ``counts[g]`` = min(k, C_g) for every positive grade g."""

    counts: dict = None


@register
class NDCG(Formulation, CaseModels, DinkelbachModels):
    families = ("nDCG",)
    examples = ("nDCG@10",)
    title = "nDCG (ratio: DCG over ideal DCG)"

    def strategies(self, instance):
        """Profile enumeration (default) while the profile grid stays small, else Dinkelbach."""
        if self.grid_size(instance) <= MAX_PROFILE_GRID:
            return ("dinkelbach", "enumerate")
        return ("enumerate", "dinkelbach")

    def model_size(self, instance, strategy):
        """C_g = J_g + sum_{h >= g} x[d, h] over the unjudged documents, one count per grade: n G (G + 1) / 2
        entries in the profile (or unary) rows, which dominate once G is large; the Dinkelbach model's
        unary u[g, m] add a few per grade variable."""
        n, grades = len(instance.unjudged), instance.max_grade
        return ModelSize(n * grades * (grades + 1) // 2 + 10 * grade_variables(instance),
                         what=f"{n:,} unjudged document{'s' * (n != 1)} x {grades:,} grades, counted per grade")

    def grid_size(self, instance) -> int:
        """Candidate profiles (the product over grades of the counts each C_g can take); once past
        MAX_PROFILE_GRID, some number above it (the exact product grows without bound in G)."""
        k, free, size = depth_of_ideal(instance), len(instance.unjudged), 1
        for g in range(1, instance.max_grade + 1):
            judged = judged_count(instance, g)
            size *= min(k, judged + free) - min(k, judged) + 1
            if size > MAX_PROFILE_GRID:
                break
        return size

    def _base(self, instance, direction, name):
        m = new_model(instance, direction, name)
        sign = direction_sign(direction)
        m.numerator = pyo.Expression(
            expr=sign * (discounted_gain_sum(m, instance, instance.a) - discounted_gain_sum(m, instance, instance.b)),
            doc="N: signed difference of the two DCG numerators")
        m.at_least = pyo.Expression(m.GRADES, rule=lambda m, g: count_at_least(m, instance, g),
                                    doc="C_g: documents of the collection with grade >= g")
        return m

    def build_case(self, instance, direction, case):
        k = depth_of_ideal(instance)
        m = self._base(instance, direction, f"nDCG, ideal profile fixed ({case.label})")
        capped = case.counts
        m.profile = pyo.Constraint(
            m.GRADES, rule=lambda m, g: m.at_least[g] == capped[g] if capped[g] < k else m.at_least[g] >= k,
            doc="fix min(k, C_g) to the case's profile")
        m.denominator = pyo.Expression(expr=case.denominator, doc="IDCG of this profile (a constant)")
        m.objective = pyo.Objective(expr=m.numerator * (1.0 / case.denominator), sense=pyo.maximize,
                                    doc="maximise N / IDCG(profile): the nDCG difference in this case")
        return m

    def build_dinkelbach(self, instance, direction, lam):
        k, steps = depth_of_ideal(instance), gain_steps(instance)
        m = self._base(instance, direction, f"nDCG, Dinkelbach step lam={lam!r}")
        judged = {g: judged_count(instance, g) for g in m.GRADES}
        largest = {g: judged[g] + len(instance.unjudged) for g in m.GRADES}
        m.UNARY = pyo.Set(initialize=[(g, j) for g in m.GRADES for j in range(judged[g] + 1, largest[g] + 1)],
                          ordered=True, doc="(g, m) for the counts m the unjudged documents can add")
        m.u = pyo.Var(m.UNARY, domain=pyo.Binary, doc="u[g,m] = 1 iff C_g >= m (unary count; 1 for m <= judged)")
        m.unary_order = pyo.Constraint(
            [(g, j) for (g, j) in m.UNARY if j > judged[g] + 1], rule=lambda m, g, j: m.u[g, j] <= m.u[g, j - 1],
            doc="u[g,m] <= u[g,m-1]")
        m.unary_count = pyo.Constraint(
            m.GRADES, rule=lambda m, g: judged[g] + sum(m.u[g, j] for j in range(judged[g] + 1, largest[g] + 1))
            == m.at_least[g], doc="judged_g + sum_m u[g,m] = C_g")
        judged_part = sum(steps[g] * prefix_discount(min(k, judged[g])) for g in m.GRADES)
        m.denominator = pyo.Expression(
            expr=judged_part + sum(steps[g] * log2_discount(j) * m.u[g, j] for (g, j) in m.UNARY if j <= k),
            doc="IDCG@k = sum_g (gain(g)-gain(g-1)) sum_{m<=k} [C_g >= m]/log2(m+1)")
        m.objective = pyo.Objective(expr=m.numerator - lam * m.denominator, sense=pyo.maximize,
                                    doc="Dinkelbach: maximise N - lam * IDCG")
        return m

    def profiles(self, instance):
        """Every capped profile (c_1 >= ... >= c_G, c_g = min(k, C_g)) with IDCG > 0, as an array
        (one row per profile) and the IDCG of each; vectorised (k = 100, G = 3: ~10^5 rows)."""
        if self.grid_size(instance) > MAX_PROFILE_GRID:
            raise MedoptError(f"{instance.metric}: {self.grid_size(instance):,} candidate profiles, more than "
                              f"{MAX_PROFILE_GRID:,}: use strategy 'dinkelbach'")
        k, free = depth_of_ideal(instance), len(instance.unjudged)
        steps, grades = gain_steps(instance), range(1, instance.max_grade + 1)
        axes = [np.arange(min(k, judged_count(instance, g)), min(k, judged_count(instance, g) + free) + 1)
                for g in grades]
        # the product of the axes in meshgrid's order (first axis slowest), one grade at a time (NumPy
        # arrays have at most 64 dimensions: meshgrid failed at G = 1000), keeping C_1 >= ... >= C_G
        grid = np.zeros((1, 0), dtype=np.int64)
        for axis in axes:
            grid = np.concatenate([np.repeat(grid, len(axis), axis=0), np.tile(axis, len(grid))[:, None]], axis=1)
            if grid.shape[1] > 1:
                grid = grid[grid[:, -2] >= grid[:, -1]]
        prefix = np.concatenate([[0.0], np.cumsum([log2_discount(i) for i in range(1, k + 1)])])
        ideal = sum(steps[g] * prefix[grid[:, j]] for j, g in enumerate(grades))
        keep = ideal > 0  # no relevant document: both scores 0
        return grid[keep], ideal[keep]

    def case_of(self, instance, profile, ideal) -> Case:
        return IdealProfile(label="profile " + ",".join(map(str, profile)), denominator=float(ideal),
                            counts={g: int(c) for g, c in zip(range(1, instance.max_grade + 1), profile)})

    def cases(self, instance):
        grid, ideal = self.profiles(instance)
        return [self.case_of(instance, profile, value) for profile, value in zip(grid, ideal)]

    def bounded_cases(self, instance, direction):
        """Profile cases best first, with the rearrangement bound of each (exact when no dominance
        pair or relevance limit binds).

        N = const + sum_d gain(d) net_d over the unjudged documents, net_d = sign (w_A(d) - w_B(d))
        (discounts, 0 outside a top k), = const + sum_g s_g sum_{d: grade(d) >= g} net_d with
        s_g = gain(g) - gain(g-1) >= 0.  For U_g unjudged documents of grade >= g,
        sum_{d: grade(d) >= g} net_d <= Top(U_g), the sum of the U_g largest nets; so N <= const +
        sum_g s_g max_{U_g allowed} Top(U_g), a case allowing U_g = c_g - J_g (c_g < k) or any
        U_g >= k - J_g (c_g = k).  Divided by the case's constant IDCG this bounds the case's
        optimum; dominance pairs and limits only shrink the feasible set.  (Without them the bound
        is the case's optimum when the U_g it picks are nested, U_1 >= ... >= U_G: the nested sorted
        choice then meets every U_g at once.  They need not be: a capped grade g may pick U_g
        below U_{g+1}, and a profile may admit no chain at all, e.g. nDCG@1, G = 2, x judged 1
        elsewhere, A = (j judged 0), B = (d): the profile (1, 1) is bounded by -1/2 in direction a,
        its optimum is -1.  The case's model settles such cases; the exact maximum over every
        profile without a solver is heuristics/ndcg_profiles.py.)"""
        sign = 1.0 if direction == "a" else -1.0
        k, n = depth_of_ideal(instance), len(instance.unjudged)
        weights, constant = dict.fromkeys(instance.unjudged, 0.0), 0.0
        for ranking, side in ((instance.a, sign), (instance.b, -sign)):
            for i, d in enumerate(ranking, start=1):
                if d in weights:
                    weights[d] += side * log2_discount(i)
                else:
                    constant += side * log2_discount(i) * instance.metric.gain(instance.judgments[d], instance.grading)
        top = np.concatenate([[0.0], np.cumsum(sorted(weights.values(), reverse=True))])
        best_from = np.maximum.accumulate(top[::-1])[::-1]  # best_from[u] = max_{u' >= u} Top(u')
        grid, ideal = self.profiles(instance)
        numerator = np.full(len(grid), constant)
        for j, g in enumerate(range(1, instance.max_grade + 1)):
            judged = judged_count(instance, g)
            exact = top[np.clip(grid[:, j] - judged, 0, n)]  # U_g = c_g - J_g when c_g < k
            numerator += gain_steps(instance)[g] * np.where(grid[:, j] >= k, best_from[min(max(k - judged, 0), n)], exact)
        bound = numerator / ideal
        for row in np.argsort(-bound, kind="stable"):
            yield float(bound[row]), self.case_of(instance, grid[row], ideal[row])

    def min_denominator(self, instance):
        steps = gain_steps(instance)
        judged = sum(steps[g] * prefix_discount(min(depth_of_ideal(instance), judged_count(instance, g)))
                     for g in steps)
        smallest_positive_step = min((s for s in steps.values() if s > 0), default=1.0)
        return judged if judged > 0 else smallest_positive_step

