"""The closed forms and Moffat's Algorithm 1 as array kernels: one kernel per formula, over a block
of topic rows, used by the per-instance methods (heuristics/closed_form.py, alg1.py: a block of one
row) and by ``medopt matrix``'s batch path (batch/fastpath.py: a block of many topics).

Inputs are flat arrays over a block of n rows (topics): for each unjudged document of a row, its
row index (``rows``, grouped or not) and its weight difference W_A(d) - W_B(d) (``difference``:
the weight of its rank in A minus that in B, 0 where it is not ranked); per row, the judged part
of M(A) - M(B) (``base``, :func:`judged_base`) and the gain of the top grade (``top_gain``).  How a
caller finds the documents and their weights (dicts for one instance, doc-code tables for a block)
is its own; the arithmetic, and its order, is here.

* :func:`dot_product_ends`: Tan & Clarke's closed form for M(X) = sum_i W(i) u(grade_i) (P, DCG,
  SDCG, RBP).  The terms are independent, so each direction's maximum sets every document at the
  top grade where it helps that direction and at 0 elsewhere (proof: heuristics/closed_form.py).
* :func:`alg1_ends`: Algorithm 1 for nDCG (exact for G = 1; proof and the bound for G > 1:
  heuristics/alg1.py), with the ideal DCG of the judged gains plus m top-grade documents from
  :func:`ideal_dcg`.
* :func:`character_weights` and :func:`character_ends`: MED-U's closed form (SPEC 8), the dot product
  over characters with integer weights (proof: heuristics/closed_form_u.py).

Success@k and R@k have closed forms of their own, per instance, beside their proofs in their metric
modules (metrics/success.py, recall.py: ``closed_form_ends``); no batch kernel computes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def judged_base(rows_a: np.ndarray, terms_a: np.ndarray, rows_b: np.ndarray, terms_b: np.ndarray,
                n: int) -> np.ndarray:
    """Per row, the sum of A's judged terms W_A(d) u(grade_d) minus the same over B (A's sum first)."""
    return (np.zeros(n) + np.bincount(rows_a, weights=terms_a, minlength=n)) - np.bincount(
        rows_b, weights=terms_b, minlength=n)


def dot_product_ends(difference: np.ndarray, rows: np.ndarray, base: np.ndarray, top_gain: np.ndarray,
                     n: int) -> tuple[np.ndarray, np.ndarray]:
    """(value_a, value_b) per row: max M(A) - M(B) and max M(B) - M(A).  Direction a sets the documents
    with ``difference > 0`` at the top grade, direction b those with ``difference < 0``, all others at 0."""
    per_doc = top_gain[rows]
    value_a = base + np.bincount(rows, weights=np.maximum(difference, 0.0) * per_doc, minlength=n)
    value_b = -base + np.bincount(rows, weights=np.maximum(-difference, 0.0) * per_doc, minlength=n)
    return value_a, value_b


def ideal_dcg(judged_gain: np.ndarray, top_gain: np.ndarray, discount: np.ndarray, extra: int) -> np.ndarray:
    """IDCG at depth k = len(discount) with m extra top-grade documents, m = 0..extra, per row: shape
    (n, extra + 1).  ``judged_gain`` (n, k): each row's judged gains, largest first, 0-padded (the top
    grade's gain is at least each of them, so the m extra documents come first)."""
    n, k = judged_gain.shape
    steps = min(extra, k)
    ideal = np.zeros((n, steps + 1))
    for m in range(steps + 1):  # m top-grade documents come first, then the judged gains, largest first
        if k:
            terms = np.concatenate([top_gain[:, None] * discount[None, :m], judged_gain[:, :k - m] * discount[m:]],
                                   axis=1)
            ideal[:, m] = np.cumsum(terms, axis=1)[:, -1]  # rank by rank, the order of a sum along the ranking
    if extra > steps:
        ideal = np.concatenate([ideal, np.repeat(ideal[:, -1:], extra - steps, axis=1)], axis=1)
    return ideal


@dataclass
class Alg1Ends:
    """Algorithm 1 on a block: the MED per row (``value``, 0 when no ratio is positive), whether
    direction b gives it, the valid upper bound min(1, N / IDCG_J) of graded rows (N the largest
    numerator, every positive difference at the top grade), and per direction (0: a, 1: b) that
    direction's own best: its value (-inf: no positive ideal) and the indices into the input arrays of
    the documents it sets at the top grade, grouped by row in the order chosen."""

    value: np.ndarray
    direction_b: np.ndarray
    graded_bound: np.ndarray
    own_value: tuple
    own_docs: tuple

    def chosen(self) -> np.ndarray:
        """Indices of the documents at the top grade in each row's MED assignment, rows ascending."""
        picks = np.concatenate([docs[self.direction_b[rows] == bool(d)] for d, (docs, rows) in
                                enumerate(self.own_docs)])
        rows = np.concatenate([rows[self.direction_b[rows] == bool(d)] for d, (docs, rows) in
                               enumerate(self.own_docs)])
        keep = self.value[rows] > 0
        order = np.argsort(rows[keep], kind="stable")
        return picks[keep][order]


def alg1_ends(difference: np.ndarray, rows: np.ndarray, base: np.ndarray, top_gain: np.ndarray,
              judged_gain: np.ndarray, discount: np.ndarray, n: int) -> Alg1Ends:
    """Algorithm 1 for each row.  ``difference``: the documents' DCG weight differences (rank discounts);
    ``judged_gain``/``discount``: the ideal's judged gains and depth, as :func:`ideal_dcg` takes them.
    For each direction, the positive gain differences are taken largest first (ties: input order), m of
    them for every m, and the best ratio numerator / IDCG(m) kept (the first m reaching it); the MED is
    the better direction's (a on ties)."""
    source = np.arange(len(rows))
    sides = []
    for sign in (1.0, -1.0):  # each direction's positive gains, largest first (ties: first appearance)
        gain = (sign * difference) * top_gain[rows]
        keep = np.flatnonzero(gain > 0)
        order = keep[np.lexsort((source[keep], -gain[keep], rows[keep]))]
        kept_rows = rows[order]
        counts = np.bincount(kept_rows, minlength=n)
        column = np.arange(len(kept_rows)) - np.repeat(np.cumsum(counts) - counts, counts)
        sides.append((sign, order, kept_rows, gain[order], counts, column))
    width = max(int(side[4].max(initial=0)) for side in sides)
    ideal = ideal_dcg(judged_gain, top_gain, discount, width)  # the same for both directions
    ratios, numerators = [], []
    for sign, _, kept_rows, kept_gain, counts, column in sides:
        steps = np.zeros((n, width + 1))
        steps[:, 0] = sign * base
        steps[kept_rows, column + 1] = kept_gain
        numerator = np.cumsum(steps, axis=1)  # sequential, one document after another
        valid = (np.arange(width + 1)[None, :] <= counts[:, None]) & (ideal > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios.append(np.where(valid, numerator / np.where(ideal > 0, ideal, 1.0), -np.inf))
        numerators.append(numerator[np.arange(n), counts])
    width_a = ratios[0].shape[1]
    both = np.concatenate(ratios, axis=1)
    best = np.argmax(both, axis=1)
    best_value = both[np.arange(n), best]
    found = best_value > 0
    value = np.where(found, best_value, 0.0)
    direction_b = found & (best >= width_a)
    own_value, own_docs = [], []
    for ratio, (_, order, kept_rows, _, _, column) in zip(ratios, sides):
        own = np.argmax(ratio, axis=1)
        own_value.append(ratio[np.arange(n), own])
        take = column < np.where(np.isfinite(own_value[-1]), own, 0)[kept_rows]
        own_docs.append((order[take], kept_rows[take]))
    judged_ideal = ideal[:, 0]
    largest = np.maximum(np.maximum(numerators[0], numerators[1]), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        graded_bound = np.where(judged_ideal > 0, np.minimum(1.0, largest / judged_ideal), 1.0)
    return Alg1Ends(value, direction_b, graded_bound, tuple(own_value), tuple(own_docs))


def character_weights(keys_a: np.ndarray, weights_a: np.ndarray, keys_b: np.ndarray,
                      weights_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, net weights): each distinct character key of the two trailtexts once, sorted, with
    W_A(x) - W_B(x) (integers; a character's weights in one trailtext added, one per position)."""
    keys, where = np.unique(np.concatenate((keys_a, keys_b)), return_inverse=True)
    where = where.reshape(-1)
    count = len(keys_a)  # integer weights below 2^53 add exactly as floats
    net = (np.bincount(where[:count], weights=weights_a, minlength=len(keys))
           - np.bincount(where[count:], weights=weights_b, minlength=len(keys)))
    return keys, net.astype(np.int64)


def character_ends(net: np.ndarray, known: np.ndarray, relevant: np.ndarray) -> dict[str, tuple[int, np.ndarray]]:
    """{"a": (total, helps), "b": ...}: each direction's maximum of sign (U(A) - U(B)) in units of c / L
    (an integer), and the mask of the unknown characters it makes relevant (those of net weight > 0 for
    a, < 0 for b).  ``known``: the judged characters, ``relevant``: which of them are relevant."""
    fixed = int(net[known & relevant].sum())        # judged relevant characters
    free = net[~known]
    return {direction: (sign * fixed + int((sign * free).clip(min=0).sum()), ~known & (sign * net > 0))
            for direction, sign in (("a", 1), ("b", -1))}
