"""Score ranges of runs, topic by topic (SPEC 7), beside the score trec_eval reports.

For each run, topic and metric: the score range [low, high] of the run's ranking over every grade
assignment of its unjudged documents (:func:`medopt.score_range`), and the score under trec_eval's
convention that an unjudged document is not relevant (:func:`medopt.score` with the topic's
judgments), which lies within the range.  Then, per run and metric, a row for topic ``all``: topics
share no documents, so the range of the mean score is [mean of the lows, mean of the highs], exact
(SPEC 7), beside the mean trec_eval score.

``medopt bounds`` prints these rows; ``medopt plot --kind bounds`` draws their ``all`` rows.
"""

from __future__ import annotations

import sys
import warnings
from typing import Sequence

from .. import api
from ..batch import unique_metrics
from ..errors import MedoptError, MedoptWarning
from ..io.results import mean
from ..io.trec import read_qrels, read_run, run_names, tie_note
from ..io.topics import mean_topics, read_topic_choice
from ..metrics import PER_TOPIC, judged_at, parse_metric, resolve_max_grade

BOUNDS_COLUMNS = ("run", "topic", "metric", "low", "high", "trec_eval", "judged", "low_certified",
                  "high_certified", "method", "seconds")


def _warn(message: str) -> None:
    warnings.warn(message, MedoptWarning, stacklevel=3)


def topic_bounds(metric, ranking: Sequence[str], judgments, *, max_grade: int | None = None, method: str = "auto",
                 solver: str | None = None, time_limit: float | None = None, residual: bool = False,
                 limits: Sequence = (), **options) -> dict:
    """One ranking's row: its score range and, beside it, its score with unjudged documents at grade 0
    and its Judged@k (the share of its top k that is judged)."""
    result = api.score_range(metric, ranking, judgments, max_grade=max_grade, method=method, solver=solver,
                             time_limit=time_limit, residual=residual, limits=limits, **options)
    return {"metric": str(metric), "low": result.low, "high": result.high, "trec_eval": result.observed[0],
            "judged": judged_at(parse_metric(metric), ranking, judgments or {}),
            "low_certified": result.low_certified, "high_certified": result.high_certified,
            "method": result.method, "seconds": result.seconds}


def mean_row(run: str, metric: str, rows: Sequence[dict]) -> dict:
    """The ``all`` row of one run and metric: the mean score range (ends averaged) and the mean trec_eval score."""
    used = {r["method"] for r in rows}
    return {"run": run, "topic": "all", "metric": metric, "low": mean(r["low"] for r in rows),
            "high": mean(r["high"] for r in rows), "trec_eval": mean(r["trec_eval"] for r in rows),
            "judged": mean(r["judged"] for r in rows),
            "low_certified": all(r["low_certified"] for r in rows),
            "high_certified": all(r["high_certified"] for r in rows),
            "method": used.pop() if len(used) == 1 else "mixed", "seconds": sum(r["seconds"] for r in rows)}


def score_bounds(runs: Sequence, metrics: Sequence, qrels=None, *, complete: bool = False, topics=None,
                 honour_rank: bool = False, progress: bool | None = None, warn=_warn, names=None,
                 **settings) -> list[dict]:
    """Rows (BOUNDS_COLUMNS) for every run (TREC file) x topic x metric, and an ``all`` row per run and
    metric, in that order run by run.

    ``qrels`` is a TREC qrels file (None: nothing judged).  Each run's topics follow SPEC 10, as
    trec_eval's: those the qrels judge and the run retrieved (``complete``: every judged topic, a
    missing one an empty ranking; ``topics``: only those), so ``trec_eval`` is trec_eval's mean.
    G follows SPEC 1 (the largest grade of the whole qrels unless ``max_grade`` says otherwise).
    ``settings`` are the keywords of :func:`medopt.score_range` (max_grade, method, solver,
    time_limit, residual, limits, strategy, ...).  ``names`` (aligned with ``runs``; None: the runid)
    names runs.  Every input file is read before any computing.
    ``warn`` receives what the user should know (default: :class:`MedoptWarning` warnings).
    """
    from tqdm import tqdm

    if not runs:
        raise MedoptError("no run given")
    parsed = unique_metrics(metrics, warn)
    read = [read_run(path, honour_rank=honour_rank) for path in runs]
    judgments = read_qrels(qrels) if qrels else {}
    names = [given or own for given, own in zip(names or [None] * len(read), run_names(*read))]
    for note in filter(None, (tie_note(name, run.tied) for name, run in zip(names, read))):
        warn(note)
    every = {topic for run in read for topic in run.rankings}
    chosen, notes = mean_topics(every, judgments, qrels, complete=complete, chosen=read_topic_choice(topics))
    for note in notes:
        warn(note)
    top = resolve_max_grade(settings.pop("max_grade", None), judgments)
    settings["max_grade"] = PER_TOPIC if top is None else top
    order = {topic: i for i, topic in enumerate(chosen)}
    work = []
    for name, run in zip(names, read):
        kept = [t for t in chosen if complete or t in run.rankings]
        if not kept:
            warn(f"{name}: none of its topics is judged in {qrels}: left out")
        work.extend((name, run, topic, metric) for topic in kept for metric in parsed)
    show = sys.stderr.isatty() if progress is None else progress
    per_run: dict = {name: {} for name in names}  # run -> metric -> its topic rows
    for name, run, topic, metric in tqdm(work, disable=not show, unit="range", desc="bounds"):
        try:
            row = topic_bounds(metric, run.rankings.get(topic, ()), judgments.get(topic, {}), **settings)
        except MedoptError as error:
            raise MedoptError(f"{name}, topic {topic}, {metric}: {error}") from None
        row.update(run=name, topic=topic)
        per_run[name].setdefault(row["metric"], []).append(row)
    table = []
    for name, metric_rows in per_run.items():  # each run's topic rows (topic by topic), then its mean rows
        table.extend(sorted((r for kept in metric_rows.values() for r in kept), key=lambda r: order[r["topic"]]))
        table.extend(mean_row(name, metric, kept) for metric, kept in metric_rows.items())
    return table
