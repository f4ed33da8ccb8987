"""Array form of many runs, and array kernels for the closed-form MEDs (P, DCG, SDCG, RBP, nDCG).

``medopt matrix`` compares every pair of many runs on every topic.  One Python call
per topic pair (``medopt.med``) costs tens of microseconds of bookkeeping around a
few dozen multiplications, so for the metrics with a closed form this module works
on whole blocks of topics at once:

* :func:`load_runset` reads TREC runs into integer arrays (documents coded once for
  all runs) with whole-file operations, and orders each topic exactly as
  :func:`medopt.io.trec.read_run` does (score descending, ties by docid
  descending).  Any file the quick parser is not sure about (non-ASCII bytes, a line
  without six fields, an odd score, a duplicate docid, ...) is read again by
  ``read_run`` itself, so errors and edge cases are that reader's.
* :func:`med_rows` computes, for one pair of runs, one metric and a block of topics,
  Tan & Clarke's closed form or Moffat's Algorithm 1 with NumPy -- the same
  arithmetic, in the same order, as :mod:`medopt.heuristics.closed_form` and
  :mod:`medopt.heuristics.alg1` (the tests compare the two on many random topic
  pairs).

The per-instance methods re-score every assignment before calling a result
certified (SPEC 5).  Here certification rests on the same proofs (the closed form is
exact; Algorithm 1 is exact when the top grade is 1) and on the tests that check,
instance by instance, that these kernels return the certified per-instance values
and assignments that re-score to them.  Results are marked as the per-instance
method would mark them, with solver ``numpy``.
"""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from dataclasses import dataclass

import numpy as np

from .errors import MedoptError
from .io.trec import _stem, read_run, sort_topics
from .metrics import Grading
from .metrics.base import log2_discount

# Byte classes of ASCII text: 0 part of a token, 1 whitespace to str.split(), 2 newline, 3 anything
# the quick parser leaves to read_run (other control bytes, non-ASCII).
_CLASS = np.full(256, 3, dtype=np.uint8)
_CLASS[32:127] = 0
_CLASS[list(b" \t\r\x0b\x0c\x1c\x1d\x1e\x1f")] = 1
_CLASS[10] = 2
_SCORE_BYTE = np.zeros(256, dtype=bool)
_SCORE_BYTE[list(b"\x000123456789.eE+-")] = True
_BLOCK_BYTES = 1 << 24
_WIDEST_TOKEN = 128
UNJUDGED = np.iinfo(np.int64).min


@dataclass
class RunColumns:
    """One run file: each topic's entries contiguous and in trec_eval order; strings as UTF-8 bytes."""

    name: str
    path: str
    topics: np.ndarray    # local topic strings (bytes array)
    docs: np.ndarray      # local docid strings (bytes array)
    topic_of: np.ndarray  # local topic code of each entry
    doc_of: np.ndarray    # local doc code of each entry


def _blocks(data: bytes):
    """Pieces of ``data`` of about _BLOCK_BYTES each, cut after a newline."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", min(start + _BLOCK_BYTES, len(data)) - 1) + 1 or len(data)
        yield data[start:end]
        start = end


def _tokens(padded: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens as rows of a zero-padded byte matrix (n, widest)."""
    width = max(int((ends - starts).max(initial=1)), 1)
    matrix = np.lib.stride_tricks.sliding_window_view(padded, width)[starts]
    matrix[np.arange(width)[None, :] >= (ends - starts)[:, None]] = 0
    return matrix


def _strings(matrix: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(matrix).view(f"S{matrix.shape[1]}").ravel()


def _integers_only(matrix: np.ndarray) -> bool:
    """Every row reads [+-]?[0-9]+ (rows are zero-padded on the right, no zero byte inside)."""
    digit = (matrix >= 48) & (matrix <= 57)
    sign = (matrix[:, 0] == 43) | (matrix[:, 0] == 45)
    second_digit = digit[:, 1] if matrix.shape[1] > 1 else np.zeros(len(matrix), bool)
    return bool(np.all((digit[:, 0] | (sign & second_digit)) & np.all(digit[:, 1:] | (matrix[:, 1:] == 0), 1)))


def _parse_block(block: bytes, honour_rank: bool):
    """(topics, docs, ranks, scores, runids) of one block of whole lines, or None."""
    raw = np.frombuffer(block, dtype=np.uint8)
    kind = _CLASS[raw]
    if np.any(kind == 3):
        return None
    token = kind == 0
    starts = np.flatnonzero(token & np.concatenate(([True], ~token[:-1])))
    ends = np.flatnonzero(token & np.concatenate((~token[1:], [True]))) + 1
    fields_per_line = np.bincount(np.cumsum(kind == 2, dtype=np.int32)[starts])
    if not np.all((fields_per_line == 0) | (fields_per_line == 6)):
        return None
    if len(starts) and int((ends - starts).max()) > _WIDEST_TOKEN:
        return None
    padded = np.concatenate([raw, np.zeros(_WIDEST_TOKEN, np.uint8)])
    topic, doc, rank, score, runid = (_tokens(padded, starts[i::6], ends[i::6]) for i in (0, 2, 3, 4, 5))
    if not (_integers_only(rank) and _SCORE_BYTE[score].all()):
        return None
    try:
        ranks = _strings(rank).astype(np.int64) if honour_rank else np.zeros(len(rank), np.int64)
        scores = _strings(score).astype(np.float64)
    except (ValueError, OverflowError):
        return None
    return _strings(topic), _strings(doc), ranks, scores, np.unique(_strings(runid))


def _parse_quickly(path, honour_rank: bool) -> RunColumns | None:
    """Whole-file parse of a well-formed ASCII run, or None when read_run must decide."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        return None
    parts = []
    for block in _blocks(data):
        part = _parse_block(block, honour_rank)
        if part is None:
            return None
        parts.append(part)
    if not parts or not sum(len(p[0]) for p in parts):
        return None
    topic_text, doc_text, rank, score, runids = (np.concatenate([p[i] for p in parts]) for i in range(5))
    if not np.all(np.isfinite(score)):
        return None
    # topics come in runs of lines: code the first line of each run, then spread the codes
    heads = np.flatnonzero(np.append(True, topic_text[1:] != topic_text[:-1]))
    topics, head_code = np.unique(topic_text[heads], return_inverse=True)
    topic = np.repeat(head_code.reshape(-1), np.diff(np.append(heads, len(topic_text))))
    docs, doc = np.unique(doc_text, return_inverse=True)  # codes in docid order: the tie-break
    doc = doc.reshape(-1)
    pair_keys = np.sort(topic * len(docs) + doc)
    if np.any(pair_keys[1:] == pair_keys[:-1]):
        return None  # a duplicate docid: read_run names the line
    same = topic[1:] == topic[:-1]
    in_order = len(heads) == len(topics) and not honour_rank and bool(np.all(
        ~same | (score[1:] < score[:-1]) | ((score[1:] == score[:-1]) & (doc[1:] < doc[:-1]))))
    if not in_order:  # most files are written in rank order already; others are sorted here
        order = np.lexsort([-doc, -score, topic] if not honour_rank else [-doc, -score, rank, topic])
        topic, doc = topic[order], doc[order]
    runids = np.unique(runids)
    name = runids[0].decode() if len(runids) == 1 else _stem(path)
    return RunColumns(name, str(path), topics, docs, topic, doc)


def read_run_columns(path, *, honour_rank: bool = False) -> RunColumns:
    """A run as arrays; identical order and name to :func:`medopt.io.trec.read_run`."""
    quick = _parse_quickly(path, honour_rank)
    if quick is not None:
        return quick
    run = read_run(path, honour_rank=honour_rank)  # raises the reader's error, naming the line
    return columns_from_rankings(run.name, run.rankings, path=run.path)


def _encoded(texts) -> np.ndarray:
    if any("\x00" in t for t in texts):
        raise MedoptError("document ids and topics with NUL characters are not supported by matrix")
    return np.array([t.encode("utf-8") for t in texts], dtype=bytes) if texts else np.array([], dtype="S1")


def columns_from_rankings(name: str, rankings: dict, *, path: str = "") -> RunColumns:
    """A run given as topic -> docids (best first), for runs built in Python rather than read."""
    topics, doc_index, topic_of, doc_of = list(rankings), {}, [], []
    for code, topic in enumerate(topics):
        ranking = rankings[topic]
        topic_of.extend([code] * len(ranking))
        doc_of.extend(doc_index.setdefault(d, len(doc_index)) for d in ranking)
    return RunColumns(name, path or name, _encoded(topics), _encoded(list(doc_index)),
                      np.array(topic_of, np.int64), np.array(doc_of, np.int64))


@dataclass
class RunSet:
    """Many runs and the qrels over one topic list and one document vocabulary.

    Run ``r`` ranks, for topic code ``t``, the documents
    ``ids[r][start[r][t] : start[r][t] + length[r][t]]`` (doc codes, best first).
    """

    names: list
    paths: list
    topics: list                 # topic code -> topic (sort_topics order)
    docs: np.ndarray             # doc code -> docid (object array of str)
    plain_docs: bool             # no docid needs escaping in JSON
    ids: list
    start: list
    length: list
    qrels: dict                  # topic -> {doc: grade}, as read
    grades: list                 # per run, aligned with ids: the judged grade (capped at G), or UNJUDGED
    max_grade: np.ndarray        # G of each topic
    ideal_grades: np.ndarray     # positive judged grades of each topic, largest first (ragged) ...
    ideal_offsets: np.ndarray    # ... topic t: ideal_grades[ideal_offsets[t]:ideal_offsets[t + 1]]

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_json_items"}

    def json_items(self, grade: int) -> np.ndarray:
        """'"docid":grade,' for each doc code (JSON-escaped), built once per process and grade."""
        cache = self.__dict__.setdefault("_json_items", {})
        if grade not in cache:
            texts = self.docs.tolist()
            items = np.empty(len(texts), dtype=object)
            items[:] = ([f'"{d}":{grade},' for d in texts] if self.plain_docs
                        else [f"{json.dumps(d)}:{grade}," for d in texts])
            cache[grade] = items
        return cache[grade]

    def ranking(self, run: int, topic: int) -> tuple:
        begin = self.start[run][topic]
        return tuple(self.docs[self.ids[run][begin:begin + self.length[run][topic]]].tolist())

    def judgments(self, topic: int) -> dict:
        return self.qrels.get(self.topics[topic], {})

    def common_topics(self, run_a: int, run_b: int) -> np.ndarray:
        return np.flatnonzero((self.length[run_a] > 0) & (self.length[run_b] > 0))


def load_runset(paths, qrels: dict | None = None, *, honour_rank: bool = False, max_grade: int | None = None,
                columns: list | None = None, grade_scale: dict | None = None) -> RunSet:
    """Read runs (or take already read ``columns``) and code them over one vocabulary.

    Each topic's top grade G is ``max_grade`` if given, else the default of SPEC 1 over the
    topic's judgments in ``grade_scale`` (default: ``qrels``; a subsample of qrels keeps the
    scale of the full qrels this way).
    """
    columns = columns if columns is not None else [read_run_columns(p, honour_rank=honour_rank) for p in paths]
    qrels = qrels or {}
    topic_text = np.unique(np.concatenate([c.topics for c in columns]))
    topics = sort_topics(t.decode("utf-8") for t in topic_text.tolist())
    topic_code = {t: i for i, t in enumerate(topics)}
    doc_text = np.unique(np.concatenate([c.docs for c in columns]))
    ids, starts, lengths = [], [], []
    for run in columns:
        to_global_doc = np.searchsorted(doc_text, run.docs)
        to_global_topic = np.array([topic_code[t.decode("utf-8")] for t in run.topics.tolist()], np.int64)
        counts = np.bincount(run.topic_of, minlength=len(run.topics))
        first = np.zeros(len(run.topics), np.int64)  # each topic's entries are contiguous: where they begin
        first[run.topic_of[::-1]] = np.arange(len(run.topic_of) - 1, -1, -1)
        start, length = np.zeros(len(topics), np.int64), np.zeros(len(topics), np.int64)
        start[to_global_topic] = first
        length[to_global_topic] = counts
        ids.append(to_global_doc[run.doc_of].astype(np.int32 if len(doc_text) < 2 ** 31 else np.int64))
        starts.append(start)
        lengths.append(length)
    judged_topic, judged_doc, judged_grade = _flatten(qrels, topic_code)
    if max_grade is not None:
        tops = np.full(len(topics), max_grade, np.int64)
    else:  # SPEC 1: the largest grade in the topic's judgments, and at least 1
        scale_topic, scale_grade = (judged_topic, judged_grade) if grade_scale is None else \
            _flatten(grade_scale, topic_code)[::2]
        tops = np.ones(len(topics), np.int64)
        np.maximum.at(tops, scale_topic, scale_grade)
    judged_grade = np.minimum(judged_grade, tops[judged_topic])
    positive = judged_grade > 0  # each topic's positive grades, largest first: the ideal DCG profile
    order = np.lexsort((-judged_grade[positive], judged_topic[positive]))
    ideal = judged_grade[positive][order]
    ideal_offsets = np.searchsorted(judged_topic[positive][order], np.arange(len(topics) + 1))
    at = np.minimum(np.searchsorted(doc_text, judged_doc), max(len(doc_text) - 1, 0))
    in_runs = doc_text[at] == judged_doc if len(doc_text) else np.zeros(len(judged_doc), bool)
    stride = max(len(doc_text), 1)
    keys = judged_topic[in_runs] * stride + at[in_runs]
    order = np.argsort(keys)
    keys, judged_grades = keys[order], judged_grade[in_runs][order]
    grades = []
    for run_ids, start, length in zip(ids, starts, lengths):
        grade = np.full(len(run_ids), UNJUDGED, dtype=np.int64)
        if len(keys) and len(run_ids):
            topic_of_entry = np.empty(len(run_ids), np.int64)
            topic_of_entry[np.repeat(start, length) + _within(length)] = np.repeat(np.arange(len(topics)), length)
            entry_keys = topic_of_entry * stride + run_ids
            found = np.minimum(np.searchsorted(keys, entry_keys), len(keys) - 1)
            grade = np.where(keys[found] == entry_keys, judged_grades[found], UNJUDGED)
        grades.append(grade)
    docs = np.array([d.decode("utf-8") for d in doc_text.tolist()] or [], dtype=object)
    text = "".join(docs.tolist())
    plain = text.isascii() and text.isprintable() and '"' not in text and "\\" not in text
    from .cli import run_names
    return RunSet(run_names(*columns), [c.path for c in columns], topics, docs, plain, ids, starts,
                  lengths, qrels, grades, tops, ideal, ideal_offsets)


def _flatten(qrels: dict, topic_code: dict) -> tuple:
    """(topic code, docid bytes, grade) arrays of the judgments of the topics in topic_code."""
    topics, docs, grades, counts = [], [], [], []
    for topic, judged in qrels.items():
        code = topic_code.get(topic)
        if code is not None and judged:
            topics.append(code)
            counts.append(len(judged))
            docs.extend(judged)
            grades.extend(judged.values())
    encoded = np.array([d.encode("utf-8") for d in docs], dtype=bytes) if docs else np.array([], dtype="S1")
    return (np.repeat(np.array(topics, np.int64), np.array(counts, np.int64)), encoded,
            np.array(grades, np.int64))


def _within(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., n-1 for each n in lengths, concatenated."""
    return np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)


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


def _assignments(runset: RunSet, rows: np.ndarray, docs: np.ndarray, grade_of_row: np.ndarray, n: int) -> list:
    """JSON {docid: grade} per topic row; ``rows`` grouped and ascending, documents in the order given.

    Built as one string of '"docid":grade,' items with a newline after each row's last item, split at
    the newlines (a JSON-escaped docid has none): the cost is per document, not a Python call per row.
    """
    out = ["{}"] * n
    if not len(rows):
        return out
    ends = np.flatnonzero(np.append(rows[1:] != rows[:-1], True)) + 1
    items = np.empty(len(rows), dtype=object)
    grades = grade_of_row[rows]
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

    ``method`` is "closed-form" (metrics with rank weights: P, DCG, SDCG, RBP) or "alg1" (nDCG@k).
    """
    topics = np.asarray(topics, dtype=np.int64)
    a = _side(runset, run_a, topics, metric.cutoff)
    b = _side(runset, run_b, topics, metric.cutoff)
    tops = runset.max_grade[topics]
    kernel = _closed_form if method == "closed-form" else _alg1
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
    """sum over judged documents of W_A gain - the same over B (A's sum first, as the per-instance code)."""
    base = np.zeros(n)
    for side, weight, sign in ((a, weight_a, 1.0), (b, weight_b, -1.0)):
        gains = _lookup(function, side.grade[side.judged], tops[side.row[side.judged]])
        sums = np.bincount(side.row[side.judged], weights=weight[side.judged] * gains, minlength=n)
        base = base + sums if sign > 0 else base - sums
    return base


def _closed_form(runset, metric, topics, a: _Side, b: _Side, tops) -> tuple:
    n = len(topics)
    depth = max(int(a.rank.max(initial=-1)), int(b.rank.max(initial=-1))) + 1
    weights = np.array(metric.rank_weights(depth), dtype=np.float64)
    difference, rows, docs, weight_a, weight_b = _differences(weights, a, b, len(runset.docs))
    base = _judged_base(metric.unit_gain, n, a, b, weight_a, weight_b, tops)
    top_unit = _lookup(metric.unit_gain, tops, tops)
    per_doc_top = top_unit[rows]
    value_a = base + np.bincount(rows, weights=np.maximum(difference, 0.0) * per_doc_top, minlength=n)
    value_b = -base + np.bincount(rows, weights=np.maximum(-difference, 0.0) * per_doc_top, minlength=n)
    direction_b = value_b > value_a
    value = np.where(direction_b, value_b, value_a)
    chosen = np.where(direction_b[rows], difference < 0, difference > 0)
    order = np.argsort(rows[chosen], kind="stable")
    assignments = _assignments(runset, rows[chosen][order], docs[chosen][order], tops, n)
    values = value.tolist()
    return (_names(runset, topics), values, _directions(direction_b), [True] * n, values, ["optimal"] * n,
            assignments)


def _ideal_dcg(runset, metric, topics, tops, extra: int) -> np.ndarray:
    """IDCG@k with m extra top-grade documents, m = 0..extra, for each topic: shape (n, extra + 1)."""
    k = metric.cutoff
    n = len(topics)
    first, last = runset.ideal_offsets[topics], runset.ideal_offsets[topics + 1]
    counts = np.minimum(last - first, k)
    judged = np.zeros((n, k), dtype=np.int64)
    column = np.arange(k)
    mask = column[None, :] < counts[:, None]
    judged[mask] = runset.ideal_grades[(first[:, None] + column[None, :])[mask]]
    judged_gain = np.where(mask, _lookup(metric.gain, judged.reshape(-1), np.repeat(tops, k)).reshape(n, k), 0.0)
    top_gain = _lookup(metric.gain, tops, tops)
    discount = np.array([log2_discount(i) for i in range(1, k + 1)])
    steps = min(extra, k)
    terms = np.empty((n, steps + 1, k))
    for m in range(steps + 1):  # m top-grade documents come first, then the judged gains, largest first
        terms[:, m, :m] = top_gain[:, None] * discount[:m]
        terms[:, m, m:] = judged_gain[:, :k - m] * discount[m:]
    ideal = terms[:, :, 0].copy()
    for i in range(1, k):  # rank by rank, the order of the per-instance sum
        ideal += terms[:, :, i]
    if extra > steps:
        ideal = np.concatenate([ideal, np.repeat(ideal[:, -1:], extra - steps, axis=1)], axis=1)
    return ideal


def _alg1(runset, metric, topics, a: _Side, b: _Side, tops) -> tuple:
    n = len(topics)
    depth = max(int(a.rank.max(initial=-1)), int(b.rank.max(initial=-1))) + 1
    weights = np.array([log2_discount(i) for i in range(1, depth + 1)])
    difference, rows, docs, weight_a, weight_b = _differences(weights, a, b, len(runset.docs))
    base = _judged_base(metric.gain, n, a, b, weight_a, weight_b, tops)
    top_gain = _lookup(metric.gain, tops, tops)
    source = np.arange(len(rows))
    sides = []
    for sign in (1.0, -1.0):  # each direction's positive gains, largest first (ties: first appearance)
        gain = (sign * difference) * top_gain[rows]
        keep = gain > 0
        order = np.lexsort((source[keep], -gain[keep], rows[keep]))
        kept_rows = rows[keep][order]
        counts = np.bincount(kept_rows, minlength=n)
        column = np.arange(len(kept_rows)) - np.repeat(np.cumsum(counts) - counts, counts)
        sides.append((sign, kept_rows, gain[keep][order], docs[keep][order], counts, column))
    width = max(int(side[4].max(initial=0)) for side in sides)
    ideal = _ideal_dcg(runset, metric, topics, tops, width)  # the same for both directions
    ratios, numerators, picks = [], [], []
    for sign, kept_rows, kept_gain, kept_docs, counts, column in sides:
        steps = np.zeros((n, width + 1))
        steps[:, 0] = sign * base
        steps[kept_rows, column + 1] = kept_gain
        numerator = np.cumsum(steps, axis=1)  # sequential, as the per-instance loop adds them
        valid = (np.arange(width + 1)[None, :] <= counts[:, None]) & (ideal > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios.append(np.where(valid, numerator / np.where(ideal > 0, ideal, 1.0), -np.inf))
        numerators.append(numerator[np.arange(n), counts])
        picks.append((kept_rows, kept_docs, column))
    width_a = ratios[0].shape[1]
    both = np.concatenate(ratios, axis=1)
    best = np.argmax(both, axis=1)
    best_value = both[np.arange(n), best]
    found = best_value > 0
    value = np.where(found, best_value, 0.0)
    direction_b = found & (best >= width_a)
    chosen_count = np.where(found, np.where(direction_b, best - width_a, best), 0)
    pick_rows, pick_docs = [], []
    for d, (kept_rows, kept_docs, column) in enumerate(picks):
        take = (direction_b[kept_rows] == bool(d)) & (column < chosen_count[kept_rows])
        pick_rows.append(kept_rows[take])
        pick_docs.append(kept_docs[take])
    pick_rows, pick_docs = np.concatenate(pick_rows), np.concatenate(pick_docs)
    order = np.argsort(pick_rows, kind="stable")
    assignments = _assignments(runset, pick_rows[order], pick_docs[order], tops, n)
    judged_ideal = ideal[:, 0]
    largest = np.maximum(np.maximum(numerators[0], numerators[1]), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        heuristic_bound = np.where(judged_ideal > 0, np.minimum(1.0, largest / judged_ideal), 1.0)
    binary = tops == 1
    bound = np.where(binary, value, heuristic_bound)
    return (_names(runset, topics), value.tolist(), _directions(direction_b), binary.tolist(), bound.tolist(),
            np.where(binary, "optimal", "heuristic").tolist(), assignments)


def _names(runset: RunSet, topics: np.ndarray) -> list:
    return [runset.topics[t] for t in topics.tolist()]


def _directions(direction_b: np.ndarray) -> list:
    return np.where(direction_b, "b", "a").tolist()
