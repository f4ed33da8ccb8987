"""A bound on one direction of the Q-measure difference for each R, in closed form (no model): the
first bound of every box of the branch and bound (ProfileBoxes.box_bound), so that a box not yet
tested, and a direction not yet searched, report less than the trivial bound 1.

Notation as in q_measure.py: X the list the direction favours, Y the other, both cut; an
assignment's relevant documents S (|S| = R, the judged relevant ones J_rel among them); for a
relevant document at rank i of a list Z, its term T^Z_i = (beta cg_Z(i) + count_Z(i)) /
(beta cg*(i) + i), so that R (Q(X) - Q(Y)) = sum_{d in S} (T^X(d) - T^Y(d)), T^Z(d) = 0 when d is
not in Z.  u_top = the largest gain of a grade 0..G, u_rel the smallest gain of a grade >= rel.

Upper bound of T^X at rank i.  cg_X(i) <= cg*(i) (X's top i are documents of the collection) and
count_X(i) <= m_i = min(1 + P_X(i) + min(U_X(i), u - [x_i unjudged]), R), P_X(i) and U_X(i) the
judged relevant and the unjudged documents above i in X and u = R - J_rel: the documents counted
are x_i itself, judged relevant ones above it and unjudged relevant ones above it, and only u
unjudged documents are relevant, x_i among them when it is unjudged.  (m_i <= 1 + (i - 1) = i.)
With m_i <= i the map c -> (beta c + m_i) / (beta c + i) is non-decreasing, and cg*(i) <= C_i =
u_top min(i, R) when no grade below rel has a gain (then only relevant documents have one), else
u_top i.  So T^X_i <= a_i(R) = (beta C_i + m_i) / (beta C_i + i).

Lower bound of T^Y at rank j.  Of the j - 1 documents above j in Y at most NR_j = N_Y(j) +
min(U_Y(j), n - (R - J_rel)) are not relevant (N_Y(j) judged non-relevant, U_Y(j) unjudged ones
above j, and only n - (R - J_rel) unjudged documents are not relevant), and at least P_Y(j) judged
ones are, so count_Y(j) >= c_j = max(1 + P_Y(j), j - NR_j); cg_Y(j) >= u_rel count_Y(j) (every
relevant grade has a gain >= u_rel) and cg*(j) <= C_j as above.  So T^Y_j >= b_j(R) =
(beta u_rel c_j + c_j) / (beta C_j + j).

A rank holding the same document under the same set above in both lists (q_profiles.shared_ranks)
has T^X = T^Y for every assignment: its document's value is 0.  Every other document d gets
v_d(R) = a(d) - b(d) (a(d) = 0 outside X, b(d) = 0 outside Y), so for every assignment with R
relevant documents

    Q(X) - Q(Y) <= (1/R) (sum_{d judged relevant} v_d(R) + the R - J_rel largest v_d(R) of the
                          unjudged documents) = bound(R),

the sum over S being at most that (S holds every judged relevant document and R - J_rel unjudged
ones; a judged relevant document in neither list adds 0).  A box of profiles with R in
[R_lo, R_hi] is bounded by the largest bound(R) there.  The bound is weak (each document is
bounded alone, ignoring which others are relevant) but costs one sort per R, and it is below 1
as soon as X's top documents are not absent from Y.
"""

from __future__ import annotations

import math

import numpy as np

from ..instance import judged_count
from .q_profiles import shared_ranks


def bounds_by_r(instance, direction: str, *, beta: float | None = None, rel: int | None = None) -> dict[int, float]:
    """R -> bound(R) (the module docstring) for every R with J_rel <= R <= J_rel + n, R >= 1; the
    metric's beta and rel unless given.  With beta = 0 each term is a precision, count(i) / i, and
    R (Q(X) - Q(Y)) is SP(X) - SP(Y): the bound of the sums of precisions (precision_sums.quick_bound)."""
    metric, grading = instance.metric, instance.grading
    beta = metric.p("beta") if beta is None else beta
    rel = metric.p("rel") if rel is None else rel
    top = instance.max_grade
    gains = [metric.gain(g, grading) for g in range(0, top + 1)] if beta \
        else [0.0] * min(rel, top + 1) + [1.0] * max(0, top + 1 - rel)  # beta = 0: no gain enters a term
    u_top = max(gains)
    if rel > top:
        return {}
    u_rel = min(gains[rel:])
    only_relevant_gain = all(g == 0 for g in gains[:rel])
    judged = {d: grading.cap(g) for d, g in instance.judgments.items()}
    unjudged = instance.unjudged
    n, judged_relevant = len(unjudged), judged_count(instance, rel)
    better, other = (instance.a, instance.b) if direction == "a" else (instance.b, instance.a)
    r_values = np.arange(max(1, judged_relevant), judged_relevant + n + 1)
    if r_values.size == 0:
        return {}
    r = r_values[:, None].astype(float)

    def ideal_cap(ranks):  # C_i >= cg*(i), per R (rows) and rank (columns)
        return u_top * (np.minimum(ranks, r) if only_relevant_gain else np.broadcast_to(ranks, (len(r), ranks.size)))

    def above(ranking, counted):  # per rank i (1-based): how many documents above i satisfy counted
        flags = np.array([counted(d) for d in ranking], dtype=float)
        return np.concatenate(([0.0], np.cumsum(flags)[:-1]))

    not_relevant = lambda d: d in judged and judged[d] < rel  # noqa: E731
    relevant = lambda d: d in judged and judged[d] >= rel  # noqa: E731
    unjudged_here = lambda d: d not in judged  # noqa: E731
    ranks_x = np.arange(1, len(better) + 1, dtype=float)
    cap_x = ideal_cap(ranks_x)
    itself = np.array([float(unjudged_here(d)) for d in better])  # x_i is one of the u unjudged relevant ones
    unjudged_relevant = r - judged_relevant  # u, per R (rows)
    most = np.minimum(1 + above(better, relevant)
                      + np.minimum(above(better, unjudged_here), np.maximum(unjudged_relevant - itself, 0)), r)
    a = (beta * cap_x + most) / (beta * cap_x + ranks_x)
    ranks_y = np.arange(1, len(other) + 1, dtype=float)
    cap_y = ideal_cap(ranks_y)
    unjudged_not_relevant = n - (r - judged_relevant)
    at_most_not_relevant = above(other, not_relevant) + np.minimum(above(other, unjudged_here), unjudged_not_relevant)
    least = np.maximum(1 + above(other, relevant), ranks_y - at_most_not_relevant)
    b = (beta * u_rel * least + least) / (beta * cap_y + ranks_y)

    shared = {better[i - 1] for i in shared_ranks(instance)}
    rank_x = {d: i for i, d in enumerate(better)}
    rank_y = {d: j for j, d in enumerate(other)}

    def values(doc):  # v_d(R) for every R
        if doc in shared:
            return np.zeros(len(r))
        value = a[:, rank_x[doc]] if doc in rank_x else np.zeros(len(r))
        return value - b[:, rank_y[doc]] if doc in rank_y else value

    fixed = sum((values(d) for d, g in judged.items() if g >= rel and (d in rank_x or d in rank_y)), np.zeros(len(r)))
    if n:
        best_first = -np.sort(-np.stack([values(d) for d in unjudged], axis=1), axis=1)
        prefix = np.concatenate((np.zeros((len(r), 1)), np.cumsum(best_first, axis=1)), axis=1)
        chosen = prefix[np.arange(len(r)), r_values - judged_relevant]
    else:
        chosen = np.zeros(len(r))
    return {int(value): float(total) / int(value) for value, total in zip(r_values, fixed + chosen)}


def box_bound(bounds: dict[int, float], r_lo: int, r_hi: int) -> float:
    """The largest bound(R) for R_lo <= R <= R_hi (inf, no claim, when bounds_by_r has no such R)."""
    return max((bounds[value] for value in range(r_lo, r_hi + 1) if value in bounds), default=math.inf)
