"""The knapsack over topics of a flip distance: the fewest changes whose curves reach the lead
(the proof: medopt.flip)."""

from __future__ import annotations

import time

import numpy as np



def knapsack(curves: list, cap: int, of):
    """best[H] = max sum_t of(t, h_t) over allocations with sum_t h_t = H <= cap (-inf: none), and each
    stage's choice of h_t for every total (to read the allocation back)."""
    best = np.zeros(1)
    picks = []
    for topic in curves:
        length = min(cap, topic.horizon)
        points = [of(topic, h) for h in range(length + 1)]
        size = min(cap, len(best) - 1 + length) + 1
        new = np.full(size, -np.inf)
        pick = np.zeros(size, dtype=np.int64)
        for h, point in enumerate(points):
            span = min(len(best), size - h)
            if span <= 0:
                break
            candidate = best[:span] + point
            better = candidate > new[h:h + span]
            new[h:h + span][better] = candidate[better]
            pick[h:h + span][better] = h
        best = new
        picks.append(pick)
    return best, picks


def allocation(picks: list, total: int) -> list:
    shares = []
    for pick in reversed(picks):
        h = int(pick[total])
        shares.append(h)
        total -= h
    return shares[::-1]


def first_reaching(best, lead: float, slack: float):
    hits = np.flatnonzero(best >= lead - slack)
    return int(hits[0]) if len(hits) else None


def search(curves: list, lazy: dict, lead: float, slack: float, deadline):
    """The knapsack over topics: ((F, allocation) or None, proven lower bound).  Lazy curves (an exact
    solve per point) are extended one total at a time, the totals up to ``level`` needing no point past
    it; curves known whole are searched with a doubling cap (a total found under a cap is the first).
    Within a level the search stops at the first point that lets the reached values flip at a total
    <= level: every total below the level was refuted by the proven bounds of the points below it, so
    that total is F (the bounds' knapsack says the same: its lower bound is the level)."""
    limit = sum(c.horizon for c in curves)
    level = 1 if lazy else min(limit, 16)

    def verdict():
        values, value_picks = knapsack(curves, level, lambda c, h: c.value(h))
        bounds, _ = knapsack(curves, level, lambda c, h: c.bound(h))
        hit, lower = first_reaching(values, lead, slack), first_reaching(bounds, lead, slack)
        lower = level + 1 if lower is None else lower
        return (None if hit is None else (hit, allocation(value_picks, hit))), lower

    while True:
        stopped = False
        # the topics that can move furthest first: a point that completes a flip at this level ends the
        # search there (the totals below the level use only points below it, all computed before)
        waiting = sorted((c for c in curves if c.topic in lazy and not c.complete), key=lambda c: -c.far_bound)
        for index, curve in enumerate(waiting):  # the time left shared by the points of this level
            share = None if deadline is None else time.perf_counter() + max(
                deadline - time.perf_counter(), 0.0) / (len(waiting) - index)
            before = curve.value(level)
            if not lazy[curve.topic].extend(level, share):
                stopped = True
            if curve.value(level) > before and index < len(waiting) - 1:
                found, lower = verdict()
                if found is not None:
                    return found, lower
        found, lower = verdict()
        if found is not None:
            return found, lower
        if stopped or level >= limit:
            return None, lower
        level = level + 1 if lazy else min(limit, 2 * level)
