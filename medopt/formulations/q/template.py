"""The box models of one Q-measure instance as one compiled matrix, patched per box or profile
(strategy 'boxes': exact.boxes.solve_boxes asks for it through QMeasure.box_models).

Template.  BoxModels compiles, once per instance (both directions share it), every row any box
or profile can need (the cuts with a placeholder coefficient on rel(d), count rows with free
bounds) and patches the matrix per box: bounds of the count rows, the coefficient c of each cut (or a free row when
the box has no such cut), and the objective from the per-rank term vectors and 1/D_i.  For a
profile the patched matrix is its case model up to free rows (tests compare their optima).  The
template is written straight into a matrix (modeling.new_matrix), not with Pyomo (the same CaseTerms code builds
its rows), since a Pyomo build cost more than the box LPs it serves; a direction's box LPs run in
one HiGHS instance (backends.HighsSession).  Each direction drops the product rows that cannot bind
in its objectives (BoxModels.one_sided: the same optima, faster LPs).  Measured:
docs/explanation/q-measure.md#q-measure-the-box-template.
Collection cuts for one-profile cases.  A second template (``box_models(cases=True)``) adds the
products y[d,e,g] = rel(d) x[e,g] for every ordered pair of unjudged documents (not only e above d
in a list; one per unordered pair when G = 1) and, per document d and profile grade g, the prefix
rows taken over the whole collection (E = every other unjudged document, the judged ones counted
as J_g): rel(d) #{E + d of grade >= g} + J_g rel(d) <= hi_g rel(d) (when hi_g is a true count) and
rel(d) #{E + d of grade >= g} >= (lo_g - J_g) rel(d).  They are the prefix rows with E as large as
it gets, valid for the same reason (RLT products of rel(d) with "C_g <= hi_g" and "U_g >= lo_g -
J_g").  With them the LP relaxation of a profile equalled its MILP optimum on nearly every profile
tried (tests/exact/test_exact_q.py checks it on test profiles with G = 1..3), so solve_boxes solves a profile's LP first
(``exact_lp``) and settles the profile when the LP optimum does not beat the cutoff or its
rounded point, re-scored, reaches it; otherwise its MILP.  Only for profiles: in every box LP
the extra rows cost more than the tighter bounds save.  (Measured:
docs/explanation/q-measure.md#q-measure-collection-cuts-for-profiles.)
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from ...core.instance import judged_count
from ...modeling import MatrixModel, new_matrix
from ...kernels.bounds_by_count import shared_ranks
from .profiles import QBox, depth, profile_grades, profile_intervals
from .terms import CaseTerms

PLACEHOLDER = 0.5  # coefficient of rel(d) in the template's count cuts: never cancels an integer, patched per box


class BoxModels:
    """One direction's box models as one compiled matrix, patched per box (strategy 'boxes').

    The rows are built once for both directions (only the objective differs); each direction then
    drops the product rows its objectives cannot make bind (``for_direction``; exact.boxes keeps
    one HiGHS session per direction's template).
    The template holds every row a box or profile model of this direction can need: the shared
    rows (one_grade, limits, dominance, products, one-hot pairs), C_g >= . and C_g <= . per
    profile grade, and each prefix cut that some box can activate, written with the placeholder
    coefficient on rel(d).  For a box the patch sets the count rows' bounds, the coefficient
    c_g of rel(d) in each cut (the box's largest c_g in an upper cut, its smallest in a lower
    one, as in CaseTerms.add_valid_inequalities), frees the rows of cuts the box does not have
    (+-inf bound), and sets the objective from the per-rank term vectors and the box's
    denominators.  The patched matrix is therefore the compiled form of ``build`` for that case
    or box, up to free rows and a ranged count row written as two rows
    (tests/exact/test_exact_q.py compares their optima)."""

    def __init__(self, instance, direction, collection: bool = False):
        self.instance, self.direction = instance, direction
        rel, cap, n = instance.metric.p("rel"), depth(instance), len(instance.unjudged)
        self.rel, self.cap, self.n = rel, cap, n
        self.grades = profile_grades(instance)
        self.judged = {g: judged_count(instance, g) for g in self.grades}
        m = self.m = new_matrix(instance)  # x, one_grade, limits, dominance: new_model's rows
        terms = CaseTerms(m, instance, {g: 0 for g in self.grades}, collection=collection)
        self.exact_lp = terms.collection  # a profile's LP relaxation is its MILP optimum, in every case tried
        counts = {g: m.count_at_least(g) for g in self.grades}
        self.count_rows = {g: (m.add(counts[g] >= -1), m.add(counts[g] <= n + 1)) for g in self.grades}
        terms.add_products()
        terms.add_one_hot_pairs(m)
        cuts = []  # (kind, row, i, g, d, above)
        smallest = {g: (max(self.judged[g], 1) if g == rel else min(self.judged[g], cap)) for g in self.grades}
        for ranking in (instance.a, instance.b):
            for i, d in enumerate(ranking, start=1):
                if terms.judged(d):
                    continue
                above = [e for e in ranking[: i - 1] if not terms.judged(e)]
                for g in self.grades:
                    if smallest[g] < i:
                        judged_above = terms.judged_at_least_above(ranking, i, g)
                        row = m.add(terms.at_least_above(d, above, g) + judged_above * terms.relevance[d]
                                    + terms.self_at_least(d, g) - PLACEHOLDER * terms.relevance[d] <= 0)
                        cuts.append(("upper", row, i, g, d, len(above)))
                    if above:
                        row = m.add(terms.at_least_above(d, above, g) + terms.self_at_least(d, g)
                                    - PLACEHOLDER * terms.relevance[d] >= 0)
                        cuts.append(("lower", row, i, g, d, len(above)))
        for kind, d, g, others, judged in terms.collection_cuts():  # as prefix cuts over the whole collection
            if kind == "upper" and (g == rel or smallest[g] < cap):
                row = m.add(terms.at_least_above(d, others, g) + judged * terms.relevance[d]
                            + terms.self_at_least(d, g) - PLACEHOLDER * terms.relevance[d] <= 0)
                # active while hi_g is a true count: always for rel (its rank above every count), else hi_g < L
                cuts.append(("upper", row, judged + n + 1 if g == rel else cap, g, d, len(others)))
            elif kind == "lower":
                row = m.add(terms.at_least_above(d, others, g) + terms.self_at_least(d, g)
                            - PLACEHOLDER * terms.relevance[d] >= 0)
                cuts.append(("lower", row, cap, g, d, len(others)))
        self.matrix = m.matrix()
        A = self.matrix.A
        # per cut (arrays, one entry a cut): upper or lower, its row, rank i, grade index, |E|; and the
        # positions in A.data of the coefficients of rel(d) = sum_{h >= rel} x[d,h], with their cut
        self.cut_upper = np.array([kind == "upper" for kind, *_ in cuts], dtype=bool)
        self.cut_row, self.cut_rank, self.cut_grade, self.cut_above = (
            np.array([cut[k] for cut in cuts], dtype=int).reshape(-1) for k in (1, 2, 3, 5))
        self.cut_grade = np.searchsorted(self.grades, self.cut_grade)
        positions, owners = [], []
        for c, (_, r, _, _, d, _) in enumerate(cuts):
            start, end = A.indptr[r], A.indptr[r + 1]
            wanted = {m.x[d, h].parts[0][1] for h in m.GRADES if h >= rel}
            found = [start + k for k, j in enumerate(A.indices[start:end]) if j in wanted]
            positions += found
            owners += [c] * len(found)
        self.cut_positions, self.cut_of_position = np.array(positions, dtype=int), np.array(owners, dtype=int)
        # per side: the term ranks, their vectors (one row a term) and constants
        self.vectors = {}
        for side, ranking in (("a", instance.a), ("b", instance.b)):
            entries = [(i, *m.vector(t)) for i, t in terms.terms(ranking)]
            self.vectors[side] = (np.array([e[0] for e in entries], dtype=int),
                                  np.array([e[1] for e in entries]).reshape(len(entries), len(m.labels)),
                                  np.array([e[2] for e in entries], dtype=float))
        self.relevant, _ = m.vector(counts[rel])  # C_rel = J_rel + this . x
        self.relevant_constant = float(self.judged[rel])
        gain = {g: instance.metric.gain(g, instance.grading) for g in range(0, instance.max_grade + 1)}
        self.steps = {g: gain[g] - gain[g - 1] for g in self.grades}
        self.beta = instance.metric.p("beta")
        self.base_data = A.data.copy()
        self.shared = shared_ranks(instance)
        self.skipped = {}  # (side, ranks to skip) -> mask over the side's ranks (score_vector)
        self.and_rows = m.and_rows
        self.directions = {}

    def for_direction(self, direction) -> "BoxModels":
        """This template for one direction: its own objective, and without the product rows that
        cannot bind in it (``one_sided``).  Built once per direction."""
        if direction not in self.directions:
            other = copy.copy(self)
            other.direction = direction
            other.drop_rows(self.one_sided(direction))
            self.directions[direction] = other
        return self.directions[direction]

    def one_sided(self, direction) -> np.ndarray:
        """The product rows a model of ``direction`` can do without (row indices).

        A product y = u v whose column has a coefficient >= 0 in every box and profile objective of
        the direction (it appears only in the better list's terms) needs only y <= u and y <= v; one
        with a coefficient <= 0 everywhere (only in the other list's terms) only y >= u + v - 1
        (and y >= 0).  Why exact.  Dropping rows relaxes a model, so a box's relaxation still bounds
        it from above; and at any integer x, (x, u v) satisfies every remaining row (all rows hold at
        true products), while any feasible y gives objective coefficient * y <= coefficient * u v
        (y <= min(u, v) = u v, resp. y >= u + v - 1 = u v, at binaries), so a profile's maximum over
        the smaller model is still its true maximum; its solutions are re-scored by the evaluator
        anyway.  A product in both lists' terms (a pair ordered the same way in both, one variable)
        keeps all three rows.  Rows dropped and time saved: docs/explanation/q-measure.md#q-measure-the-box-template."""
        better, other = ("a", "b") if direction == "a" else ("b", "a")
        used = {side: np.abs(self.vectors[side][1]).sum(axis=0) > 0 for side in ("a", "b")}
        drop = []
        for j, first in self.and_rows:
            if used[better][j] and not used[other][j]:
                drop.append(first + 2)  # y >= u + v - 1
            elif used[other][j] and not used[better][j]:
                drop += [first, first + 1]  # y <= u, y <= v
        return np.array(drop, dtype=int)

    def drop_rows(self, drop) -> None:
        """Remove rows ``drop`` (product rows: no count row or cut among them) from this copy's matrix,
        renumbering the rows and matrix positions the patch uses."""
        base = self.matrix
        keep = np.ones(base.A.shape[0], dtype=bool)
        keep[drop] = False
        lengths = np.diff(base.A.indptr)
        kept_positions = np.repeat(keep, lengths)
        new_row = np.cumsum(keep) - 1
        new_position = np.cumsum(kept_positions) - 1
        self.matrix = replace(base, A=base.A[keep], row_lower=base.row_lower[keep], row_upper=base.row_upper[keep])
        self.count_rows = {g: (int(new_row[a]), int(new_row[b])) for g, (a, b) in self.count_rows.items()}
        self.cut_row = new_row[self.cut_row]
        self.cut_positions = new_position[self.cut_positions]
        self.base_data = self.base_data[kept_positions]

    def assignment(self, x) -> dict:
        return self.m.assignment(x)

    def score_vector(self, side, sizes, skip=frozenset()):
        """R * Q(side) as (vector, constant) with cg* at the counts ``sizes``, without the ranks in ``skip``."""
        ranks, vectors, constants = self.vectors[side]
        ideal = sum(step * np.minimum(ranks, sizes[g]) for g, step in self.steps.items() if step)
        weights = 1.0 / (self.beta * ideal + ranks)
        if skip:
            key = (side, skip)
            if key not in self.skipped:  # the same few rank sets recur for every box
                self.skipped[key] = np.isin(ranks, list(skip))
            weights[self.skipped[key]] = 0.0
        return weights @ vectors, float(weights @ constants)

    def patched(self, case, lam=None):
        """The matrix of ``case`` (a profile with R >= 1, or a box at ``lam``); None for the R = 0 case."""
        is_box = isinstance(case, QBox)
        if is_box:
            box = case.box
        elif case.r == 0 or not self.matrix.columns:
            return None
        else:
            box = profile_intervals(case)
        low, high = {g: lo for g, lo, _ in box}, {g: hi for g, _, hi in box}
        base = self.matrix
        row_lower, row_upper = base.row_lower.copy(), base.row_upper.copy()
        for g, (r_low, r_high) in self.count_rows.items():
            row_lower[r_low] = low[g] - self.judged[g]
            row_upper[r_high] = (high[g] - self.judged[g]) if (g == self.rel or high[g] < self.cap) else np.inf
        # upper cuts: c = hi_g, active when hi_g < i; lower: c = lo_g - J_g - (n - |E| - 1), active when > 0
        highs = np.array([high[g] for g in self.grades])[self.cut_grade]
        least = (np.array([low[g] - self.judged[g] for g in self.grades])[self.cut_grade]
                 - (self.n - self.cut_above - 1))
        size = np.where(self.cut_upper, highs, least)
        data = self.base_data.copy()
        data[self.cut_positions] += (PLACEHOLDER - size)[self.cut_of_position]  # integral either way (CP-SAT)
        row_upper[self.cut_row[self.cut_upper & (highs >= self.cut_rank)]] = np.inf  # a freed row binds nothing
        row_lower[self.cut_row[~self.cut_upper & (least <= 0)]] = -np.inf
        A = copy.copy(base.A)  # shares the template's index arrays (never written), without scipy's
        A.data = data          # constructor checks (they cost more than a small box LP's solve:
                               # docs/explanation/q-measure.md#q-measure-the-box-template)
        better, other = ("a", "b") if self.direction == "a" else ("b", "a")
        skip = self.shared if is_box else frozenset()  # a profile's objective stays the case's
        x_vector, x_constant = self.score_vector(better, low, skip)
        y_vector, y_constant = self.score_vector(other, high, skip)
        if is_box:
            c = x_vector - y_vector - lam * self.relevant
            offset = x_constant - y_constant - lam * self.relevant_constant
        else:
            r = case.r
            c, offset = (x_vector - y_vector) / r, (x_constant - y_constant) / r
        return MatrixModel(c, offset, A, row_lower, row_upper, base.lower, base.upper, base.integer, base.columns)
