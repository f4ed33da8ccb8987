"""A Q-measure box's objective made tighter where its ideal gains spread: the convexity of 1/D_i
(roof.py writes the box; rows.py its rows, which this correction is written in).

The box objective (roof.py) divides the favoured list X's numerators N_i by D_i at the box's
smallest counts, D_lo,i, and the other list Y's by D_i at its largest, D_hi,i: every profile of the
box has D_lo,i <= D_i <= D_hi,i, and N_i >= 0.  That loses N_i (1/D_lo,i - 1/D_i) on X's ranks and
N_i (1/D_i - 1/D_hi,i) on Y's, which keeps boxes open that their profiles, each on its own, would
close (docs/explanation/q-measure.md).

Notation.  D_i = beta cg*(i) + i with cg*(i) = sum_g s_g min(i, C_g) (measure.py; s_g >= 0 the gain
steps), the box lo_g <= C_g <= hi_g per profile grade g ("true" when hi_g bounds C_g: rel, or
hi_g < L); N_i the numerator of rank i (roof.py); w, delta_h and J_i as there.

Claim.  On every assignment of the box, with rows r (rows.py) all >= 0 there and kappa >= 0 below,
    sum_X N_i / D_i - sum_Y N_i / D_i <= (the box objective) - sum_r kappa_r row_r.

Proof.  X's ranks.  1/D is convex, so on [D_lo, D_hi] it lies under its chord:
1/D <= 1/D_lo - (D - D_lo) / (D_lo D_hi).  min(i, C) is concave in C, so on [lo_g, hi_g] it lies
above its chord: D_i - D_lo,i >= sum_g beta s_g theta_gi (C_g - lo_g) =: M_i >= 0, theta_gi =
(min(i, hi_g) - min(i, lo_g)) / (hi_g - lo_g) for a true hi_g > lo_g (0 otherwise: beyond a hi_g = L
the chord would pass above min(i, C)).  Any N'_i <= N_i gives N_i (D_i - D_lo,i) >= N_i M_i >=
N'_i M_i (as N_i >= 0 and M_i >= 0).  So N_i / D_i <= N_i / D_lo,i - N'_i M_i / (D_lo,i D_hi,i).
Y's ranks.  1/D lies above its tangent at D_hi: -N_i / D_i <= -N_i / D_hi,i - N_i (D_hi,i - D_i) / D_hi,i^2,
and for i >= hi_g (true), min(i, hi_g) - min(i, C_g) = hi_g - C_g >= 0, the other grades' parts
being >= 0: D_hi,i - D_i >= sum_{g: i >= hi_g} beta s_g (hi_g - C_g) =: M_i >= 0; so again
-N_i / D_i <= -N_i / D_hi,i - N'_i M_i / D_hi,i^2.
N'_i.  For an unjudged d at rank i, N_i >= N'_i = z[d,rel] (w(rel) + J_i) (roof.py's numerator
without its non-negative rest), and N'_i M_i is a sum of the rows z[d,rel] (C_g - lo_g) >= 0 ("lower"
of d and g) on X and z[d,rel] (hi_g - C_g) >= 0 ("upper") on Y, times w(rel) + J_i times the rank's
factor.  For a judged relevant document, N_i >= N'_i = J_i + sum_{e above, unjudged} delta_rel z[e,rel]
(every delta_h >= 0), and N'_i M_i is J_i times the interval rows C_g - lo_g >= 0 ("low") or
hi_g - C_g >= 0 ("high") plus delta_rel times e's "lower" or "upper" rows.  Summing over the ranks
(the shared ranks left out, as in the box objective: their terms cancel at every D_i) gives kappa,
a sum of non-negative multiples of rows that hold on the box.

So any upper bound on the right side over the box's assignments (the roof dual with multipliers,
exact/lagrangian.py) bounds the box, and the box tests use the corrected objective (all but a
graded box's rows test: exact/boxes.py).  Rows valid only on the box (the lower and upper rows,
whatever their use in the Lagrangian) are subtracted with their whole constants and coefficients
(rows.BoxRows.parts), not the Lagrangian's active ones.
Measured: docs/explanation/q-measure.md#q-measure-the-spread-of-the-ideal-gains-corrected."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ...kernels.bounds_by_count import shared_ranks
from .profiles import depth


class SpreadCorrection:
    """kappa (module docstring) for the boxes of one direction, from its BoxForm and BoxRows: per rank
    of the form's columns, which rows N'_i is made of (``by_doc``: per unjudged document, its
    coefficient in N'_i; ``judged``: N'_i's constant)."""

    def __init__(self, form):
        instance, metric, grading = form.instance, form.instance.metric, form.instance.grading
        self.instance, self.form, self.beta, self.gain, self.rel = instance, form, form.beta, form.gain, form.rel
        self.grades = form.rows.grades
        w = {g: (self.beta * self.gain[g] + (g >= self.rel)) if g else 0.0 for g in range(0, form.grades + 1)}
        delta_rel = w[self.rel] - w[self.rel - 1]
        self.valid = all(self.gain[g] >= self.gain[g - 1] for g in range(1, form.grades + 1)) and self.beta >= 0
        shared = shared_ranks(instance)
        rows, columns, values = [], [], []
        self.ranks, self.favoured, judged = [], [], []
        column = 0
        for side, ranking in enumerate(form.lists):
            judged_above, above = 0.0, []
            for i, d in enumerate(ranking, start=1):
                is_judged = d in instance.judgments
                constant = 0.0
                if is_judged:
                    grade = instance.judgments[d]
                    judged_above += self.beta * metric.gain(grade, grading) + metric.is_relevant(grade)
                    if metric.is_relevant(grade) and i not in shared:
                        constant = judged_above
                        rows += [form.index[e] for e in above]
                        columns += [column] * len(above)
                        values += [delta_rel] * len(above)
                elif i not in shared:
                    rows.append(form.index[d])
                    columns.append(column)
                    values.append(w[self.rel] + judged_above)
                if not is_judged:
                    above.append(d)
                self.ranks.append(i)
                self.favoured.append(side == 0)
                judged.append(constant)
                column += 1
        self.ranks, self.favoured, self.judged = np.array(self.ranks), np.array(self.favoured), np.array(judged)
        self.by_doc = sparse.csr_matrix((values, (rows, columns)), shape=(len(form.unjudged), column))

    def kappa(self, box) -> np.ndarray:
        """kappa over the direction's rows (BoxRows order: per grade low, high; per document and grade
        upper, lower) for ``box`` ((g, lo, hi) per profile grade): module docstring."""
        rows = self.form.rows
        count = len(self.grades)
        kappa = np.zeros(len(rows.kind))
        if not self.valid:
            return kappa
        low, high = {g: lo for g, lo, _ in box}, {g: hi for g, _, hi in box}
        cap = depth(self.instance)
        ranks = self.ranks.astype(float)
        ideal_low, ideal_high = self.form.ideal(box)
        d_lo = self.beta * ideal_low[self.ranks - 1] + ranks
        d_hi = self.beta * ideal_high[self.ranks - 1] + ranks
        spread = d_hi > d_lo
        factor = np.zeros((len(ranks), count))  # per rank and grade: the multiple of N'_i's rows
        for k, g in enumerate(self.grades):
            lo, hi = low[g], high[g]
            if not (g == self.rel or hi < cap) or self.gain[g] == self.gain[g - 1]:
                continue  # hi_g not a true count, or no gain step: this grade gives no row
            step = self.beta * (self.gain[g] - self.gain[g - 1])
            if hi > lo:  # X: the chord of min(i, C_g)
                theta = (np.minimum(ranks, hi) - np.minimum(ranks, lo)) / (hi - lo)
                factor[:, k] = np.where(self.favoured, step * theta / (d_lo * d_hi), 0.0)
            factor[:, k] += np.where(~self.favoured & (ranks >= hi), step / d_hi ** 2, 0.0)  # Y: C_g <= hi_g <= i
        factor[~spread] = 0.0
        on_x = np.where(self.favoured[:, None], factor, 0.0)  # X's ranks: the lower and low rows
        on_y = factor - on_x  # Y's ranks: the upper and high rows
        kappa[0:2 * count:2] = self.judged @ on_x
        kappa[1:2 * count:2] = self.judged @ on_y
        kappa[2 * count::2] = (self.by_doc @ on_y).ravel()  # per document and grade: upper, then lower
        kappa[2 * count + 1::2] = (self.by_doc @ on_x).ravel()
        return kappa
