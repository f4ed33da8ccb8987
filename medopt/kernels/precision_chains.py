"""The exact maximum of one list's sum of precisions plus weights, over the relevances of the unjudged
documents with their count in an interval: a dynamic programme along the list's ranks (Numba).

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
is the loop below (states above hi cannot meet the interval and are left out).  The documents
not ranked in X add w_d b_d alone, so the best t of them are the t of largest weight, with the
concave prefix sums P(t) of the weights sorted in decreasing order.  The maximum is then
max over s, t with lo <= s + t <= hi of V_K(s) + P(t), and P's concavity puts the best t for a
given s at the number of positive weights, clamped into the range allowed.  Following the
choices back from the best (s, t) gives the b."""

from __future__ import annotations

import numba
import numpy as np

NONE = -1e300  # an unreachable state


@numba.njit(cache=True)
def chain_max(kind, index, judged, weights, sign, lo, hi):  # pragma: no cover - compiled
    """(the maximum, a maximiser b as int64 0/1) of sign SP_X(b) + weights . b over lo <= sum b <= hi
    (module docstring); (NONE, zeros) when no b meets the interval.  ``kind``, ``index`` and
    ``judged`` (J_i) run over the list's ranks; ``weights`` over the n unjudged documents."""
    n = weights.shape[0]
    ranked = 0
    for i in range(kind.shape[0]):
        if kind[i] == 2:
            ranked += 1
    values = np.full(hi + 1, NONE)
    values[0] = 0.0
    took = np.zeros((ranked, hi + 1), np.bool_)
    docs = np.zeros(ranked, np.int64)
    in_list = np.zeros(n, np.bool_)
    row, top = 0, 0  # the next unjudged rank's row; the largest reachable state
    for i in range(kind.shape[0]):
        rank = i + 1.0
        if kind[i] == 1:
            for s in range(top + 1):
                values[s] += sign * (judged[i] + s) / rank
        elif kind[i] == 2:
            d = index[i]
            in_list[d] = True
            docs[row] = d
            grown = min(top + 1, hi)
            for s in range(grown, 0, -1):
                candidate = values[s - 1] + sign * (judged[i] + s) / rank + weights[d]
                if candidate > values[s]:
                    values[s] = candidate
                    took[row, s] = True
            top = grown
            row += 1
    outside = np.flatnonzero(~in_list)
    order = outside[np.argsort(-weights[outside])]
    prefix = np.zeros(order.shape[0] + 1)
    positive = 0
    for t in range(order.shape[0]):
        prefix[t + 1] = prefix[t] + weights[order[t]]
        if weights[order[t]] > 0:
            positive = t + 1
    best, best_s, best_t = NONE, -1, -1
    for s in range(top + 1):
        if values[s] <= NONE / 2:
            continue
        t_lo, t_hi = max(0, lo - s), min(hi - s, order.shape[0])
        if t_lo > t_hi:
            continue
        t = min(max(positive, t_lo), t_hi)
        if values[s] + prefix[t] > best:
            best, best_s, best_t = values[s] + prefix[t], s, t
    b = np.zeros(n, np.int64)
    if best_s < 0:
        return NONE, b
    for t in range(best_t):
        b[order[t]] = 1
    s = best_s
    for r in range(ranked - 1, -1, -1):
        if s > 0 and took[r, s]:
            b[docs[r]] = 1
            s -= 1
    return best, b
