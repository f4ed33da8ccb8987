"""Sakai's Q-measure: AP blended with cumulative gain against the ideal."""

from __future__ import annotations

from itertools import accumulate

from .base import Metric, Param, count_relevant, ideal_gains, non_negative, register
from .precision import REL


@register
class Q(Metric):
    worse_only = None  # Q(worse) can fall when its R grows: no dominance claimed
    rank_dominance = False
    family = "Q"
    PARAMS = {
        "beta": Param(float, 1.0, non_negative, "weight of cumulative gain, >= 0"),
        "rel": REL,
    }
    recall_based = True
    binary = True
    doc = "Q@k = (1/R) sum_{i<=k} b_i (beta cg(i) + count(i)) / (beta cg*(i) + i)"

    def score(self, ranking, grades, grading) -> float:
        relevant_count = count_relevant(grades, self)
        if relevant_count == 0:
            return 0.0
        beta = self.p("beta")
        ideal = list(accumulate(ideal_gains(grades, self, grading)))
        total, cumulative, found = 0.0, 0.0, 0
        rel, gain = self.p("rel"), {}
        for rank, grade in enumerate(self.grades_of(ranking, grades), start=1):
            if grade not in gain:
                gain[grade] = self.gain(grade, grading)
            cumulative += gain[grade]
            if grade >= rel:  # is_relevant
                found += 1
                ideal_cg = ideal[min(rank, len(ideal)) - 1] if ideal else 0.0
                total += (beta * cumulative + found) / (beta * ideal_cg + rank)
        return total / relevant_count
