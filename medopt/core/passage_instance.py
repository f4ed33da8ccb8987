"""The MED-U instance (SPEC 8): two trailtexts of passages, the judged documents and their relevant
spans; and the trailtexts at character level as NumPy arrays.

Model of the characters (SPEC 8, Tan & Clarke section VIII).  Each character is one variable,
identified by ``(docid, byte offset)``:

* a character of a judged document is **predetermined**: relevant (gain c) inside some relevant
  span of its document, non-relevant (0) outside every span;
* a character of an unjudged document is **unknown** and takes 0 or c **independently of every
  other character**, its neighbours in the same passage included.  Tan & Clarke: "Although we have
  switched from documents to characters, the properties of MED from Section II continue to hold;
  nothing in that section requires variables to represent documents", and "We apply the methods
  of that section [III, simple dot-product measures] to compute MED-U", whose free variables take
  their best value one by one.  It is also what passage judging allows: assessors mark relevant spans
  of any length anywhere in a document, so every subset of an unjudged document's characters is a
  judgment it could still receive.  (The reference value does not decide between this and one
  value per unjudged document: two disjoint, wholly unjudged trailtexts of 12,000 characters with
  c = 1/2 give sum_i (1/2)(1 - i/12000) = 2999.75 under both, every character of the better
  trailtext relevant and none of the other; on passages that cut documents differently the two
  models differ, and the per-character one follows Tan & Clarke's text);
* the same character in both trailtexts, or twice in one (overlapping passages), is one variable
  (**bound**): it takes one value wherever it appears.

An assignment (``MedResult.assignment``) is docid -> ``((offset, length), ...)``: the runs of
unknown characters set relevant; every other unknown character is 0.

This instance offers what ``result.certify`` asks of any instance (``complete``, ``difference``,
``scores``, ``satisfies_limits``), re-scoring with the U evaluator of ``metrics/u.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np

from ..errors import MedoptError
from ..io.passages import MAX_OFFSET
from ..metrics.u import U, merge_spans, u_scores

class Completed(dict):
    """An assignment already completed by ``PassageInstance.complete`` (not completed again)."""


SHIFT = 40  # a character's key: document index << 40 | offset (offsets < 2^40: io/passages.py)


@dataclass(frozen=True)
class PassageInstance:
    metric: U
    a: tuple                        # passages (docid, offset, length) of A, in trailtext order
    b: tuple
    judged: frozenset               # judged docids
    spans: dict                     # judged docid -> merged [start, end) intervals of relevant characters
    gain: float = 1.0               # c: the gain of a relevant character
    limits: tuple = field(default=())
    _last: dict = field(default_factory=dict, compare=False, repr=False)

    # -- what certify asks of an instance ------------------------------------------------
    def complete(self, assignment: Mapping) -> dict:
        """The assignment restricted to the unknown characters: docid -> merged ``(offset, length)``
        runs of relevant characters, judged documents dropped (their characters are fixed)."""
        if isinstance(assignment, Completed):
            return assignment
        full = Completed()
        for doc, runs in (assignment or {}).items():
            if doc not in self.judged and doc in self.docids:
                merged = merge_spans([(int(o), int(n)) for o, n in runs])
                if merged:
                    full[doc] = tuple((s, e - s) for s, e in merged)
        return full

    def relevant(self, assignment: Mapping) -> dict:
        """docid -> relevant spans under ``assignment`` (judged spans, and the assigned runs)."""
        out = {doc: [(s, e - s) for s, e in intervals] for doc, intervals in self.spans.items()}
        out.update({doc: list(runs) for doc, runs in self.complete(assignment).items()})
        return out

    def scores(self, assignment: Mapping) -> tuple[float, float]:
        """(U(A), U(B)) under ``assignment``; the last assignment's scores are kept (certify asks for
        the difference and then the scores of the same assignment)."""
        last = self._last.get("scores")
        if last is not None and last[0] is assignment:
            return last[1]
        scores = tuple(u_scores((self.a, self.b), self.relevant(assignment), self.metric.length, self.gain))
        self._last["scores"] = (assignment, scores)
        return scores

    def difference(self, assignment: Mapping, direction: str) -> float:
        score_a, score_b = self.scores(assignment)
        return score_a - score_b if direction == "a" else score_b - score_a

    def satisfies_limits(self, assignment: Mapping) -> bool:
        return True

    def __str__(self) -> str:
        return f"{self.metric} on {len(self.a)} and {len(self.b)} passages"

    # -- the trailtexts as arrays ---------------------------------------------------------
    @cached_property
    def docids(self) -> dict:
        """docid -> index (both trailtexts and the judged documents)."""
        names = {doc for doc, _, _ in self.a} | {doc for doc, _, _ in self.b} | set(self.spans)
        return {doc: i for i, doc in enumerate(sorted(names))}

    def characters(self, passages: Sequence) -> tuple[np.ndarray, np.ndarray]:
        """(keys, weights) of the trailtext's characters in order: key = document index << 40 |
        offset; weight = L - i for the 1-based position i (the discount's numerator, an integer).
        Interval arithmetic per passage and one NumPy expansion, no Python step per character."""
        length = self.metric.length
        if not passages:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        offsets = np.fromiter((p[1] for p in passages), np.int64, len(passages))
        sizes = np.fromiter((p[2] for p in passages), np.int64, len(passages))
        docs = np.fromiter((self.docids[p[0]] for p in passages), np.int64, len(passages))
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))     # trailtext position of each passage
        keep = starts < length
        starts, offsets, docs = starts[keep], offsets[keep], docs[keep]
        sizes = np.minimum(sizes[keep], length - starts)          # the cut at L
        positions = np.arange(int(sizes.sum()), dtype=np.int64)   # 0-based position in the trailtext
        keys = positions + np.repeat((docs << SHIFT) + offsets - starts, sizes)
        return keys, length - 1 - positions

    @cached_property
    def judged_mask(self) -> np.ndarray:
        """Per document index: judged or not."""
        mask = np.zeros(len(self.docids), dtype=bool)
        for doc, index in self.docids.items():
            mask[index] = doc in self.judged
        return mask

    @cached_property
    def span_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """The relevant intervals of every judged document as sorted, disjoint key intervals."""
        pairs = sorted(((self.docids[doc] << SHIFT) + s, (self.docids[doc] << SHIFT) + e)
                       for doc, intervals in self.spans.items() for s, e in intervals)
        starts = np.array([s for s, _ in pairs], dtype=np.int64)
        ends = np.array([e for _, e in pairs], dtype=np.int64)
        return starts, ends

    def relevant_keys(self, keys: np.ndarray) -> np.ndarray:
        """Which characters lie in a relevant span (searchsorted over the key intervals)."""
        starts, ends = self.span_keys
        if not len(starts):
            return np.zeros(len(keys), dtype=bool)
        at = np.searchsorted(starts, keys, side="right") - 1
        return (at >= 0) & (keys < ends[np.maximum(at, 0)])

    def runs_of(self, keys: np.ndarray) -> dict:
        """Sorted character keys as an assignment: docid -> ((offset, length), ...)."""
        if not len(keys):
            return {}
        names = list(self.docids)  # index -> docid (docids is built in sorted order)
        breaks = np.flatnonzero(np.diff(keys) != 1) + 1
        firsts = keys[np.concatenate(([0], breaks))]
        counts = np.diff(np.concatenate(([0], breaks, [len(keys)])))
        out: dict = {}
        for first, count in zip(firsts.tolist(), counts.tolist()):
            out.setdefault(names[first >> SHIFT], []).append((first & (MAX_OFFSET - 1), count))
        return {doc: tuple(runs) for doc, runs in out.items()}


def _passages(name: str, value) -> tuple:
    """The passages as (docid, int offset, int length) tuples: checked as arrays, and item by item
    only to name the first bad one."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise MedoptError(f"{name}: a sequence of (docid, offset, length) passages, got {type(value).__name__}")
    items = list(value)
    try:
        if not items:
            return ()
        if set(map(len, items)) == {3} and not isinstance(items[0], (str, bytes)):
            docs, offsets, lengths = zip(*items)
            types = set(map(type, docs))
            starts, sizes = np.asarray(offsets), np.asarray(lengths)
            if (types == {str} and all(docs) and starts.dtype.kind in "iu" and sizes.dtype.kind in "iu"
                    and bool not in set(map(type, offsets)) | set(map(type, lengths))
                    and (starts >= 0).all() and (sizes >= 1).all() and (starts + sizes <= MAX_OFFSET).all()):
                return tuple(zip(docs, starts.tolist(), sizes.tolist()))
    except (TypeError, ValueError, OverflowError):
        pass  # the check item by item below names the bad passage
    return _checked_passages(name, items)


def _checked_passages(name: str, items) -> tuple:
    out = []
    for i, item in enumerate(items):
        try:
            if isinstance(item, (str, bytes)):
                raise TypeError
            doc, offset, length = item
        except (TypeError, ValueError):
            raise MedoptError(f"{name}[{i}]: a passage is (docid, offset, length), got {item!r}") from None
        if not isinstance(doc, str) or not doc:
            raise MedoptError(f"{name}[{i}]: docid must be a non-empty string, got {doc!r}")
        for what, number in (("offset", offset), ("length", length)):
            if isinstance(number, bool) or not isinstance(number, (int, np.integer)):
                raise MedoptError(f"{name}[{i}]: {what} must be an integer, got {number!r}")
        if offset < 0 or length < 1 or offset + length > MAX_OFFSET:
            raise MedoptError(f"{name}[{i}]: offset >= 0, length >= 1 and offset + length <= 2^40, got {item!r}")
        out.append((doc, int(offset), int(length)))
    return tuple(out)


def build_passage_instance(metric: U, a, b, judgments: Mapping | None = None, spans: Mapping | None = None, *,
                           gains: Mapping | None = None) -> PassageInstance:
    """Validate the inputs of a MED-U (SPEC 8): passages, judgments docid -> grade (which documents
    are judged; the grade itself is not used), spans docid -> [(offset, length)] of judged documents."""
    judged = frozenset(judgments or {})
    merged = {}
    for doc, items in (spans or {}).items():
        if doc not in judged:
            raise MedoptError(f"spans: document {doc!r} has relevant spans but is not judged (absent from judgments)")
        checked = _passages(f"spans[{doc!r}]", [(doc, *item) if isinstance(item, (tuple, list)) and len(item) == 2
                                                 else item for item in items])
        merged[doc] = merge_spans([(o, n) for _, o, n in checked])
    return PassageInstance(metric=metric, a=_passages("a", a), b=_passages("b", b), judged=judged, spans=merged,
                           gain=metric.relevant_gain(gains))
