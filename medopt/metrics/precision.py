"""P@k and RR: binary metrics (relevant iff grade >= rel)."""

from __future__ import annotations

from .base import Metric, Param, positive_int, register


REL = Param(int, 1, positive_int, "minimum grade counted as relevant")


@register
class Precision(Metric):
    family = "P"
    PARAMS = {"rel": REL}
    needs_cutoff = True
    binary = True
    doc = "P@k = (1/k) sum_{i<=k} b_i"

    def rank_weights(self, depth: int) -> list[float]:
        return [1.0 / self.cutoff] * depth

    def unit_gain(self, grade: int, grading) -> float:
        return 1.0 if self.is_relevant(grade) else 0.0

    def score(self, ranking, grades, grading) -> float:
        return sum(1 for g in self.grades_of(ranking, grades) if self.is_relevant(g)) / self.cutoff


@register
class ReciprocalRank(Metric):
    better_only = "top"
    shared_ends = "zero"
    family = "RR"
    PARAMS = {"rel": REL}
    binary = True
    doc = "RR@k = 1 / first relevant rank <= k, 0 if none"

    def score(self, ranking, grades, grading) -> float:
        for rank, grade in enumerate(self.grades_of(ranking, grades), start=1):
            if self.is_relevant(grade):
                return 1.0 / rank
        return 0.0
