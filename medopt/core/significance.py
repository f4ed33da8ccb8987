"""Significance under every completion (SPEC 12): the paired t-test's and the sign test's
reference p-value, their worst case over every completion of the judgments, and whether a pair is
robustly significant.

A pair of runs over n topics has, per topic t, the difference d_t = M(A_t) - M(B_t).  Under the
reference labelling (SPEC 11: unjudged documents at grade 0, or the labels given) it is the
reference difference; under a completion of the judgments it is some value of the topic's
achievable set, whose ends are the topic's exact difference range [l_t, h_t] (SPEC 7).  Topics
share no documents, so a completion of the whole pair is any choice of one completion per topic.

**The t-test's worst case is at a vertex** of the box B = prod_t [l_t, h_t].  Say every completion
keeps a positive mean difference (mean(l) > 0; the negative case is the mirror image).  Then
t(d) = sqrt(n) mean(d) / sd(d) > 0 on B (sd with n - 1; t = +inf where sd = 0), and the two-sided
p-value is a decreasing function of t.  For any c > 0, t(d) >= c iff f_c(d) = sqrt(n) mean(d) -
c sd(d) >= 0; f_c is concave (a linear function minus a multiple of a norm of the centred vector),
so its minimum over the polytope B is reached at a vertex.  Hence if some d in B has t(d) < c, some
vertex has t < c: the smallest t over B is the smallest t over its vertices.  Every vertex is a
completion (each topic's ends are attained by the range's own assignments, and topics are
independent) and every completion lies in B, so the largest p-value over the completions is the
largest over the 2^n vertices, which is what :func:`worst_case` computes, exactly.

**The 0-1 program.**  Write x_t in {0, 1} for "topic t at its high end", w_t = h_t - l_t, m_t =
(l_t + h_t) / 2.  Then S1 = sum d = sum l + sum w x and S2 = sum d^2 = sum l^2 + sum 2 m w x, and
t^2 = (n - 1) S1^2 / (n S2 - S1^2), so the smallest t is the largest R(x) = S2 / S1^2 (S1 > 0 on
B).  R(x) > lam iff G_lam(x) = S2 - lam S1^2 > 0.  ``_largest_ratio`` is a branch and bound over x
that keeps the best vertex found, lam = its R, and discards a sub-box (some x fixed) when the
maximum of G_lam over its *continuous* relaxation is <= 0: then no vertex in it beats lam.  G_lam is
concave on [0, 1]^free (linear minus lam times the square of a linear function), and its maximum
there is a greedy fill: at the optimum, with s = S1, x_t = 1 when m_t > lam s, 0 when m_t < lam s
(the KKT conditions of a concave program, which suffice), so the free topics taken in descending
m_t are added whole while m_t >= lam (S1 + w_t), then one partly.  A sub-box whose relaxed optimum
is a vertex with G > 0 raises lam and is looked at again; one whose optimum is fractional is split
on that topic.  Every vertex is either reached or in a discarded sub-box, so the vertex kept has the
largest R up to the tolerance of the discard test (1e-12 relative to the terms of G).  The worst
case in general is NP-hard-like (upper variance of interval data is), so the search may take
exponential time; on IR ranges the relaxation is tight and few sub-boxes are split.

**The sign test** (``scipy.stats.binomtest`` on the topics with d_t != 0, p = 1/2, two-sided)
depends on the numbers k of positive and m of negative topics.  A topic's achievable signs are
those of its ends, plus possibly 0 inside a range that crosses 0; that 0 never matters: with the
other topics at (k, m), k >= m, putting the topic at -1 instead of 0 gives (k, m + 1), and p(k, m +
1) >= p(k, m) because P(Bin(N + 1) <= m + 1) >= P(Bin(N) <= m) (adding a coin to X <= m keeps it
<= m + 1) and p = min(1, 2 P(Bin(k + m) <= min(k, m))) at p = 1/2.  So the worst case is over the
vertices again, and it depends only on how many topics of each kind of end signs are at which end:
:func:`_sign_worst` lists every reachable (k, m) and takes the largest p.

**Wilcoxon's signed-rank test** is not offered: its statistic depends on the ranks of |d_t| among
the topics, which interior achievable values (not only the ends) can change, so the vertex argument
does not hold and the ranges do not determine the worst case.

The worst case is 1 when some completion reaches mean difference 0 or the other sign (the mean
range, SPEC 7, reaches 0): then no test can be robust.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import MedoptError
from .result import TOLERANCE, mean_range

TESTS = ("t", "sign")
CORRECTIONS = ("none", "holm", "bonferroni")


# ---------------------------------------------------------------------------
# p-values (SPEC 12's conventions)


def t_pvalue(differences) -> float:
    """The paired t-test's two-sided p-value on per-topic differences, as ``scipy.stats.ttest_rel``
    on the two runs' scores; where every difference is equal (one topic included) scipy gives nan
    and SPEC 12 says p = 0 when they are non-zero, 1 when they are zero."""
    from scipy import stats

    d = np.asarray(differences, dtype=float)
    if d.size == 0:
        raise MedoptError("a t-test needs at least one topic")
    if np.all(d == d[0]):
        return 0.0 if d[0] != 0 else 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nearly equal differences: scipy's precision note
        return float(stats.ttest_1samp(d, 0.0).pvalue)


def sign_pvalue(differences) -> float:
    """The sign test's two-sided p-value: ``scipy.stats.binomtest`` (p = 1/2) on the topics whose
    difference is not 0 (|d| > 1e-9, the tolerance of SPEC 7's verdicts); 1 when there is none."""
    d = np.asarray(differences, dtype=float)
    return _binomial(int(np.count_nonzero(d > TOLERANCE)), int(np.count_nonzero(d < -TOLERANCE)))


def _binomial(positive: int, negative: int) -> float:
    from scipy import stats

    if positive + negative == 0:
        return 1.0
    return float(stats.binomtest(positive, positive + negative, 0.5).pvalue)


PVALUES = {"t": t_pvalue, "sign": sign_pvalue}


def wants_ranges(test: str | None, alpha: float, correction: str = "none") -> bool:
    """compare's and matrix's options checked before any work: True when a ``test`` is asked for (it
    needs the per-topic ranges)."""
    if test is None:
        return False
    check_test(test)
    if isinstance(alpha, bool) or not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise MedoptError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if correction not in CORRECTIONS:
        raise MedoptError(f"unknown correction {correction!r}: choose {', '.join(CORRECTIONS)}")
    return True


def pvalue(test: str, differences) -> float:
    return PVALUES[check_test(test)](differences)


def check_test(test: str) -> str:
    if test not in TESTS:
        raise MedoptError(f"unknown test {test!r}: choose {' or '.join(TESTS)} (Wilcoxon has no exact worst "
                          "case from the ranges: see medopt.significance)")
    return test


# ---------------------------------------------------------------------------
# the worst case over a box of per-topic ranges


@dataclass(frozen=True)
class Worst:
    """The worst case over the vertices of the box: its p-value, and per topic the end used
    ("low" or "high") and that end's difference."""

    p: float
    ends: tuple[str, ...]
    values: tuple[float, ...]
    sign_kept: bool               # False: some vertex reaches mean 0 or the other sign (p = 1)


def worst_case(test: str, low, high, sign: int, *, rational: bool = False) -> Worst:
    """The largest p-value of ``test`` over every vertex of the box [low_t, high_t] (module
    docstring: over every completion when the ends are the exact ranges), for a pair whose
    reference mean difference has sign ``sign`` (+1, -1; 0: no direction, p = 1).  The mean range
    comes from result.mean_range (``rational`` as there), so "reaches 0" is its verdict's."""
    test = check_test(test)
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if low.size == 0:
        raise MedoptError("a significance test needs at least one topic")
    span = mean_range([(lo, hi, None, None) for lo, hi in zip(low, high)], rational=rational)
    if sign >= 0 and span.low <= TOLERANCE:  # a completion reaches mean 0 or below: every low end
        return Worst(1.0, ("low",) * low.size, tuple(low.tolist()), False)
    if sign < 0 and span.high >= -TOLERANCE:
        return Worst(1.0, ("high",) * low.size, tuple(high.tolist()), False)
    flip = sign < 0
    lo, hi = (-high, -low) if flip else (low, high)  # mirrored: every vertex has a positive mean
    at_high = _largest_ratio(lo, hi) if test == "t" else _sign_worst(lo, hi)
    ends = tuple(("low" if flip else "high") if x else ("high" if flip else "low") for x in at_high)
    values = np.where(np.array([e == "high" for e in ends]), high, low)
    return Worst(pvalue(test, values), ends, tuple(values.tolist()), True)


def _largest_ratio(low: np.ndarray, high: np.ndarray, *, warm: bool = True, visits: list | None = None) -> np.ndarray:
    """The vertex x (True: the topic at its high end) with the largest S2 / S1^2, for a box with
    sum(low) > 0: the branch and bound of the module docstring.  ``warm``: start from the best
    prefix vertex, polished (else from every topic low: the tests' way to make the search branch);
    ``visits`` (a list) gets the number of sub-boxes looked at."""
    n = low.size
    width = high - low
    free = np.flatnonzero(width > 0)
    order = free[np.argsort(-(low + high)[free], kind="stable")]  # descending midpoint
    mid, wide = (low + high)[order] / 2, width[order]
    gain = 2 * mid * wide                                          # what x_t = 1 adds to S2
    base1, base2 = float(low.sum()), float((low * low).sum())
    scale = abs(base2) + float(np.abs(gain).sum()) + (abs(base1) + float(wide.sum())) ** 2

    def ratio(chosen: np.ndarray) -> float:
        return (base2 + gain[chosen].sum()) / (base1 + wide[chosen].sum()) ** 2

    # a first vertex: the best "the k largest midpoints high" (the Lagrangian's candidates), polished by flips
    sums1 = base1 + np.concatenate(([0.0], np.cumsum(wide)))
    sums2 = base2 + np.concatenate(([0.0], np.cumsum(gain)))
    best = np.zeros(order.size, dtype=bool)
    if warm:
        best[:int(np.argmax(sums2 / sums1 ** 2))] = True
        best, lam = _polish(best, base1, base2, wide, gain)
    else:
        lam = base2 / base1 ** 2

    stack = [np.full(order.size, -1, dtype=np.int8)]               # -1 free, 0 low, 1 high
    looked = 0
    while stack:
        node = stack.pop()
        looked += 1
        ones, loose = node == 1, np.flatnonzero(node == -1)
        s1, s2 = base1 + wide[ones].sum(), base2 + gain[ones].sum()
        cum = s1 + np.cumsum(wide[loose])
        whole = mid[loose] >= lam * cum
        j = int(np.argmin(whole)) if not whole.all() else loose.size
        y = cum[j - 1] if j else s1
        part = 0.0 if j == loose.size else min(max(mid[loose[j]] / lam - y, 0.0), wide[loose[j]])
        relaxed = s2 + gain[loose[:j]].sum() + (2 * mid[loose[j]] * part if part else 0.0) - lam * (y + part) ** 2
        if relaxed <= 1e-12 * scale * max(lam, 1.0):
            continue                                               # no vertex here beats lam
        fractional = 0 < part < wide[loose[j]]
        vertex = ones.copy()
        vertex[loose[:j]] = True
        candidates = [vertex]
        if part > 0:                                               # rounded up (the optimum itself if not fractional)
            rounded = vertex.copy()
            rounded[loose[j]] = True
            candidates = [rounded] if not fractional else [vertex, rounded]
        improved = False
        for candidate in candidates:
            value = ratio(candidate)
            if value > lam:
                best, lam, improved = candidate, value, True
        if not fractional:
            if improved:
                stack.append(node)                                 # the relaxed optimum was a vertex: again
            continue
        for choice in (0, 1):
            child = node.copy()
            child[loose[j]] = choice
            stack.append(child)
    if visits is not None:
        visits.append(looked)
    chosen = np.zeros(n, dtype=bool)
    chosen[order[best]] = True
    return chosen


def _polish(chosen: np.ndarray, base1: float, base2: float, wide: np.ndarray, gain: np.ndarray):
    """Single flips that raise S2 / S1^2, the best first, until none does: a good first vertex."""
    s1, s2 = base1 + wide[chosen].sum(), base2 + gain[chosen].sum()
    lam = s2 / s1 ** 2
    for _ in range(4 * chosen.size + 1):
        step = np.where(chosen, -1.0, 1.0)
        flipped = (s2 + step * gain) / (s1 + step * wide) ** 2
        i = int(np.argmax(flipped)) if flipped.size else 0
        if not flipped.size or flipped[i] <= lam * (1 + 1e-15):
            break
        chosen = chosen.copy()
        chosen[i] = not chosen[i]
        s1, s2, lam = s1 + step[i] * wide[i], s2 + step[i] * gain[i], float(flipped[i])
    return chosen, lam


def _sign_worst(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The vertex (True: high end) with the largest sign-test p-value (module docstring): topics by
    the signs of their two ends; every reachable (positive, negative) count is listed and the
    largest p taken (scipy's binomtest on the best few of a vectorised 2 P(Bin <= min) ranking)."""
    from scipy import stats

    sign_low = np.where(low > TOLERANCE, 1, np.where(low < -TOLERANCE, -1, 0))
    sign_high = np.where(high > TOLERANCE, 1, np.where(high < -TOLERANCE, -1, 0))
    kinds = {(a, b): np.flatnonzero((sign_low == a) & (sign_high == b)) for a in (-1, 0, 1) for b in (-1, 0, 1)}
    fixed_pos = kinds[(1, 1)].size
    fixed_neg = kinds[(-1, -1)].size
    cross, zero_pos, neg_zero = kinds[(-1, 1)], kinds[(0, 1)], kinds[(-1, 0)]
    n = low.size
    reach = np.zeros((n + 1, n + 1), dtype=bool)  # reach[k, m]
    for i in range(cross.size + 1):               # i crossing topics at their high (positive) end
        k0, m0 = fixed_pos + i, fixed_neg + cross.size - i
        reach[k0:k0 + zero_pos.size + 1, m0:m0 + neg_zero.size + 1] = True
    k, m = np.nonzero(reach)
    rough = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(k, m), k + m, 0.5))
    rough[k + m == 0] = 1.0
    near = np.flatnonzero(rough >= rough.max() * (1 - 1e-6))
    pick = max(near, key=lambda c: (_binomial(int(k[c]), int(m[c])), -c))
    k, m = int(k[pick]), int(m[pick])
    for i in range(cross.size + 1):                # a vertex with these counts
        up, down = k - fixed_pos - i, m - fixed_neg - (cross.size - i)
        if 0 <= up <= zero_pos.size and 0 <= down <= neg_zero.size:
            break
    chosen = np.zeros(n, dtype=bool)              # low end by default: (1,1), (-1,-1), (0,0) are either
    chosen[cross[:i]] = True
    chosen[zero_pos[:up]] = True
    chosen[neg_zero[down:]] = True                 # a (-1, 0) topic at its high end is a 0
    return chosen


# ---------------------------------------------------------------------------
# robustness and the summary columns


def judge(test: str, alpha: float, reference, low, high, low_bound=None, high_bound=None, *,
          rational: bool = False) -> dict:
    """SPEC 12 from per-topic numbers (the one place robustness is decided; medopt.significance and
    compare's summary row use it): p_reference, p_worst, robust, the worst vertex and p_bound."""
    wants_ranges(test, alpha)
    reference = np.asarray(reference, dtype=float)
    mean_reference = mean_range([(d, d, None, None) for d in reference], rational=rational).low
    sign = 1 if mean_reference > TOLERANCE else (-1 if mean_reference < -TOLERANCE else 0)
    worst = worst_case(test, low, high, sign, rational=rational)
    p_bound = worst.p
    if low_bound is not None and (np.any(np.asarray(low_bound) < np.asarray(low) - TOLERANCE)
                                  or np.any(np.asarray(high_bound) > np.asarray(high) + TOLERANCE)):
        p_bound = worst_case(test, low_bound, high_bound, sign, rational=rational).p
    return {"p_reference": pvalue(test, reference), "p_worst": worst.p, "p_bound": p_bound,
            "robust": bool(sign != 0 and worst.sign_kept and worst.p < alpha), "worst": worst,
            "mean_reference": mean_reference}


def summary_columns(reference, rows: list, test: str, alpha: float, *, rational: bool) -> dict:
    """The summary-row columns (SUMMARY_COLUMNS) of compare and of matrix's per-pair summary, from one
    pair's reference differences and per-topic range rows (``low, high``: the re-scored ends, with
    their ``low_bound, high_bound``)."""
    verdict = judge(test, alpha, reference, [r["low"] for r in rows], [r["high"] for r in rows],
                    [r["low_bound"] for r in rows], [r["high_bound"] for r in rows], rational=rational)
    return {"p_reference": verdict["p_reference"], "p_worst": verdict["p_worst"], "robust": verdict["robust"]}


SUMMARY_COLUMNS = ("p_reference", "p_worst", "robust")


def correct_rows(rows: list, correction: str, alpha: float) -> list:
    """Holm or Bonferroni over the pairs (matrix's per-pair summary, one family per metric and
    method): ``p_reference`` and ``p_worst`` become the adjusted values and ``robust`` is decided on
    the adjusted ``p_worst``.  Both adjustments are non-decreasing in every p-value, so an adjusted
    worst case is >= the adjusted p-value of the pair under any completion of every pair's
    judgments: robust stays "under every completion".  (p_worst is 1 when a completion reaches mean
    0 or the other sign, so p_worst < alpha alone says robust.)"""
    if correction == "none":
        return rows
    families: dict = {}
    for row in rows:
        if row.get("p_worst") is not None:
            families.setdefault((row["metric"], row["method"]), []).append(row)
    for family in families.values():
        for column in ("p_reference", "p_worst"):
            for row, value in zip(family, correct([r[column] for r in family], correction)):
                row[column] = value
        for row in family:
            row["robust"] = bool(row["p_worst"] < alpha)
    return rows


def correct(pvalues, correction: str) -> list:
    """Holm's or Bonferroni's adjustment of p-values over the pairs (as PyTerrier's ``correction=``,
    statsmodels' multipletests): Bonferroni min(1, m p); Holm the step-down maximum."""
    if correction not in CORRECTIONS:
        raise MedoptError(f"unknown correction {correction!r}: choose {', '.join(CORRECTIONS)}")
    p = np.asarray(pvalues, dtype=float)
    if correction == "none" or p.size == 0:
        return p.tolist()
    if correction == "bonferroni":
        return np.minimum(1.0, p * p.size).tolist()
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (p.size - np.arange(p.size))))
    out = np.empty_like(p)
    out[order] = adjusted
    return out.tolist()


__all__ = [
    "CORRECTIONS",
    "SUMMARY_COLUMNS",
    "TESTS",
    "Worst",
    "check_test",
    "correct",
    "correct_rows",
    "judge",
    "pvalue",
    "sign_pvalue",
    "summary_columns",
    "t_pvalue",
    "wants_ranges",
    "worst_case",
]
