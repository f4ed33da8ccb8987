"""Rows valid on a box of a binary quadratic form, for the roof dual's Lagrangian (exact/lagrangian.rows_bound):
``Rows``, one box's rows in the form both families' boxes use (the Q-measure's profile boxes,
formulations/q/rows.py; the relevant count's boxes below), and the relevant count's rows.

The relevant count's rows, for the sums of precisions (AP, AP(norm=min)): a box lo <= m <= hi of the
number m = sum_d b_d of unjudged relevant documents, written as rows of the relevances' quadratic
form (formulations/precision/bounds.relevance_quadratic; the search over such boxes: exact/count_boxes.py).

Rows.  With b_d in {0, 1} the relevance of unjudged document d, y_de = b_d b_e for d != e (every pair
of unjudged documents: ``complete`` adds the pairs the form lacks, with weight 0), and a box
lo <= m <= hi, each row below is >= 0 at every b of the box:
- low: m - lo; high: hi - m;
- upper, per d: b_d (hi - m) = (hi - 1) b_d - sum_{e != d} y_de   (b_d b_d = b_d);
- lower, per d: b_d (m - lo) = sum_{e != d} y_de - (lo - 1) b_d    (kept when lo > 0).
They are the box's interval multiplied by each b_d (the first level of Sherali and Adams' RLT, the
collection cuts of the Q-measure's boxes in formulations/q/rows.py with one grade and no judged
relevant document in the count).  At lo = hi = m the upper and lower rows say sum_e y_de = (m - 1) b_d:
a relevant document has exactly m - 1 relevant partners, which the roof dual (the LP of the products'
standard linearisation, solvers/roof_dual.py) does not know; moved into its objective with multipliers
>= 0 they keep it an upper bound (exact/lagrangian.py, ``rows_bound``) and bring it down to the LP
with these rows (measured: docs/explanation/precision-sums.md#ap-at-depth-the-relevant-counts-rows).

Written as Rows (constant + L b + coefficient b[d_rel] + S y >= 0 where active), one fixed list
per direction: the rows 0 and 1 are low and high, then upper and lower for each document in turn, so
that multipliers carry over from a box to its halves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class Rows:
    """The rows of one box: constant + L z + coefficient z[d_rel] + S y >= 0 where ``active``."""
    constant: np.ndarray
    L: sparse.csr_matrix
    d_rel: np.ndarray
    coefficient: np.ndarray
    S: sparse.csr_matrix
    active: np.ndarray


# rows only while the complete pair list stays at most this many products (1,500 unjudged documents):
# every roof dual of a box carries all of them (not tuned: docs/explanation/constants.md)
MAX_PAIRS = 1500 * 1499 // 2


def complete(n: int, first: np.ndarray, second: np.ndarray, weights: np.ndarray) -> tuple:
    """(first, second, weights) over every pair d < e of n variables, the given pairs' weights added in
    (either order) and the others 0: the products the rows need."""
    every_first, every_second = (side.astype(np.int64) for side in np.triu_indices(n, 1))
    low, high = np.minimum(first, second), np.maximum(first, second)
    # pair (d, e), d < e, is at position d n - d (d + 1) / 2 + e - d - 1 of triu_indices' order
    position = low * n - low * (low + 1) // 2 + high - low - 1
    every_weight = np.bincount(position, weights=weights, minlength=len(every_first)).astype(float)
    return every_first, every_second, every_weight


class CountRows:
    """The rows of every box of one direction (module docstring), over the complete pairs (d, e) of
    ``complete`` (``first`` < ``second``)."""

    def __init__(self, n: int, first: np.ndarray, second: np.ndarray):
        self.n = n
        doc = np.arange(n, dtype=np.int64)
        self.upper, self.lower = 2 + 2 * doc, 3 + 2 * doc
        size = 2 + 2 * n
        self.L = sparse.csr_matrix(
            (np.concatenate([np.ones(n), -np.ones(n), -np.ones(n), np.ones(n)]),
             (np.concatenate([np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64), self.upper, self.lower]),
              np.concatenate([doc, doc, doc, doc]))), shape=(size, n))
        pairs = np.arange(len(first), dtype=np.int64)
        self.S = sparse.csr_matrix(
            (np.concatenate([-np.ones(2 * len(first)), np.ones(2 * len(first))]),
             (np.concatenate([self.upper[first], self.upper[second], self.lower[first], self.lower[second]]),
              np.concatenate([pairs, pairs, pairs, pairs]))), shape=(size, len(first)))
        self.d_rel = np.concatenate([np.zeros(2, dtype=np.int64), np.repeat(doc, 2)])
        self.is_upper = np.zeros(size, dtype=bool)
        self.is_upper[self.upper] = True
        self.is_lower = np.zeros(size, dtype=bool)
        self.is_lower[self.lower] = True

    def at(self, lo: int, hi: int) -> Rows:
        """The rows of the box lo <= m <= hi: which apply, their constants and their coefficients on b_d."""
        active = np.where(self.is_lower, lo > 0, True)
        constant = np.zeros(len(active))
        constant[0], constant[1] = -lo, hi
        coefficient = np.where(self.is_upper, float(hi), np.where(self.is_lower, float(-lo), 0.0))
        return Rows(np.where(active, constant, 0.0), self.L, self.d_rel, np.where(active, coefficient, 0.0),
                    self.S, active)

    def interval(self, mu: float, lam: float) -> np.ndarray:
        """Multipliers that start a box where the roof dual of N - mu R is: the low row's (lam - mu) or the
        high row's (mu - lam) shifts every b_d's coefficient -lam of N - lam R to -mu."""
        start = np.zeros(2 + 2 * self.n)
        start[0], start[1] = max(lam - mu, 0.0), max(mu - lam, 0.0)
        return start
