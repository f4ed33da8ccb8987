"""DCG@k, SDCG@k (Tan & Clarke's "nDCG") and nDCG@k (recall-based, Moffat), and the gain parameters
ir_measures gives nDCG (SPEC 3): ``dcg=exp-log2`` and ``gains={grade:gain,...}``."""

from __future__ import annotations

from ..errors import MetricSyntaxError
from . import proofs
from .base import GainMap, Metric, Param, Reduction, ideal_gains, log2_discount, register, table_of

MAX_EXP_GRADE = 1023  # 2.0 ** 1024 overflows a float

DCG_FORM = Param(str, "log2", lambda v: v in ("log2", "exp-log2"),
                 "ir_measures' DCG formulation: log2 (gain g) or exp-log2 (gain 2^g - 1)")
GAINS = Param(GainMap, None, lambda v: v is None or isinstance(v, GainMap),
              "ir_measures' gain map {grade:gain,...}; a grade it does not name keeps its own value as gain")
JUDGED_ONLY = Param(bool, False, lambda v: v is False,
                    "ir_measures' judged_only=True scores only judged documents; under a completed assignment "
                    "every document is judged (SPEC 3), so only judged_only=False is accepted")
GAIN_PARAMS = {"dcg": DCG_FORM, "gains": GAINS, "judged_only": JUDGED_ONLY}


class GainParameters:
    """A DCG-family metric's gain as ir_measures' parameters set it (a mixin before Metric):
    ``dcg=exp-log2`` gives gain(g) = 2^g - 1 (gdeval's, Burges'), ``gains={..}`` an explicit map,
    a grade it does not name keeping its value (ir_measures' pytrec_eval provider); neither: the
    SPEC default g, or the ``gains=`` keyword of the call.  Grades are capped at G and a grade <= 0
    has gain 0 either way."""

    def __post_init__(self):
        super().__post_init__()
        if self.p("gains") is not None and self.p("dcg") != "log2":
            raise MetricSyntaxError(f"{self.family}: give dcg=exp-log2 or gains=, not both (no provider of "
                                    "ir_measures defines the two together)")

    def own_gains(self) -> bool:
        return self.p("gains") is not None or self.p("dcg") != "log2"

    def gain(self, grade: int, grading) -> float:
        if not self.own_gains():
            return super().gain(grade, grading)
        grade = grading.cap(grade)
        if grade <= 0:
            return 0.0
        table = self.p("gains")
        return table.gain(grade) if table is not None else 2.0 ** grade - 1.0

    def grading_problem(self, grading) -> str | None:
        if not self.own_gains():
            return super().grading_problem(grading)
        if grading.gains is not None:
            return f"{self} sets its gains in the metric string: pass no gains= besides"
        top = grading.max_grade
        if self.p("gains") is None:
            if top > MAX_EXP_GRADE:
                return (f"{self}: gains 2^g - 1 need 2^G as a float, so G <= {MAX_EXP_GRADE}; got G = {top:,} "
                        "(give a smaller max_grade)")
            return None
        # the map is the identity away from its grades: checking around each of them covers 0..G.  A top
        # gain of 0 is allowed (ir_measures scores 0): {1:0} on a topic whose top grade is 1
        points = sorted({0, top} | {g + step for g in self.p("gains") for step in (-1, 0, 1) if 0 <= g + step <= top})
        values = [self.gain(g, grading) for g in points]
        if any(b < a for a, b in zip(values, values[1:])):
            return (f"{self}: the gains over grades 0..{top} must be non-decreasing (a grade the map does not "
                    f"name keeps its value), got "
                    + ", ".join(f"{g}:{v:g}" for g, v in zip(points, values)))
        return None


class DotProduct(Metric):
    """Static weighted-precision metrics: score = sum_i W(i) * unit_gain(grade_i), W non-increasing."""

    DOT_PRODUCT_REDUCTIONS = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_DOT_PRODUCT,
                              Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_DECREASING_WEIGHTS}

    def rank_weights(self, depth: int) -> list[float]:
        return [log2_discount(i) for i in range(1, depth + 1)]

    def unit_gain(self, grade: int, grading) -> float:
        return self.gain(grade, grading)

    def score(self, ranking, grades, grading) -> float:
        grades_at = self.grades_of(ranking, grades)
        weights = table_of(self, "rank_weights")[len(grades_at)]
        unit_gain = table_of(self, "unit_gain", grading)
        return sum((w * unit_gain[g] for w, g in zip(weights, grades_at)), 0.0)


@register
class DCG(GainParameters, DotProduct):
    family = "DCG"
    PARAMS = GAIN_PARAMS
    doc = "DCG@k = sum_{i<=k} gain_i / log2(i+1)"
    references = {"none": "ir_measures' DCG is not trec_eval's; checked through nDCG and SDCG"}
    examples = ("DCG@5", "DCG", "DCG(dcg=exp-log2)@4")
    reductions = DotProduct.DOT_PRODUCT_REDUCTIONS

    def max_score(self, depth: int, grading) -> float:
        """Every counted rank at the top grade."""
        return sum(self.rank_weights(depth)) * self.unit_gain(grading.max_grade, grading)


@register
class SDCG(DotProduct):
    family = "SDCG"
    PARAMS = {"dcg": Param(str, "log2", lambda v: v == "log2", "ir_measures' SDCG takes dcg=log2 only")}
    needs_cutoff = True
    doc = "SDCG@k = DCG@k / (gain(G) * sum_{i<=k} 1/log2(i+1))"
    references = {"cwl_eval": "SDCG(max_rel=G)@k"}
    examples = ("SDCG@5",)
    reductions = DotProduct.DOT_PRODUCT_REDUCTIONS

    def rank_weights(self, depth: int) -> list[float]:
        scale = sum(log2_discount(i) for i in range(1, self.cutoff + 1))
        return [log2_discount(i) / scale for i in range(1, depth + 1)]

    def unit_gain(self, grade: int, grading) -> float:
        return self.gain(grade, grading) / self.top_gain(grading)


@register
class NDCG(GainParameters, Metric):
    family = "nDCG"
    PARAMS = GAIN_PARAMS
    recall_based = True
    doc = "nDCG@k = DCG@k / IDCG@k, IDCG over the collection's positive-gain documents"
    trec_eval = {"ndcg_cut": True, "ndcg": False}
    references = {"pytrec_eval": "nDCG@k and nDCG(gains={..})@k", "trec_eval": "ndcg_cut_k",
                  "gdeval": "nDCG(dcg='exp-log2')@k"}
    examples = ("nDCG@5", "nDCG", "nDCG@3", "nDCG(dcg=exp-log2)@4", "nDCG(gains={1:2,2:3})@4")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_RATIO,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_DECREASING_WEIGHTS,
                  Reduction.NET_WEIGHT_ZERO: proofs.NET_WEIGHT_NDCG}

    def net_weights(self, depth: int) -> list[float]:
        """The numerator's weight of each rank (the discount), for NET_WEIGHT_ZERO."""
        return [log2_discount(i) for i in range(1, depth + 1)]

    def ideal_dcg(self, grades, grading, depth: int | None = None) -> float:
        ideal = ideal_gains(grades, self, grading)
        if depth is None:
            depth = self.cutoff if self.cutoff is not None else len(ideal)
        return sum(g * log2_discount(i) for i, g in enumerate(ideal[:depth], start=1))

    def score(self, ranking, grades, grading) -> float:
        grades_at = self.grades_of(ranking, grades)
        gain = table_of(self, "gain", grading)
        dcg = sum(gain[g] * log2_discount(i) for i, g in enumerate(grades_at, start=1))
        ideal = self.ideal_dcg(grades, grading)
        return dcg / ideal if ideal > 0 else 0.0
