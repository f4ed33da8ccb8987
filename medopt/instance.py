"""Instance: two depth-cut rankings, the topic's judgments and the grade range.

Everything a MED method needs is here, once: which documents count (the top k
of each list), which are unjudged (and so are decision variables), Tan &
Clarke's free / bound / predetermined classification, and the independent
scoring of a full assignment with the project's metric evaluators.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Mapping, Sequence

from .errors import MedoptError
from .metrics import Grading, Metric, default_max_grade, parse_metric

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
        """Capped grade -> how many judged documents of the collection have it (formulations.common.judged_count)."""
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
        score_a, score_b = self.scores(assignment)
        values = {"a": score_a - score_b, "b": score_b - score_a}
        if self.residual:
            values["a"] += self.metric.tail_weight(len(self.full_a))
            values["b"] += self.metric.tail_weight(len(self.full_b))
        return values

    def difference(self, assignment: Mapping, direction: str) -> float:
        return self.differences(assignment)[direction]

    # -- reductions ----------------------------------------------------------------
    def reduced(self, direction: str) -> "Instance":
        """The instance with the dominance reductions of one direction applied.

        Let X be the better list of ``direction`` and Y the other, and call a document
        X-only when it is unjudged and in X's top k but not in Y's.  Every claim below
        is about a maximiser of M(X) - M(Y) whose value is >= 0; the other direction
        then holds the MED or both are exact, so the bound max(bound_a, bound_b) stays valid.

        * worse_only = "zero" (P, DCG, SDCG, RBP, nDCG, SSP, AP, RR, ERR), no "at least"
          limit: a Y-only document at grade 0.  Raising it leaves M(X)'s numerator alone and
          cannot lower M(Y)'s numerator; for recall-based metrics it can only raise the shared
          denominator D.  With N >= 0, (N - delta)/(D + eps) <= N/D.  RR and ERR are
          non-decreasing in each document's stop probability (dERR/dc_i = reach_i (1/i -
          sum_{j>i} (c_j/j) prod_{i<l<j}(1-c_l)) >= reach_i (1/i - 1/(i+1)) >= 0).  Zeroing a
          document keeps every "at most" limit satisfied.
        * rank_dominance (P, DCG, SDCG, nDCG, RBP, SSP, AP, RR, ERR), any limits: rank
          dominance.  Write r_X(d) for d's rank in X's top k (infinity when absent).  If
          r_X(d) <= r_X(e) and r_Y(d) >= r_Y(e), some maximiser has grade(d) >= grade(e):
          swapping the two grades when grade(d) < grade(e) keeps the multiset of grades (so
          R, the ideal DCG and every limit), moves the larger grade up (or into) X, which
          cannot lower a DCG or a sum of precisions with decreasing rank weights, and down
          (or out of) Y, which cannot raise Y's.  For the cascades: with stop probabilities
          c_i < c_j at ranks i < j, a block between them of survival s and per-reach score
          E <= (1 - s)/(i + 1), the swap changes the score by reach (c_j - c_i)(1/i - E - s/j)
          >= 0 and leaves the survival below j unchanged.  This holds for every assignment,
          whatever the sign of the difference.  Only the covering pairs are kept (no e' strictly
          between d and e), which implies the rest by transitivity.
        * better_only = "top" (RR, ERR), no limits: X-only documents at grade G, since M(X) is
          non-decreasing in each stop probability and M(Y) does not see them.
        * net_weight = "zero" (nDCG), no "at least" limit: a document whose discount in X's top k
          is at most its discount in Y's (0 when absent; metric.net_weights) at grade 0.  The
          difference is N / D with N = sum_d gain(d) (w_X(d) - w_Y(d)) and D = IDCG,
          non-decreasing in every gain.  Lowering
          such a document to grade 0 cannot lower N and cannot raise D; with N >= 0 the ratio cannot
          fall.  (This contains worse_only for nDCG.)
        * shared_ends = "zero" (RR, ERR), no limits: the unjudged documents of the common prefix
          and of the common suffix at grade 0.  The common prefix is the first p ranks, where
          both lists hold the same document at each rank; such a document is at no other rank,
          so M(X) = (terms of ranks <= p, equal in X and Y) + S T_X with S = prod_{i<=p} (1 - c_i)
          and T_X the cascade of X's ranks below p, which the prefix does not touch:
          M(X) - M(Y) = S (T_X - T_Y).  If some tail has T_X - T_Y >= 0, the largest S (prefix
          at grade 0, judged ones as judged) times the largest tail difference is the maximum.
          Otherwise every difference is <= 0 and the other direction's is > 0 (S > 0 there):
          this direction cannot hold the MED.  The common suffix is the ranks below q where both
          lists hold the same document at each rank, when their first q ranks hold the same set:
          the reach of every suffix rank is then a product over the same documents in X and Y,
          so suffix terms cancel for every assignment and their grades do not matter.
        """
        better, worse = (self.a, self.b) if direction == "a" else (self.b, self.a)
        in_better, in_worse = set(better), set(worse)
        worse_only = [d for d in worse if d in self.unjudged and d not in in_better]
        better_only = [d for d in better if d in self.unjudged and d not in in_worse]
        metric, fixed, dominance = self.metric, {}, ()
        if metric.worse_only == "zero" and all(limit.low == 0 for limit in self.limits):
            fixed.update({d: 0 for d in worse_only})
        if metric.better_only == "top" and not self.limits:
            fixed.update({d: self.max_grade for d in better_only})
        if metric.net_weight == "zero" and all(limit.low == 0 for limit in self.limits):
            weights = metric.net_weights(max(len(better), len(worse)))
            at_better, at_worse = {d: i for i, d in enumerate(better)}, {d: i for i, d in enumerate(worse)}
            weight = lambda at, d: weights[at[d]] if d in at else 0.0
            fixed.update({d: 0 for d in self.unjudged
                          if d not in fixed and weight(at_better, d) <= weight(at_worse, d)})
        if metric.shared_ends == "zero" and not self.limits:
            fixed.update({d: 0 for d in shared_ends(better, worse) if d in self.unjudged and d not in fixed})
        if metric.rank_dominance:
            free = [d for d in self.unjudged if d not in fixed]
            keys = dominance_keys(free, better, worse)
            dominance = rank_dominance(free, keys)
        if not fixed and not dominance:
            return self
        judgments = dict(self.judgments)
        judgments.update(fixed)
        return replace(self, judgments=judgments, fixed=fixed, dominance=dominance,
                       dominance_keys=keys if dominance else {})

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


def shared_ends(x: tuple, y: tuple) -> tuple:
    """Documents of the common prefix of two lists (the same document at each of the first ranks)
    and of the common suffix below a top part both hold as a set (the reduction shared_ends)."""
    prefix = 0
    while prefix < min(len(x), len(y)) and x[prefix] == y[prefix]:
        prefix += 1
    top = len(x)
    if len(x) == len(y):
        while top > prefix and x[top - 1] == y[top - 1]:
            top -= 1
        if set(x[:top]) != set(y[:top]):
            top = len(x)
    return x[:prefix] + x[top:]


def dominance_keys(docs, better, worse) -> dict:
    """doc -> (rank in the better list, rank in the worse list), absent = deeper than both."""
    deep = len(better) + len(worse) + 1
    rank_better, rank_worse = {d: i for i, d in enumerate(better)}, {d: i for i, d in enumerate(worse)}
    return {d: (rank_better.get(d, deep), rank_worse.get(d, deep)) for d in docs}


def rank_dominance(docs, key: dict) -> tuple:
    """Covering pairs (d, e) of the order: d above or level with e in the better list and
    below or level with e in the worse one.  The rest follows by transitivity.  O(n^2)."""
    pairs = []
    for e in docs:
        better_e, worse_e = key[e]
        dominators = [d for d in docs if d != e and key[d][0] <= better_e and key[d][1] >= worse_e]
        dominators.sort(key=lambda d: (-key[d][0], key[d][1]))  # nearest to e in the better list first
        lowest = None
        for d in dominators:
            if lowest is None or key[d][1] < lowest:  # nothing found so far lies between d and e
                pairs.append((d, e))
                lowest = key[d][1]
    return tuple(pairs)


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
    full_a, full_b = _ranking("a", a), _ranking("b", b)
    judged = _judgments(judgments)
    if max_grade is None:
        grade_top = default_max_grade(judged)
    else:
        if isinstance(max_grade, bool) or not isinstance(max_grade, int) or max_grade < 1:
            raise MedoptError(f"max_grade must be an integer >= 1, got {max_grade!r}")
        grade_top = max_grade
        judged = {d: min(g, grade_top) for d, g in judged.items()}
    if gains is not None and not isinstance(gains, Mapping):
        raise MedoptError(f"gains must be a mapping grade -> gain, got {type(gains).__name__}")
    grading = Grading(grade_top, dict(gains) if gains is not None else None)
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
