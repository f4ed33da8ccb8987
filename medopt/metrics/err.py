"""Expected reciprocal rank (Chapelle et al.): a product cascade."""

from __future__ import annotations

from . import proofs
from .base import Metric, Reduction, register


@register
class ERR(Metric):
    family = "ERR"
    doc = "ERR@k = sum_{i<=k} (c_i / i) prod_{j<i} (1 - c_j), c = (2^g - 1) / 2^G"
    references = {"gdeval": "ERR@k"}
    examples = ("ERR@5", "ERR@4")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_CASCADE,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_CASCADE,
                  Reduction.BETTER_ONLY_TOP: proofs.BETTER_ONLY_CASCADE,
                  Reduction.SHARED_ENDS_ZERO: proofs.SHARED_ENDS_CASCADE}

    def gain(self, grade: int, grading) -> float:
        explicit = grading.explicit_gain(grade)
        if explicit is not None:
            return explicit
        grade = max(0, grading.cap(grade))
        return (2.0 ** grade - 1.0) / 2.0 ** grading.max_grade

    def score(self, ranking, grades, grading) -> float:
        total, reach = 0.0, 1.0
        for rank, grade in enumerate(self.grades_of(ranking, grades), start=1):
            stop = self.gain(grade, grading)
            total += reach * stop / rank
            reach *= 1.0 - stop
        return total
