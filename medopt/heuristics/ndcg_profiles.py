"""Exact MED and difference range for nDCG@k and nDCG, any grades and gains, without side
constraints: every ideal profile, each with its rearrangement, searched as arrays.

Notation (SPEC 1-4).  A direction is X over Y, sign s = +1 for M(A) - M(B) ("a") and -1 for
M(B) - M(A) ("b").  The unjudged documents of the two cut lists are d_1..d_n, x_d in {0..G} their
grades.  disc_L(d) = 1/log2(r+1) at d's rank r in the cut list L, 0 when d is not in it;
w(d) = s (disc_A(d) - disc_B(d)) is d's net weight and c = s (sum over the judged documents of A of
disc_A gain - the same over B) the judged part.  s_g = gain(g) - gain(g-1) >= 0 for g = 1..G (gains
are non-decreasing with gain(0) = 0, SPEC 2), so gain(x) = sum_{g <= x} s_g.  J_g is the number of
judged documents of the collection (anywhere, SPEC 1) whose capped grade is >= g, and
S(m) = sum_{i <= m} 1/log2(i+1).  k is the cutoff; without one, any number at least the size of the
collection (``depth_of_ideal``), so that min(k, C) = C below.

Claim.  The direction's maximum of s (nDCG(A) - nDCG(B)) over all (G+1)^n assignments is the
maximum, over the chains U = (U_1..U_G) with n >= U_1 >= ... >= U_G >= 0, of

    R(U) = N(U) / D(U)  (0 when D(U) = 0),   N(U) = c + sum_g s_g T(U_g),
    D(U) = sum_g s_g S(min(k, J_g + U_g)),

T(u) the sum of the u largest net weights; and the assignment giving the document at position i
(1-based) of the net weights sorted decreasingly the grade #{g : U_g >= i} attains R(U).

Proof.
1. The numerator.  s (DCG(A) - DCG(B)) = c + sum_d gain(x_d) w(d)
   = c + sum_g s_g sum_{d : x_d >= g} w(d).
2. The denominator depends on the chain only.  Let U_g = #{d : x_d >= g}; the U_g are nested,
   n >= U_1 >= ... >= U_G >= 0.  The collection has C_g = J_g + U_g documents of grade >= g
   (judged ones and assigned ones; MED invents none outside the lists, SPEC 4), so its i-th
   largest gain is sum_g s_g [i <= C_g], and IDCG@k = sum_{i <= k} disc(i) sum_g s_g [i <= C_g]
   = D(U).  Both lists share it, so the direction's difference is the numerator over D(U); when
   D(U) = 0 every document of positive gain is absent, both scores are 0 (SPEC 3) and so is the
   numerator of step 1 (each term's gain or net is then 0: no judged document has positive gain).
3. Rearrangement inside a profile.  Fix the chain U (so the ideal profile and D(U)).  Each set
   {d : x_d >= g} has U_g documents, so its net weights sum to at most T(U_g); with s_g >= 0 the
   numerator is at most N(U).  The nested assignment of the claim has chain U and its set of grade
   >= g is the first U_g documents of the sorted order, whose sum is T(U_g) for every g at once:
   it attains N(U).  So the maximum over assignments of chain U is R(U) (both when D(U) > 0 and
   when D(U) = 0), and the direction's maximum is the maximum of R over the finitely many chains.
   Documents of net weight <= 0 are not left out: a chain whose U_g reaches them gives them
   grades (to raise the ideal DCG less than it costs, or because the profile needs them), and
   every chain is searched.
4. Searching every chain (Dinkelbach with an exact step).  For a number lam let
   F(lam) = max_U N(U) - lam D(U) = c + max_U sum_g phi_g(U_g),
   phi_g(u) = s_g T(u) - lam s_g S(min(k, J_g + u)): a sum of one term per grade over a chain.
   The dynamic programme V_G = phi_G, V_g(u) = phi_g(u) + max_{u' <= u} V_{g+1}(u') (u <= n) gives
   max_u V_1(u) = max over all chains, each counted once (V_g(u) is the best of the terms g..G over
   chains with U_g = u), and reading the argmaxima back from grade 1 gives a maximiser: O(G n)
   work.  Start at lam = R(U0) for U0 the best of the chains with all U_g equal (U0 = 0 among
   them; for G = 1 this is Moffat's Algorithm 1, often the answer already); while the maximiser U
   of F(lam) has R(U) > lam, set lam = R(U).  lam rises strictly through the finitely many values
   of R, so this ends.  If F(lam) > 0, its maximiser U has D(U) > 0 (D(U) = 0 gives N(U) = 0 by step 2)
   and so R(U) > lam; hence the search ends with F(lam) <= 0, i.e. N(U) <= lam D(U) for every
   chain: R(U) <= lam where D(U) > 0, and where D(U) = 0, R(U) = 0 <= lam (then D(0) = 0, so
   R(0) = 0 <= the start, and lam only rose).  lam = R(U*) for the kept chain U*: the maximum.
5. The bound in floating point.  Every chain with D(U) > 0 has D(U) >= D_min, where D_min = D(0)
   when D(0) > 0 and otherwise the smallest positive s_g (such a chain has C_g >= 1 for some g
   with s_g > 0, and S(1) = 1).  From N(U) - lam D(U) <= F(lam), R(U) <= lam + max(F(lam), 0) /
   D_min: the upper bound reported, the value itself when the computed F(lam) is not positive.
6. Ranges (SPEC 7).  Each direction's maximum is exact on its own, with its own assignment: the
   high end of M(A) - M(B) is direction a's maximum, the low end minus direction b's.  MED is the
   larger of the two maxima.

Relation to the exact model (``formulations/ndcg.py``): its profile cases are the capped chains
min(k, C_g) and its case bound (``bounded_cases``) is step 3's rearrangement; here the profiles are
not listed one by one but searched by step 4's programme, so neither the number of grades nor the
depth makes a grid (the exact model's grid has about C(k + G, G) profiles).  Side constraints
(relevance limits) are not handled: a limit can cut the nested assignment of step 3 off.  The
arithmetic is :func:`medopt.kernels.ndcg_profiles.chain_search`, shared with the batch kernel.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.instance import Instance
from ..core.bounds import trivial_bound
from ..kernels.ndcg_profiles import (CELL_BYTES, chain_search, depth_of_ideal, gain_steps, judged_at_least,
                                     top_sums)
from ..core.deadlines import OutOfTime, deadline_after, memory_ceiling, memory_limit, until
from ..metrics.base import log2_discount
from ..core.result import End, MedResult, RangeResult, certify, certify_range

NAME = "ndcg-profiles"


def too_large(instance: Instance) -> str | None:
    """Why the chain search would not fit in the memory limit (two rows of G x (n + 1) cells), or None."""
    cells = 2 * instance.max_grade * (len(instance.unjudged) + 1)
    if cells * CELL_BYTES > memory_limit():
        return (f"{instance.max_grade:,} grades x {len(instance.unjudged) + 1:,} counts would take more than the "
                f"memory limit ({memory_limit() / 2 ** 30:.1f} GB)")
    return None


def net_weights(instance: Instance) -> tuple[np.ndarray, float]:
    """disc_A(d) - disc_B(d) for each unjudged document (instance.unjudged order) and the judged
    part of DCG(A) - DCG(B) (direction a; direction b negates both)."""
    metric, grading, judged = instance.metric, instance.grading, instance.judgments
    nets = dict.fromkeys(instance.unjudged, 0.0)
    constant = 0.0
    for ranking, side in ((instance.a, 1.0), (instance.b, -1.0)):
        for i, d in enumerate(ranking, start=1):
            if d in nets:
                nets[d] += side * log2_discount(i)
            else:
                constant += side * log2_discount(i) * metric.gain(judged[d], grading)
    return np.fromiter(nets.values(), np.float64, len(nets)), constant


def chain_assignment(docs, nets: np.ndarray, chain) -> dict:
    """Step 3's nested assignment: the document at position i of the nets sorted decreasingly (ties
    in the given order) gets grade #{g : U_g >= i}."""
    order = np.argsort(-nets, kind="stable")
    counts = np.asarray(chain, np.int64)
    grades = (counts[None, :] > np.arange(len(docs))[:, None]).sum(axis=1)
    return {docs[j]: int(g) for j, g in zip(order.tolist(), grades.tolist())}


def profile_ends(instance: Instance, time_limit: float | None = None) -> dict[str, End]:
    """Each direction's maximum (steps 1-5): {"a": End for max M(A) - M(B), "b": max M(B) - M(A)}.
    Under ``time_limit`` (seconds) and the memory ceiling (limits.memory_ceiling) a direction still
    open when either is reached ends with the chain reached and the trivial bound, status timeout."""
    nets, constant = net_weights(instance)
    docs = instance.unjudged
    with until(deadline_after(time_limit)), memory_ceiling():
        try:
            steps = gain_steps(instance)
            top = np.stack([top_sums(nets), top_sums(-nets)])
            judged = np.repeat(judged_at_least(instance)[None, :], 2, axis=0)
            step = np.repeat(np.array([steps[g] for g in range(1, instance.max_grade + 1)])[None, :], 2, axis=0)
            value, chain, bound, converged = chain_search(top, judged, step, np.array([constant, -constant]),
                                                          np.full(2, depth_of_ideal(instance)))
        except OutOfTime:  # no room for the arrays (or the deadline before them): nothing searched
            zero = {d: 0 for d in docs}
            return {direction: End(zero, trivial_bound(instance), "timeout") for direction in ("a", "b")}
    ends = {}
    for row, (direction, sign) in enumerate((("a", 1.0), ("b", -1.0))):
        stopped = not np.isfinite(bound[row])
        ends[direction] = End(chain_assignment(docs, sign * nets, chain[row]),
                              trivial_bound(instance) if stopped else float(bound[row]),
                              "timeout" if stopped else "optimal" if converged[row] else "feasible",
                              float(value[row]))
    return ends


def _status(ends: dict) -> str:
    statuses = {e.status for e in ends.values()}
    return "timeout" if "timeout" in statuses else "optimal" if statuses == {"optimal"} else "feasible"


def ndcg_profiles(instance: Instance, time_limit: float | None = None) -> MedResult:
    started = time.perf_counter()
    ends = profile_ends(instance, time_limit)
    direction = "b" if (ends["b"].claimed or 0.0) > (ends["a"].claimed or 0.0) else "a"
    end = ends[direction]
    return certify(instance, end.assignment, direction, upper_bound=max(e.bound for e in ends.values()),
                   status=_status(ends), method=NAME, solver=None, started=started, claimed=end.claimed)


def ndcg_profiles_range(instance: Instance, time_limit: float | None = None) -> RangeResult:
    started = time.perf_counter()
    return certify_range(instance, profile_ends(instance, time_limit), method=NAME, solver=None, started=started)
