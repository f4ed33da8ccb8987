"""Expected reciprocal rank (Chapelle et al.): a product cascade."""

from __future__ import annotations

from . import proofs
from .base import Metric, Reduction, register, table_of

MAX_DEFAULT_GRADE = 1023  # 2.0 ** 1024 overflows a float


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

    def grading_problem(self, grading) -> str | None:
        """The default gains need 2^G as a float (G <= 1023); explicit gains are stop probabilities."""
        if grading.gains is None and grading.max_grade > MAX_DEFAULT_GRADE:
            return (f"ERR's default gains (2^g - 1) / 2^G need 2^G as a float, so G <= {MAX_DEFAULT_GRADE}; "
                    f"got G = {grading.max_grade:,} (give explicit gains, or a smaller max_grade)")
        if grading.gains is not None:
            for grade in range(1, grading.max_grade + 1):
                if not 0.0 <= grading.explicit_gain(grade) <= 1.0:
                    return (f"ERR's gains are stop probabilities, each in [0, 1]; grade {grade} has "
                            f"{grading.explicit_gain(grade)}")
        return None

    def gain(self, grade: int, grading) -> float:
        explicit = grading.explicit_gain(grade)
        if explicit is not None:
            return explicit
        grade = max(0, grading.cap(grade))
        return (2.0 ** grade - 1.0) / 2.0 ** grading.max_grade

    def score(self, ranking, grades, grading) -> float:
        total, reach = 0.0, 1.0
        grades_at = self.grades_of(ranking, grades)
        gain = table_of(self, "gain", grading)
        for rank, grade in enumerate(grades_at, start=1):
            stop = gain[grade]
            total += reach * stop / rank
            reach *= 1.0 - stop
        return total
