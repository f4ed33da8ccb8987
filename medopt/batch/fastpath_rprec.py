"""R-Precision's kernel (:mod:`medopt.kernels.rprec`) over a block of topics of one pair of runs.

The claim of that module, computed for every topic of the block at once: per topic row, the judged
relevant count J (the topic's judged grades, from the runset's ideal profile), the cumulative counts
J_X(c), J_Y(c) of judged relevant documents and #{d in U in X's top c}, #{... in Y's}, #{... in both},
as (rows x ranks) arrays, then v(s) over a (rows x sizes) grid, the best size per row, and the documents
made relevant: the s of largest weight at that cut, ties in the order of ``Instance.unjudged`` (A's
documents by rank, then B's own).  Same arithmetic as the per-instance ``rprec`` method (the tests
compare the two topic by topic, and re-score each assignment); certification rests on the proof, as
for the other kernels of :mod:`medopt.batch.fastpath`.
"""

from __future__ import annotations

import numpy as np

from .fastpath import _assignments, _positions, _side
from .runset import RunSet, _within


def _cumulative(n: int, rows: np.ndarray, ranks: np.ndarray, depth: int) -> np.ndarray:
    """counts[row, c] = #{i : rows[i] = row, ranks[i] <= c}, c = 0..depth (1-based ranks; > depth never)."""
    keep = ranks <= depth
    table = np.bincount(rows[keep] * (depth + 1) + ranks[keep], minlength=n * (depth + 1)).reshape(n, depth + 1)
    return np.cumsum(table, axis=1)


def rprec_ends(runset: RunSet, run_a: int, run_b: int, metric, topics: np.ndarray) -> tuple:
    """(value_a, value_b, assignments_a, assignments_b): each direction's maximum and assignment JSON."""
    n = len(topics)
    rel = metric.p("rel")
    a, b = _side(runset, run_a, topics, metric.cutoff), _side(runset, run_b, topics, metric.cutoff)
    tops = runset.max_grade[topics]
    first, last = runset.ideal_offsets[topics], runset.ideal_offsets[topics + 1]
    counted = np.concatenate([[0], np.cumsum(runset.ideal_grades >= rel)])  # capped positive judged grades
    judged = counted[last] - counted[first]
    depth = max(int(a.rank.max(initial=-1)), int(b.rank.max(initial=-1))) + 1
    absent = depth + 1
    rank_in_b, rank_in_a = _positions(a, b, len(runset.docs)), _positions(b, a, len(runset.docs))
    open_rows = tops >= rel  # is_relevant(G): an unjudged document can be made relevant
    from_a = ~a.judged & open_rows[a.row]
    from_b = ~b.judged & (rank_in_a < 0) & open_rows[b.row]
    rows = np.concatenate([a.row[from_a], b.row[from_b]])
    order = np.argsort(rows, kind="stable")  # per row: A's by rank, then B's own (Instance.unjudged)
    rows = rows[order]
    docs = np.concatenate([a.doc[from_a], b.doc[from_b]])[order]
    ranks = {"a": np.concatenate([a.rank[from_a] + 1, np.full(int(from_b.sum()), absent)])[order],
             "b": np.concatenate([np.where(rank_in_b[from_a] >= 0, rank_in_b[from_a] + 1, absent),
                                  b.rank[from_b] + 1])[order]}
    relevant = {"a": _cumulative(n, a.row[a.judged & (a.grade >= rel)], a.rank[a.judged & (a.grade >= rel)] + 1, depth),
                "b": _cumulative(n, b.row[b.judged & (b.grade >= rel)], b.rank[b.judged & (b.grade >= rel)] + 1, depth)}
    inside = {side: _cumulative(n, rows, ranks[side], depth) for side in ("a", "b")}
    both = _cumulative(n, rows, np.maximum(ranks["a"], ranks["b"]), depth)
    count = np.bincount(rows, minlength=n)
    sizes = np.arange(int(count.max(initial=0)) + 1)[None, :]
    total = judged[:, None] + sizes
    cut = total if metric.cutoff is None else np.minimum(metric.cutoff, total)
    at = np.minimum(cut, depth)
    ends = []
    for x, y in (("a", "b"), ("b", "a")):
        plus = np.take_along_axis(inside[x] - both, at, axis=1)
        minus = np.take_along_axis(inside[y] - both, at, axis=1)
        zero = count[:, None] - plus - minus
        gained = np.minimum(sizes, plus) - np.maximum(0, sizes - plus - zero)
        lead = np.take_along_axis(relevant[x], at, axis=1) - np.take_along_axis(relevant[y], at, axis=1)
        value = np.where(cut > 0, (lead + gained) / np.maximum(cut, 1), 0.0)
        value = np.where(sizes <= count[:, None], value, -np.inf)
        best = np.argmax(value, axis=1)
        chosen_cut = cut[np.arange(n), best][rows]
        weight = (ranks[x] <= chosen_cut).astype(np.int64) - (ranks[y] <= chosen_cut)
        pick = np.lexsort((np.arange(len(rows)), -weight, rows))  # per row: +1, then 0, then -1; ties in order
        take = pick[_within(count) < best[rows[pick]]]
        take = take[np.argsort(rows[take], kind="stable")]
        ends.append((value[np.arange(n), best], _assignments(runset, rows[take], docs[take], tops, n)))
    (value_a, json_a), (value_b, json_b) = ends
    return value_a, value_b, json_a, json_b
