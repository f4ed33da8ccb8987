"""Moffat's greedy for MED-AP (Section 5, eq. 13): a lower bound, not an exact method.

For one direction (the better list X, the worse list Y) the difference is a
ratio ``(SP(X) - SP(Y)) / norm(R)``: the sum of precisions of each list over its
top k, divided by R (trec_eval), min(k, R) (``norm=min``) or, for SSP, by k.
Starting from the judgments alone (every unjudged document non-relevant), the
greedy repeatedly makes relevant the unjudged document whose eq. 13 weight
difference ``w_X(d) - w_Y(d)`` -- the increase of ``SP(X) - SP(Y)`` if d becomes
relevant -- is the largest positive one.  The weights are recomputed after each
assignment, as eq. 13 requires, because they depend on the documents already
relevant:

    w_X(x_i) = (1 + #relevant above rank i) / i + sum_{j > i, x_j relevant} 1/j

After every step the ratio is evaluated, and the best ratio seen over both
directions (including each direction's starting point) is returned.  Every grade
``>= rel`` is the same for AP, so a document made relevant gets grade ``rel``.

The sum-of-precisions kernel here (``SumOfPrecisions``) is shared with the tabu
search of ``tabu.py``; it is a fast local evaluator only -- every answer is
re-scored independently by :func:`medopt.core.result.certify`.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.bounds import trivial_bound
from ..core.instance import Instance
from ..core.deadlines import deadline_after, expired, until
from ..metrics.base import count_relevant
from ..core.result import MedResult, certify

IMPROVEMENT = 1e-12  # a weight difference below this is numerical noise, not an increase
# a greedy path over two lists of at least this many ranks in all runs on NumPy arrays (weight_arrays);
# below, Python's lists are faster (measured: docs/explanation/fast-paths.md#the-greedys-path-on-arrays)
ARRAY_RANKS = 550


def flip_weights(relevant: list) -> tuple[list, float]:
    """Eq. 13 weight of every rank of one list, and the list's sum of precisions.

    The weight of rank i is how much SP changes when the document there flips
    (gained if it is non-relevant now, lost if it is relevant):
    ``(1 + #relevant above i) / i + sum_{j > i relevant} 1/j``.
    """
    length = len(relevant)
    weights = [0.0] * length
    tail = 0.0
    for index in range(length - 1, -1, -1):
        weights[index] = tail
        if relevant[index]:
            tail += 1.0 / (index + 1)
    above, total = 0, 0.0
    for index in range(length):
        own = (above + 1) / (index + 1)
        weights[index] += own
        if relevant[index]:
            total += own
            above += 1
    return weights, total


def weight_arrays(relevant) -> tuple[np.ndarray, float]:
    """flip_weights with NumPy (the weights as an array), to the last bit: the running sums are
    cumulative sums, which add in the loop's order (adding 0.0 where the loop adds nothing changes no
    float)."""
    relevant = np.asarray(relevant, dtype=bool)
    if not len(relevant):
        return np.zeros(0), 0.0
    ranks = np.arange(1, len(relevant) + 1)
    tails = np.cumsum(np.where(relevant, 1.0 / ranks, 0.0)[::-1])[::-1]  # sum over j >= i, from the bottom up
    tails = np.append(tails[1:], 0.0)  # over j > i
    above = np.cumsum(relevant) - relevant
    own = (above + 1) / ranks
    return tails + own, float(np.cumsum(np.where(relevant, own, 0.0))[-1])


class SumOfPrecisions:
    """One direction of MED-AP / MED-SSP as a 0-1 problem over the unjudged documents.

    ``state`` holds the binary relevance of every rank of the better and the worse
    list; ``relevant_count`` is R over the whole collection (judged relevant
    documents anywhere plus the unjudged ones currently relevant).
    """

    def __init__(self, instance: Instance, direction: str):
        metric = instance.metric
        self.instance, self.direction = instance, direction
        self.better, self.worse = (instance.a, instance.b) if direction == "a" else (instance.b, instance.a)
        self.scaled = metric.family == "SSP"       # SSP divides by k, AP by R or min(k, R)
        judgments = instance.judgments
        self.rel_better = [d in judgments and metric.is_relevant(judgments[d]) for d in self.better]
        self.rel_worse = [d in judgments and metric.is_relevant(judgments[d]) for d in self.worse]
        self.judged_relevant = count_relevant(judgments, metric)
        self.relevant_count = self.judged_relevant
        rank_better = {d: i for i, d in enumerate(self.better)}
        rank_worse = {d: i for i, d in enumerate(self.worse)}
        self.docs = list(instance.unjudged)
        self.position = {d: (rank_better.get(d, -1), rank_worse.get(d, -1)) for d in self.docs}
        self.on = dict.fromkeys(self.docs, False)
        self._flags = None  # rel_better and rel_worse as NumPy arrays, kept beside them once weights(arrays) asks
        grade = metric.p("rel")
        self.relevant_grade = grade if grade <= instance.max_grade else None  # None: nothing can be relevant

    # -- the objective ------------------------------------------------------
    def normaliser(self, relevant_count: int) -> int:
        if self.scaled:
            return self.instance.metric.cutoff
        return self.instance.metric.normaliser(relevant_count)

    def ratio(self, numerator: float, relevant_count: int) -> float:
        denominator = self.normaliser(relevant_count)
        return numerator / denominator if denominator > 0 else 0.0

    def weights(self, arrays: bool = False) -> tuple:
        """Eq. 13 weights of both lists and the current numerator SP(better) - SP(worse); with ``arrays``
        the weights as NumPy arrays (the same values)."""
        if arrays:
            if self._flags is None:
                self._flags = (np.array(self.rel_better, dtype=bool), np.array(self.rel_worse, dtype=bool))
                self._weighed = [None, None]  # each list's weight_arrays, until a flip there changes them
            for side in (0, 1):
                if self._weighed[side] is None:
                    self._weighed[side] = weight_arrays(self._flags[side])
            (weights_better, sp_better), (weights_worse, sp_worse) = self._weighed
        else:
            weights_better, sp_better = flip_weights(self.rel_better)
            weights_worse, sp_worse = flip_weights(self.rel_worse)
        return weights_better, weights_worse, sp_better - sp_worse

    def gain(self, doc, weights_better, weights_worse) -> float:
        """Change of the numerator if ``doc`` were relevant (from non-relevant)."""
        in_better, in_worse = self.position[doc]
        return ((weights_better[in_better] if in_better >= 0 else 0.0)
                - (weights_worse[in_worse] if in_worse >= 0 else 0.0))

    def value(self) -> float:
        return self.ratio(self.weights()[2], self.relevant_count)

    def scored_weights(self, arrays: bool = False) -> tuple:
        """Eq. 13 weights of both lists and the current ratio (the difference the greedy tracks)."""
        weights_better, weights_worse, numerator = self.weights(arrays)
        return weights_better, weights_worse, self.ratio(numerator, self.relevant_count)

    # -- moves --------------------------------------------------------------
    def flip(self, doc) -> None:
        state = not self.on[doc]
        self.on[doc] = state
        in_better, in_worse = self.position[doc]
        if in_better >= 0:
            self.rel_better[in_better] = state
        if in_worse >= 0:
            self.rel_worse[in_worse] = state
        if self._flags is not None:
            for side, rank in enumerate((in_better, in_worse)):
                if rank >= 0:
                    self._flags[side][rank] = state
                    self._weighed[side] = None
        self.relevant_count += 1 if state else -1

    def set(self, relevant_docs) -> None:
        wanted = set(relevant_docs)
        for doc in self.docs:
            if self.on[doc] != (doc in wanted):
                self.flip(doc)

    def relevant_docs(self) -> list:
        return [d for d in self.docs if self.on[d]]

    def assignment(self, relevant_docs) -> dict:
        grade = self.relevant_grade or 0
        chosen = set(relevant_docs)
        return {d: (grade if d in chosen else 0) for d in self.docs}


def greedy_path(problem: SumOfPrecisions, candidates=None) -> tuple[float, list]:
    """Run the eq. 13 greedy on ``problem`` from its current state.

    Returns the best ratio seen (the starting state included) and the relevant
    documents at that point.  ``candidates`` limits the documents that may be
    made relevant (default: every unjudged document).
    """
    remaining = list(problem.docs if candidates is None else candidates)
    remaining = [d for d in remaining if not problem.on[d]]
    arrays = len(problem.better) + len(problem.worse) >= ARRAY_RANKS
    weights_better, weights_worse, best_value = problem.scored_weights(arrays)
    best_docs = problem.relevant_docs()
    if problem.relevant_grade is None:
        return best_value, best_docs
    if arrays:  # each remaining document's ranks in the better and the worse list (-1: not there)
        ranks = np.array([problem.position[d] for d in remaining], dtype=np.int64).reshape(-1, 2)
    made, best_made = [], 0  # the documents made relevant, in order; how many of them at the best value
    padded = {}  # id of a weights array -> (it, it with the 0.0 appended): a list whose weights did not change
    while remaining:
        if expired():  # O(n) moves of O(n + k) each: under a deadline (a warm start, tabu) the path so far
            break
        if arrays:  # problem.gain of each remaining document: a rank -1 reads the 0.0 appended to the weights
            padded = {id(w): padded[id(w)] if id(w) in padded and padded[id(w)][0] is w else (w, np.append(w, 0.0))
                      for w in (weights_better, weights_worse)}
            gains = padded[id(weights_better)][1][ranks[:, 0]] - padded[id(weights_worse)][1][ranks[:, 1]]
            best = int(np.argmax(gains))  # ties: first in order of appearance
        else:
            gains = [problem.gain(d, weights_better, weights_worse) for d in remaining]
            best = gains.index(max(gains))
        if gains[best] <= IMPROVEMENT:
            break  # no document raises the better list's lead any more
        doc = remaining.pop(best)
        if arrays:
            ranks = np.delete(ranks, best, axis=0)
        problem.flip(doc)
        made.append(doc)
        weights_better, weights_worse, value = problem.scored_weights(arrays)
        if value > best_value:
            best_value, best_made = value, len(made)
    if best_made:  # the relevant documents at the best value (the path only makes documents relevant)
        relevant = set(best_docs).union(made[:best_made])
        best_docs = [d for d in problem.docs if d in relevant]
    return best_value, best_docs


def greedy(instance: Instance, time_limit: float | None = None, closed=None) -> MedResult:
    """Moffat's eq. 13 greedy for AP@k, AP and AP(norm=min)@k: a lower bound on MED.  Under
    ``time_limit`` (seconds) each direction's path stops where it is when its share of the time is up
    (half for the first, the rest for the second; O(n) moves of O(n + k) each).

    ``closed(direction, value)`` (a MED caller's bound, exact/driver.py): True when the direction's
    difference cannot exceed ``value``, the best this greedy reached so far; such a direction's path is
    not walked (it could only find a difference of at most ``value``: the MED it gives is the same)."""
    started, deadline = time.perf_counter(), deadline_after(time_limit)
    best = None
    path_lengths, ends = {}, {}
    for direction in ("a", "b"):
        if best is not None and closed is not None and closed(direction, best[0]):
            path_lengths[direction] = 0
            continue
        problem = SumOfPrecisions(instance, direction)
        now = time.perf_counter()  # the first direction gets half the time, the second what is left
        with until(None if deadline is None else now + (deadline - now) / (2 if direction == "a" else 1)):
            value, docs = greedy_path(problem)
        path_lengths[direction] = len(problem.relevant_docs())  # documents made relevant before gains ran out
        ends[direction] = problem.assignment(docs)
        if best is None or value > best[0]:
            best = (value, direction, ends[direction])
    value, direction, assignment = best
    # each direction's own best: a range's two ends start from them (exact.driver.seed_guesses)
    return certify(instance, assignment, direction, upper_bound=trivial_bound(instance), status="heuristic",
                   method="greedy", solver=None, started=started, claimed=value,
                   details={"greedy_path_length": path_lengths, "assignments": ends})
