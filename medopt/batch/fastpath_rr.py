"""RR's array kernel (:mod:`medopt.kernels.rr`) over a block of topics of one pair of runs.

The kernel's proof reads each list only down to its first judged relevant rank (its docstring's
consequence), so each run's entries are cut there first: found for the whole block from one
comparison over the run's grades, then only the cut prefixes are matched between the two lists.

Staging.  A list without a judged relevant document is read to its depth (1000 for trec_eval), and a
table over all of it is slow when documents recur across the block's topics.  So each topic's first
STAGE candidates (the unjudged documents above X's first judged relevant rank, in rank order) are
tried first, and the matching goes the other way round: a table over those few candidates, looked
up by each entry of Y's prefix.  Every candidate u satisfies value(u) = 1/r_X(u) - 1/min(j_Y, p_Y(u))
<= 1/r_X(u) - 1/j_Y, which falls with r_X(u); so when the best value V of the first stage (S = {}
included) is at least 1/r - 1/j_Y, r the rank of the first candidate left out, no later candidate
exceeds V (a tie keeps the earlier choice, as the kernel's own tie rule does), and the topic is
settled.  The other topics (lists that agree on many top documents) are solved again with all of
their candidates.  The values, directions and assignments are the per-instance method's (``rr``,
the same kernel function); certification rests on the proof, as for the other kernels of
:mod:`medopt.batch.fastpath`.
"""

from __future__ import annotations

import numpy as np

from ..kernels.rr import first_relevant_ends, inverse
from .fastpath import _assignments, _positions, _Side
from .runset import UNJUDGED, RunSet, _within


def _prefix(runset: RunSet, run: int, topics: np.ndarray, cutoff: int | None, rel: int) -> tuple[_Side, np.ndarray]:
    """The run's entries of each topic down to its first judged relevant rank (inclusive; the whole
    depth-cut list when there is none), and that rank per topic (1-based, 0 for none)."""
    lengths = runset.length[run][topics]
    if cutoff is not None:
        lengths = np.minimum(lengths, cutoff)
    starts = runset.start[run][topics]
    grades = runset.grades[run]
    relevant = np.flatnonzero(grades >= rel)  # UNJUDGED is the smallest int64: never relevant
    first = np.zeros(len(topics), dtype=np.int64)
    if len(relevant):
        at = np.minimum(np.searchsorted(relevant, starts), len(relevant) - 1)
        entry = relevant[at]
        found = (entry >= starts) & (entry < starts + lengths)
        first = np.where(found, entry - starts + 1, 0)
    lengths = np.where(first > 0, first, lengths)
    row = np.repeat(np.arange(len(topics)), lengths)
    rank = _within(lengths)
    entries = np.repeat(starts, lengths) + rank
    doc = runset.ids[run][entries].astype(np.int64)
    grade = grades[entries]
    judged = grade != UNJUDGED
    return _Side(doc, rank, row, judged, np.where(judged, grade, 0)), first


STAGE = 16  # candidates per topic tried first (the module docstring's staging)


def _direction(runset: RunSet, n: int, x: _Side, y: _Side, first_x, first_y, open_rows) -> tuple:
    """max RR(X) - RR(Y) per topic row, with the rows and doc codes of the documents made relevant: the
    first STAGE candidates of each row, then every candidate of the rows the first stage leaves open."""
    candidate = np.flatnonzero(~x.judged & open_rows[x.row])  # unjudged, above X's first judged relevant, G >= rel
    rows = x.row[candidate]  # ascending, and within a row by rank (the order of the entries)
    counts = np.bincount(rows, minlength=n)
    ordinal = _within(counts)
    value, pick = _candidates(runset, n, x, y, first_x, first_y, candidate[ordinal < STAGE])
    deeper = ordinal == STAGE  # the first candidate left out, in each row that has one
    if deeper.any():
        later = rows[deeper]
        open_ = np.zeros(n, dtype=bool)
        open_[later] = value[later] < 1.0 / (x.rank[candidate[deeper]] + 1) - inverse(first_y[later])
        if open_.any():
            again, chosen = _candidates(runset, n, x, y, first_x, first_y, candidate[open_[rows]])
            value, pick = np.where(open_, again, value), np.where(open_, chosen, pick)
    chosen = pick[pick >= 0]
    return value, x.row[chosen], x.doc[chosen]


def _candidates(runset: RunSet, n: int, x: _Side, y: _Side, first_x, first_y, entries: np.ndarray) -> tuple:
    """The kernel over the candidates at X's ``entries`` (indices, grouped by row): (value (n,), the entry
    index of each row's document made relevant, -1 for none).  Their ranks in Y come from matching Y's
    prefix against them (a table over the few candidates, not over Y's whole prefix)."""
    index = np.arange(len(entries))
    found = _positions(y, _Side(x.doc[entries], index, x.row[entries], x.judged[entries], x.grade[entries]),
                       len(runset.docs))  # for each entry of Y's prefix: the candidate it is, or -1
    rank_in_y = np.zeros(len(entries), dtype=np.int64)
    hit = found >= 0
    rank_in_y[found[hit]] = y.rank[hit] + 1
    value, pick = first_relevant_ends(n, first_x, first_y, x.row[entries], x.rank[entries] + 1, rank_in_y)
    pick[pick >= 0] = entries[pick[pick >= 0]]
    return value, pick


def rr_ends(runset: RunSet, run_a: int, run_b: int, metric, topics: np.ndarray) -> tuple:
    """(value_a, value_b, assignments_a, assignments_b): each direction's maximum and assignment JSON."""
    n = len(topics)
    rel = metric.p("rel")
    a, first_a = _prefix(runset, run_a, topics, metric.cutoff, rel)
    b, first_b = _prefix(runset, run_b, topics, metric.cutoff, rel)
    tops = runset.max_grade[topics]
    open_rows = tops >= rel  # is_relevant(G): an unjudged document can be made relevant
    value_a, rows_a, docs_a = _direction(runset, n, a, b, first_a, first_b, open_rows)
    value_b, rows_b, docs_b = _direction(runset, n, b, a, first_b, first_a, open_rows)
    return (value_a, value_b, _assignments(runset, rows_a, docs_a, tops, n),
            _assignments(runset, rows_b, docs_b, tops, n))
