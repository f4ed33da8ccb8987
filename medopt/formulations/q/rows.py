"""A Q-measure box's constraints in z, for the roof dual's Lagrangian (exact/lagrangian.py, rows_bound):
the box's intervals and the collection cuts of its profiles' LP (template.py, *Collection cuts*),
each row written as

    constant + L z + coefficient z[d,rel] + S (z_f z_s) >= 0

on every assignment of the box, with (f, s) pairs of the box's quadratic form (roof.BoxForm, which
holds a product for every pair of unjudged documents once these rows are built).

The rows, for grade g of the box (interval lo_g..hi_g; J_g judged documents of grade >= g; E the
unjudged documents other than d; z[d,g] = [grade(d) >= g]):
- interval, low side: sum_d z[d,g] - (lo_g - J_g) >= 0; high side: (hi_g - J_g) - sum_d z[d,g] >= 0
  (rel, and a grade whose hi_g is a true count: roof.BoxForm.counts);
- upper, per unjudged d, when hi_g is a true count:
  (hi_g - J_g) z[d,rel] - z[d,max(g,rel)] - sum_{e in E} z[d,rel] z[e,g] >= 0: when d is relevant, the
  collection holds J_g + [grade(d) >= g] + #{e in E: grade(e) >= g} = C_g <= hi_g documents of grade
  >= g (z[d,rel] z[d,max(g,rel)] = z[d,max(g,rel)] by the implications);
- lower, per unjudged d, when lo_g - J_g > 0 and E is not empty:
  sum_{e in E} z[d,rel] z[e,g] + z[d,max(g,rel)] - (lo_g - J_g) z[d,rel] >= 0: C_g >= lo_g.
They are the collection cuts multiplied out in z (rel(d) x[e,.] summed over grades >= g is
z[d,rel] z[e,g]), the box LP's prefix rows with E as large as it gets: those follow from them and
the products' McCormick rows (sum over the e outside a prefix of z[d,rel] z[e,g] <= their number
times z[d,rel]).  They hold at every integral point of the box, so any multipliers >= 0 on them keep
the Lagrangian an upper bound; at the duals of the LP with these rows (the roof dual being the LP of
the products' standard linearisation) the roof dual gives that LP's optimum, so a profile its LP
settles can be settled by maximum flows (measured:
docs/explanation/q-measure.md#q-measure-the-box-lps-rows-in-the-roof-dual).

Built for every box (over R alone, or over several grades) while their products stay at most
ROW_PRODUCTS.  A box over R alone is tested with the rows alone; a graded box by the interval descent
(lagrangian_bound), by the rows, or by both, whichever has closed more of the direction's boxes for its
work (exact/boxes.py, ``BoxRun.graded_tests``).  Every box's objective but the graded rows test's is
tightened by non-negative multiples of the rows (spread.py, ``subtracted``).  The rows of a direction
form one fixed list, so multipliers carry over from a box to its halves; a box switches on the rows that
apply to it and sets their coefficients and constants (``at``).  They are built with NumPy, all the
products of one grade at once."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ...core.instance import judged_count
from ...core.deadlines import check_time
from ...kernels.box_rows import Rows
from .profiles import depth, profile_grades


# rows only while their products z[d,rel] z[e,g] (every pair of unjudged documents, every profile grade
# g; the one of g = rel counted once) are at most this many: every roof dual with the rows carries them
# (180,000: 600 unjudged documents over R alone; not tuned: docs/explanation/constants.md)
ROW_PRODUCTS = 600 * 599 // 2


def row_products(n: int, grades: int) -> int:
    """The products of the rows of n unjudged documents and ``grades`` profile grades (rel one of them)."""
    return n * (n - 1) // 2 + n * (n - 1) * (grades - 1)


def box_rows(form, pairs: dict):
    """The direction's BoxRows when their products are at most ROW_PRODUCTS, else None (the boxes over R
    alone then go on to their LPs, the graded ones keep the interval descent alone)."""
    products = row_products(len(form.unjudged), len(profile_grades(form.instance)))
    return BoxRows(form, pairs) if products <= ROW_PRODUCTS else None


class BoxRows:
    """The rows of every box of one direction (module docstring); built with the direction's BoxForm,
    before its pairs are fixed: a product a row needs and the form lacks is added to ``pairs`` with
    no weight."""

    def __init__(self, form, pairs: dict):
        instance, rel = form.instance, form.rel
        self.grades = profile_grades(instance)
        self.cap, self.rel = depth(instance), rel
        self.judged = {g: judged_count(instance, g) for g in self.grades}
        documents, per = len(form.unjudged), form.grades  # z[d,g] is z index d * per + g - 1 (BoxForm.var)
        count = len(self.grades)
        doc = np.arange(documents, dtype=np.int64)
        # rows: the intervals (per grade: low, high), then per document and grade: upper, lower
        self.kind = np.array(["low", "high"] * count + ["upper", "lower"] * (documents * count))
        self.grade = np.array([g for g in self.grades for _ in (0, 1)] +
                              [g for _ in range(documents) for g in self.grades for _ in (0, 1)])
        self.grade_index = np.searchsorted(self.grades, self.grade)  # each row's grade's place in grades
        self.judged_rows = np.array([self.judged[g] for g in self.grades], dtype=float)[self.grade_index]
        self.is_kind = {name: self.kind == name for name in ("low", "high", "upper", "lower")}
        self.d_rel = np.concatenate([np.zeros(2 * count, dtype=np.int64),
                                     np.repeat(doc * per + rel - 1, 2 * count)])
        first_row = 2 * count + (doc[:, None] * count + np.arange(count)[None, :]) * 2  # upper; lower is +1
        rows, columns, values = [], [], []
        for k, g in enumerate(self.grades):
            rows += [np.full(documents, 2 * k), np.full(documents, 2 * k + 1), first_row[:, k], first_row[:, k] + 1]
            columns += [doc * per + g - 1] * 2 + [doc * per + max(g, rel) - 1] * 2
            values += [np.ones(documents), -np.ones(documents), -np.ones(documents), np.ones(documents)]
        self.L = sparse.csr_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(columns))),
                                   shape=(len(self.kind), form.n))
        # the products z[d,rel] z[e,g], e != d: their pair in the form (added with no weight when new)
        d_of, e_of = (side.ravel() for side in np.meshgrid(doc, doc, indexing="ij"))
        d_of, e_of = d_of[d_of != e_of], e_of[d_of != e_of]
        keys = []
        for g in self.grades:
            check_time()  # O(n^2) products per grade (limits.py)
            left, right = d_of * per + rel - 1, e_of * per + g - 1
            if g == rel:  # z[d,rel] z[e,rel] = z[e,rel] z[d,rel]: one product
                left, right = np.minimum(left, right), np.maximum(left, right)
            keys.append(left * form.n + right)
        codes = np.concatenate(keys)
        known = np.fromiter((a * form.n + b for a, b in pairs), np.int64, len(pairs))
        order = np.argsort(known)
        spot = np.clip(np.searchsorted(known[order], codes), 0, max(len(known) - 1, 0))
        found = (known[order][spot] == codes) if len(known) else np.zeros(len(codes), dtype=bool)
        index = np.empty(len(codes), dtype=np.int64)
        index[found] = order[spot[found]]
        fresh, position = np.unique(codes[~found], return_inverse=True)
        index[~found] = len(pairs) + position
        for code in fresh.tolist():  # in index order, as setdefault would number them
            pairs[divmod(code, form.n)] = len(pairs)
        block = len(d_of)  # per grade: the products of every (d, e), d's rows first_row[d, k] and + 1
        product_rows = np.concatenate([first_row[d_of, k] for k in range(count)])
        self._products = (np.concatenate([product_rows, product_rows + 1]), np.concatenate([index, index]),
                          np.concatenate([-np.ones(block * count), np.ones(block * count)]))
        self.others = documents - 1
        self._pairs, self.S = pairs, None

    def finish(self) -> None:
        """S, once the form's pairs are all known."""
        rows, columns, values = self._products
        self.S = sparse.csr_matrix((values, (rows, columns)), shape=(len(self.kind), len(self._pairs)))
        self.transposed = (self.L.T.tocsr(), self.S.T.tocsr())  # (subtracted: once, not per box)
        del self._products, self._pairs

    def parts(self, box) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(constants, coefficients on z[d,rel], which rows hold) of every row for ``box`` ((g, lo, hi) per
        profile grade): module docstring.  A row holds on the box unless it needs hi_g to be a true count
        (high, upper) and it is not."""
        low, high = {g: lo for g, lo, _ in box}, {g: hi for g, _, hi in box}
        lo = np.array([low[g] for g in self.grades], dtype=float)[self.grade_index]
        hi = np.array([high[g] for g in self.grades], dtype=float)[self.grade_index]
        judged = self.judged_rows
        bounded = (self.grade == self.rel) | (hi < self.cap)  # hi_g a true count
        kind = self.is_kind
        constant = np.where(kind["low"], judged - lo, np.where(kind["high"], hi - judged, 0.0))
        coefficient = np.where(kind["upper"], hi - judged, np.where(kind["lower"], judged - lo, 0.0))
        return constant, coefficient, kind["low"] | kind["lower"] | bounded

    def at(self, box) -> Rows:
        """The rows of ``box`` ((g, lo, hi) per profile grade): which apply, their constants and their
        coefficients on z[d,rel] (module docstring); a lower row applies only when it can bind
        (lo_g - J_g > 0 and other unjudged documents exist)."""
        constant, coefficient, holds = self.parts(box)
        active = np.where(self.is_kind["lower"], (coefficient < 0) & (self.others > 0), holds)
        return Rows(np.where(active, constant, 0.0), self.L, self.d_rel, np.where(active, coefficient, 0.0),
                    self.S, active)

    def subtracted(self, form: tuple, kappa: np.ndarray, box) -> tuple:
        """``form`` minus sum_r kappa_r row_r(z) (kappa >= 0, zero on rows that do not hold on ``box``):
        the rows' constants, linear parts and products moved into it (spread.py)."""
        constant, coefficient, _ = self.parts(box)
        n, shift, linear, first, second, weights, implications = form
        transposed_l, transposed_s = self.transposed
        linear = linear - transposed_l @ kappa - np.bincount(self.d_rel, coefficient * kappa, minlength=n)
        return (n, shift - float(constant @ kappa), linear, first, second, weights - transposed_s @ kappa,
                implications)


def matrix_of(entries, rows: int, columns: int) -> sparse.csr_matrix:
    """A sparse matrix of (row, column, value) entries (repeated ones added)."""
    if not entries:
        return sparse.csr_matrix((rows, columns))
    r, c, v = zip(*entries)
    return sparse.csr_matrix((v, (r, c)), shape=(rows, columns))
