"""Array kernels for the closed-form MEDs (P, DCG, SDCG, RBP) and for nDCG.

``medopt matrix`` compares every pair of many runs on every topic.  One Python call
per topic pair (``medopt.med``) spends far more on bookkeeping than on its few dozen
multiplications (docs/explanation/fast-paths.md#the-closed-form-fast-path), so for the metrics with a
closed form this module works on whole blocks of topics at once:

* :mod:`medopt.batch.runset` holds the runs as arrays (``RunSet``);
* :func:`med_rows` computes, for one pair of runs, one metric and a block of topics,
  Tan & Clarke's closed form, Moffat's Algorithm 1 or the nDCG profile search: this module finds
  each unjudged document's weights in both lists with doc-code tables, and the arithmetic is the
  array kernels the per-instance methods run on a block of one (kernels/closed_forms.py:
  dot_product_ends, alg1_ends; kernels/ndcg_profiles.py: chain_search) -- one kernel per formula,
  this module the wrapper over topics; the tests check both against enumeration;
* :func:`range_columns` gives both ends of each topic's difference range (closed form,
  nDCG profile search).

The per-instance methods re-score every assignment before calling a result
certified (SPEC 5).  Here certification rests on the same proofs (the closed form is
exact; Algorithm 1 is exact when the top grade is 1; the profile search is exact, its
bound proven) and on the tests that check, instance by instance, that these kernels
return the certified per-instance values and assignments that re-score to them.
Results are marked as the per-instance method would mark them, with solver ``numpy``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..kernels.closed_forms import alg1_ends, dot_product_ends, judged_base
from ..kernels.ndcg_profiles import chain_search
from ..metrics import Grading
from ..metrics.base import log2_discount
from ..core.result import TOLERANCE
from .runset import UNJUDGED, RunSet, _within

# the batch kernels of this module by name (blocks.py adds one family's kernels: RR, Rprec; each method
# declares its own as methods.Kernel.name, and tests check that the two agree)
KERNEL_METHODS = ("closed-form", "alg1", "ndcg-profiles")
RANGE_KERNELS = ("closed-form", "ndcg-profiles")  # those that give both ends of a range


# ---------------------------------------------------------------------------
# kernels


@dataclass
class _Side:
    """The depth-cut entries of one run over a block of topics."""

    doc: np.ndarray     # doc code
    rank: np.ndarray    # 0-based rank
    row: np.ndarray     # index of the topic in the block
    judged: np.ndarray  # bool
    grade: np.ndarray   # judged grade (capped), 0 when unjudged


def _side(runset: RunSet, run: int, topics: np.ndarray, cutoff: int | None) -> _Side:
    lengths = runset.length[run][topics]
    if cutoff is not None:
        lengths = np.minimum(lengths, cutoff)
    row = np.repeat(np.arange(len(topics)), lengths)
    rank = _within(lengths)
    entries = np.repeat(runset.start[run][topics], lengths) + rank
    doc = runset.ids[run][entries].astype(np.int64)
    grade = runset.grades[run][entries]
    judged = grade != UNJUDGED
    return _Side(doc, rank, row, judged, np.where(judged, grade, 0))


_SCRATCH = threading.local()  # per thread: doc code -> packed (row, rank) of the other list, else -1


def _positions(entries: _Side, other: _Side, n_docs: int) -> np.ndarray:
    """Rank of each entry's document in the other list (-1: not in its top k).

    A table indexed by doc code holds the other list's packed (row, rank).  A document in
    several topics of the block collides in it; the few entries that lost are matched by sorting.
    """
    found = np.full(len(entries.doc), -1)
    if not len(other.doc) or not len(entries.doc):
        return found
    table = getattr(_SCRATCH, "table", None)
    if table is None or len(table) < n_docs:
        table = _SCRATCH.table = np.full(max(n_docs, 1), -1, dtype=np.int64)
    stride = int(max(entries.rank.max(), other.rank.max())) + 1
    packed = other.row * stride + other.rank
    table[other.doc] = packed
    lost = table[other.doc] != packed
    seen = table[entries.doc]
    hit = (seen >= 0) & (seen // stride == entries.row)
    found[hit] = seen[hit] % stride
    if lost.any():
        table[other.doc[lost]] = -2
        open_ = np.flatnonzero((table[entries.doc] == -2) & ~hit)
        rest_keys = other.row[lost] * n_docs + other.doc[lost]
        order = np.argsort(rest_keys)
        keys = entries.row[open_] * n_docs + entries.doc[open_]
        at = np.minimum(np.searchsorted(rest_keys[order], keys), len(order) - 1)
        match = rest_keys[order][at] == keys
        found[open_[match]] = other.rank[lost][order][at][match]
    table[other.doc] = -1
    return found


def _lookup(function, grades: np.ndarray, tops: np.ndarray) -> np.ndarray:
    """function(grade, Grading(G)) for each (grade, G) pair, calling it once per distinct pair."""
    if not len(grades):
        return np.zeros(0)
    low, high, top = int(grades.min()), int(grades.max()), int(tops.max())
    if (high - low + 1) * top <= 4096:  # small grade scales: a table over every (grade, G)
        table = np.array([[function(g, Grading(t)) if t >= 1 else 0.0 for t in range(top + 1)]
                          for g in range(low, high + 1)], dtype=np.float64)
        return table[grades - low, tops]
    span = top + 1
    keys, inverse = np.unique(grades * span + tops, return_inverse=True)  # one key per (grade, G), 0 <= G < span
    grade_of, top_of = np.divmod(keys, span)
    values = np.array([function(int(g), Grading(int(t))) for g, t in zip(grade_of.tolist(), top_of.tolist())],
                      dtype=np.float64)
    return values[inverse.reshape(-1)]


def _assignments(runset: RunSet, rows: np.ndarray, docs: np.ndarray, grade_of_row: np.ndarray, n: int,
                 grades: np.ndarray | None = None) -> list:
    """JSON {docid: grade} per topic row; ``rows`` grouped and ascending, documents in the order given,
    each at its row's grade (``grade_of_row``) or at its own (``grades``, one per document).

    Built as one string of '"docid":grade,' items with a newline after each row's last item, split at
    the newlines (a JSON-escaped docid has none): the cost is per document, not a Python call per row.
    """
    out = ["{}"] * n
    if not len(rows):
        return out
    ends = np.flatnonzero(np.append(rows[1:] != rows[:-1], True)) + 1
    items = np.empty(len(rows), dtype=object)
    grades = grade_of_row[rows] if grades is None else grades
    if grades[0] == grades.min() == grades.max():
        items[:] = runset.json_items(int(grades[0]))[docs]
    else:
        for grade in np.unique(grades).tolist():
            this = grades == grade
            items[this] = runset.json_items(grade)[docs[this]]
    text = "".join(np.insert(items, ends, "\n").tolist())
    for row, part in zip(rows[ends - 1].tolist(), text.split("\n")):
        out[row] = "{" + part[:-1] + "}"
    return out


def med_columns(runset: RunSet, run_a: int, run_b: int, metric, method: str, topics: np.ndarray) -> tuple:
    """Lists (topic, value, direction, certified, upper_bound, status, assignment_json), one item per topic code.

    ``method`` is "closed-form" (metrics with rank weights: P, DCG, SDCG, RBP), "alg1" (nDCG@k) or
    "ndcg-profiles" (nDCG@k, nDCG).
    """
    topics = np.asarray(topics, dtype=np.int64)
    a = _side(runset, run_a, topics, metric.cutoff)
    b = _side(runset, run_b, topics, metric.cutoff)
    tops = runset.max_grade[topics]
    kernel = {"closed-form": _closed_form, "alg1": _alg1, "ndcg-profiles": _profiles}[method]
    return kernel(runset, metric, topics, a, b, tops)


def med_rows(runset: RunSet, run_a: int, run_b: int, metric, method: str, topics: np.ndarray) -> list[tuple]:
    """``(topic, value, direction, certified, upper_bound, status, assignment_json)`` for each topic code."""
    return list(zip(*med_columns(runset, run_a, run_b, metric, method, topics)))


def _differences(weights, a: _Side, b: _Side, n_docs: int):
    """Weight differences W_A(d) - W_B(d) of the unjudged documents, A's entries then B-only ones."""
    rank_in_b, rank_in_a = _positions(a, b, n_docs), _positions(b, a, n_docs)
    weight_a, weight_b = weights[a.rank], weights[b.rank]
    unjudged_a = ~a.judged
    b_only = ~b.judged & (rank_in_a < 0)
    difference = np.concatenate([
        weight_a[unjudged_a] - np.where(rank_in_b >= 0, weights[np.maximum(rank_in_b, 0)], 0.0)[unjudged_a],
        0.0 - weight_b[b_only]])
    rows = np.concatenate([a.row[unjudged_a], b.row[b_only]])
    docs = np.concatenate([a.doc[unjudged_a], b.doc[b_only]])
    return difference, rows, docs, weight_a, weight_b


def _judged_base(function, n, a: _Side, b: _Side, weight_a, weight_b, tops) -> np.ndarray:
    """sum over judged documents of W_A gain - the same over B (kernels.closed_forms.judged_base)."""
    terms = [weight[side.judged] * _lookup(function, side.grade[side.judged], tops[side.row[side.judged]])
             for side, weight in ((a, weight_a), (b, weight_b))]
    return judged_base(a.row[a.judged], terms[0], b.row[b.judged], terms[1], n)


def _closed_form_ends(runset, metric, a: _Side, b: _Side, tops, n: int) -> tuple:
    """Each direction's maximum per topic row (value_a = max M(A) - M(B), value_b = max M(B) - M(A)),
    with the unjudged documents' weight differences, rows and doc codes (heuristics.closed_form)."""
    depth = max(int(a.rank.max(initial=-1)), int(b.rank.max(initial=-1))) + 1
    weights = np.array(metric.rank_weights(depth), dtype=np.float64)
    difference, rows, docs, weight_a, weight_b = _differences(weights, a, b, len(runset.docs))
    base = _judged_base(metric.unit_gain, n, a, b, weight_a, weight_b, tops)
    value_a, value_b = dot_product_ends(difference, rows, base, _lookup(metric.unit_gain, tops, tops), n)
    return value_a, value_b, difference, rows, docs


def _top_where(runset, chosen, rows, docs, tops, n) -> list:
    """The assignment JSON per topic row: the ``chosen`` unjudged documents at the top grade."""
    order = np.argsort(rows[chosen], kind="stable")
    return _assignments(runset, rows[chosen][order], docs[chosen][order], tops, n)


def _closed_form(runset, metric, topics, a: _Side, b: _Side, tops) -> tuple:
    n = len(topics)
    value_a, value_b, difference, rows, docs = _closed_form_ends(runset, metric, a, b, tops, n)
    direction_b = value_b > value_a
    value = np.where(direction_b, value_b, value_a)
    assignments = _top_where(runset, np.where(direction_b[rows], difference < 0, difference > 0), rows, docs, tops, n)
    values = value.tolist()
    return (_names(runset, topics), values, _directions(direction_b), [True] * n, values, ["optimal"] * n,
            assignments)


def range_columns(runset: RunSet, run_a: int, run_b: int, metric, topics: np.ndarray,
                  method: str = "closed-form") -> tuple:
    """The difference range of each topic by ``method`` (closed_form_range, ndcg_profiles_range): lists
    (topic, low, high, low_bound, high_bound, low_certified, high_certified, status, low_assignment_json,
    high_assignment_json); each end with its own assignment and bound."""
    topics = np.asarray(topics, dtype=np.int64)
    a = _side(runset, run_a, topics, metric.cutoff)
    b = _side(runset, run_b, topics, metric.cutoff)
    tops = runset.max_grade[topics]
    n = len(topics)
    if method == "ndcg-profiles":
        value, bound, certified, converged, assignments = _profile_ends(runset, metric, topics, a, b, tops)
        status = np.where(converged[:n] & converged[n:], "optimal", "feasible").tolist()
        return (_names(runset, topics), (-value[n:]).tolist(), value[:n].tolist(), (-bound[n:]).tolist(),
                bound[:n].tolist(), certified[n:].tolist(), certified[:n].tolist(), status, assignments[n:],
                assignments[:n])
    value_a, value_b, difference, rows, docs = _closed_form_ends(runset, metric, a, b, tops, n)
    low, high = (-value_b).tolist(), value_a.tolist()
    return (_names(runset, topics), low, high, low, high, [True] * n, [True] * n, ["optimal"] * n,
            _top_where(runset, difference < 0, rows, docs, tops, n),
            _top_where(runset, difference > 0, rows, docs, tops, n))


def _judged_gains(runset, metric, topics, tops) -> np.ndarray:
    """Each topic's judged gains at the ideal's ranks 1..k, largest first, 0-padded: shape (n, k)."""
    k = metric.cutoff
    n = len(topics)
    first, last = runset.ideal_offsets[topics], runset.ideal_offsets[topics + 1]
    counts = np.minimum(last - first, k)
    judged = np.zeros((n, k), dtype=np.int64)
    column = np.arange(k)
    mask = column[None, :] < counts[:, None]
    judged[mask] = runset.ideal_grades[(first[:, None] + column[None, :])[mask]]
    return np.where(mask, _lookup(metric.gain, judged.reshape(-1), np.repeat(tops, k)).reshape(n, k), 0.0)


def _alg1(runset, metric, topics, a: _Side, b: _Side, tops) -> tuple:
    """Algorithm 1 on the block (kernels.closed_forms.alg1_ends; the kernel covers nDCG@k)."""
    n = len(topics)
    depth = max(int(a.rank.max(initial=-1)), int(b.rank.max(initial=-1))) + 1
    weights = np.array([log2_discount(i) for i in range(1, depth + 1)])
    difference, rows, docs, weight_a, weight_b = _differences(weights, a, b, len(runset.docs))
    base = _judged_base(metric.gain, n, a, b, weight_a, weight_b, tops)
    discount = np.array([log2_discount(i) for i in range(1, metric.cutoff + 1)])
    ends = alg1_ends(difference, rows, base, _lookup(metric.gain, tops, tops),
                     _judged_gains(runset, metric, topics, tops), discount, n)
    chosen = ends.chosen()
    assignments = _assignments(runset, rows[chosen], docs[chosen], tops, n)
    binary = tops == 1
    bound = np.where(binary, ends.value, ends.graded_bound)
    return (_names(runset, topics), ends.value.tolist(), _directions(ends.direction_b), binary.tolist(),
            bound.tolist(), np.where(binary, "optimal", "heuristic").tolist(), assignments)


def _profile_ends(runset, metric, topics, a: _Side, b: _Side, tops) -> tuple:
    """Each direction's maximum by the chain search of heuristics.ndcg_profiles, the same arrays as
    its profile_ends builds per instance: (value, bound, certified, converged, assignment JSON), rows
    0..n-1 direction a (max M(A) - M(B)) and n..2n-1 direction b."""
    n = len(topics)
    depth = max(int(a.rank.max(initial=-1)), int(b.rank.max(initial=-1))) + 1
    weights = np.array([log2_discount(i) for i in range(1, depth + 1)])
    difference, rows, docs, weight_a, weight_b = _differences(weights, a, b, len(runset.docs))
    base = _judged_base(metric.gain, n, a, b, weight_a, weight_b, tops)
    grades = int(tops.max(initial=1))
    gains = _lookup(metric.gain, np.tile(np.arange(1, grades + 1), n), np.repeat(tops, grades)).reshape(n, grades)
    steps = np.diff(gains, axis=1, prepend=0.0)  # 0 above a topic's own G (its gains are capped there)
    first, last = runset.ideal_offsets[topics], runset.ideal_offsets[topics + 1]
    held = np.zeros((n, grades + 1), np.int64)  # judged documents of each positive (capped) grade
    np.add.at(held, (np.repeat(np.arange(n), last - first), runset.ideal_grades[np.repeat(first, last - first)
                                                                                 + _within(last - first)]), 1)
    judged = np.cumsum(held[:, ::-1], axis=1)[:, ::-1][:, 1:]  # J_g, g = 1..G
    count = np.bincount(rows, minlength=n)
    width = int(count.max(initial=0)) + 1
    source, column = np.arange(len(rows)), np.arange(width)[None, :]
    sums, entries = [], []
    for sign in (1.0, -1.0):  # nets sorted decreasingly in each row (ties: first appearance), summed
        net = sign * difference
        order = np.lexsort((source, -net, rows))
        table = np.zeros((n, width))
        table[rows[order], _within(count) + 1] = net[order]
        sums.append(np.where(column <= count[:, None], np.cumsum(table, axis=1), -np.inf))
        entries.append(order)
    ideal_depth = np.full(n, metric.cutoff) if metric.cutoff is not None else judged[:, 0] + count  # >= every C_g
    value, chain, bound, converged = chain_search(
        np.concatenate(sums), np.concatenate([judged, judged]), np.concatenate([steps, steps]),
        np.concatenate([base, -base]), np.concatenate([ideal_depth, ideal_depth]))
    certified = converged & (bound - value <= TOLERANCE)
    assignments = []
    for d, order in enumerate(entries):  # the nested assignment: position i gets #{g : U_g > i}, at most
        at = d * n + rows[order]              # the topic's G (the grades above it have no gain step)
        grade = np.minimum((chain[at] > _within(count)[:, None]).sum(axis=1), tops[rows[order]])
        keep = grade > 0
        assignments += _assignments(runset, rows[order][keep], docs[order][keep], tops, n, grade[keep])
    return value, bound, certified, converged, assignments


def _profiles(runset, metric, topics, a: _Side, b: _Side, tops) -> tuple:
    n = len(topics)
    value, bound, certified, converged, assignments = _profile_ends(runset, metric, topics, a, b, tops)
    direction_b = value[n:] > value[:n]
    best = np.where(direction_b, value[n:], value[:n])
    upper = np.maximum(bound[:n], bound[n:])
    both = converged[:n] & converged[n:]
    return (_names(runset, topics), best.tolist(), _directions(direction_b), (both & (upper - best <= TOLERANCE)).tolist(),
            upper.tolist(), np.where(both, "optimal", "feasible").tolist(),
            [assignments[n + i] if flip else assignments[i] for i, flip in enumerate(direction_b.tolist())])


def _names(runset: RunSet, topics: np.ndarray) -> list:
    return [runset.topics[t] for t in topics.tolist()]


def _directions(direction_b: np.ndarray) -> list:
    return np.where(direction_b, "b", "a").tolist()
