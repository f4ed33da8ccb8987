"""Sakai's Q-measure: AP blended with cumulative gain against the ideal."""

from __future__ import annotations

from itertools import accumulate

from .base import Metric, Param, count_relevant, ideal_gains, non_negative, register, table_of
from .precision import REL

MAX_BETA = 1e6


@register
class Q(Metric):
    family = "Q"
    PARAMS = {
        # beta * cg(i) must stay finite in floating point: 1e6 is far beyond any beta in use (Sakai: 1)
        "beta": Param(float, 1.0, lambda v: non_negative(v) and v <= MAX_BETA, "weight of cumulative gain, "
                      f"0 <= beta <= {MAX_BETA:g}"),
        "rel": REL,
    }
    recall_based = True
    binary = True
    doc = "Q@k = (1/R) sum_{i<=k} b_i (beta cg(i) + count(i)) / (beta cg*(i) + i)"
    references = {"none": "no library at hand computes Sakai's Q-measure"}
    examples = ("Q(beta=1)@4", "Q(beta=0.5)@3")
    # No reduction: Q(worse) can fall when R grows, and a swap changes the ideal cumulative gain.

    def score(self, ranking, grades, grading) -> float:
        relevant_count = count_relevant(grades, self)
        if relevant_count == 0:
            return 0.0
        beta = self.p("beta")
        ideal = list(accumulate(ideal_gains(grades, self, grading)))
        total, cumulative, found = 0.0, 0.0, 0
        rel, gain = self.p("rel"), table_of(self, "gain", grading)
        for rank, grade in enumerate(self.grades_of(ranking, grades), start=1):
            cumulative += gain[grade]
            if grade >= rel:  # is_relevant
                found += 1
                ideal_cg = ideal[min(rank, len(ideal)) - 1] if ideal else 0.0
                total += (beta * cumulative + found) / (beta * ideal_cg + rank)
        return total / relevant_count

    def scores_many(self, ranking_grades, grade_counts, grading):
        """Q of one ranking under many collections at once (NumPy; the formulation's small-box
        enumeration, formulations/q/boxes.py): ``ranking_grades`` is an (m, L) integer array, row r
        the grades of the ranking's top L in collection r; ``grade_counts`` maps each grade g that
        occurs in a collection to an (m,) array, the number of its documents with grade exactly g.
        The same sums as ``score`` (tests/exact/test_exact_q.py compares them): cg*(i) is the sum of the
        i largest gains of the collection, here from the counts of the grades taken by gain."""
        import numpy as np

        ranking_grades = np.asarray(ranking_grades)
        ranking_grades = ranking_grades[:, : self.depth(ranking_grades.shape[1])]  # the top k, as grades_of
        m, depth = ranking_grades.shape
        beta, rel = self.p("beta"), self.p("rel")
        present = ([int(ranking_grades.min()), int(ranking_grades.max())] if ranking_grades.size else []) \
            + [0] + list(grade_counts)
        low, high = min(present), max(present)
        gain = {g: self.gain(g, grading) for g in range(low, high + 1)}
        # beta cg(i) + count(i) = the running sum of beta gain + [relevant]; the term counts where relevant
        weight = np.array([beta * gain[g] + (g >= rel) for g in range(low, high + 1)])
        relevant = ranking_grades >= rel
        numerators = relevant * np.cumsum(weight[ranking_grades - low], axis=1)
        ranks = np.arange(1, depth + 1)
        # cg* depends on the counts alone: computed once per distinct row of counts (few: one per profile)
        order = sorted((g for g in grade_counts if gain[g] > 0), key=lambda g: -gain[g])
        counts = np.stack([np.broadcast_to(np.asarray(grade_counts[g], dtype=np.int64), (m,)) for g in order],
                          axis=1) if order else np.zeros((m, 0), dtype=np.int64)
        key = np.zeros(m, dtype=np.int64)  # each row of counts as one number (np.unique over rows is slow)
        for column in range(counts.shape[1]):
            key = key * (int(counts[:, column].max(initial=0)) + 1) + counts[:, column]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        distinct = counts[first]
        ideal, above = np.zeros((len(distinct), depth)), np.zeros((len(distinct), 1))
        for column, g in enumerate(order):
            count = distinct[:, column: column + 1]
            ideal += gain[g] * np.minimum(np.maximum(ranks - above, 0), count)  # grade g among the i largest
            above = above + count
        total = np.einsum("ij,ij->i", numerators, (1.0 / (beta * ideal + ranks))[inverse.reshape(-1)])
        relevant_count = sum((np.asarray(c) for g, c in grade_counts.items() if g >= rel), np.zeros(m))
        return np.where(relevant_count > 0, total / np.maximum(relevant_count, 1), 0.0)
