"""MED and both ends of the difference range of R-Precision (trec_eval ``Rprec``; Moffat's RPrec@k), with
no solver: one pass over the number of unjudged documents made relevant.

Problem.  Two lists X and Y (X the better list of a direction; cut at k for Rprec@k, whole for Rprec),
judgments, a top grade G and ``rel`` (relevant iff grade >= rel).  Without relevance limits every
unjudged document of either list takes any grade in 0..G, and Rprec reads a grade only through
"relevant or not", so an assignment is, for Rprec, the set S of the unjudged documents made relevant
(empty when G < rel).  R = J + |S|, J the judged relevant documents of the collection (judged anywhere:
SPEC 4 invents no relevant document outside both lists).  With the cut c(R) = R (Rprec) or min(k, R)
(Rprec@k), Rprec(L) = #relevant in L's top c / c, and 0 when R = 0.  We want max over S of
Rprec(X) - Rprec(Y).

Notation.  U is the set of unjudged documents of the two lists (empty when G < rel); for a cut c,
J_X(c) (J_Y(c)) counts the judged relevant documents of X's (Y's) top c, and each d in U has the weight
w_d(c) = [d in X's top c] - [d in Y's top c], in {-1, 0, +1}; P(c), Z(c), M(c) count the documents of U
of weight +1, 0, -1.

Claim.  The maximum is max over s = 0..|U| of v(s), where v(s) = 0 when J + s = 0 and otherwise, with
c = c(J + s),  v(s) = (J_X(c) - J_Y(c) + min(s, P(c)) - max(0, s - P(c) - Z(c))) / c;  v(s) is reached
by making relevant the s documents of largest w_d(c) (all of weight +1 first, then of weight 0, then
of weight -1) and nothing else.

Proof.  Fix s and any S of size s.  Then R = J + s and c are fixed; if R = 0 both scores are 0.
Otherwise Rprec(X) - Rprec(Y) = (J_X(c) - J_Y(c) + sum_{d in S} w_d(c)) / c: a relevant document of X's
top c is a judged relevant one or one of S there, the same for Y, and both divide by the same c.
The sum over S of s weights is at most the sum of the s largest weights of U, which is
min(s, P) - max(0, s - P - Z) (take the P weights +1, then the Z zeros, then -1s); the S of those s
documents reaches it.  So every assignment's difference is at most v(|S|), and every v(s) is reached:
the maximum over all assignments is max_s v(s), its own upper bound.  The same with X = B and Y = A
gives max Rprec(B) - Rprec(A) = -low, so the two directions are both ends of the difference range
(SPEC 7), and MED = max(high, -low).  (A document made relevant is set to G, any other to 0.)

Computation.  With r_X(d) (r_Y(d)) d's rank in X (Y), a depth past the list's end when absent,
#{d in U : d in X's top c} is a cumulative count of r_X, and so for Y and for max(r_X, r_Y) (in both
tops), which give P, Z, M for every c at once: O(|U| + depth) per direction.

Relevance limits are not handled (the exact models take those instances).
"""

from __future__ import annotations

import time

import numpy as np

from ..core.instance import Instance
from ..core.result import MedResult, RangeResult, claimed_med, claimed_range
from ..metrics.base import count_relevant

METHOD = "rprec"


def _cumulative(ranks: np.ndarray, depth: int) -> np.ndarray:
    """counts[c] = #{i : ranks[i] <= c} for c = 0..depth (1-based ranks; a rank > depth never counts)."""
    return np.concatenate([[0], np.cumsum(np.bincount(np.minimum(ranks, depth + 1), minlength=depth + 2)[1:depth + 1])])


def best_sizes(judged: int, cuts: np.ndarray, judged_x: np.ndarray, judged_y: np.ndarray, rank_x: np.ndarray,
               rank_y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """v(s) for s = 0..n (n = len(rank_x), the documents of U), by the claim of the module docstring.

    ``judged``: J.  ``cuts[R]``: c(R) for R = 0..J + n.  ``judged_x[c]``, ``judged_y[c]``: J_X(c), J_Y(c)
    for c = 0..depth (depth = len - 1, at least every cut).  ``rank_x``, ``rank_y``: 1-based ranks of U's
    documents, depth + 1 when absent.  Returns (v, the cut of each s, P at it, Z at it)."""
    depth = len(judged_x) - 1
    in_x, in_y = _cumulative(rank_x, depth), _cumulative(rank_y, depth)
    in_both = _cumulative(np.maximum(rank_x, rank_y), depth)
    s = np.arange(len(rank_x) + 1)
    cut = cuts[judged + s]
    plus, minus = in_x[cut] - in_both[cut], in_y[cut] - in_both[cut]
    zero = len(rank_x) - plus - minus
    gained = np.minimum(s, plus) - np.maximum(0, s - plus - zero)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(cut > 0, (judged_x[cut] - judged_y[cut] + gained) / np.maximum(cut, 1), 0.0)
    return value, cut, plus, zero


def rprec_ends(instance: Instance) -> dict[str, tuple[float, dict]]:
    """{"a": (max Rprec(A) - Rprec(B), an assignment), "b": (max Rprec(B) - Rprec(A), an assignment)}."""
    metric, judgments, top = instance.metric, instance.judgments, instance.grading.max_grade
    free = list(instance.unjudged) if metric.is_relevant(top) else []
    judged = count_relevant(judgments, metric)
    depth = max(len(instance.a), len(instance.b))
    cuts = np.array([metric.cut(r) for r in range(judged + len(free) + 1)], dtype=np.int64)
    depth = max(depth, int(cuts.max(initial=0)))
    ends = {}
    for direction, (x, y) in (("a", (instance.a, instance.b)), ("b", (instance.b, instance.a))):
        counts = []
        for ranking in (x, y):
            relevant = np.zeros(depth + 1, dtype=np.int64)
            relevant[1:len(ranking) + 1] = [d in judgments and metric.is_relevant(judgments[d]) for d in ranking]
            counts.append(np.cumsum(relevant))
        rank_x, rank_y = ({d: i for i, d in enumerate(ranking, start=1)} for ranking in (x, y))
        ranks_x = np.array([rank_x.get(d, depth + 1) for d in free], dtype=np.int64)
        ranks_y = np.array([rank_y.get(d, depth + 1) for d in free], dtype=np.int64)
        value, cut, plus, zero = best_sizes(judged, cuts, counts[0], counts[1], ranks_x, ranks_y)
        s = int(np.argmax(value))
        c = int(cut[s])
        weight = (ranks_x <= c).astype(np.int64) - (ranks_y <= c)
        order = np.argsort(-weight, kind="stable")  # +1 first, then 0, then -1; ties in order of appearance
        assignment = dict.fromkeys(instance.unjudged, 0)
        assignment.update(dict.fromkeys((free[i] for i in order[:s]), top))
        ends[direction] = (float(value[s]), assignment)
    return ends


def rprec_med(instance: Instance) -> MedResult:
    """MED-Rprec by the claim: the larger direction, certified (each value is its own bound)."""
    started = time.perf_counter()
    return claimed_med(instance, rprec_ends(instance), method=METHOD, started=started)


def rprec_range(instance: Instance) -> RangeResult:
    """Both ends of Rprec's difference range by the claim, each certified on its own."""
    started = time.perf_counter()
    return claimed_range(instance, rprec_ends(instance), method=METHOD, started=started)
