"""MED and both ends of the difference range of RR (trec_eval ``recip_rank``, RR@k), with no solver:
one pass over the candidates for each list's first relevant rank, as arrays over a block of instances.

Problem.  Two depth-cut lists X and Y (X the better list of a direction), judgments, a top grade G
and RR's ``rel`` (relevant iff grade >= rel).  Without relevance limits every unjudged document of
either list takes any grade in 0..G, and RR reads a grade only through "relevant or not", so an
assignment is, for RR, the set S of unjudged documents made relevant (S is empty when G < rel: no
grade an unjudged document may take is relevant).  Write RR(L) = 1 / f_L, f_L the first relevant
rank of L's top k (1/f = 0 when there is none, f = infinity).  We want max over S of
RR(X) - RR(Y).

Notation.  j_X (j_Y) is the first rank of X (Y) holding a judged relevant document (infinity if
none); p_Y(d) is d's rank in Y's top k (infinity if d is not there).  A *candidate* is an unjudged
document u at a rank r_X(u) < j_X of X, when G >= rel.

Claim.  max_S RR(X) - RR(Y) = max( 1/j_X - 1/j_Y ,  max over candidates u of
1/r_X(u) - 1/min(j_Y, p_Y(u)) ), reached by S = {} for the first term and S = {u} for a candidate.

Proof.  (Reached.)  With S = {}, X's first relevant rank is j_X and Y's is j_Y.  With S = {u}, u is
relevant and every other unjudged document is not, so X's first relevant rank is min(j_X, r_X(u))
= r_X(u), and Y's is min(j_Y, p_Y(u)).  So each term of the maximum is the difference of some
assignment.  (Nothing larger.)  Take any S.  Let f_X be X's first relevant rank under S.  Either
f_X = j_X (no document of S lies above j_X in X): then Y's first relevant rank is at most j_Y
(S only adds relevant documents), so RR(Y) >= 1/j_Y and RR(X) - RR(Y) <= 1/j_X - 1/j_Y, the first
term.  Or f_X < j_X: then the document u at rank f_X of X is in S, so it is unjudged, G >= rel,
and it is a candidate with r_X(u) = f_X; Y's first relevant rank is at most j_Y and at most p_Y(u)
(u is relevant), so RR(Y) >= 1/min(j_Y, p_Y(u)) and RR(X) - RR(Y) <= 1/r_X(u) - 1/min(j_Y, p_Y(u)),
that candidate's term.  Every assignment is therefore bounded by a term, and every term is reached:
the maximum is exact and is its own upper bound.  The same claim with X = B and Y = A gives
max RR(B) - RR(A) = -low, so the two directions are both ends of the difference range (SPEC 7) and
MED = max(high, -low).  (The document made relevant is set to G, any other unjudged one to 0.)

Consequence used by the batch path: only X's ranks up to j_X and Y's up to j_Y are read (a document
below j_Y in Y has min(j_Y, p_Y) = j_Y whether it is there or not), so each list can be cut at its
first judged relevant rank before anything else is done.

Arithmetic.  1 / min(j_Y, p_Y) is computed as max(1/j_Y, 1/p_Y) (the reciprocal of a minimum of
positive numbers is the maximum of the reciprocals, and IEEE division is monotone, so the float is
the one ``1.0 / rank`` gives), and each value is a difference of two such floats, exactly what the
metric's evaluator computes for the maximising assignment.

Relevance limits are not handled: a limit can forbid S = {u} (e.g. "at least two relevant") or
count documents at grades other than ``rel``, and the exact models take those instances.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.instance import Instance
from ..core.result import MedResult, RangeResult, claimed_med, claimed_range

METHOD = "rr"


def inverse(rank: np.ndarray) -> np.ndarray:
    """1 / rank for 1-based ranks, 0 where rank is 0 (no such rank)."""
    rank = np.asarray(rank, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(rank > 0, 1.0 / np.where(rank > 0, rank, 1.0), 0.0)


def first_relevant_ends(n: int, first_x: np.ndarray, first_y: np.ndarray, rows: np.ndarray, ranks: np.ndarray,
                        ranks_in_y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The claim of the module docstring for n instances at once (one direction, X over Y).

    ``first_x``, ``first_y`` (n,): j_X and j_Y, 1-based, 0 for none.  ``rows``, ``ranks``, ``ranks_in_y``:
    the candidates (instance row, r_X(u) 1-based, p_Y(u) 1-based or 0 for absent), in any order.
    Returns (value (n,): max RR(X) - RR(Y); pick (n,): the index into the candidates of the document to
    make relevant, -1 for none).  Ties go to S = {} and then to the first candidate given."""
    rows = np.asarray(rows, dtype=np.int64)
    inverse_y = inverse(first_y)
    value = inverse(first_x) - inverse_y
    pick = np.full(n, -1, dtype=np.int64)
    if not len(rows):
        return value, pick
    candidate = inverse(ranks) - np.maximum(inverse_y[rows], inverse(ranks_in_y))
    best = value.copy()
    np.maximum.at(best, rows, candidate)
    better = np.flatnonzero((candidate == best[rows]) & (candidate > value[rows]))
    if len(better):
        won, first = np.unique(rows[better], return_index=True)
        pick[won] = better[first]
    return best, pick


# ---------------------------------------------------------------------------
# one instance (the registry's method)


def _first_judged_relevant(metric, ranking, judgments) -> int:
    for rank, doc in enumerate(ranking, start=1):
        if doc in judgments and metric.is_relevant(judgments[doc]):
            return rank
    return 0


def rr_ends(instance: Instance) -> dict[str, tuple[float, dict]]:
    """{"a": (max RR(A) - RR(B), an assignment), "b": (max RR(B) - RR(A), an assignment)} (no limits)."""
    metric, judgments, top = instance.metric, instance.judgments, instance.grading.max_grade
    can_be_relevant = metric.is_relevant(top)
    ends = {}
    for direction, (x, y) in (("a", (instance.a, instance.b)), ("b", (instance.b, instance.a))):
        first_x, first_y = _first_judged_relevant(metric, x, judgments), _first_judged_relevant(metric, y, judgments)
        rank_y = {d: i for i, d in enumerate(y, start=1)}
        above = x[:first_x - 1] if first_x else x
        docs = [d for d in above if d not in judgments] if can_be_relevant else []
        ranks = [i for i, d in enumerate(above, start=1) if d not in judgments] if can_be_relevant else []
        value, pick = first_relevant_ends(1, np.array([first_x]), np.array([first_y]), np.zeros(len(docs), np.int64),
                                          np.array(ranks, np.int64), np.array([rank_y.get(d, 0) for d in docs], np.int64))
        assignment = dict.fromkeys(instance.unjudged, 0)
        if pick[0] >= 0:
            assignment[docs[pick[0]]] = top
        ends[direction] = (float(value[0]), assignment)
    return ends


def rr_med(instance: Instance) -> MedResult:
    """MED-RR by the claim: the larger direction, certified (each value is its own bound)."""
    started = time.perf_counter()
    return claimed_med(instance, rr_ends(instance), method=METHOD, started=started)


def rr_range(instance: Instance) -> RangeResult:
    """Both ends of RR's difference range by the claim, each certified on its own."""
    started = time.perf_counter()
    return claimed_range(instance, rr_ends(instance), method=METHOD, started=started)
