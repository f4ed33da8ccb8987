"""Array form of many runs: TREC runs read into integer arrays with whole-file operations.

:func:`load_runset` reads TREC runs into integer arrays (documents coded once for all runs) and
orders each topic exactly as :func:`medopt.io.trec.read_run` does (score descending, ties by
docid descending).  Any file the quick parser is not sure about (non-ASCII bytes, a line without
six fields, an odd score, a duplicate docid, ...) is read again by ``read_run`` itself, so errors
and edge cases are that reader's.  The kernels in :mod:`medopt.batch.fastpath` work on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..errors import MedoptError
from ..io.trec import _Corrupt, _stem, input_chunks, read_run, run_names, sort_topics
from ..io.topics import mean_topics, read_topic_choice
from ..metrics import resolve_max_grade

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
    tied: tuple = ()      # topics whose scores all tie (io.trec.Run.tied)


def _blocks(chunks):
    """The bytes of ``chunks`` regrouped in pieces of about _BLOCK_BYTES each, cut after a newline."""
    pending, size = [], 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size >= _BLOCK_BYTES:
            data = b"".join(pending)
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
                data = data[cut:]
            pending, size = [data], len(data)
    if size:
        yield b"".join(pending)


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
    parts = []
    try:  # the readers' own bytes (regular files only, bounded decompression), and their errors
        for block in _blocks(input_chunks(path)):
            part = _parse_block(block, honour_rank)
            if part is None:
                return None
            parts.append(part)
    except _Corrupt:
        return None  # damaged gzip data: read_run names the line
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
    return RunColumns(name, str(path), topics, docs, topic, doc, () if honour_rank else _tied(topics, head_code, heads,
                                                                                           score))


def _tied(topics: np.ndarray, head_code: np.ndarray, heads: np.ndarray, score: np.ndarray) -> tuple:
    """Topics of two entries or more whose scores all tie (io.trec.Run.tied), from the file's runs of lines
    (``heads``: where each starts, ``head_code``: its topic code)."""
    code = np.repeat(head_code.reshape(-1), np.diff(np.append(heads, len(score))))
    count = np.bincount(code, minlength=len(topics))
    low = np.full(len(topics), np.inf)
    high = np.full(len(topics), -np.inf)
    np.minimum.at(low, code, score)
    np.maximum.at(high, code, score)
    return tuple(t.decode() for t in topics[(count > 1) & (low == high)])


def read_run_columns(path, *, honour_rank: bool = False) -> RunColumns:
    """A run as arrays; identical order and name to :func:`medopt.io.trec.read_run`."""
    quick = _parse_quickly(path, honour_rank)
    if quick is not None:
        return quick
    run = read_run(path, honour_rank=honour_rank)  # raises the reader's error, naming the line
    return columns_from_rankings(run.name, run.rankings, path=run.path, tied=run.tied)


def _encoded(texts) -> np.ndarray:
    if any("\x00" in t for t in texts):
        raise MedoptError("document ids and topics with NUL characters are not supported by matrix")
    return np.array([t.encode("utf-8") for t in texts], dtype=bytes) if texts else np.array([], dtype="S1")


def columns_from_rankings(name: str, rankings: dict, *, path: str = "", tied: tuple = ()) -> RunColumns:
    """A run given as topic -> docids (best first), for runs built in Python rather than read."""
    topics, doc_index, topic_of, doc_of = list(rankings), {}, [], []
    for code, topic in enumerate(topics):
        ranking = rankings[topic]
        topic_of.extend([code] * len(ranking))
        doc_of.extend(doc_index.setdefault(d, len(doc_index)) for d in ranking)
    return RunColumns(name, path or name, _encoded(topics), _encoded(list(doc_index)),
                      np.array(topic_of, np.int64), np.array(doc_of, np.int64), tuple(tied))


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


def load_runset(paths, qrels: dict | None = None, *, honour_rank: bool = False, max_grade=None,
                columns: list | None = None, grade_scale: dict | None = None, extra_topics=()) -> RunSet:
    """Read runs (or take already read ``columns``) and code them over one vocabulary.

    Each topic's top grade G follows SPEC 1 (metrics.resolve_max_grade): ``max_grade`` if an
    integer, else the largest grade of the whole of ``grade_scale`` (default: ``qrels``; a
    subsample of qrels keeps the scale of the full qrels this way); ``"per-topic"``: the largest
    grade of each topic's judgments there.  ``extra_topics`` (trec_eval's -c: judged topics no run
    retrieved) are coded too, every run ranking nothing there.
    """
    columns = columns if columns is not None else [read_run_columns(p, honour_rank=honour_rank) for p in paths]
    qrels = qrels or {}
    topic_text = np.unique(np.concatenate([c.topics for c in columns]))
    topics = sort_topics({*(t.decode("utf-8") for t in topic_text.tolist()), *extra_topics})
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
    scale = qrels if grade_scale is None else grade_scale
    top = resolve_max_grade(max_grade, scale)
    if top is not None:
        tops = np.full(len(topics), top, np.int64)
    else:  # --max-grade per-topic: the largest grade in the topic's judgments, and at least 1
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


def chosen_topics(runset, in_two: np.ndarray, judgments: dict, qrels, *, complete: bool = False, topics=None,
                  warn=None) -> np.ndarray:
    """The mask over the runset's topic codes of the topics a matrix job computes (SPEC 10, decided by
    io.topics.mean_topics): judged and shared by some pair of runs; ``complete``: every judged topic."""
    shared = [runset.topics[t] for t in np.flatnonzero(in_two)]
    kept, notes = mean_topics(shared, judgments, qrels, complete=complete, chosen=read_topic_choice(topics))
    for note in notes if warn is not None else ():
        warn(note)
    kept = set(kept)
    return np.array([t in kept for t in runset.topics], dtype=bool)
