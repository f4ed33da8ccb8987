"""Moffat's greedy with a look-ahead over pairs: a lower bound on MED-AP, never exact by itself.

Eq. 13's greedy (greedy.py) stops when no single unjudged document raises SP(X) - SP(Y).  Two
documents can each lower it and still raise it together: making both relevant adds, in every list
holding both, 1/r to SP for the later one's precision counting the earlier (r its rank), so

    gain(d and e) = gain(d) + gain(e) + [both in X] / r_X(later) - [both in Y] / r_Y(later),

and the interaction is positive when the two sit closer to the top, at their later rank, in X than
in Y (docs/findings.md: the 8-document instance where the greedy returns 1/280 against 1/120).
This variant takes the best single document while one raises the numerator, else the best pair
when one does, and stops when neither does; like the greedy it evaluates the ratio after every
step and returns the best seen over both directions.  A step costs O(n^2) pair gains (n unjudged
documents) on top of the greedy's O(n (n + k)).
"""

from __future__ import annotations

import time

from ..core.bounds import trivial_bound
from ..core.instance import Instance
from ..core.deadlines import deadline_after, expired, until
from ..core.result import MedResult, certify
from .greedy import IMPROVEMENT, SumOfPrecisions


def interaction(problem: SumOfPrecisions, d, e) -> float:
    """The change of SP(X) - SP(Y) beyond gain(d) + gain(e) when d and e both become relevant."""
    (better_d, worse_d), (better_e, worse_e) = problem.position[d], problem.position[e]
    total = 0.0
    if better_d >= 0 and better_e >= 0:
        total += 1.0 / (max(better_d, better_e) + 1)
    if worse_d >= 0 and worse_e >= 0:
        total -= 1.0 / (max(worse_d, worse_e) + 1)
    return total


def pair_path(problem: SumOfPrecisions) -> tuple[float, list]:
    """The greedy with pair look-ahead from the problem's current state: (best ratio, its documents)."""
    weights_better, weights_worse, best_value = problem.scored_weights()
    best_docs = problem.relevant_docs()
    if problem.relevant_grade is None:
        return best_value, best_docs
    while True:
        remaining = [d for d in problem.docs if not problem.on[d]]
        if not remaining or expired():  # (the time limit: the best so far stands)
            break
        gains = {d: problem.gain(d, weights_better, weights_worse) for d in remaining}
        single = max(remaining, key=lambda d: gains[d])  # ties: first in order of appearance
        if gains[single] > IMPROVEMENT:
            chosen = [single]
        else:
            pairs = [(gains[d] + gains[e] + interaction(problem, d, e), d, e)
                     for i, d in enumerate(remaining) for e in remaining[i + 1:]]
            if not pairs or max(pairs)[0] <= IMPROVEMENT:
                break
            best_pair = max(pairs, key=lambda item: item[0])
            chosen = [best_pair[1], best_pair[2]]
        for doc in chosen:
            problem.flip(doc)
        weights_better, weights_worse, value = problem.scored_weights()
        if value > best_value:
            best_value, best_docs = value, problem.relevant_docs()
    return best_value, best_docs


def greedy_pairs(instance: Instance, *, time_limit: float | None = None) -> MedResult:
    """Eq. 13's greedy with pair look-ahead, for AP@k, AP and AP(norm=min)@k: a lower bound on MED.
    With ``time_limit`` (seconds) each direction's path stops when it is up."""
    started = time.perf_counter()
    best, deadline = None, deadline_after(time_limit)
    for direction in ("a", "b"):
        problem = SumOfPrecisions(instance, direction)
        with until(deadline):
            value, docs = pair_path(problem)
        if best is None or value > best[0]:
            best = (value, direction, problem.assignment(docs))
    value, direction, assignment = best
    return certify(instance, assignment, direction, upper_bound=trivial_bound(instance), status="heuristic",
                   method="greedy-pairs", solver=None, started=started, claimed=value)
