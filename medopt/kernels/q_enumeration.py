"""Every assignment of a small box of Q-measure profiles, scored at once (pure NumPy, no model).

In unjudged counts U_g (the unjudged documents of grade >= g) an assignment of n documents is a
chain n >= U_1 >= ... >= U_G >= 0 and a choice of documents for it: the documents of grade >= g
are a subset of those of grade >= g - 1, so a chain has C(n, U_1) C(U_1, U_2) ... C(U_{G-1}, U_G)
assignments.  ``chains`` lists the chains inside per-grade intervals while their assignments number
at most a limit, ``chain_rows`` indexes every assignment of a chain at once, and ``best_differences``
scores them all with the evaluator's vectorised sums (``metric.scores_many``), so the maximum it
returns is exact (formulations/q/boxes.py: small boxes are settled this way).
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from itertools import combinations
from math import comb, prod

import numpy as np

SIGN = {"a": 1, "b": -1}  # direction -> sign of Q(A) - Q(B)


@lru_cache(maxsize=512)
def subsets(pool: int, size: int) -> np.ndarray:
    """The size-subsets of range(pool), one sorted row each (cached: the same sizes recur across boxes)."""
    rows = list(combinations(range(pool), size))
    rows = np.array(rows, dtype=np.int64).reshape(len(rows), size)
    rows.flags.writeable = False
    return rows


def chains(n: int, top: int, intervals: dict, limit: int):
    """(the chains (U_1..U_G) with U_g in ``intervals[g]`` = (lo, hi), their number of assignments)
    when at most ``limit``, else None (the search stops as soon as the count exceeds it)."""
    found, count = [], 0

    def extend(chain):
        nonlocal count
        g = len(chain) + 1
        if g > top:
            found.append(chain)
            count += prod(comb(a, b) for a, b in zip((n,) + chain, chain))
            return
        low, high = intervals[g]
        for u in range(max(low, 0), min(high, chain[-1] if chain else n) + 1):
            extend(chain + (u,))
            if count > limit:
                return

    extend(())
    return None if count > limit else (found, count)


def chain_rows(n: int, chain) -> np.ndarray:
    """Every assignment of n documents with exactly chain[g - 1] documents of grade >= g (one row
    each, grades 0..G): the documents of grade >= g are a subset of those of grade >= g - 1, so
    row (i_1, ..., i_G) takes subset i_1 of all n documents, subset i_2 of that one, and so on,
    indexed at once with NumPy (C(n, U_1) C(U_1, U_2) ... rows)."""
    index = [np.arange(n)[None, :]]  # per level: the documents of grade >= g of each row so far
    for size in chain:
        pool = index[-1].shape[1]
        picked = subsets(pool, size)
        previous = index[-1]
        rows = np.repeat(np.arange(len(previous)), len(picked))
        picks = np.tile(picked, (len(previous), 1))
        index = [level[rows] for level in index] + [np.take_along_axis(previous[rows], picks, axis=1)]
    grades = np.zeros((len(index[-1]), n), dtype=np.int64)
    for level in index[1:]:  # a document's grade: the number of levels holding it (distinct within a row)
        grades[np.arange(len(level))[:, None], level] += 1
    return grades


def best_differences(instance, rows) -> dict:
    """direction -> (max difference, its assignment) over the assignment rows (one column per unjudged
    document, in instance.unjudged order) that meet the limits; (-inf, None) when none does."""
    metric, grading = instance.metric, instance.grading
    column = {d: j for j, d in enumerate(instance.unjudged)}
    judged = Counter(instance.judgments.values())
    counts = {g: np.full(len(rows), c) for g, c in judged.items()}
    for g in range(1, instance.max_grade + 1):
        counts[g] = counts.get(g, 0) + (rows == g).sum(axis=1)

    def grades_of(ranking):
        out = np.empty((len(rows), len(ranking)), dtype=np.int64)
        for i, d in enumerate(ranking):
            out[:, i] = rows[:, column[d]] if d in column else instance.judgments[d]
        return out

    score_a = metric.scores_many(grades_of(instance.a), counts, grading) if instance.a else np.zeros(len(rows))
    score_b = metric.scores_many(grades_of(instance.b), counts, grading) if instance.b else np.zeros(len(rows))
    outside = np.zeros(len(rows), dtype=bool)
    for limit in instance.limits:
        at_least = sum((c for g, c in counts.items() if g >= limit.grade), np.zeros(len(rows)))
        outside |= (at_least < limit.low) | ((at_least > limit.high) if limit.high is not None else False)
    answers = {}
    for direction, sign in SIGN.items():
        difference = np.where(outside, -np.inf, sign * (score_a - score_b))
        best = int(np.argmax(difference))
        answers[direction] = (-math.inf, None) if not np.isfinite(difference[best]) else \
            (float(difference[best]), {d: int(rows[best, j]) for d, j in column.items()})
    return answers


def best_over_chains(instance, found) -> dict:
    """``best_differences`` over every assignment of the chains ``found``."""
    n = len(instance.unjudged)
    return best_differences(instance, np.concatenate([chain_rows(n, chain) for chain in found]))
