"""A bound on one direction of the Q-measure difference for each relevant count R, in closed form (no
model): the first bound of every box of the Q-measure's branch and bound (formulations/q/boxes.py,
ProfileBoxes.box_bound), so that a box not yet tested, and a direction not yet searched, report less
than the trivial bound 1; with beta = 0 the bound of the sums of precisions (AP:
formulations/precision/bounds.py, quick_bound).  Both families share this kernel.

Notation as in formulations/q/measure.py: X the list the direction favours, Y the other, both cut; an
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

A rank holding the same document under the same set above in both lists (shared_ranks)
has T^X = T^Y for every assignment: its document's value is 0.  Every other document d gets
v_d(R) = a(d) - b(d) (a(d) = 0 outside X, b(d) = 0 outside Y), so for every assignment with R
relevant documents

    Q(X) - Q(Y) <= (1/R) (sum_{d judged relevant} v_d(R) + the R - J_rel largest v_d(R) of the
                          unjudged documents) = bound(R),

the sum over S being at most that (S holds every judged relevant document and R - J_rel unjudged
ones; a judged relevant document in neither list adds 0).  A box of profiles with R in
[R_lo, R_hi] is bounded by the largest bound(R) there.  The bound is weak (each document is
bounded alone, ignoring which others are relevant) but costs one sort per R (per block of R at
depth: bounds_by_r), and it is below 1 as soon as X's top documents are not absent from Y.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ..core.instance import judged_count
from ..core.deadlines import expired

# documents' values sorted in all by one bounds_by_r when each R is its own block, at most (beyond it R
# runs in blocks) ...
EXACT_ENTRIES = 4_000_000
# ... and by the halving of the blocks (a sort of n values each), at most; past the deadline at most
# PAST_DEADLINE of them (a bounded step: the bound a search stopped at its deadline reports)
REFINE_ENTRIES = 4_000_000
PAST_DEADLINE = 500_000


def shared_ranks(instance) -> frozenset:
    """Ranks i (1-based) where A and B hold the same document under the same set of documents above."""
    a, b = instance.a, instance.b
    shared, seen_a, seen_b = set(), set(), set()
    for i in range(min(len(a), len(b))):
        if a[i] == b[i] and seen_a == seen_b:
            shared.add(i + 1)
        seen_a.add(a[i])
        seen_b.add(b[i])
    return frozenset(shared)


def bounds_by_r(instance, direction: str, *, beta: float | None = None, rel: int | None = None,
                weight=None, largest: bool = False) -> dict[int, float]:
    """R -> an upper bound on bound(R) (the module docstring) for every R with J_rel <= R <= J_rel + n,
    R >= 1; the metric's beta and rel unless given.  With beta = 0 each term is a precision,
    count(i) / i, and R (Q(X) - Q(Y)) is SP(X) - SP(Y): the bound of the sums of precisions
    (formulations/precision/bounds.py, quick_bound).

    bound(R) costs a sort of the n unjudged documents' values per R: n^2 log n in all.  So the R
    run in blocks [R_lo, R_hi], each bounded with one sort: for every R of the block, bound_R over
    the values a(d) at R_hi minus b(d) at R_lo, a b_j's numerator taken at R_lo and its denominator
    at R_hi (a_i(R) and both of b_j's parts do not decrease with R: m_i, C_i, c_j and C_j do not, and
    a_i does not decrease in C_i when m_i <= i), so at least every v_d(R) of the block.  When every
    R alone stays within EXACT_ENTRIES sorted values, each R is a block, bound(R) itself, until the
    deadline (limits.expired).  The R left form one block, and the block with the largest bound
    (times ``weight(R)``, an array of R -> the caller's scale of bound(R): default 1) is halved
    until it is one R or the work passes REFINE_ENTRIES (PAST_DEADLINE once the deadline has
    passed): the largest bound(R) comes out exact where the blocks' bounds fall away from it.

    ``largest``: only the largest weighted bound(R) is wanted (a direction's bound, not a box's), so no
    R is a block of its own first: the halving alone ends with that largest one exact (a block's bound
    is at least each of its R's), the other R holding their blocks' bounds; a few dozen sorts, not one
    per R."""
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
    r_first, r_last = max(1, judged_relevant), judged_relevant + n
    if r_first > r_last:
        return {}

    def ideal_cap(ranks, r):  # C_i >= cg*(i) at R = r, per rank
        return u_top * (np.minimum(ranks, r) if only_relevant_gain else ranks)

    def above(ranking, counted):  # per rank i (1-based): how many documents above i satisfy counted
        flags = np.array([counted(d) for d in ranking], dtype=float)
        return np.concatenate(([0.0], np.cumsum(flags)[:-1]))

    not_relevant = lambda d: d in judged and judged[d] < rel  # noqa: E731
    relevant = lambda d: d in judged and judged[d] >= rel  # noqa: E731
    unjudged_here = lambda d: d not in judged  # noqa: E731
    ranks_x = np.arange(1, len(better) + 1, dtype=float)
    itself = np.array([float(unjudged_here(d)) for d in better])  # x_i is one of the u unjudged relevant ones
    relevant_x, unjudged_x = above(better, relevant), above(better, unjudged_here)
    ranks_y = np.arange(1, len(other) + 1, dtype=float)
    not_relevant_y, unjudged_y, relevant_y = above(other, not_relevant), above(other, unjudged_here), \
        above(other, relevant)

    def a_at(r):  # a_i(r) per rank of X
        cap = ideal_cap(ranks_x, r)
        most = np.minimum(1 + relevant_x + np.minimum(unjudged_x, np.maximum(r - judged_relevant - itself, 0)), r)
        return (beta * cap + most) / (beta * cap + ranks_x)

    def b_below(r_lo, r_hi):  # at most b_j(R) for every R in [r_lo, r_hi], per rank of Y
        at_most_not_relevant = not_relevant_y + np.minimum(unjudged_y, n - (r_lo - judged_relevant))
        least = np.maximum(1 + relevant_y, ranks_y - at_most_not_relevant)
        return (beta * u_rel * least + least) / (beta * ideal_cap(ranks_y, r_hi) + ranks_y)

    shared = {better[i - 1] for i in shared_ranks(instance)}
    rank_x = {d: i for i, d in enumerate(better)}
    rank_y = {d: j for j, d in enumerate(other)}

    def places(docs):  # (rank in X or -1, rank in Y or -1) per document, both -1 for a shared one
        docs = list(docs)
        in_x = np.array([-1 if d in shared else rank_x.get(d, -1) for d in docs], dtype=np.int64)
        in_y = np.array([-1 if d in shared else rank_y.get(d, -1) for d in docs], dtype=np.int64)
        return in_x, in_y

    fixed_places = places(d for d, g in judged.items() if g >= rel and (d in rank_x or d in rank_y))
    free_places = places(unjudged)

    def values(where, a, b):  # v_d per document (0 for a shared one and outside both lists): rank -1 reads a 0
        in_x, in_y = where
        return np.append(a, 0.0)[in_x] - np.append(b, 0.0)[in_y]

    def block(r_lo, r_hi):  # bound(R) or more for R = r_lo..r_hi
        a, b = a_at(r_hi), b_below(r_lo, r_hi)
        fixed = float(values(fixed_places, a, b).sum())
        free, count = values(free_places, a, b), max(r_hi - judged_relevant, 0)  # the block needs the count largest
        if count < len(free):
            free = np.partition(free, len(free) - count)[len(free) - count:] if count else free[:0]
        best_first = -np.sort(-free)
        prefix = np.concatenate(([0.0], np.cumsum(best_first)))
        r = np.arange(r_lo, r_hi + 1)
        return r, (fixed + prefix[r - judged_relevant]) / r

    bounds: dict[int, float] = {}
    first = r_first
    if not largest and (r_last - r_first + 1) * max(n, 1) <= EXACT_ENTRIES:  # a block per R, while time lasts
        while first <= r_last and not expired():
            bounds[first] = float(block(first, first)[1][0])
            first += 1
    if first > r_last:
        return bounds
    scale = (lambda r: np.ones(len(r))) if weight is None else weight
    heap, work = [], 0

    def push(r_lo, r_hi):
        nonlocal work
        r, found = block(r_lo, r_hi)
        work += max(n, 1)
        bounds.update(zip(r.tolist(), found.tolist()))
        heapq.heappush(heap, (-float(np.max(found * scale(r))), r_lo, r_hi))

    # the R left: halving the block of the largest bound until it is one R, within REFINE_ENTRIES, and
    # within PAST_DEADLINE once the deadline has passed (bounded work: the bound a stopped search reports)
    push(first, r_last)
    while work + 2 * max(n, 1) <= (REFINE_ENTRIES if not expired() else min(PAST_DEADLINE, REFINE_ENTRIES)):
        _, r_lo, r_hi = heap[0]
        if r_lo == r_hi:  # its bound is bound(R) itself: no other block's halves can reach above it
            break
        heapq.heappop(heap)
        middle = (r_lo + r_hi) // 2
        push(r_lo, middle)
        push(middle + 1, r_hi)
    return bounds


def box_bound(bounds: dict[int, float], r_lo: int, r_hi: int) -> float:
    """The largest bound(R) for R_lo <= R <= R_hi (inf, no claim, when bounds_by_r has no such R)."""
    return max((bounds[value] for value in range(r_lo, r_hi + 1) if value in bounds), default=math.inf)
