"""Instance: two depth-cut rankings, the topic's judgments and the grade range.

Everything a MED method needs is here, once: which documents count (the top k
of each list), which are unjudged (and so are decision variables), Tan &
Clarke's free / bound / predetermined classification, and the independent
scoring of a full assignment with the project's metric evaluators.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Sequence

from ..errors import MedoptError
from ..metrics import PER_TOPIC, Grading, Metric, default_max_grade, is_character_metric, parse_metric

PAD_PREFIX = "\u27e8pad\u27e9"


@dataclass(frozen=True)
class RelevanceLimit:
    """Side constraint on the collection: ``low <= #documents with grade >= grade <= high``.

    Counts every relevant document of the collection: judged ones anywhere plus
    unjudged ones of the two lists assigned such a grade (Tan & Clarke's
    "navigational query" assumption: e.g. at most one document of the top grade).
    """

    grade: int = 1
    low: int = 0
    high: int | None = None


@dataclass(frozen=True, eq=False)
class Instance:
    metric: Metric
    a: tuple          # the ranks that count for the metric (cut at k; padded when pad="free")
    b: tuple
    judgments: Mapping  # every judgment of the topic, capped at G (negatives kept: non-relevant)
    grading: Grading
    residual: bool = False
    limits: tuple[RelevanceLimit, ...] = ()
    full_a: tuple = field(default=(), repr=False)   # uncut rankings, for reports
    full_b: tuple = field(default=(), repr=False)
    fixed: Mapping = field(default_factory=dict)    # unjudged documents fixed by a reduction (in judgments too)
    dominance: tuple = ()                           # pairs (d, e): some maximiser has grade(d) >= grade(e)
    dominance_keys: Mapping = field(default_factory=dict)  # doc -> (rank in better, rank in worse)

    # -- classification ------------------------------------------------------
    @cached_property
    def unjudged(self) -> tuple:
        """Unjudged documents of either cut list, in order of first appearance (A then B)."""
        seen = dict.fromkeys(d for d in self.a + self.b if d not in self.judgments)
        return tuple(seen)

    @cached_property
    def judged_grades(self) -> dict:
        """Capped grade -> how many judged documents of the collection have it (judged_count)."""
        counts = {}
        for grade in self.judgments.values():
            grade = self.grading.cap(grade)
            counts[grade] = counts.get(grade, 0) + 1
        return counts

    @cached_property
    def bound_docs(self) -> tuple:
        in_b = set(self.b)
        return tuple(d for d in self.unjudged if d in in_b and d in set(self.a))

    @cached_property
    def free_docs(self) -> tuple:
        bound = set(self.bound_docs)
        return tuple(d for d in self.unjudged if d not in bound)

    @cached_property
    def predetermined_docs(self) -> tuple:
        return tuple(dict.fromkeys(d for d in self.a + self.b if d in self.judgments))

    @cached_property
    def rank_a(self) -> dict:
        return {d: i for i, d in enumerate(self.a, start=1)}

    @cached_property
    def rank_b(self) -> dict:
        return {d: i for i, d in enumerate(self.b, start=1)}

    @property
    def padded(self) -> bool:
        """Whether pad="free" filled a list with unjudged documents (PAD_PREFIX)."""
        return any(str(d).startswith(PAD_PREFIX) for d in self.a + self.b)

    @property
    def max_grade(self) -> int:
        return self.grading.max_grade

    # -- scoring (the independent evaluator) ----------------------------------
    def collection(self, assignment: Mapping) -> dict:
        grades = dict(self.judgments)
        grades.update(assignment)
        return grades

    def scores(self, assignment: Mapping) -> tuple[float, float]:
        """(M(A), M(B)) when the unjudged documents take ``assignment`` (missing: 0)."""
        grades = self.collection(assignment)
        return (self.metric.score(self.a, grades, self.grading), self.metric.score(self.b, grades, self.grading))

    def differences(self, assignment: Mapping) -> dict[str, float]:
        """{"a": M(A) - M(B), "b": M(B) - M(A)}, the RBP residual tail credited to the better list."""
        return self.differences_of(*self.scores(assignment))

    def differences_of(self, score_a: float, score_b: float) -> dict[str, float]:
        """``differences`` from the two lists' scores."""
        values = {"a": score_a - score_b, "b": score_b - score_a}
        if self.residual:
            values["a"] += self.metric.tail_weight(len(self.full_a))
            values["b"] += self.metric.tail_weight(len(self.full_b))
        return values

    def difference(self, assignment: Mapping, direction: str) -> float:
        return self.differences(assignment)[direction]

    def dominates(self, d, e) -> bool:
        """Whether the reduction's rank dominance puts grade(d) >= grade(e) (a partial order)."""
        keys = self.dominance_keys
        return d in keys and e in keys and keys[d][0] <= keys[e][0] and keys[d][1] >= keys[e][1]

    def satisfies_limits(self, assignment: Mapping) -> bool:
        grades = self.collection(assignment)
        for limit in self.limits:
            count = sum(1 for g in grades.values() if g >= limit.grade)
            if count < limit.low or (limit.high is not None and count > limit.high):
                return False
        return True


def judged_count(instance: Instance, at_least_grade: int) -> int:
    """Judged documents of the collection with a (capped) grade >= ``at_least_grade``."""
    return sum(count for grade, count in instance.judged_grades.items() if grade >= at_least_grade)


def _ranking(name: str, value) -> tuple:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise MedoptError(f"ranking {name} must be a sequence of document ids, got {type(value).__name__}")
    docs = tuple(value)
    for doc in docs:
        if not isinstance(doc, str) or not doc:
            raise MedoptError(f"ranking {name}: document ids must be non-empty strings, got {doc!r}")
        if doc.startswith(PAD_PREFIX):
            raise MedoptError(f"ranking {name}: document id {doc!r} uses the reserved padding prefix")
    if len(set(docs)) != len(docs):
        seen = set()
        dup = next(d for d in docs if d in seen or seen.add(d))
        raise MedoptError(f"ranking {name}: document {dup!r} appears twice")
    return docs


def _judgments(value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise MedoptError(f"judgments must be a mapping doc id -> integer grade, got {type(value).__name__}")
    judged = {}
    for doc, grade in value.items():
        if not isinstance(doc, str) or not doc:
            raise MedoptError(f"judgments: document ids must be non-empty strings, got {doc!r}")
        if isinstance(grade, bool) or not hasattr(grade, "__index__"):
            raise MedoptError(f"judgments: grade of {doc!r} must be an integer, got {grade!r}")
        judged[doc] = int(grade)
    return judged


def build_instance(metric, a, b, judgments=None, *, max_grade=None, gains=None, pad: str = "none",
                   residual: bool = False, limits: Sequence[RelevanceLimit] = ()) -> Instance:
    """Validate user input and build the Instance every MED method works on."""
    metric = parse_metric(metric)
    if is_character_metric(metric):  # U: its instance is passages.PassageInstance (SPEC 8)
        raise MedoptError(f"{metric} scores trailtexts of passages, not rankings of documents: give passages "
                          "(docid, offset, length) and spans= to medopt.med / difference_range / score_range")
    full_a, full_b = _ranking("a", a), _ranking("b", b)
    judged = _judgments(judgments)
    if max_grade is None or max_grade == PER_TOPIC:
        grade_top = default_max_grade(judged)
    else:
        if isinstance(max_grade, bool) or not isinstance(max_grade, int) or max_grade < 1:
            raise MedoptError(f"max_grade must be an integer >= 1, got {max_grade!r}")
        grade_top = max_grade
        judged = {d: min(g, grade_top) for d, g in judged.items()}
    if gains is not None and not isinstance(gains, Mapping):
        raise MedoptError(f"gains must be a mapping grade -> gain, got {type(gains).__name__}")
    grading = Grading(grade_top, dict(gains) if gains is not None else None)
    problem = metric.grading_problem(grading)
    if problem is not None:
        raise MedoptError(problem)
    if pad not in ("none", "free"):
        raise MedoptError(f"pad must be 'none' or 'free', got {pad!r}")
    if residual and not hasattr(metric, "tail_weight"):
        raise MedoptError(f"residual applies to RBP only, not {metric}")
    cut_a, cut_b = full_a[: metric.depth(len(full_a))], full_b[: metric.depth(len(full_b))]
    if pad == "free":
        if metric.cutoff is None:
            raise MedoptError(f"pad='free' needs a metric with a cutoff, not {metric}")
        cut_a = cut_a + tuple(f"{PAD_PREFIX}a{i}" for i in range(len(cut_a) + 1, metric.cutoff + 1))
        cut_b = cut_b + tuple(f"{PAD_PREFIX}b{i}" for i in range(len(cut_b) + 1, metric.cutoff + 1))
        full_a, full_b = cut_a, cut_b  # the residual tail starts after the padding
    for limit in limits:
        if not isinstance(limit, RelevanceLimit) or limit.grade < 1 or limit.low < 0 or (
                limit.high is not None and limit.high < limit.low):
            raise MedoptError(f"bad relevance limit {limit!r}")
    return Instance(metric, cut_a, cut_b, judged, grading, residual, tuple(limits), full_a, full_b)
