"""Profiles of the Q-measure and boxes of profiles: the typed cases, which profiles some assignment
reaches, and the tightening of a box (arithmetic only, no model).

A profile fixes R = C_rel and c_g = min(C_g, L) for the other profile grades; a box fixes an
interval per grade (the math: measure.py).  Counts are of the whole collection: judged ones
J_g plus unjudged ones U_g = C_g - J_g, and an assignment reaches given U_g exactly when
n >= U_1 >= ... >= U_G >= 0 (with the relevance limits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.instance import judged_count
from ..base import Case

AT_LEAST = ">="


@dataclass(frozen=True)
class QProfile(Case):
    """One profile: R = ``r`` and, per profile grade g, ``counts`` (g, c, at_least): C_g = c, or
    C_g >= c = L when at_least (R itself first; empty when nothing can be relevant)."""

    r: int
    counts: tuple


@dataclass(frozen=True)
class QBox(Case):
    """A box of profiles: R in ``r_range`` = (R_lo, R_hi) and, per profile grade g (rel included),
    ``box`` (g, lo, hi): lo <= min(C_g, L) <= hi (C_rel itself for rel)."""

    r_range: tuple
    box: tuple


def profile_grades(instance) -> list[int]:
    """Grades whose count enters Q: rel (R, exactly) and those with a gain step inside cg*."""
    metric, grading = instance.metric, instance.grading
    rel, beta = metric.p("rel"), metric.p("beta")
    steps = {g: metric.gain(g, grading) - metric.gain(g - 1, grading) for g in range(1, instance.max_grade + 1)}
    return sorted({rel} | ({g for g, s in steps.items() if s != 0} if beta > 0 else set()))


def depth(instance) -> int:
    return max(len(instance.a), len(instance.b))


def ideal_gains(instance, gain: dict, counts: dict) -> list[float]:
    """cg*(1..L) at the counts min(C_g, L) given per profile grade (``gain``: grade -> u(g)):
    cg*(i) = sum_g (u(g) - u(g-1)) min(i, C_g)."""
    ranks = np.arange(1, depth(instance) + 1)
    total = np.zeros(len(ranks))
    for g, c in counts.items():  # added grade by grade, as the sum over g would
        total += (gain[g] - gain[g - 1]) * np.minimum(ranks, c)
    return total.tolist()


def reachable(instance, bounds: dict) -> bool:
    """Some n >= U_1 >= ... >= U_G >= 0 with lo_g <= U_g <= hi_g (bounds: g -> (lo, hi))."""
    grades = range(1, instance.max_grade + 1)
    lo = {g: max(0, bounds.get(g, (0, 0))[0]) for g in grades}
    hi = {g: min(len(instance.unjudged), bounds.get(g, (0, len(instance.unjudged)))[1]) for g in grades}
    for limit in instance.limits:
        if limit.grade in lo:
            j = judged_count(instance, limit.grade)
            lo[limit.grade] = max(lo[limit.grade], limit.low - j)
            if limit.high is not None:
                hi[limit.grade] = min(hi[limit.grade], limit.high - j)
    return all(lo[h] <= hi[g] for g in grades for h in grades if g <= h)


def profile_case(r: int, counts: tuple) -> QProfile:
    """The case of profile ``counts`` with R = r >= 1, labelled 'R=2 C1=2 C2>=3'."""
    label = " ".join(f"C{g}{AT_LEAST if at else '='}{v}" for g, v, at in sorted(counts))
    return QProfile(label=f"R={r} {label}", denominator=float(r), r=r, counts=counts)


def zero_case(counts: tuple = ()) -> QProfile:
    """The profile R = 0 (no relevant document: both scores 0)."""
    return QProfile(label="R=0", denominator=1.0, r=0, counts=counts)


def box_label(instance, box) -> str:
    """'R=5..9 C1=5..9 C2=5..>=20 C3>=20': the box's intervals (hi = L of a grade other than rel: C_g >= L)."""
    rel, cap = instance.metric.p("rel"), depth(instance)

    def interval(g, lo, hi):
        at = g != rel and hi >= cap
        if lo == hi:
            return f"C{g}{AT_LEAST if at else '='}{lo}"
        return f"C{g}={lo}..{AT_LEAST if at else ''}{hi}"

    r_lo, r_hi = next((lo, hi) for g, lo, hi in box if g == rel)
    return f"R={r_lo}" + (f"..{r_hi}" if r_hi != r_lo else "") + " " + " ".join(interval(*item) for item in box)


def tighten(instance, box):
    """The smallest box holding every reachable profile of ``box`` (None when it holds none).

    In unjudged counts U_g = C_g - J_g an assignment exists iff n >= U_1 >= ... >= U_G >= 0;
    with interval bounds per grade (the box's, the relevance limits, [0, n] otherwise) the
    chain gives U_g >= lo_h for h > g and U_h <= hi_g for g < h, and then every value left in
    every interval extends to a full chain.  A capped value L of grade g != rel means C_g >= L."""
    rel, cap, n, top = instance.metric.p("rel"), depth(instance), len(instance.unjudged), instance.max_grade
    judged = {g: judged_count(instance, g) for g in range(1, top + 1)}
    lo, hi = {g: 0 for g in range(1, top + 1)}, {g: n for g in range(1, top + 1)}
    for g, low, high in box:
        lo[g] = max(lo[g], low - judged[g])
        if g == rel or high < cap:
            hi[g] = min(hi[g], high - judged[g])
    for limit in instance.limits:
        if limit.grade in lo:
            lo[limit.grade] = max(lo[limit.grade], limit.low - judged[limit.grade])
            if limit.high is not None:
                hi[limit.grade] = min(hi[limit.grade], limit.high - judged[limit.grade])
    for g in range(top - 1, 0, -1):
        lo[g] = max(lo[g], lo[g + 1])
    for g in range(2, top + 1):
        hi[g] = min(hi[g], hi[g - 1])
    if any(lo[g] > hi[g] for g in lo):
        return None
    return tuple((g, judged[g] + lo[g], judged[g] + hi[g]) if g == rel else
                 (g, min(judged[g] + lo[g], cap), min(judged[g] + hi[g], cap)) for g, _, _ in box)


def box_case(instance, box, exact: bool = True) -> QProfile | QBox:
    """The case of a box; a box of one profile is that profile's case (the same fields, the same model),
    unless ``exact`` is False: then it stays a box, tested by its relaxation before its case is solved."""
    rel, cap = instance.metric.p("rel"), depth(instance)
    r_lo, r_hi = next((lo, hi) for g, lo, hi in box if g == rel)
    if exact and all(lo == hi for _, lo, hi in box):
        counts = tuple((g, lo, g != rel and lo >= cap) for g, lo, _ in box)
        counts = (next(c for c in counts if c[0] == rel),) + tuple(c for c in counts if c[0] != rel)
        return profile_case(r_lo, counts)
    return QBox(label=f"box {box_label(instance, box)}", denominator=float(r_lo), r_range=(r_lo, r_hi),
                box=tuple(box))


def profile_intervals(case) -> tuple:
    """A profile case as a box of one profile: (g, c, c) per profile grade."""
    return tuple((g, v, v) for g, v, _ in case.counts)


def unjudged_intervals(instance, case):
    """grade g -> (lo, hi) for U_g, the unjudged documents of grade >= g, in a box or profile case
    (None when the case bounds nothing, as when no grade can be relevant)."""
    rel, top, cap, n = instance.metric.p("rel"), instance.max_grade, depth(instance), len(instance.unjudged)
    if isinstance(case, QBox):
        bounds = {g: (lo, hi if (g == rel or hi < cap) else math.inf) for g, lo, hi in case.box}
    elif case.counts:
        bounds = {g: (v, math.inf if at else v) for g, v, at in case.counts}
    else:
        return None
    intervals = {g: (0, n) for g in range(1, top + 1)}
    for g, (lo, hi) in bounds.items():
        if g in intervals:
            j = judged_count(instance, g)
            intervals[g] = (max(0, lo - j), int(min(n, hi - j)))
    return intervals
