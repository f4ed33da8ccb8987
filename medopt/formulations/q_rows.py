"""A Q-measure box's constraints in z, for the roof dual's Lagrangian (exact/lagrangian.py, rows_bound):
the box's intervals and the prefix rows of its LP (q_measure.py, *Valid inequalities*), each row
written as

    constant + L z + S (z_f z_s) >= 0

on every assignment of the box, with (f, s) the pairs of the box's quadratic form (q_roof.BoxForm).

The rows, for grade g of the box (interval lo_g..hi_g; J_g judged documents of grade >= g; n unjudged
documents; z[d,g] = [grade(d) >= g]):
- interval, low side: sum_d z[d,g] - (lo_g - J_g) >= 0; high side: (hi_g - J_g) - sum_d z[d,g] >= 0
  (rel, and a grade whose hi_g is a true count: q_roof.BoxForm.counts);
- prefix upper, for an unjudged d at rank i of either list, E the unjudged documents above it there,
  when hi_g < i:  z[d,rel] (hi_g - J_g(i)) - z[d,max(g,rel)] - sum_{e in E} z[d,rel] z[e,g] >= 0, with
  J_g(i) the judged documents of grade >= g above rank i: when d is relevant, the top i holds
  J_g(i) + [grade(d) >= g] + #{e in E: grade(e) >= g} documents of grade >= g, at most C_g <= hi_g
  (z[d,rel] z[d,max(g,rel)] = z[d,max(g,rel)]: the implications);
- prefix lower, when l = lo_g - J_g - (n - |E| - 1) > 0 and E is not empty:
  sum_{e in E} z[d,rel] z[e,g] + z[d,max(g,rel)] - l z[d,rel] >= 0: the U_g >= lo_g - J_g unjudged
  documents of grade >= g lie in E, d or the n - |E| - 1 others.
Both prefix rows are the box LP's rows (q_terms.CaseTerms.add_valid_inequalities) multiplied out in z,
where rel(d) x[e,.] summed over grades >= g is z[d,rel] z[e,g]; they hold at every integral point of
the box, so any multipliers >= 0 on them keep the Lagrangian an upper bound.

The rows of a direction form one fixed list (every list, rank, grade and side), so multipliers carry
over from a box to its halves; a box switches on the rows that apply to it and sets their
coefficients on z[d,rel] and their constants (``at``).  The rows bring the roof dual to the box
LP's bound (the LP's duals as multipliers give exactly its optimum: LP duality, the roof dual being
the LP of the products' standard linearisation), so a box the LP closes can be closed by maximum
flows (measured: docs/speed.md#q-measure-the-box-lps-rows-in-the-roof-dual)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..instance import judged_count
from .q_profiles import depth, profile_grades


@dataclass(frozen=True)
class Rows:
    """The rows of one box: constant + L z + coefficient z[d_rel] + S y >= 0 where ``active``."""
    constant: np.ndarray
    L: sparse.csr_matrix
    d_rel: np.ndarray
    coefficient: np.ndarray
    S: sparse.csr_matrix
    active: np.ndarray


class BoxRows:
    """The rows of every box of one direction (module docstring); built with the direction's BoxForm,
    before its pairs are fixed: a product a row needs and the form lacks (a shared rank's) is added to
    ``pairs`` with no weight."""

    def __init__(self, form, pairs: dict):
        instance, rel, top = form.instance, form.rel, form.grades
        grading, judgments = instance.grading, instance.judgments
        self.grades = profile_grades(instance)
        self.cap, self.n_docs = depth(instance), len(form.unjudged)
        self.judged = {g: judged_count(instance, g) for g in self.grades}
        kind, grade, rank, above_count, judged_above, d_rel = [], [], [], [], [], []
        linear, products = [], []  # (row, z index, value), (row, pair key, value)
        for g in self.grades:  # the intervals: low side, high side
            for side in (1, -1):
                row = len(kind)
                kind.append("low" if side == 1 else "high")
                grade.append(g), rank.append(0), above_count.append(0), judged_above.append(0), d_rel.append(0)
                linear += [(row, form.var(d, g), float(side)) for d in form.unjudged]
        for ranking in form.lists:
            above = []
            for i, d in enumerate(ranking, start=1):
                if d in judgments:
                    continue
                for g in self.grades:
                    judged = sum(1 for e in ranking[: i - 1] if e in judgments and grading.cap(judgments[e]) >= g)
                    for side, name in ((-1, "upper"), (1, "lower")):
                        row = len(kind)
                        kind.append(name), grade.append(g), rank.append(i), above_count.append(len(above))
                        judged_above.append(judged), d_rel.append(form.var(d, rel))
                        linear.append((row, form.var(d, max(g, rel)), float(side)))
                        for e in above:
                            key = (form.var(d, rel), form.var(e, g))
                            if g == rel:
                                key = (min(key), max(key))
                            products.append((row, pairs.setdefault(key, len(pairs)), float(side)))
                above.append(d)
        self.kind, self.grade = np.array(kind), np.array(grade)
        self.rank, self.above = np.array(rank), np.array(above_count)
        self.judged_above, self.d_rel = np.array(judged_above), np.array(d_rel, dtype=np.int64)
        self.size, self.n, self._pairs, self._products = len(kind), form.n, pairs, products
        self.L = _matrix(linear, self.size, form.n)
        self.S = None  # once the pairs are fixed (finish)
        self.rel, self.top = rel, top

    def finish(self) -> None:
        """S, once the form's pairs are all known."""
        self.S = _matrix(self._products, self.size, len(self._pairs))
        del self._products, self._pairs

    def at(self, box) -> Rows:
        """The rows of ``box`` ((g, lo, hi) per profile grade): which apply, their constants and their
        coefficients on z[d,rel] (module docstring)."""
        low = {g: lo for g, lo, _ in box}
        high = {g: hi for g, _, hi in box}
        lo = np.array([low[g] for g in self.grade], dtype=float)
        hi = np.array([high[g] for g in self.grade], dtype=float)
        judged = np.array([self.judged[g] for g in self.grade], dtype=float)
        bounded = (self.grade == self.rel) | (hi < self.cap)  # hi_g a true count
        least = lo - judged - (self.n_docs - self.above - 1)
        kind = self.kind
        active = np.where(kind == "low", True, np.where(kind == "high", bounded, np.where(
            kind == "upper", hi < self.rank, (least > 0) & (self.above > 0))))
        constant = np.where(kind == "low", judged - lo, np.where(kind == "high", hi - judged, 0.0))
        coefficient = np.where(kind == "upper", hi - self.judged_above, np.where(kind == "lower", -least, 0.0))
        return Rows(np.where(active, constant, 0.0), self.L, self.d_rel, np.where(active, coefficient, 0.0),
                    self.S, active)


def _matrix(entries, rows: int, columns: int):
    if not entries:
        return sparse.csr_matrix((rows, columns))
    r, c, v = zip(*entries)
    return sparse.csr_matrix((v, (r, c)), shape=(rows, columns))
