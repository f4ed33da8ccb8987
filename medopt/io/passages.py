"""Passage runs and passage judgments (SPEC 8), read and written with the TREC readers' discipline
(every malformed line an :class:`InputFormatError` naming the file and the line, in one line).

Passage run: ``topic Q0 docid rank score runid offset length`` -- ``length`` characters of
``docid`` from byte ``offset``.  Order within a topic follows trec_eval (SPEC 6): score
descending, ties by docid descending; passages of one document with the same score, by offset
ascending (reading order; trec_eval itself leaves such ties to its sort).  The rank column is
checked but ignored unless ``honour_rank=True``.  A passage given twice (same docid, offset and
length in a topic) is an error; overlapping passages are allowed (their shared characters are one
character each, SPEC 8).

Spans: ``topic docid offset length`` -- the relevant characters of a judged document; the qrels
file (read by :func:`medopt.io.trec.read_qrels`) says which documents are judged.  A span of a
document the qrels do not judge for that topic is an error (``check_spans``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

from ..errors import InputFormatError, MedoptError
from .trec import _fields, _integer, _score, _stem, four_column_rows, read_qrels, sort_topics, write_atomic

MAX_OFFSET = 2 ** 40  # offsets and ends below 1 TiB: a character is (document index, offset) in one int64
_RUN_COLUMNS = "expected 8 columns (topic Q0 docid rank score runid offset length), found {}"
_SPAN_COLUMNS = "expected 4 columns (topic docid offset length), found {}"

Passage = tuple[str, int, int]


@dataclass(frozen=True)
class PassageRun:
    """One passage run: ``passages`` maps topic -> ``(docid, offset, length)`` in trailtext order."""

    name: str
    path: str
    passages: dict[str, tuple[Passage, ...]]


def _extent(path, line: int, offset_text: str, length_text: str) -> tuple[int, int]:
    offset = _integer(path, line, offset_text, "offset")
    length = _integer(path, line, length_text, "length")
    if offset < 0:
        raise InputFormatError(path, line, f"offset {offset} is negative")
    if length < 1:
        raise InputFormatError(path, line, f"length {length} is not positive")
    if offset + length > MAX_OFFSET:
        raise InputFormatError(path, line, f"offset + length {offset + length} exceeds 2^40")
    return offset, length


def read_passage_run(path: str | os.PathLike, *, honour_rank: bool = False) -> PassageRun:
    """Read an 8-column passage run (module docstring: columns, order, errors)."""
    seen: dict[str, dict[tuple[str, int, int], tuple[int, float, int]]] = {}
    runids: set[str] = set()
    for line, fields in _fields(path):
        if len(fields) != 8:
            raise InputFormatError(path, line, _RUN_COLUMNS.format(len(fields)))
        topic, _q0, docid, rank_text, score_text, runid, offset_text, length_text = fields
        rank = _integer(path, line, rank_text, "rank")
        score = _score(path, line, score_text)
        offset, length = _extent(path, line, offset_text, length_text)
        passages = seen.setdefault(topic, {})
        key = (docid, offset, length)
        if key in passages:
            raise InputFormatError(path, line, f"duplicate passage {docid!r} offset {offset} length {length} in "
                                               f"topic {topic!r} (first on line {passages[key][0]})")
        passages[key] = (line, score, rank)
        runids.add(runid)
    if not seen:
        raise InputFormatError(path, None, "empty passage run file (no lines)")
    ordered = {topic: passage_order(passages, honour_rank) for topic, passages in seen.items()}
    name = next(iter(runids)) if len(runids) == 1 else _stem(path)
    return PassageRun(name=name, path=str(path), passages=ordered)


def passage_order(passages: Mapping[Passage, tuple[int, float, int]], honour_rank: bool) -> tuple[Passage, ...]:
    """trec_eval's order: score descending, docid descending, then offset ascending (or rank first)."""
    entries = sorted(passages.items(), key=lambda e: (e[0][1], e[0][2]))           # offset, length ascending
    entries.sort(key=lambda e: e[0][0], reverse=True)                              # docid descending (stable)
    entries.sort(key=lambda e: (e[1][2], -e[1][1]) if honour_rank else -e[1][1])   # score descending
    return tuple(key for key, _ in entries)


def read_spans(path: str | os.PathLike) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """Read a spans file: topic -> docid -> ``(offset, length)`` relevant spans (``#`` lines skipped;
    overlapping or repeated spans are allowed: a character is relevant if any span covers it)."""
    return _read_spans(path)[0]


def _read_spans(path) -> tuple[dict, dict]:
    """The spans and the line where each (topic, docid) first appears."""
    spans: dict[str, dict[str, list[tuple[int, int]]]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for line, fields in four_column_rows(path, _SPAN_COLUMNS):
        topic, docid, offset_text, length_text = fields
        spans.setdefault(topic, {}).setdefault(docid, []).append(_extent(path, line, offset_text, length_text))
        first_line.setdefault((topic, docid), line)
    return spans, first_line


def check_spans(spans: Mapping, qrels: Mapping, spans_path, qrels_path, lines: Mapping | None = None) -> None:
    """Every span's document is judged in the qrels for its topic (SPEC 8: spans mark characters of
    judged documents); else an InputFormatError naming the spans file and line."""
    for topic in sort_topics(spans):
        for docid in spans[topic]:
            if docid not in qrels.get(topic, {}):
                line = (lines or {}).get((topic, docid))
                where = f"in {qrels_path}" if qrels_path is not None else "(no qrels given)"
                raise InputFormatError(spans_path, line, f"topic {topic!r} docid {docid!r} has relevant spans "
                                                         f"but is not judged {where}")


def read_passage_judgments(qrels_path, spans_path) -> tuple[dict, dict]:
    """(qrels, spans) of a passage collection: topic -> docid -> grade, topic -> docid -> spans."""
    qrels = read_qrels(qrels_path) if qrels_path is not None else {}
    if spans_path is None:
        return qrels, {}
    spans, lines = _read_spans(spans_path)
    check_spans(spans, qrels, spans_path, qrels_path, lines)
    return qrels, spans


def write_passage_run(path, passages: Mapping[str, Sequence[Passage]], name: str) -> None:
    """An 8-column passage run that :func:`read_passage_run` reads back in the same order (scores
    decrease down each topic)."""
    if not name or len(name.split()) != 1:
        raise MedoptError(f"run name {name!r} must be a non-empty string without whitespace")

    def lines() -> Iterator[str]:
        for topic in sort_topics(passages):
            items = passages[topic]
            for i, (docid, offset, length) in enumerate(items):
                yield f"{topic} Q0 {docid} {i + 1} {len(items) - i} {name} {int(offset)} {int(length)}\n"

    write_atomic(path, lines())


def write_spans(path, spans: Mapping[str, Mapping[str, Sequence[tuple[int, int]]]]) -> None:
    def lines() -> Iterator[str]:
        for topic in sort_topics(spans):
            for docid, items in spans[topic].items():
                for offset, length in items:
                    yield f"{topic} {docid} {int(offset)} {int(length)}\n"

    write_atomic(path, lines())
