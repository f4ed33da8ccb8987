"""nDCG's ideal profile as arrays: the definitions the exact model, the chain method and the batch
kernel share, and the chain search itself (pure NumPy, no model).

An assignment of grades to the n unjudged documents has a *chain* U: U_g unjudged documents of
grade >= g, n >= U_1 >= ... >= U_G >= 0.  The collection then holds C_g = J_g + U_g documents of
grade >= g (J_g judged), and with s_g = gain(g) - gain(g-1) the ideal DCG is

    D(U) = sum_g s_g S(min(k, J_g + U_g)),   S(m) = sum_{i<=m} 1/log2(i+1).

For one direction, T(u) is the sum of the u largest net weights and c the judged part of the
numerator; the best numerator of a chain is N(U) = c + sum_g s_g T(U_g) (the rearrangement).
:func:`chain_search` maximises N(U) / D(U) over every chain of many rows at once (Dinkelbach, each
step's maximiser found exactly by a dynamic programme over the grades).  Why this is the exact
maximum of the nDCG difference, and its bound, are proved in
:mod:`medopt.heuristics.ndcg_profiles` (module docstring).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..core.deadlines import OutOfTime, Ticker, check_room
from ..metrics.base import log2_discount

# Dinkelbach steps at most: lam rises strictly at each step over the finitely many chain values, so
# the search ends by itself; this only guards against a float cycle (a row stopped by it is not
# marked converged, its bound is still proven)
MAX_STEPS = 200
# cells (rows x grades x (n + 1)) handled at once: the block is cut into pieces of at most this many
CHUNK_CELLS = 1 << 18
CELL_BYTES = 8 * 8  # the arrays chain_search holds per (row, grade, count) cell, about


def gain_steps(instance) -> dict[int, float]:
    """gain(g) - gain(g-1) for g = 1..G (the ideal-DCG weight of 'at least grade g')."""
    gain, tick = (lambda g: instance.metric.gain(g, instance.grading)), Ticker()  # G calls: under the deadline
    steps = {}
    for g in range(1, instance.max_grade + 1):
        tick()
        steps[g] = gain(g) - gain(g - 1)
    return steps


def depth_of_ideal(instance) -> int:
    """The k of IDCG@k; without a cutoff every relevant document counts."""
    largest = len(instance.judgments) + len(instance.unjudged)
    return instance.metric.cutoff if instance.metric.cutoff is not None else largest


def prefix_discount(m: int) -> float:
    return sum(log2_discount(i) for i in range(1, m + 1))


@lru_cache(maxsize=64)
def prefix_discounts(m: int) -> np.ndarray:
    """S(0), S(1), ..., S(m) as an array (read-only, cached)."""
    values = np.concatenate([[0.0], np.cumsum([log2_discount(i) for i in range(1, m + 1)])])
    values.flags.writeable = False
    return values


def judged_at_least(instance) -> np.ndarray:
    """J_1, ..., J_G: judged documents of the collection with (capped) grade >= g."""
    held = np.zeros(instance.max_grade + 2, dtype=np.int64)  # judged documents per capped grade 0..G
    for grade, count in instance.judged_grades.items():
        held[min(max(grade, 0), instance.max_grade)] += count
    return np.cumsum(held[::-1])[::-1][1:instance.max_grade + 1]


def top_sums(nets: np.ndarray) -> np.ndarray:
    """T(0..n): T(u) the sum of the u largest of ``nets``."""
    return np.concatenate([[0.0], np.cumsum(-np.sort(-np.asarray(nets, dtype=np.float64), kind="stable"))])


def chain_search(top: np.ndarray, judged: np.ndarray, steps: np.ndarray, constant: np.ndarray,
                 depth: np.ndarray) -> tuple:
    """max over chains of N(U) / D(U) for each row (0 for a chain with D(U) = 0).

    ``top`` (rows, W + 1): T(u), -inf for u above the row's n; ``judged`` (rows, G): J_g; ``steps``
    (rows, G): s_g >= 0 (0 for grades a row does not have); ``constant`` (rows,): c; ``depth``
    (rows,): k.  Returns (value, chain (rows, G), bound, converged): the value reached by the chain,
    a proven upper bound of every chain's value, and whether Dinkelbach stopped by itself (then the
    bound is the value up to rounding).  Under a deadline (limits.until) a row still open when it
    passes keeps the chain reached, bound inf (no claim), not converged; a block predicted not to fit
    under the memory ceiling raises OutOfRoom before any array (limits.check_room).
    """
    top, judged, steps = np.asarray(top, np.float64), np.asarray(judged, np.int64), np.asarray(steps, np.float64)
    constant, depth = np.asarray(constant, np.float64), np.asarray(depth, np.int64)
    rows = len(top)
    grades = judged.shape[1]
    value, bound = np.zeros(rows), np.zeros(rows)
    chain, converged = np.zeros((rows, grades), np.int64), np.zeros(rows, bool)
    per_row = grades * top.shape[1]
    size = max(1, CHUNK_CELLS // max(per_row, 1))
    for begin in range(0, rows, size):
        part = slice(begin, begin + size)
        value[part], chain[part], bound[part], converged[part] = _search(
            top[part], judged[part], steps[part], constant[part], depth[part])
    return value, chain, bound, converged


def _search(top, judged, steps, constant, depth) -> tuple:
    rows, width = top.shape
    grades = judged.shape[1]
    check_room(rows * grades * width * CELL_BYTES)  # under the memory ceiling, or OutOfRoom before any array
    valid = np.isfinite(top)  # u <= n
    column = np.arange(width)
    deepest = int(min(int(depth.max(initial=0)), int(judged.max(initial=0)) + width - 1))
    prefix = prefix_discounts(max(deepest, 0))
    counts = np.minimum(judged[:, :, None] + column[None, None, :], depth[:, None, None])
    ideal = steps[:, :, None] * prefix[np.minimum(counts, deepest)]            # s_g S(min(k, J_g + u))
    gain = steps[:, :, None] * np.where(valid, top, 0.0)[:, None, :]          # s_g T(u)
    smallest_step = np.where(steps > 0, steps, np.inf).min(axis=1)
    zero_ideal = ideal[:, :, 0].sum(axis=1)                                   # D of the chain 0
    least_ideal = np.where(zero_ideal > 0, zero_ideal, smallest_step)         # smallest positive D
    # the start: the best chain with every U_g equal (Moffat's Algorithm 1 when G = 1: often the answer)
    flat_ideal = ideal.sum(axis=1)
    flat = np.where(valid, constant[:, None] + steps.sum(axis=1)[:, None] * np.where(valid, top, 0.0), -np.inf)
    flat = np.where(flat_ideal > 0, flat / np.where(flat_ideal > 0, flat_ideal, 1.0), np.where(valid, 0.0, -np.inf))
    start = np.argmax(flat, axis=1)
    lam = flat[np.arange(rows), start]
    chain = np.repeat(start[:, None], grades, axis=1)
    slack = np.zeros(rows)
    active = np.ones(rows, bool)
    converged = np.zeros(rows, bool)
    for _ in range(MAX_STEPS):
        at = np.flatnonzero(active)
        if not len(at):
            break
        try:
            found, best = _best_chain(gain[at], ideal[at], valid[at], lam[at], constant[at])
        except OutOfTime:  # the deadline: the rows still open keep the chain reached, with no bound
            slack[at] = np.inf
            break
        picked = np.take_along_axis(gain[at], found[:, :, None], axis=2)[:, :, 0].sum(axis=1) + constant[at]
        denominator = np.take_along_axis(ideal[at], found[:, :, None], axis=2)[:, :, 0].sum(axis=1)
        ratio = np.where(denominator > 0, picked / np.where(denominator > 0, denominator, 1.0), 0.0)
        rising = ratio > lam[at]
        lam[at[rising]], chain[at[rising]] = ratio[rising], found[rising]
        done = at[~rising]
        slack[done], converged[done], active[done] = best[~rising], True, False
    else:
        at = np.flatnonzero(active)  # the guard ended the search: the last lam's own F bounds it
        if len(at):
            try:
                slack[at] = _best_chain(gain[at], ideal[at], valid[at], lam[at], constant[at])[1]
            except OutOfTime:
                slack[at] = np.inf
    bound = lam + np.maximum(slack, 0.0) / least_ideal
    return lam, chain, bound, converged


def _best_chain(gain, ideal, valid, lam, constant) -> tuple:
    """The chain maximising N(U) - lam D(U) for each row, and that maximum F(lam).

    phi_g(u) = s_g T(u) - lam s_g S(min(k, J_g + u)); V_G = phi_G, V_g(u) = phi_g(u) + max_{u' <= u}
    V_{g+1}(u'); F = c + max_u V_1(u); the chain is read back from the grade 1 up."""
    rows, grades, width = gain.shape
    phi = np.where(valid[:, None, :], gain - lam[:, None, None] * ideal, -np.inf)
    value = np.empty_like(phi)
    value[:, -1] = phi[:, -1]
    tick = Ticker(256)  # a grade's step is one pass over the rows' counts: G of them (G may be millions)
    for g in range(grades - 2, -1, -1):
        tick()
        value[:, g] = phi[:, g] + np.maximum.accumulate(value[:, g + 1], axis=1)
    found = np.empty((rows, grades), np.int64)
    found[:, 0] = np.argmax(value[:, 0], axis=1)
    column = np.arange(width)[None, :]
    for g in range(1, grades):
        tick()
        found[:, g] = np.argmax(np.where(column <= found[:, g - 1:g], value[:, g], -np.inf), axis=1)
    best = constant + value[np.arange(rows), 0, found[:, 0]]
    return found, best
