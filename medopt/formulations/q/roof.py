"""A Q-measure box's test as a quadratic function of binary variables, for the roof dual (exact/boxes.py
bounds it by exact/lagrangian.py; the box's LP is template.py's).  The math of a box: measure.py.

Variables.  z[d,g] = [grade(d) >= g] for each unjudged document d and grade g = 1..G, with the
implications z[d,g+1] <= z[d,g]; every assignment is one such z and every z is one assignment (the
grade of d is the largest g with z[d,g] = 1, 0 when none).

The box's objective in z.  With w(g) = beta u(g) + [g >= rel], w(0) = 0 and its steps
delta_h = w(h) - w(h-1) >= 0, a document e contributes w(grade(e)) = sum_h delta_h z[e,h] to every
numerator below it, and an unjudged d at rank i has rel(d) = z[d,rel].  So the numerator of rank i,
b_i (beta cg(i) + count(i)), is
- for an unjudged d: z[d,rel] (w(rel) + J_i) + sum_{g > rel} delta_g z[d,g] + sum_{e above, unjudged}
  sum_h delta_h z[d,rel] z[e,h] (b_d w(d) = w(rel) z[d,rel] + sum_{g > rel} delta_g z[d,g] since
  z[d,g] <= z[d,rel] for g > rel);
- for a judged relevant document: J_i + sum_{e above, unjudged} sum_h delta_h z[e,h];
where J_i is the judged documents' w at and above rank i.  F(lam) of the box is
sum_{X ranks} numerator_i / D_i(lo) - sum_{Y ranks} numerator_i / D_i(hi) - lam C_rel, the ranks
shared by both lists left out (measure.py: *Shared ranks*), C_rel = J_rel + sum_d z[d,rel]: the same
function as the box's model (measure.build_box) on every integral point, written in z instead of
x and y.  It is linear in the per-rank coefficients 1/D_i, so it is stored once per direction as
sparse matrices over the ranks of both lists (``BoxForm``) and each box only multiplies them by its
coefficients.

The box's intervals are linear in z: C_g = J_g + sum_d z[d,g] with lo_g <= C_g (every profile grade)
and C_g <= hi_g (rel, and a grade whose hi_g is below L; hi_g = L means C_g >= L only).  They are not
in the quadratic function: exact/lagrangian.py moves them into it with multipliers.

When the direction has rows (rows.py), ``form`` returns (unless told ``tight=False``) F(lam) minus
non-negative multiples of them (spread.py): still at least R (difference - lam) on every assignment
of the box, and closer to it where the box's D_i spread."""

from __future__ import annotations

import numpy as np

from ...core.instance import judged_count
from ...core.deadlines import check_time
from ...kernels.bounds_by_count import shared_ranks
from .profiles import depth, ideal_gains, profile_grades
from .rows import box_rows, matrix_of
from .spread import SpreadCorrection


class BoxForm:
    """The box objectives of one direction of an instance, in z (module docstring)."""

    def __init__(self, instance, direction: str):
        metric, grading, top = instance.metric, instance.grading, instance.max_grade
        self.instance, self.rel, self.beta, self.grades = instance, metric.p("rel"), metric.p("beta"), top
        self.gain = {g: metric.gain(g, grading) for g in range(0, top + 1)}
        w = {g: (self.beta * self.gain[g] + (g >= self.rel)) if g else 0.0 for g in range(0, top + 1)}
        delta = {h: w[h] - w[h - 1] for h in range(1, top + 1)}
        self.unjudged = list(instance.unjudged)
        self.index = {d: i for i, d in enumerate(self.unjudged)}
        self.n = len(self.unjudged) * top
        better, other = (instance.a, instance.b) if direction == "a" else (instance.b, instance.a)
        self.lists = (better, other)
        shared = shared_ranks(instance)
        pairs: dict = {}  # (z index, z index) -> row
        pair_entries, linear_entries, constants = [], [], []  # (row, column, value)
        column = 0
        for ranking in self.lists:
            judged_above, above = 0.0, []
            for i, d in enumerate(ranking, start=1):
                check_time()  # O(k^2 G) entries in all: the deadline is checked rank by rank (limits.py)
                if d in instance.judgments:
                    grade = instance.judgments[d]
                    relevant = metric.is_relevant(grade)
                    judged_above += self.beta * metric.gain(grade, grading) + relevant
                    if relevant and i not in shared:
                        constants.append((column, judged_above))
                        linear_entries += [(self.var(e, h), column, delta[h]) for e in above for h in delta]
                else:
                    if i not in shared:
                        linear_entries.append((self.var(d, self.rel), column, w[self.rel] + judged_above))
                        linear_entries += [(self.var(d, g), column, delta[g]) for g in delta if g > self.rel]
                        for e in above:
                            for h in delta:
                                key = (self.var(d, self.rel), self.var(e, h))
                                if h == self.rel:  # z[d,rel] z[e,rel] = z[e,rel] z[d,rel]: one product (below)
                                    key = (min(key), max(key))
                                row = pairs.setdefault(key, len(pairs))
                                pair_entries.append((row, column, delta[h]))
                    above.append(d)
                column += 1
        self.own_pairs = len(pairs)  # the objective's products; the rows may add more (weight 0 here)
        self.rows = box_rows(self, pairs)  # the boxes' constraints in z (rows.py); may add pairs
        self.one_grade = len(profile_grades(instance)) == 1  # boxes over R alone
        self.first = np.fromiter((a for a, _ in pairs), np.int64, len(pairs))
        self.second = np.fromiter((b for _, b in pairs), np.int64, len(pairs))
        # the same arrays every time (roof_dual.reusing keeps a network for the same arrays)
        self.own_first, self.own_second = self.first[:self.own_pairs], self.second[:self.own_pairs]
        self.pair_matrix = matrix_of(pair_entries, len(pairs), column)
        self.linear_matrix = matrix_of(linear_entries, self.n, column)
        self.constant_vector = np.zeros(column)
        for c, value in constants:
            self.constant_vector[c] += value
        per_doc = np.arange(len(self.unjudged), dtype=np.int64) * top
        self.implications = (np.concatenate([per_doc + g for g in range(1, top)] + [per_doc[:0]]),
                             np.concatenate([per_doc + g - 1 for g in range(1, top)] + [per_doc[:0]]))
        self.relevant = per_doc + self.rel - 1  # z[d, rel]
        self._ideal = (None, None, None)  # (box, its ideal gains: ``ideal``)
        self.spread = None  # spread.py: the boxes' objectives tightened, in the rows' terms
        if self.rows is not None:
            self.rows.finish()
            self.spread = SpreadCorrection(self)
        self.judged_relevant = judged_count(instance, self.rel)

    def var(self, d, g) -> int:
        return self.index[d] * self.grades + g - 1

    def form(self, box, lam: float, tight: bool = True):
        """F(lam) of ``box`` ((g, lo, hi) per profile grade) as (n, constant, linear, first, second,
        weights, implications): module docstring; X's ranks divided by D_i at the box's smallest
        counts, Y's by D_i at its largest, then, when the direction has rows and ``tight``, tightened
        by the spread correction (spread.py)."""
        low, high = self.ideal(box)
        better, other = (len(ranking) for ranking in self.lists)
        coefficients = np.concatenate([1.0 / (self.beta * low[:better] + np.arange(1, better + 1)),
                                       -1.0 / (self.beta * high[:other] + np.arange(1, other + 1))])
        linear = self.linear_matrix @ coefficients
        linear[self.relevant] -= lam
        constant = float(self.constant_vector @ coefficients) - lam * self.judged_relevant
        form = (self.n, constant, linear, self.first, self.second, self.pair_matrix @ coefficients,
                self.implications)
        if self.spread is not None and tight:  # tighter where the box's ideal gains spread (spread.py)
            form = self.rows.subtracted(form, self.spread.kappa(box), box)
        return form

    def ideal(self, box) -> tuple[np.ndarray, np.ndarray]:
        """(cg*(1..L) at the box's smallest counts, at its largest); the last box's are kept (its spread
        correction asks for them again)."""
        if self._ideal[0] != box:
            self._ideal = (box, *(np.array(ideal_gains(self.instance, self.gain, counts))
                                  for counts in ({g: lo for g, lo, _ in box}, {g: hi for g, _, hi in box})))
        return self._ideal[1], self._ideal[2]

    def without_rows(self, form):
        """``form`` with only the objective's own products when the rows' extra ones carry weight 0 in it
        (no spread correction: spread.py), a smaller network for the interval descent; else ``form``."""
        n, constant, linear, _, _, weights, implications = form
        if np.any(weights[self.own_pairs:]):
            return form
        return n, constant, linear, self.own_first, self.own_second, weights[:self.own_pairs], implications

    def counts(self, box) -> list:
        """The box's intervals as (z indices, least, most or None) on sums of z: lo_g - J_g <= sum_d
        z[d,g] <= hi_g - J_g (module docstring)."""
        cap, rows = depth(self.instance), []
        per_doc = np.arange(len(self.unjudged), dtype=np.int64) * self.grades
        for g, lo, hi in box:
            judged = judged_count(self.instance, g)
            rows.append((per_doc + g - 1, lo - judged, hi - judged if g == self.rel or hi < cap else None))
        return rows

    def assignment(self, labels: np.ndarray, undetermined: int = 0) -> dict:
        """The grades of a labelling of z (undetermined labels, -1, read as ``undetermined``): the largest g
        with z[d,g] = 1."""
        labels = np.asarray(labels)
        z = np.where(labels < 0, undetermined, labels).reshape(len(self.unjudged), self.grades) == 1
        grades = np.where(z.any(axis=1), self.grades - np.argmax(z[:, ::-1], axis=1), 0)
        return dict(zip(self.unjudged, grades.tolist()))
