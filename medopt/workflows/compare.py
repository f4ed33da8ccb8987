"""Two runs compared: the rows of ``medopt compare`` (one implementation, for the command and for
``medopt.compare``); ``medopt.matrix`` is in :mod:`medopt.workflows.matrix`, the output formats in
:mod:`medopt.workflows.outputs`.

Runs and qrels come in any form :mod:`medopt.io.frames` reads (TREC files, DataFrames, dicts,
ir_measures namedtuples, ranx objects); a file path is read as the command reads it.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping


from .. import api
from ..batch import unique_measures
from ..metrics.companions import COMPANION_METHOD, RBO_COLUMNS
from ..errors import MedoptError, MedoptWarning
from ..io.frames import as_qrels, as_run, qrels_source
from ..io.passages import PassageRun, check_spans, read_passage_judgments, read_passage_run, read_spans
from ..io.results import mean, rows_frame
from ..io.trec import Run, pair_topics, run_names, tie_note
from ..io.topics import mean_topics, read_topic_choice
from ..metrics import PER_TOPIC, is_character_metric, judged_at, parse_metric, resolve_max_grade
from ..core.result import exact_mean, exact_value, mean_range
from ..core.significance import SUMMARY_COLUMNS as SIGNIFICANCE_COLUMNS, summary_columns, wants_ranges
from ..flip.columns import FLIP_COLUMNS, flip_columns
from .significance import reference_difference
from ..relevance.columns import MODEL_COLUMNS, relevance_columns

COMPARE_COLUMNS = ("run_a", "run_b", "topic", "metric", "topics", "score_a", "score_b", "diff", "judged_a",
                   "judged_b", "med", "direction", "certified", "upper_bound")
RANGE_COLUMNS = ("low", "high", "low_bound", "high_bound", "low_certified", "high_certified", "verdict")


def _warn(message: str) -> None:
    warnings.warn(message, MedoptWarning, stacklevel=3)


def _metric_list(metrics) -> list:
    metrics = [metrics] if isinstance(metrics, str) else list(metrics or ())
    if not metrics:
        raise MedoptError("give at least one metric, e.g. metrics=['nDCG@10', 'AP@100']")
    return metrics


def _some(topics) -> str:
    return " ".join(topics[:5]) + (" ..." if len(topics) > 5 else "")


def _passage_run(value, what: str, honour_rank: bool) -> Run:
    """A passage run (an 8-column file, a PassageRun, or topic -> passages) as a Run whose rankings
    hold passages (docid, offset, length) in trailtext order."""
    if isinstance(value, (str, os.PathLike)):
        value = read_passage_run(value, honour_rank=honour_rank)
    if isinstance(value, PassageRun):
        return Run(value.name, value.path, value.passages)
    if isinstance(value, Mapping):
        return Run(what, what, {str(topic): tuple(passages) for topic, passages in value.items()})
    raise MedoptError(f"{what}: a passage run file, a PassageRun or a dict topic -> passages, "
                      f"got {type(value).__name__}")


def _passage_inputs(run_a, run_b, qrels, spans, parsed, honour_rank: bool):
    """MED-U's inputs (SPEC 8): the two passage runs, the qrels and the spans (topic -> docid -> spans);
    every metric must be a character-level one."""
    documents = [str(m) for m in parsed if not is_character_metric(m)]
    if documents:
        raise MedoptError(f"--spans and passage runs go with passage metrics (U(L=..)), not {', '.join(documents)}")
    first, second = _passage_run(run_a, "run_a", honour_rank), _passage_run(run_b, "run_b", honour_rank)
    if isinstance(qrels, (str, os.PathLike, type(None))) and isinstance(spans, (str, os.PathLike)):
        judgments, topic_spans = read_passage_judgments(qrels, spans)
    else:
        judgments = as_qrels(qrels)
        topic_spans = read_spans(spans) if isinstance(spans, (str, os.PathLike)) else dict(spans or {})
        check_spans(topic_spans, judgments, str(spans) if isinstance(spans, (str, os.PathLike)) else "spans",
                    qrels_source(qrels))
    return first, second, judgments, topic_spans


def compare_rows(run_a, run_b, qrels=None, metrics=None, *, method: str = "auto", solver=None, time_limit=None,
                 max_grade=None, pad: str = "none", residual: bool = False, strategy: str | None = None,
                 limits=(), honour_rank: bool = False, complete: bool = False, topics=None, ranges: bool = False,
                 names=None, progress: bool = False, warn=_warn, sides=("run_a", "run_b"),
                 spans=None, per_topic: bool = True, flip: bool = False, labels=None, scope: str = "unjudged",
                 test: str | None = None, alpha: float = 0.05, model=None, model_seed: int = 0,
                 draws: int | None = None) -> tuple[list, tuple]:
    """The rows of ``medopt compare`` and their columns: one row per topic and metric (with
    ``per_topic``), then one summary row per metric (topic ``all``): both runs' observed means
    (``score_a``, ``score_b``: unjudged documents not relevant, trec_eval's), their difference, the
    share of each run's top k that is judged (``judged_a``, ``judged_b``: ir_measures' Judged@k, k
    the metric's cutoff), the mean MED, and with ``ranges`` the mean difference range and its verdict
    (SPEC 7).  Means are over SPEC 10's topics: judged and retrieved by both runs (``complete``:
    every judged topic, a missing ranking empty; ``topics``: only those).  G follows SPEC 1 (the
    largest grade of the whole qrels; ``max_grade="per-topic"``: each topic's own).  ``sides`` names
    the two runs in warnings.  With ``spans`` or a passage metric (U), the runs are passage runs and
    MED-U is computed (SPEC 8).  ``flip`` (SPEC 11, with ``labels`` and ``scope``) adds ``flip_distance,
    flip_documents, flip_certified`` to the summary rows; ``test`` ("t" or "sign", SPEC 12; implies
    ``ranges``) adds ``p_reference, p_worst, robust`` at ``alpha``.  ``model`` (SPEC 13, with ``model_seed``
    and ``draws``) adds the distribution's columns (relevance.MODEL_COLUMNS)."""
    from tqdm import tqdm

    ranges = wants_ranges(test, alpha) or ranges  # SPEC 12 needs the ranges

    parsed, companions = unique_measures(_metric_list(metrics), warn, passages=True)
    passages = spans is not None or any(is_character_metric(m) for m in parsed)
    if passages:
        first, second, judgments, topic_spans = _passage_inputs(run_a, run_b, qrels, spans, parsed, honour_rank)
    else:
        first = as_run(run_a, "run_a", honour_rank=honour_rank)
        second = as_run(run_b, "run_b", honour_rank=honour_rank)
        judgments = as_qrels(qrels)
    name_a, name_b = (given or default for given, default in zip(names or (None, None), run_names(first, second)))
    pair = pair_topics(first, second)
    if not pair.common and not complete:
        raise MedoptError(f"{first.path} and {second.path} have no topic in common ({first.path}: "
                          f"{_some(pair.only_a)}; {second.path}: {_some(pair.only_b)})")
    for side, only in zip(sides, (pair.only_a, pair.only_b)):
        if only and not complete:
            warn(f"{len(only)} topic(s) only in {side}, skipped: {' '.join(only[:10])}{' ...' if len(only) > 10 else ''}")
    for note in filter(None, (tie_note(name, run.tied) for name, run in ((name_a, first), (name_b, second)))):
        warn(note)
    common, notes = mean_topics(pair.common, judgments, qrels_source(qrels), complete=complete,
                                chosen=read_topic_choice(topics))
    for note in notes:
        warn(note)
    grade = resolve_max_grade(max_grade, judgments)
    top = PER_TOPIC if grade is None else grade
    ranking_a = {t: first.rankings.get(t, ()) for t in common}  # -c: a topic a run missed ranks nothing
    ranking_b = {t: second.rankings.get(t, ()) for t in common}
    rows, per_metric = [], {str(m): [] for m in parsed}
    ask = api.difference_range if ranges else api.med
    work = [(t, m) for t in common for m in parsed]
    for topic, metric in tqdm(work, desc="compare", unit="med", disable=not progress, leave=False):
        try:
            if passages:
                result = ask(metric, ranking_a[topic], ranking_b[topic], judgments.get(topic, {}),
                             spans=topic_spans.get(topic, {}), method=method)
            else:
                result = ask(metric, ranking_a[topic], ranking_b[topic], judgments.get(topic, {}),
                             max_grade=top, method=method, solver=solver, time_limit=time_limit, pad=pad,
                             residual=residual, limits=limits, strategy=strategy)
        except MedoptError as error:
            raise MedoptError(f"topic {topic}, {metric}: {error}") from None
        score_a, score_b = result.observed
        row = {"run_a": name_a, "run_b": name_b, "topic": topic, "metric": str(metric), "topics": 1,
               "score_a": score_a, "score_b": score_b,
               "diff": float(exact_value(score_a) - exact_value(score_b)) if metric.rational else score_a - score_b,
               "judged_a": judged_at(metric, ranking_a[topic], judgments.get(topic, {})),
               "judged_b": judged_at(metric, ranking_b[topic], judgments.get(topic, {})),
               "method": result.method, "seconds": result.seconds}
        if ranges:
            row.update(med=result.med, direction=name_a if result.direction == "a" else name_b,
                       certified=result.certified, upper_bound=max(result.high_bound, -result.low_bound),
                       low=result.low, high=result.high, low_bound=result.low_bound, high_bound=result.high_bound,
                       low_certified=result.low_certified, high_certified=result.high_certified,
                       verdict=result.verdict)
        else:
            row.update(med=result.value, direction=name_a if result.direction == "a" else name_b,
                       certified=result.certified, upper_bound=result.upper_bound)
        per_metric[str(metric)].append(row)
    labelled = {}
    if test is not None and labels is not None:  # SPEC 12's reference under SPEC 11's labels
        if passages:
            raise MedoptError("--labels take document metrics, not passage metrics (U)")
        given = as_qrels(labels, "labels")
        for metric in parsed:
            labelled[str(metric)] = [reference_difference(metric, ranking_a[row["topic"]], ranking_b[row["topic"]],
                                                          judgments.get(row["topic"], {}), given.get(row["topic"], {}),
                                                          top, None, row["diff"])[0]
                                     for row in per_metric[str(metric)]]
        ignored = sum(1 for t in common for d in given.get(t, {}) if d in judgments.get(t, {}))
        if ignored and not flip:  # --flip says it once
            warn(f"{ignored} label(s) for judged documents ignored (SPEC 11: the judgments stand)")
    summaries = []
    for metric, metric_rows in per_metric.items():
        summaries.append(summary_row(name_a, name_b, metric, metric_rows, ranges=ranges,
                                     rational=getattr(parse_metric(metric), "rational", False)))
        if test is not None:  # SPEC 12: significance under every completion (core.significance)
            summaries[-1].update(summary_columns(
                [r["diff"] for r in metric_rows] if labels is None else labelled[metric], metric_rows, test, alpha,
                rational=getattr(parse_metric(metric), "rational", False)))
        if per_topic:
            rows.extend(metric_rows)
    if flip:  # SPEC 11: how many judgments must go against the comparison (medopt.flip)
        if passages:
            raise MedoptError("--flip takes document metrics, not passage metrics (U)")
        said = set()  # a warning once, not once per metric
        once = lambda message: message in said or said.add(message) or warn(message)  # noqa: E731
        for summary in summaries:
            summary.update(flip_columns(summary["metric"], first, second, judgments if qrels is not None else None,
                                        topics=common, complete=complete, labels=labels, scope=scope,
                                        max_grade=max_grade, time_limit=time_limit, warn=once))
    if model is not None:  # SPEC 13: the distribution of the mean difference under a relevance model
        if passages:
            raise MedoptError("--model takes document metrics, not passage metrics (U)")
        for summary in summaries:
            summary.update(relevance_columns(summary, first, second, judgments, topics=common, complete=complete,
                                             model=model, max_grade=max_grade, seed=model_seed, draws=draws,
                                             warn=warn, ranges=ranges))
    rows = rows + summaries if per_topic else summaries
    rows.extend(companion_rows(companions, ranking_a, ranking_b, common, name_a, name_b, per_topic=per_topic))
    return rows, COMPARE_COLUMNS + (RANGE_COLUMNS if ranges else ()) + (
        SIGNIFICANCE_COLUMNS if test is not None else ()) + ("method", "seconds") + (
        RBO_COLUMNS if companions else ()) + (FLIP_COLUMNS if flip else ()) + (MODEL_COLUMNS if model is not None else ())


def summary_row(name_a: str, name_b: str, metric: str, rows: list, *, ranges: bool, rational: bool) -> dict:
    """One pair's summary over its topics' rows (topic ``all``): the observed means and their difference,
    the mean Judged@k of each run, the mean MED (certified when every topic's is) and, with ``ranges``,
    the mean difference range with its verdict from result.mean_range (SPEC 7)."""
    used = {r["method"] for r in rows}
    row = {"run_a": name_a, "run_b": name_b, "topic": "all", "metric": metric, "topics": len(rows),
           "score_a": exact_mean((r["score_a"] for r in rows), rational=rational),
           "score_b": exact_mean((r["score_b"] for r in rows), rational=rational),
           "diff": exact_mean((r["diff"] for r in rows), rational=rational),
           "judged_a": exact_mean((r["judged_a"] for r in rows), rational=True),
           "judged_b": exact_mean((r["judged_b"] for r in rows), rational=True),
           "med": exact_mean((r["med"] for r in rows), rational=rational), "direction": "",
           "certified": all(r["certified"] for r in rows),
           "upper_bound": mean(r["upper_bound"] for r in rows),
           "method": used.pop() if len(used) == 1 else "mixed",
           "seconds": sum(r["seconds"] for r in rows)}
    if ranges:
        span = mean_range([(r["low"], r["high"], r["low_bound"], r["high_bound"]) for r in rows], rational=rational)
        row.update(low=span.low, high=span.high, low_bound=span.low_bound, high_bound=span.high_bound,
                   low_certified=all(r["low_certified"] for r in rows),
                   high_certified=all(r["high_certified"] for r in rows), verdict=span.verdict)
    return row


def companion_rows(companions, rankings_a, rankings_b, topics, name_a: str, name_b: str, *,
                   per_topic: bool = True) -> list[dict]:
    """The rows of the companion measures (SPEC 9: RBO beside MED): per topic and companion (with
    ``per_topic``), its ``rbo_min, rbo_residual, rbo_ext`` and no MED (``med`` empty, method ``rbo``),
    then the means (topic ``all``)."""
    rows = []
    for companion in companions:
        values, seconds = [], 0.0
        for topic in topics:
            started = time.perf_counter()
            value = companion.evaluate(rankings_a[topic], rankings_b[topic])
            values.append(value)
            elapsed = time.perf_counter() - started
            seconds += elapsed
            if per_topic:
                rows.append(_companion_row(name_a, name_b, topic, companion, value, elapsed))
        means = [mean(v[i] for v in values) for i in range(len(RBO_COLUMNS))]
        rows.append(_companion_row(name_a, name_b, "all", companion, means, seconds))
    return rows


def _companion_row(name_a, name_b, topic, companion, value, seconds) -> dict:
    return {"run_a": name_a, "run_b": name_b, "topic": topic, "metric": str(companion), "med": None,
            "direction": "", "certified": None, "upper_bound": None, "method": COMPANION_METHOD, "seconds": seconds,
            **dict(zip(RBO_COLUMNS, value))}


def compare(run_a, run_b, qrels=None, metrics=None, *, method: str = "auto", ranges: bool = False, solver=None,
            time_limit=None, max_grade=None, pad: str = "none", residual: bool = False, strategy=None, limits=(),
            honour_rank: bool = False, complete: bool = False, topics=None, per_topic: bool = True, names=None,
            progress: bool = False, spans=None, flip: bool = False, labels=None, scope: str = "unjudged",
            test: str | None = None, alpha: float = 0.05, model=None, seed: int = 0, draws: int | None = None):
    """MED between two runs for every topic and metric, as a pandas DataFrame: the rows and columns of
    ``medopt compare -q`` (``run_a, run_b, topic, metric, topics, score_a, score_b, diff, judged_a,
    judged_b, med, direction, certified, upper_bound``, then ``method, seconds``), and a summary row per
    metric (topic ``all``: the observed means ``score_a``, ``score_b`` of each run with unjudged
    documents not relevant, as trec_eval reports them, and the mean MED); with ``ranges`` the difference
    range columns (``low, high, low_bound, high_bound, low_certified, high_certified, verdict``), the
    summary's being the mean difference range and its verdict (SPEC 7).  ``per_topic=False``: the
    summary rows only (what the command prints without -q).  ``direction`` names the run ahead.

    Topics (SPEC 10): those the qrels judge and both runs retrieved; ``complete=True`` (trec_eval's
    -c) every judged topic; ``topics`` (a list, or a file of ids) only those.  G (SPEC 1): the largest
    grade of the whole qrels unless ``max_grade`` is given (``"per-topic"``: each topic's own).

    Runs and qrels in any accepted form (TREC file, DataFrame, dict, ir_measures namedtuples, ranx
    objects); ``names=(a, b)`` names the runs (default: run ids, ranx names, else run_a and run_b).
    Keywords as for :func:`medopt.med`; ``time_limit`` per MED (default: none).  What the command
    would print as a warning is a :class:`medopt.errors.MedoptWarning`.

    MED-U (SPEC 8): passage runs (8-column files, or dicts topic -> [(docid, offset, length)]), the
    qrels, ``spans`` (a spans file or topic -> docid -> [(offset, length)]) and ``U(L=..)`` metrics.

    ``flip=True``: the summary rows also carry ``flip_distance``, ``flip_documents``, ``flip_certified``
    (SPEC 11, :func:`medopt.flip_distance`, with ``labels`` and ``scope``).  ``test="t"`` or ``"sign"``
    (SPEC 12): ``p_reference`` (unjudged = 0, or ``labels``: SPEC 11's reference), ``p_worst`` (the largest p over every completion) and
    ``robust`` (at ``alpha``); implies ranges.  ``model`` (SPEC 13: ``"rank"``, fitted on these runs and
    qrels, ``"uniform(p=..)"``, a probabilities file or a relevance Model): the summary rows also carry
    ``expected, p_a_better, p_flip, p_low, p_high`` (the interval of p_a_better), ``p_flip_low,
    p_flip_high, p_method`` (exact, bounded or sampled) and ``p_width`` (medopt.relevance; ``seed`` and
    ``draws`` for the sampler).
    """
    rows, columns = compare_rows(run_a, run_b, qrels, metrics, method=method, solver=solver, time_limit=time_limit,
                                 max_grade=max_grade, pad=pad, residual=residual, strategy=strategy, limits=limits,
                                 honour_rank=honour_rank, complete=complete, topics=topics, ranges=ranges,
                                 names=names, progress=progress, spans=spans, per_topic=per_topic, flip=flip,
                                 labels=labels, scope=scope, test=test, alpha=alpha, model=model, model_seed=seed,
                                 draws=draws)
    return rows_frame(rows, columns)


__all__ = ["compare", "compare_rows", "summary_row", "companion_rows", "COMPARE_COLUMNS", "RANGE_COLUMNS"]
