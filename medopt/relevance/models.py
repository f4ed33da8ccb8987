"""Relevance models (SPEC 13): an independent distribution over grades 0..G for every unjudged document.

- :class:`Uniform` (``uniform(p=..)``): grade G with probability p, else 0;
- :class:`RankModel` (``rank``): P(grade | rank) fitted from the judged documents of the runs compared,
  pooled over topics and runs: for each relevant grade g, P(grade >= g | rank) is fitted by a weighted
  isotonic (non-increasing) regression over ranks after shrinking every rank's rate towards the pooled
  rate (``prior`` pseudo-judgments: the smoothing), the grades' curves then nested (P(>= g+1) <= P(>= g));
- :class:`FileModel`: a probabilities file, ``topic docid p`` (binary: P(relevant), the rest at 0) or
  ``topic docid p0 p1 ... pG`` (each row sums to 1 within 1e-6), e.g. an automatic assessor's.

A document in both lists of a pair takes one draw; its rank, for the ``rank`` model, is its better
(smaller) rank in the two lists.  ``parse_model`` reads the ``--model`` string (``rank``,
``uniform(p=0.3)``, a path) or a Python value (a Model, ``{docid: p or [p0..pG]}`` for one topic,
``{topic: {docid: ...}}``).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..errors import InputFormatError, MedoptError, MedoptWarning
from ..io.trec import _fields

ROW_SUM_TOLERANCE = 1e-6
RANK_PRIOR = 2.0  # pseudo-judgments at the pooled rate added to every rank (the rank model's smoothing)


class Model(ABC):
    """A relevance model: ``probabilities(topic, docs, ranks, max_grade)`` -> an array (len(docs), G + 1)
    whose rows are the grade distributions of the unjudged documents ``docs`` (ranks: each document's
    better rank in the two lists, 1-based)."""

    name = "model"

    @abstractmethod
    def probabilities(self, topic, docs, ranks, max_grade: int) -> np.ndarray:
        """The grade distributions of ``docs`` (each model its own)."""

    def describe(self) -> str:
        return self.name


@dataclass
class Uniform(Model):
    """``uniform(p=..)``: grade G with probability p, else 0."""

    p: float = 0.1

    def __post_init__(self):
        if not (isinstance(self.p, (int, float)) and 0.0 <= float(self.p) <= 1.0) or isinstance(self.p, bool):
            raise MedoptError(f"uniform(p=..): p must be a number in [0, 1], got {self.p!r}")
        self.p = float(self.p)

    @property
    def name(self) -> str:
        return f"uniform(p={self.p:g})"

    def probabilities(self, topic, docs, ranks, max_grade: int) -> np.ndarray:
        rows = np.zeros((len(docs), max_grade + 1))
        rows[:, 0], rows[:, max_grade] = 1.0 - self.p, self.p
        if max_grade == 0:
            rows[:, 0] = 1.0
        return rows


@dataclass
class RankModel(Model):
    """``rank``: P(grade = g | rank) for ranks 1..len(table) (row r - 1), the last row beyond.  ``fit``
    reports the fit: judged documents used, the pooled rates and the curve at a few ranks."""

    table: np.ndarray
    fit: dict = field(default_factory=dict)
    name = "rank"

    def probabilities(self, topic, docs, ranks, max_grade: int) -> np.ndarray:
        table = self.table
        if table.shape[1] != max_grade + 1:
            raise MedoptError(f"the rank model was fitted for grades 0..{table.shape[1] - 1}, not 0..{max_grade}")
        index = np.minimum(np.asarray(ranks, dtype=np.int64), len(table)) - 1
        return table[index]

    def describe(self) -> str:
        fit = self.fit
        shown = ", ".join(f"P(rel|{r})={p:.3f}" for r, p in fit.get("curve", {}).items())
        return (f"rank model from {fit.get('judged', 0)} judged ranks of {fit.get('topics', 0)} topics and "
                f"{fit.get('runs', 0)} runs; prevalence {fit.get('prevalence', 0):.3f}; {shown}")


def fit_rank_model(rankings, judgments: Mapping, max_grade: int, *, depth: int | None = None,
                   prior: float = RANK_PRIOR, topic_weights: Mapping | None = None) -> RankModel:
    """The ``rank`` model from ``rankings`` (a list of runs, each topic -> ranking, the runs compared) and
    ``judgments`` (topic -> docid -> grade): every judged document at rank r of a run's ranking of a
    judged topic is one observation of (r, grade) (grades capped at G, negatives at 0).  ``depth``: the
    ranks used (default: the deepest ranking).  ``topic_weights``: topic -> the weight of each of its
    observations (default 1; a Bayesian bootstrap over topics draws them, medopt.judging.confident)."""
    positions, depth = rank_positions(rankings, depth)
    counts = topic_rank_counts(positions, judgments, max_grade, depth)
    return rank_model_from_counts(counts, max_grade, runs=len(rankings), prior=prior, topic_weights=topic_weights)


def rank_positions(rankings, depth: int | None = None) -> tuple[list, int]:
    """([per run: topic -> {docid: 0-based rank}] over the first ``depth`` ranks, depth) (default: the
    deepest ranking)."""
    deepest = max((len(r) for run in rankings for r in run.values()), default=1)
    depth = max(1, min(depth or deepest, deepest))
    return [{t: {d: r for r, d in enumerate(ranking[:depth])} for t, ranking in run.items()} for run in rankings], depth


def topic_rank_counts(positions, judgments: Mapping, max_grade: int, depth: int, topics=None) -> dict:
    """{topic: counts[rank, grade]} of the judged documents of each judged topic some run ranks (``topics``:
    only these)."""
    top = int(max_grade)
    out = {}
    for topic in judgments if topics is None else topics:
        judged = judgments.get(topic)
        if not judged or not any(topic in run for run in positions):
            continue
        counts = np.zeros((depth, top + 1))
        for run in positions:
            where = run.get(topic)
            if where is None:
                continue
            for doc, grade in judged.items():
                rank = where.get(doc)
                if rank is not None:
                    counts[rank, min(max(grade, 0), top)] += 1
        out[topic] = counts
    return out


def rank_model_from_counts(counts: Mapping, max_grade: int, *, runs: int, prior: float = RANK_PRIOR,
                           topic_weights: Mapping | None = None) -> RankModel:
    """The ``rank`` model from ``topic_rank_counts``'s counts, each topic's weighted (default 1)."""
    from scipy.optimize import isotonic_regression

    top = int(max_grade)
    if not counts:
        raise MedoptError("the rank model needs judged documents in the runs compared; none is judged")
    total_counts = sum(c * (1.0 if topic_weights is None else float(topic_weights.get(t, 0.0)))
                       for t, c in counts.items())
    depth = total_counts.shape[0]
    seen = total_counts.sum(axis=1)
    total = float(seen.sum())
    if total == 0:
        raise MedoptError("the rank model needs judged documents in the runs compared; none is judged")
    at_least = np.cumsum(total_counts[:, ::-1], axis=1)[:, ::-1]  # at_least[r, g]: judged at rank r, grade >= g
    table_at_least = np.ones((depth, top + 2))
    table_at_least[:, top + 1] = 0.0
    pooled = at_least.sum(axis=0) / total
    for g in range(1, top + 1):
        rate = (at_least[:, g] + prior * pooled[g]) / (seen + prior)  # shrunk towards the pooled rate
        fitted = isotonic_regression(rate, weights=seen + prior, increasing=False).x
        table_at_least[:, g] = np.clip(fitted, 0.0, 1.0)
    for g in range(2, top + 1):  # nested: P(>= g) <= P(>= g - 1)
        table_at_least[:, g] = np.minimum(table_at_least[:, g], table_at_least[:, g - 1])
    table = table_at_least[:, :-1] - table_at_least[:, 1:]
    table = np.clip(table, 0.0, 1.0)
    table /= table.sum(axis=1, keepdims=True)
    shown = [r for r in (1, 3, 10, 30, 100, 300, 1000) if r <= depth]
    fit = {"judged": int(round(total)), "topics": len(counts), "runs": runs, "depth": depth, "prior": prior,
           "prevalence": float(pooled[1]) if top >= 1 else 0.0,
           "curve": {r: float(1.0 - table[r - 1, 0]) for r in shown}}
    return RankModel(table, fit)


@dataclass
class FileModel(Model):
    """Probabilities per topic and document: topic -> docid -> array of G' + 1 probabilities (G' the
    file's top grade; binary rows have two).  ``source`` names the file for messages."""

    rows: dict
    source: str = "probabilities"
    name = "file"

    def probabilities(self, topic, docs, ranks, max_grade: int) -> np.ndarray:
        given = self.rows.get(topic, {})
        out = np.zeros((len(docs), max_grade + 1))
        missing = []
        for i, doc in enumerate(docs):
            row = given.get(doc)
            if row is None:
                missing.append(doc)
                continue
            if len(row) == 2:  # binary: P(relevant) is grade G's
                out[i, 0], out[i, max_grade] = row[0], row[1]
            elif len(row) == max_grade + 1:
                out[i] = row
            else:
                raise MedoptError(f"{self.source}: topic {topic} document {doc} has {len(row)} probabilities; "
                                  f"grades 0..{max_grade} need {max_grade + 1} (or one P(relevant))")
        if missing:
            raise MedoptError(f"{self.source} gives no probability for {len(missing)} unjudged document(s) of "
                              f"topic {topic}, e.g. {missing[0]}")
        return out

    def describe(self) -> str:
        return f"file {self.source}"

    def without_judged(self, judgments: Mapping, warn=None) -> "FileModel":
        """The rows of unjudged documents only; rows for judged documents are ignored with one warning."""
        ignored, kept = 0, {}
        for topic, rows in self.rows.items():
            judged = judgments.get(topic, {})
            kept[topic] = {d: r for d, r in rows.items() if d not in judged}
            ignored += len(rows) - len(kept[topic])
        if ignored:
            message = f"{self.source}: {ignored} row(s) for judged documents ignored (their judgment stands)"
            if warn is None:
                warnings.warn(message, MedoptWarning, stacklevel=3)
            else:
                warn(message)
        return FileModel(kept, self.source)


def _probability(path, line: int, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0.0 <= value <= 1.0):
        raise InputFormatError(path, line, f"probability {text!r} is not a number in [0, 1]")
    return value


def read_probabilities(path: str | os.PathLike) -> FileModel:
    """A probabilities file: ``topic docid p`` or ``topic docid p0 p1 ... pG`` per line (``#`` comments);
    every row of one width; a malformed row is an InputFormatError naming the file and line."""
    rows: dict = {}
    width, first = None, {}
    try:
        lines = list(_fields(path))
    except FileNotFoundError:
        raise InputFormatError(path, None, "no such file") from None
    for line, fields in lines:
        if fields[0].startswith("#"):
            continue
        if len(fields) < 3:
            raise InputFormatError(path, line, f"expected 'topic docid p' or 'topic docid p0 ... pG', "
                                               f"got {len(fields)} field(s)")
        topic, doc, values = fields[0], fields[1], [_probability(path, line, t) for t in fields[2:]]
        if width is None:
            width = len(values)
        elif len(values) != width:
            raise InputFormatError(path, line, f"{len(values)} probabilities here, {width} on the first row")
        if width == 1:
            row = np.array([1.0 - values[0], values[0]])
        else:
            if abs(math.fsum(values) - 1.0) > ROW_SUM_TOLERANCE:
                raise InputFormatError(path, line, f"the probabilities sum to {math.fsum(values):.9g}, not 1")
            row = np.array(values)
        if doc in rows.setdefault(topic, {}):
            raise InputFormatError(path, line, f"topic {topic!r} docid {doc!r} again (first on line "
                                               f"{first[topic, doc]})")
        rows[topic][doc] = row
        first[topic, doc] = line
    return FileModel(rows, str(path))


_UNIFORM = re.compile(r"uniform\(\s*(?:p\s*=\s*)?([^)\s]*)\s*\)")


def parse_model(spec) -> "Model | str":
    """A model from the ``--model`` string or a Python value: ``"rank"`` (returned as the string
    "rank": it is fitted once the runs are known, :func:`fit_rank_model`), ``"uniform(p=0.3)"``, a
    path of a probabilities file, a Model, or a mapping (``{docid: p or [p0..pG]}`` for one topic,
    ``{topic: {docid: ...}}``)."""
    if isinstance(spec, Model):
        return spec
    if isinstance(spec, Mapping):
        return _mapping_model(spec)
    if isinstance(spec, os.PathLike):
        return read_probabilities(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise MedoptError(f"a relevance model is 'rank', 'uniform(p=..)' or a probabilities file, got {spec!r}")
    text = spec.strip()
    if text == "rank":
        return "rank"
    match = _UNIFORM.fullmatch(text)
    if match:
        try:
            return Uniform(float(match.group(1)))
        except ValueError:
            raise MedoptError(f"uniform(p=..): p must be a number in [0, 1], got {match.group(1)!r}") from None
    if text.startswith("uniform"):
        raise MedoptError(f"a uniform model is written uniform(p=0.3), got {text!r}")
    if os.path.exists(text):
        return read_probabilities(text)
    raise MedoptError(f"relevance model {text!r}: not 'rank', 'uniform(p=..)' nor an existing probabilities file")


ONE_TOPIC = ""  # the topic key of a model given as {docid: p} for one topic


def _row(value, where: str) -> np.ndarray:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not 0.0 <= float(value) <= 1.0:
            raise MedoptError(f"model: P(relevant) of {where} must be in [0, 1], got {value!r}")
        return np.array([1.0 - float(value), float(value)])
    try:
        row = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise MedoptError(f"model: {where} needs a probability or a list [p0, ..., pG], got {value!r}") from None
    if row.ndim != 1 or len(row) < 2 or np.any(~np.isfinite(row)) or np.any(row < 0) or np.any(row > 1) or \
            abs(math.fsum(row) - 1.0) > ROW_SUM_TOLERANCE:
        raise MedoptError(f"model: {where}'s probabilities [p0, ..., pG] must be in [0, 1] and sum to 1, "
                          f"got {value!r}")
    return row


def _mapping_model(spec: Mapping) -> FileModel:
    values = list(spec.values())
    if values and all(isinstance(v, Mapping) for v in values):
        return FileModel({str(t): {str(d): _row(p, f"topic {t} document {d}") for d, p in rows.items()}
                          for t, rows in spec.items()}, "model")
    return FileModel({ONE_TOPIC: {str(d): _row(p, f"document {d}") for d, p in spec.items()}}, "model")
