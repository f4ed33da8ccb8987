"""The Python API: ``medopt.med``, ``medopt.score`` and the ranges of SPEC 7,
``medopt.difference_range`` and ``medopt.score_range``."""

from __future__ import annotations

import time
from typing import Mapping, Sequence

from . import methods
from .errors import MedoptError
from .core.instance import RelevanceLimit, build_instance
from .io.frames import one_topic
from .metrics import PER_TOPIC, is_character_metric, parse_metric
from .core.passage_instance import build_passage_instance
from .core.result import MedResult, RangeResult, complete


def med(metric, a: Sequence[str], b: Sequence[str], judgments: Mapping[str, int] | None = None, *,
        max_grade: int | None = None, gains: Mapping[int, float] | None = None, method: str = "auto",
        solver: str | None = None, time_limit: float | None = None, pad: str = "none",
        residual: bool = False, limits: Sequence[RelevanceLimit] = (), spans=None, **options) -> MedResult:
    """Maximized effectiveness difference of rankings ``a`` and ``b`` under ``metric``.

    ``judgments`` maps doc id -> grade (absent: unjudged).  ``method`` is ``auto`` (the first
    exact method that applies) or a name in ``medopt.methods.REGISTRY``; an option the method does
    not take is an error.  ``time_limit`` (seconds, counted from this call) bounds the whole
    computation, model building included: the answer then comes within about the limit, with the
    best assignment found and a proven bound, status ``timeout`` and uncertified when the time ran
    out first (docs/limits.md).

    ``a`` and ``b`` may also be one topic of a run in any form ``medopt.compare`` takes (a DataFrame,
    ``{doc_id: score}``, ScoredDoc namedtuples, a ranx Run; ordered as trec_eval orders it), and
    ``judgments`` qrels in any form: a ranking that names its topic picks that topic's judgments.

    MED-U (SPEC 8): ``metric`` ``U(L=..)``, ``a`` and ``b`` sequences of ``(docid, offset, length)``
    passages, ``judgments`` docid -> grade (which documents are judged), ``spans`` docid -> list of
    ``(offset, length)`` relevant characters; ``gains={1: c}`` sets a relevant character's gain.
    """
    return _pair(metric, a, b, judgments, max_grade=max_grade, gains=gains, method=method, solver=solver,
                 time_limit=time_limit, pad=pad, residual=residual, limits=limits, spans=spans, options=options,
                 ranges=False)


def difference_range(metric, a: Sequence[str], b: Sequence[str], judgments: Mapping[str, int] | None = None, *,
                     max_grade: int | None = None, gains: Mapping[int, float] | None = None, method: str = "auto",
                     solver: str | None = None, time_limit: float | None = None, pad: str = "none",
                     residual: bool = False, limits: Sequence[RelevanceLimit] = (), spans=None,
                     **options) -> RangeResult:
    """[low, high] = [min, max] of M(a) - M(b) over every assignment of grades to the unjudged
    documents of both lists, a shared document taking one grade (SPEC 7); each end with its own
    assignment, proven bound and certificate.  MED = max(high, -low).  Keywords as for ``med``;
    ``method`` is ``auto`` or a method that gives exact ends (closed-form, exact, enumerate).
    MED-U: passages and ``spans`` as for ``med``."""
    return _pair(metric, a, b, judgments, max_grade=max_grade, gains=gains, method=method, solver=solver,
                 time_limit=time_limit, pad=pad, residual=residual, limits=limits, spans=spans, options=options,
                 ranges=True)


def score_range(metric, ranking: Sequence[str], judgments: Mapping[str, int] | None = None, *,
                max_grade: int | None = None, gains: Mapping[int, float] | None = None, method: str = "auto",
                solver: str | None = None, time_limit: float | None = None, residual: bool = False,
                limits: Sequence[RelevanceLimit] = (), spans=None, **options) -> RangeResult:
    """[min, max] of M(ranking) over every assignment of grades to its unjudged documents (SPEC 7).

    It is the difference range of ``ranking`` against an empty ranking, which scores 0 under every
    assignment for every metric (SPEC 3: no rank contributes), and whose documents, none, invent
    no relevant document: the collection is the judged documents plus those of ``ranking``.  With
    ``residual`` (RBP), the ranks after the ranking's end are unknown as well: they add between 0
    and their whole weight, so the high end (and its bound) rises by that weight (cwl_eval's
    residual).  MED-U: ``ranking`` a sequence of passages and ``spans`` as for ``med``."""
    started = time.perf_counter()
    passage = _characters(metric, ranking, (), judgments, spans, gains, method, dict(
        options, max_grade=max_grade, residual=residual, limits=limits, solver=solver), ranges=True)
    if passage is not None:
        passage.kind = "score"
        return passage
    ranking, _, judgments, top = one_topic(ranking, None, judgments)
    instance = build_instance(metric, ranking, (), judgments, max_grade=_grade(max_grade, top), gains=gains,
                              limits=limits)
    if residual and not hasattr(instance.metric, "tail_weight"):
        raise MedoptError(f"residual applies to RBP only, not {instance.metric}")
    result = _run(instance, method, solver, time_limit, options, started, ranges=True)
    result.observed = _observed(instance)
    result.kind = "score"
    if residual:
        tail = instance.metric.tail_weight(len(instance.full_a))
        result.high, result.high_bound = result.high + tail, result.high_bound + tail
        result.details["residual"] = tail
    return result


def _pair(metric, a, b, judgments, *, max_grade, gains, method, solver, time_limit, pad, residual, limits, spans,
          options: dict, ranges: bool):
    """``med`` (or, with ``ranges``, ``difference_range``): MED-U for a character-level metric, else
    the instance of two rankings, solved by the method chosen."""
    started = time.perf_counter()
    passage = _characters(metric, a, b, judgments, spans, gains, method, dict(
        options, max_grade=max_grade, pad=pad, residual=residual, limits=limits, solver=solver), ranges=ranges)
    if passage is not None:
        return passage
    a, b, judgments, top = one_topic(a, b, judgments)
    instance = build_instance(metric, a, b, judgments, max_grade=_grade(max_grade, top), gains=gains, pad=pad,
                              residual=residual, limits=limits)
    result = _run(instance, method, solver, time_limit, options, started, ranges=ranges)
    result.observed = _observed(instance)
    return result


def _grade(max_grade, top: int | None):
    """SPEC 1: an integer ``max_grade`` as given; ``"per-topic"`` or None with one topic's judgments:
    that topic's largest grade (build_instance's default); None with qrels of several topics: ``top``,
    the largest grade of them all."""
    if max_grade == PER_TOPIC:
        return None
    return top if max_grade is None else max_grade


def _observed(instance) -> tuple[float, float]:
    """(M(A), M(B)) with every unjudged document at grade 0: the scores trec_eval reports."""
    return instance.scores(complete(instance, {}))


def _characters(metric, a, b, judgments, spans, gains, method: str, options: dict, *, ranges: bool):
    """MED-U (SPEC 8) when ``metric`` is a character-level metric, else None (after checking that
    ``spans`` is not given to a document metric).  Options of the document methods are refused."""
    metric = parse_metric(metric)
    if not is_character_metric(metric):
        if spans is not None:
            raise MedoptError(f"spans are for passage metrics (U(L=..), SPEC 8), not {metric}")
        return None
    given = sorted(k for k, v in methods.checked_options(options).items()  # time_limit: the closed form takes
                   if k != "time_limit" and not (v is False or v == "none" or v == () or v == []))  # milliseconds
    if given:
        raise MedoptError(f"{metric} takes no {', '.join(given)} (SPEC 8: binary characters; the closed form)")
    started = time.perf_counter()
    instance = build_passage_instance(metric, a, b, judgments, spans, gains=gains)
    result = methods.run_characters(instance, method, ranges=ranges)
    result.observed = _observed(instance)
    result.seconds = time.perf_counter() - started
    return result


def _run(instance, method: str, solver, time_limit, options: dict, started: float, *, ranges: bool):
    """The request planned once (methods.plan: the method, solver, strategy, the options and time limit
    checked), then run, its time limit counted from ``started``."""
    chosen = methods.plan(instance, dict(options, solver=solver, time_limit=time_limit), method=method,
                          ranges=ranges)
    return methods.execute(chosen, instance, started=started)


def score(metric, ranking: Sequence[str], grades: Mapping[str, int], *, max_grade: int | None = None,
          gains: Mapping[int, float] | None = None) -> float:
    """Score of one ranking when the collection's documents have ``grades`` (absent: grade 0)."""
    metric = parse_metric(metric)
    ranking, _, grades, top = one_topic(ranking, None, grades)
    instance = build_instance(metric, ranking, (), grades, max_grade=_grade(max_grade, top), gains=gains)
    return metric.score(instance.full_a, instance.judgments, instance.grading)
