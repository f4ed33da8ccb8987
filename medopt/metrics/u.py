"""The U-measure over trailtexts (Sakai & Dou; Tan & Clarke's MED-U, their section VIII; SPEC 3 and 8).

A passage run gives each topic a sequence of passages ``(docid, offset, length)``: ``length``
characters of ``docid`` from byte ``offset``.  Its **trailtext** is the passages concatenated in
run order, cut at ``L`` characters.  With ``c_i`` the gain of the i-th character (1-based),

    U(L) = sum_i c_i max(0, 1 - i / L)

(no normalisation, Sakai and Dou's linear discount, as Tan & Clarke use it).  Characters are
binary: a relevant character has the gain of grade 1 (default 1; ``gains={1: 0.5}`` sets it), any
other 0.

How it fits the registries.  U's unit is a character, not a document, so it is not a family of
``base.REGISTRY`` (whose families score document rankings and which the registry-driven tests run
on document instances); it is the one family of ``CHARACTER_REGISTRY``, which the metric grammar
reads too, so ``parse_metric("U(L=12000)")`` gives this class.  Its evaluator, ``u_score`` below,
is the independent re-scorer of every MED-U certificate: it works passage by passage with interval
arithmetic (the sum of ``L - i`` over a run of consecutive positions is an arithmetic series) and
shares no code with the closed form (``heuristics/closed_form_u.py``), which works character by
character on NumPy arrays.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import MedoptError, MetricSyntaxError
from .base import GainMap, Metric, Param, positive_int

Passage = tuple[str, int, int]          # (docid, offset, length)
CHARACTER_REGISTRY: dict[str, type[Metric]] = {}


@dataclass(frozen=True, eq=False)
class U(Metric):
    family = "U"
    PARAMS = {"L": Param(int, 12000, positive_int, "trailtext length in characters, >= 1"),
              "gains": Param(GainMap, None, lambda v: v is None or set(v) <= {0, 1},
                             "the gain of a relevant character: {1:c}")}
    doc = "U(L) = sum_i c_i max(0, 1 - i/L) over the characters of a trailtext (SPEC 8)"
    characters = True                   # scores trailtexts of passages, not rankings of documents
    references = {"none": "no reference toolkit computes the U-measure over passage runs; the "
                          "per-character brute force of tests/metrics/test_med_u.py checks it"}
    examples = ("U(L=12000)", "U(L=50)")

    def __post_init__(self):
        if self.cutoff is not None:
            raise MetricSyntaxError("U takes no cutoff; its depth is L characters, e.g. U(L=12000)")

    def __str__(self) -> str:  # L is always shown: U(L=12000), as SPEC 8 writes it
        text = f"U(L={self.p('L')}"
        if self.p("gains") is not None:
            text += f",gains={self.p('gains')}"
        return text + ")"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Metric) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    @property
    def length(self) -> int:
        return self.p("L")

    def relevant_gain(self, gains: Mapping[int, float] | None = None) -> float:
        """c, the gain of a relevant character: ``gains[1]`` (the keyword wins over the metric's own
        ``gains`` parameter), default 1."""
        table = gains if gains is not None else self.p("gains")
        if table is None:
            return 1.0
        try:
            value = float(table[1]) if 1 in table else 1.0
        except (TypeError, ValueError):
            raise MedoptError(f"gains must map grade 1 to a number, got {dict(table)!r}") from None
        if not value > 0 or value != value or value == float("inf"):
            raise MedoptError(f"the gain of a relevant character must be a finite number > 0, got {value!r}")
        if any(g not in (0, 1) for g in table) or float(table.get(0, 0.0)) != 0.0:
            raise MedoptError(f"U's characters are binary: gains maps grade 1 (and 0 to 0) only, got {dict(table)!r}")
        return value

    def score(self, ranking, grades, grading) -> float:
        raise MedoptError("U scores the trailtext of a passage run: give passages (docid, offset, length) "
                          "and spans (medopt.med(..., spans=...), medopt compare --spans)")

    def score_trailtext(self, passages: Sequence[Passage], relevant: Mapping[str, Sequence[tuple[int, int]]],
                        gain: float = 1.0) -> float:
        return u_score(passages, relevant, self.length, gain)


CHARACTER_REGISTRY[U.family] = U


def merge_spans(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(offset, length)`` spans as sorted, disjoint, non-adjacent ``[start, end)`` intervals."""
    merged: list[list[int]] = []
    for start, end in sorted((int(o), int(o) + int(n)) for o, n in spans if int(n) > 0):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def u_numerator(passages: Sequence[Passage], relevant: Mapping[str, Sequence[tuple[int, int]]], length: int) -> int:
    """sum over the relevant positions i of the trailtext of (L - i), an integer: the trailtext walked
    passage by passage, each passage's overlap with each relevant interval of its document summed as an
    arithmetic series.  ``relevant``: docid -> ``(offset, length)`` spans of relevant characters."""
    intervals = {doc: merge_spans(spans) for doc, spans in relevant.items()}
    return _numerator(passages, intervals, length)


def _numerator(passages: Sequence[Passage], intervals: Mapping[str, list], length: int) -> int:
    """u_numerator with the relevant spans already merged into [start, end) intervals."""
    ends = {doc: [high for _, high in merged] for doc, merged in intervals.items() if merged}
    total, position = 0, 0  # position: characters of the trailtext before this passage
    for doc, offset, size in passages:
        if position >= length:
            break
        take = min(int(size), length - position)
        start, end = int(offset), int(offset) + take
        merged = intervals.get(doc) or ()
        at = bisect_right(ends[doc], start) if merged else 0  # the first interval ending after start
        while at < len(merged) and merged[at][0] < end:
            low, high = max(merged[at][0], start), min(merged[at][1], end)
            first, last, count = position + low - start + 1, position + high - start, high - low
            total += count * length - (first + last) * count // 2
            at += 1
        position += take
    return total


def u_score(passages: Sequence[Passage], relevant: Mapping[str, Sequence[tuple[int, int]]], length: int,
            gain: float = 1.0) -> float:
    """U(L) of the trailtext of ``passages`` when the characters in ``relevant`` (docid -> spans) are
    relevant with gain ``gain`` and every other character has gain 0."""
    return gain * u_numerator(passages, relevant, length) / length


def u_scores(trailtexts: Sequence[Sequence[Passage]], relevant: Mapping[str, Sequence[tuple[int, int]]],
             length: int, gain: float = 1.0) -> list[float]:
    """u_score of each of ``trailtexts`` under the same relevant characters (merged once)."""
    intervals = {doc: merge_spans(spans) for doc, spans in relevant.items()}
    return [gain * _numerator(passages, intervals, length) / length for passages in trailtexts]
