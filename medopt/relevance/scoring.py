"""Scores of many completions at once, for the sampler: M(A) - M(B) for every row of drawn grades.

AP, nDCG, RR and ERR have vectorised scorers written from SPEC 3 (tests/metrics/test_relevance.py checks each
against the project's evaluator on random draws); any other family is scored draw by draw by the
evaluator itself (slower, and the same numbers by construction).
"""

from __future__ import annotations

import numpy as np

from ..core.instance import Instance


def _table(metric, method: str, grading, top: int) -> np.ndarray:
    function = getattr(metric, method)
    if method == "is_relevant":
        return np.array([bool(function(g)) for g in range(top + 1)])
    return np.array([float(function(g, grading)) for g in range(top + 1)])


def _ranked_grades(ranking, index: dict, judged: dict, grades: np.ndarray) -> np.ndarray:
    """(draws, len(ranking)) grades of a ranking's documents: drawn ones from ``grades``, judged fixed."""
    columns = np.array([index.get(d, -1) for d in ranking], dtype=np.int64)
    fixed = np.array([max(0, judged.get(d, 0)) for d in ranking], dtype=np.int64)
    if not len(ranking):
        return np.zeros((grades.shape[0], 0), dtype=np.int64)
    if grades.shape[1] == 0:
        return np.broadcast_to(fixed[None, :], (grades.shape[0], len(ranking)))
    picked = grades[:, np.maximum(columns, 0)]
    return np.where(columns[None, :] >= 0, picked, fixed[None, :])


def _collection_counts(instance: Instance, grades: np.ndarray, top: int) -> np.ndarray:
    """(draws, G + 1): how many documents of the collection have each grade (negatives at 0)."""
    fixed = np.zeros(top + 1, dtype=np.int64)
    for grade in instance.judgments.values():
        fixed[min(max(int(grade), 0), top)] += 1
    counts = np.stack([(grades == g).sum(axis=1) for g in range(top + 1)], axis=1)
    return counts + fixed[None, :]


def _ap(metric, ranked, counts, relevant):
    rel = relevant[ranked].astype(float)
    ranks = np.arange(1, rel.shape[1] + 1)
    total = (rel * np.cumsum(rel, axis=1) / ranks[None, :]).sum(axis=1)
    count = counts[:, relevant].sum(axis=1)
    if metric.p("norm") == "min" and metric.cutoff is not None:
        count = np.minimum(count, metric.cutoff)
    return np.where(count > 0, total / np.maximum(count, 1), 0.0)


def _ndcg(metric, ranked, counts, gains):
    discount = 1.0 / np.log2(np.arange(2, ranked.shape[1] + 2))
    dcg = (gains[ranked] * discount[None, :]).sum(axis=1)
    top = len(gains) - 1
    positive = [g for g in range(1, top + 1) if gains[g] > 0]
    at_least = np.zeros((counts.shape[0], top + 2), dtype=np.int64)
    for g in range(top, 0, -1):
        at_least[:, g] = at_least[:, g + 1] + (counts[:, g] if g in positive else 0)
    longest = int(at_least[:, 1].max()) if len(at_least) else 0
    depth = metric.cutoff if metric.cutoff is not None else longest
    cumulative = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, max(longest, 1) + 2)))])
    ideal = np.zeros(counts.shape[0])
    for g in positive:
        ideal += gains[g] * (cumulative[np.minimum(at_least[:, g], depth)]
                             - cumulative[np.minimum(at_least[:, g + 1], depth)])
    return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)


def _rr(metric, ranked, counts, relevant):
    rel = relevant[ranked]
    if rel.shape[1] == 0:
        return np.zeros(rel.shape[0])
    first = np.argmax(rel, axis=1) + 1
    return np.where(rel.any(axis=1), 1.0 / first, 0.0)


def _err(metric, ranked, counts, gains):
    stop = gains[ranked]
    if stop.shape[1] == 0:
        return np.zeros(stop.shape[0])
    reach = np.cumprod(np.concatenate([np.ones((stop.shape[0], 1)), 1.0 - stop[:, :-1]], axis=1), axis=1)
    return (reach * stop / np.arange(1, stop.shape[1] + 1)[None, :]).sum(axis=1)


SCORERS = {"AP": (_ap, "is_relevant"), "nDCG": (_ndcg, "gain"), "RR": (_rr, "is_relevant"),
           "ERR": (_err, "gain")}


def vector_scores(instance: Instance, docs, grades: np.ndarray) -> np.ndarray:
    """M(A) - M(B) for each row of ``grades`` (draws, len(docs)): the grades of the unjudged ``docs``."""
    metric, top = instance.metric, instance.max_grade
    scorer = SCORERS.get(metric.family)
    if scorer is None:
        out = np.empty(grades.shape[0])
        for row, drawn in enumerate(grades):
            score_a, score_b = instance.scores(dict(zip(docs, (int(g) for g in drawn))))
            out[row] = score_a - score_b
        return out
    function, table = scorer
    values = _table(metric, table, instance.grading, top)
    index = {d: i for i, d in enumerate(docs)}
    counts = _collection_counts(instance, grades, top)
    judged = {d: min(int(g), top) for d, g in instance.judgments.items()}
    score_a = function(metric, _ranked_grades(instance.a, index, judged, grades), counts, values)
    score_b = function(metric, _ranked_grades(instance.b, index, judged, grades), counts, values)
    return score_a - score_b


def _columns(ranking, index: dict, judged: dict):
    return (np.array([index.get(d, -1) for d in ranking], dtype=np.int64),
            np.array([max(0, judged.get(d, 0)) for d in ranking], dtype=np.int64))


COMPILED_FAMILIES = ("AP", "nDCG")  # the families fast.py has a compiled sampler for


def compiled_scores(instance: Instance, docs, uniform: np.ndarray, cdf: np.ndarray):
    """M(A) - M(B) per row of ``uniform`` by a compiled sampler (fast.py) for COMPILED_FAMILIES; None for
    other families."""
    metric, top = instance.metric, instance.max_grade
    if metric.family not in COMPILED_FAMILIES:
        return None
    from . import fast  # deferred: numba compiles on first use

    index = {d: i for i, d in enumerate(docs)}
    judged = {d: min(int(g), top) for d, g in instance.judgments.items()}
    columns_a, fixed_a = _columns(instance.a, index, judged)
    columns_b, fixed_b = _columns(instance.b, index, judged)
    fixed = np.zeros(top + 1, dtype=np.int64)
    for grade in instance.judgments.values():
        fixed[min(max(int(grade), 0), top)] += 1
    uniform, cdf = np.ascontiguousarray(uniform), np.ascontiguousarray(cdf)
    if metric.family == "AP":
        relevant = _table(metric, "is_relevant", instance.grading, top)
        cap = metric.cutoff if metric.p("norm") == "min" and metric.cutoff is not None else 0
        return fast.ap_draws(uniform, cdf, columns_a, fixed_a, columns_b, fixed_b, relevant,
                             int(fixed[relevant].sum()), int(cap))
    gains = _table(metric, "gain", instance.grading, top)
    longest = max(len(instance.a), len(instance.b), 1)
    discount = 1.0 / np.log2(np.arange(2, longest + 2))
    return fast.ndcg_draws(uniform, cdf, columns_a, fixed_a, columns_b, fixed_b, gains, discount, fixed,
                           -1 if metric.cutoff is None else int(metric.cutoff))
