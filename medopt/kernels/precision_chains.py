"""The exact maximum of one list's sum of precisions plus weights, over the relevances of the unjudged
documents with their count in an interval: a dynamic programme along the list's ranks (its loops
compiled by Numba, the rest NumPy).

Problem.  One list X of K ranks, each holding a judged non-relevant document (kind 0), a judged
relevant one (kind 1) or unjudged document d (kind 2, ``index`` d); n unjudged documents in all,
b_d in {0, 1} their relevances.  With rel_i the relevance at rank i and C(i) = rel_1 + ... + rel_i,
    SP_X(b) = sum_{i <= K} rel_i C(i) / i,
and we want  max  sign SP_X(b) + sum_d w_d b_d  over the b with lo <= sum_d b_d <= hi.

Claim.  ``chain_max`` returns that maximum and a b reaching it.

Proof.  Let s_i be the number of unjudged relevant documents among the first i ranks and J_i the
judged relevant ones (fixed), so C(i) = J_i + s_i.  Rank i's term depends on b only through
rel_i and s_i: a judged relevant document adds sign (J_i + s_i) / i whatever it is; an unjudged d
adds, when b_d = 1, sign (J_i + s_i) / i + w_d with s_i = s_{i-1} + 1, and nothing (s_i = s_{i-1})
when b_d = 0.  So V_i(s), the best sum of the first i ranks' terms and weights with s_i = s, obeys
V_i(s) = max(V_{i-1}(s), V_{i-1}(s - 1) + sign (J_i + s) / i + w_d) at an unjudged rank and
V_i(s) = V_{i-1}(s) + sign (J_i + s) / i at a judged relevant one (V_0(0) = 0, others -inf), which
is ``_forward`` (states above hi cannot meet the interval and are left out).  The documents not
ranked in X add w_d b_d alone, so the best t of them are the t of largest weight, with the concave
prefix sums P(t) of the weights sorted in decreasing order.  The maximum is then max over s, t with
lo <= s + t <= hi of V_K(s) + P(t), and P's concavity puts the best t for a given s at the number of
positive weights, clamped into the range allowed.  Following the choices back from the best s
(``_back``) and taking the t documents of largest weight gives the b."""

from __future__ import annotations

import math

import numba
import numpy as np

NONE = -1e300  # an unreachable state of the recurrence
# Seconds the first call in a process may take: Numba compiles the loops where no compiled copy is
# cached yet, or loads them from the cache: docs/limits.md#time-limits
FIRST_CALL = 2.0


@numba.njit(cache=True)
def _forward(kind, index, judged, weights, sign, hi):  # pragma: no cover - compiled
    """(V_K over the states 0..hi, which states each unjudged rank's document was taken in, those
    documents in rank order, the largest reachable state): the module docstring's recurrence."""
    ranked = 0
    for i in range(kind.shape[0]):
        if kind[i] == 2:
            ranked += 1
    values = np.full(hi + 1, NONE)
    values[0] = 0.0
    took = np.zeros((ranked, hi + 1), np.bool_)
    docs = np.zeros(ranked, np.int64)
    row, top = 0, 0  # the next unjudged rank's row; the largest reachable state
    for i in range(kind.shape[0]):
        rank = i + 1.0
        if kind[i] == 1:
            for s in range(top + 1):
                values[s] += sign * (judged[i] + s) / rank
        elif kind[i] == 2:
            d = index[i]
            docs[row] = d
            grown = min(top + 1, hi)
            for s in range(grown, 0, -1):
                candidate = values[s - 1] + sign * (judged[i] + s) / rank + weights[d]
                if candidate > values[s]:
                    values[s] = candidate
                    took[row, s] = True
            top = grown
            row += 1
    return values, took, docs, top


@numba.njit(cache=True)
def _back(took, docs, state, b):  # pragma: no cover - compiled
    """Set b_d = 1 for the ranked documents the best path to ``state`` took, from the last rank up."""
    for row in range(docs.shape[0] - 1, -1, -1):
        if state > 0 and took[row, state]:
            b[docs[row]] = 1
            state -= 1


def ready(time_left: float | None) -> bool:
    """Whether chain_max can be called with ``time_left`` seconds left (None: no limit): its loops are
    compiled or loaded in this process already, or the time left covers FIRST_CALL (a compile cannot
    be interrupted at a deadline)."""
    return time_left is None or bool(_forward.signatures and _back.signatures) or time_left >= FIRST_CALL


def chain_max(kind, index, judged, weights, sign: float, lo: int, hi: int) -> tuple:
    """(the maximum, a maximiser b as int64 0/1) of sign SP_X(b) + weights . b over lo <= sum b <= hi
    (module docstring); (-inf, zeros) when no b meets the interval.  ``kind``, ``index`` and
    ``judged`` (J_i) run over the list's ranks (int64); ``weights`` over the n unjudged documents."""
    n = len(weights)
    b = np.zeros(n, dtype=np.int64)
    if hi < 0 or lo > hi:
        return -math.inf, b
    values, took, docs, top = _forward(kind, index, judged, weights, float(sign), int(hi))
    outside = np.ones(n, dtype=bool)
    outside[docs] = False
    outside = np.flatnonzero(outside)
    order = outside[np.argsort(-weights[outside], kind="stable")]
    prefix = np.concatenate(([0.0], np.cumsum(weights[order])))
    states = np.arange(top + 1)
    low, high = np.maximum(0, lo - states), np.minimum(hi - states, len(order))
    valid = (low <= high) & (values[:top + 1] > NONE / 2)
    if not valid.any():
        return -math.inf, b
    taken = np.where(valid, np.clip(np.count_nonzero(weights[order] > 0), low, np.maximum(low, high)), 0)
    totals = np.where(valid, values[:top + 1] + prefix[taken], -np.inf)
    best = int(np.argmax(totals))
    b[order[:taken[best]]] = 1
    _back(took, docs, best, b)
    return float(totals[best]), b


def chain_states(kind, index, judged, weights) -> tuple:
    """(V_K(s) for s = 0..top, the largest count the list reaches, and ``point(s)``: a b (int64 0/1 over
    the n unjudged documents, only the list's own set) reaching V_K(s)) for sign +1 and no interval: the
    recurrence of the module docstring along the list's ranks, every state kept.  The documents not
    ranked in the list are left at 0 (their weights are the caller's)."""
    n = len(weights)
    values, took, docs, top = _forward(kind, index, judged, np.asarray(weights, dtype=np.float64), 1.0, max(n, 0))

    def point(state: int) -> np.ndarray:
        b = np.zeros(n, dtype=np.int64)
        _back(took, docs, int(state), b)
        return b

    return values[:top + 1].copy(), top, point
