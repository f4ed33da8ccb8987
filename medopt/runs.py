"""Whole runs compared: the rows of ``medopt compare`` (one implementation, for the command and for
``medopt.compare``), ``medopt.matrix`` as a DataFrame, and the output formats of compare.

Runs and qrels come in any form :mod:`medopt.io.frames` reads (TREC files, DataFrames, dicts,
ir_measures namedtuples, ranx objects); a file path is read as the command reads it.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping

import numpy as np

from . import api
from .batch import Settings, collect_rows, unique_measures
from .batch.matrix import chosen_topics
from .batch.summary import pair_summary
from .batch.runset import columns_from_rankings, load_runset, read_run_columns
from .batch.engines import read_runs
from .batch.passageset import character_job, check_character_settings, passage_set
from .companions import COMPANION_METHOD, RBO_COLUMNS
from .errors import MedoptError, MedoptWarning
from .io.frames import as_qrels, as_run, qrels_source
from .io.passages import PassageRun, check_spans, read_passage_judgments, read_passage_run, read_spans
from .io.reports import latex_text, trec_eval_text
from .io.results import FORMATS, format_rows, mean, rows_frame, write_parquet, write_rows
from .io.trec import Run, mean_topics, pair_topics, read_topic_choice, run_names, sort_topics, tie_note, write_atomic
from .metrics import PER_TOPIC, judged_at, parse_metric, resolve_max_grade
from .result import exact_mean, exact_value, mean_range
from .batch.tasks import companion_rows as companion_store_rows
from .store import COLUMNS as MATRIX_COLUMNS, COMPANION_COLUMNS, PAIR_COLUMNS, RANGE_COLUMNS as MATRIX_RANGE_COLUMNS

COMPARE_COLUMNS = ("run_a", "run_b", "topic", "metric", "topics", "score_a", "score_b", "diff", "judged_a",
                   "judged_b", "med", "direction", "certified", "upper_bound")
RANGE_COLUMNS = ("low", "high", "low_bound", "high_bound", "low_certified", "high_certified", "verdict")
OUTPUT_FORMATS = (*FORMATS, "parquet", "trec_eval", "latex")


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
    documents = [str(m) for m in parsed if not getattr(m, "characters", False)]
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
                 spans=None, per_topic: bool = True) -> tuple[list, tuple]:
    """The rows of ``medopt compare`` and their columns: one row per topic and metric (with
    ``per_topic``), then one summary row per metric (topic ``all``): both runs' observed means
    (``score_a``, ``score_b``: unjudged documents not relevant, trec_eval's), their difference, the
    share of each run's top k that is judged (``judged_a``, ``judged_b``: ir_measures' Judged@k, k
    the metric's cutoff), the mean MED, and with ``ranges`` the mean difference range and its verdict
    (SPEC 7).  Means are over SPEC 10's topics: judged and retrieved by both runs (``complete``:
    every judged topic, a missing ranking empty; ``topics``: only those).  G follows SPEC 1 (the
    largest grade of the whole qrels; ``max_grade="per-topic"``: each topic's own).  ``sides`` names
    the two runs in warnings.  With ``spans`` or a passage metric (U), the runs are passage runs and
    MED-U is computed (SPEC 8)."""
    from tqdm import tqdm

    parsed, companions = unique_measures(_metric_list(metrics), warn, passages=True)
    passages = spans is not None or any(getattr(m, "characters", False) for m in parsed)
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
    options = {"strategy": strategy} if strategy not in (None, "auto") else {}
    work = [(t, m) for t in common for m in parsed]
    for topic, metric in tqdm(work, desc="compare", unit="med", disable=not progress, leave=False):
        try:
            if passages:
                result = ask(metric, ranking_a[topic], ranking_b[topic], judgments.get(topic, {}),
                             spans=topic_spans.get(topic, {}), method=method)
            else:
                result = ask(metric, ranking_a[topic], ranking_b[topic], judgments.get(topic, {}),
                             max_grade=top, method=method, solver=solver, time_limit=time_limit, pad=pad,
                             residual=residual, limits=limits, **options)
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
            row.update(med=result.med, direction=name_a if result.high >= -result.low else name_b,
                       certified=result.certified, upper_bound=max(result.high_bound, -result.low_bound),
                       low=result.low, high=result.high, low_bound=result.low_bound, high_bound=result.high_bound,
                       low_certified=result.low_certified, high_certified=result.high_certified,
                       verdict=result.verdict)
        else:
            row.update(med=result.value, direction=name_a if result.direction == "a" else name_b,
                       certified=result.certified, upper_bound=result.upper_bound)
        per_metric[str(metric)].append(row)
    summaries = []
    for metric, metric_rows in per_metric.items():
        summaries.append(summary_row(name_a, name_b, metric, metric_rows, ranges=ranges,
                                     rational=getattr(parse_metric(metric), "rational", False)))
        if per_topic:
            rows.extend(metric_rows)
    rows = rows + summaries if per_topic else summaries
    rows.extend(companion_rows(companions, ranking_a, ranking_b, common, name_a, name_b, per_topic=per_topic))
    return rows, COMPARE_COLUMNS + (RANGE_COLUMNS if ranges else ()) + ("method", "seconds") + (
        RBO_COLUMNS if companions else ())


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
            progress: bool = False, spans=None):
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
    qrels, ``spans`` (a spans file or topic -> docid -> [(offset, length)]) and ``U(L=..)`` metrics."""
    rows, columns = compare_rows(run_a, run_b, qrels, metrics, method=method, solver=solver, time_limit=time_limit,
                                 max_grade=max_grade, pad=pad, residual=residual, strategy=strategy, limits=limits,
                                 honour_rank=honour_rank, complete=complete, topics=topics, ranges=ranges,
                                 names=names, progress=progress, spans=spans, per_topic=per_topic)
    return rows_frame(rows, columns)


# ---------------------------------------------------------------------------
# outputs


def _records(rows):
    """Rows as dicts: a DataFrame (medopt.compare, medopt.matrix) or a list of dicts."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
        return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                for r in rows.to_dict("records")]
    return list(rows)


def _med_rows(rows) -> list:
    """The MED rows: the trec_eval and LaTeX reports hold MEDs, not a companion's (RBO) rows."""
    rows = [r for r in rows if r.get("method") != COMPANION_METHOD]
    if not rows:
        raise MedoptError("the trec_eval and latex formats report MED: give a MED metric besides RBO, "
                          "or choose csv, tsv, jsonl or parquet")
    return rows


def _mean_span(metric: str, rows):
    """The mean difference range of one pair's per-topic rows (compare's or a matrix store's), verdict
    included (result.mean_range)."""
    return mean_range([(r["low"], r["high"], r.get("low_bound"), r.get("high_bound")) for r in rows],
                      rational=getattr(parse_metric(metric), "rational", False))


def to_trec_eval(rows) -> str:
    """``trec_eval -q`` text of one pair's rows (``MED_<metric>`` measures; with ranges ``MEDlow_`` and
    ``MEDhigh_`` too): see :mod:`medopt.io.reports`."""
    return trec_eval_text(_med_rows(_records(rows)), _mean_span)


def to_latex(rows, *, digits: int = 4, caption: str | None = None, label: str = "tab:med") -> str:
    """A booktabs table (ranx's style) of the mean MED, and the mean difference range, per pair and metric."""
    return latex_text(_med_rows(_records(rows)), digits=digits, caption=caption, label=label, mean_span=_mean_span)


def format_output(rows, columns, fmt: str) -> str:
    """Rows as text: csv, tsv, jsonl, trec_eval or latex."""
    if fmt == "trec_eval":
        return trec_eval_text(_med_rows(rows), _mean_span)
    if fmt == "latex":
        return latex_text(_med_rows(rows), mean_span=_mean_span)
    if fmt == "parquet":
        raise MedoptError("parquet is binary: give an output file (-o out.parquet)")
    return format_rows(rows, columns, fmt)


def write_output(rows, columns, fmt: str, path, *, inputs=()) -> None:
    """Rows to ``path`` in ``fmt`` by the rules of :mod:`medopt.io.output` (never over one of ``inputs``)."""
    if fmt == "parquet":
        write_parquet(rows, columns, path, inputs=inputs)
    elif fmt in FORMATS:
        write_rows(rows, columns, fmt, path, inputs=inputs)
    else:
        write_atomic(path, iter([format_output(rows, columns, fmt)]), what="-o", inputs=inputs)


# ---------------------------------------------------------------------------
# many runs


def _run_columns(runs, honour_rank: bool, jobs: int) -> list:
    """Each run as RunColumns: a dict name -> run in any form, or a list of runs (TREC files read in parallel)."""
    if isinstance(runs, Mapping):
        items = [(str(name), run) for name, run in runs.items()]
    elif isinstance(runs, (str, os.PathLike)) or not hasattr(runs, "__iter__"):
        raise MedoptError("runs: a dict name -> run, or a list of runs (TREC files, DataFrames, ...)")
    else:
        items = [(None, run) for run in runs]
        if all(isinstance(run, (str, os.PathLike)) for _, run in items):
            return read_runs([run for _, run in items], honour_rank=honour_rank, jobs=jobs)
    columns = []
    for index, (name, run) in enumerate(items):
        if isinstance(run, (str, os.PathLike)):
            read = read_run_columns(run, honour_rank=honour_rank)
            read.name = name or read.name
            columns.append(read)
            continue
        what = f"run {name!r}" if name else f"run {index}"
        run = as_run(run, what, honour_rank=honour_rank, name=name)
        columns.append(columns_from_rankings(run.name if run.name != what else f"run{index}", run.rankings,
                                             path=run.path))
    return columns


def _passage_set(runs, qrels, spans, parsed, honour_rank: bool):
    """MED-U's runs (passage run files, PassageRuns or dicts topic -> passages; a dict name -> run names
    them), qrels and spans as a PassageSet."""
    items = [(str(name), run) for name, run in runs.items()] if isinstance(runs, Mapping) else [
        (None, run) for run in runs]
    if len(items) < 2:
        raise MedoptError("matrix needs at least two runs")
    read = []
    for index, (name, run) in enumerate(items):
        run = _passage_run(run, name or f"run{index}", honour_rank)
        read.append((name or run.name, run.path, run.rankings))
    judgments, topic_spans = _passage_inputs(read[0][2], read[1][2], qrels, spans, parsed, honour_rank)[2:]
    return passage_set(read, judgments, topic_spans)


def matrix_rows(runs, qrels=None, metrics=None, *, ranges: bool = False, jobs: int | None = None,
                engine: str = "local", method: str = "auto", solver=None, time_limit=None, max_grade=None,
                pad: str = "none", residual: bool = False, strategy=None, limits=(), honour_rank: bool = False,
                complete: bool = False, topics=None, fast_path: bool = True, warn=_warn, spans=None,
                summary: bool = False) -> tuple[list, tuple]:
    """The rows of a matrix job (columns of the results store), computed without a store; with
    ``summary``, the per-pair summary rows instead (batch.summary: the store's ``pairs`` table)."""
    jobs = jobs or os.cpu_count() or 1
    parsed, companions = unique_measures(_metric_list(metrics), warn, passages=True)
    settings = Settings(method=method, solver=solver, time_limit=time_limit, max_grade=max_grade, pad=pad,
                        residual=residual, limits=tuple(limits), strategy=None if strategy == "auto" else strategy,
                        fast=fast_path, ranges=ranges)
    if character_job(parsed, companions, spans):  # MED-U: passage runs (SPEC 8)
        check_character_settings(settings)
        runset = _passage_set(runs, qrels, spans, parsed, honour_rank)
        judgments = runset.judgments
        present = np.array([runset.has(i) for i in range(len(runset.names))])
    else:
        judgments = as_qrels(qrels)
        columns = _run_columns(runs, honour_rank, jobs)
        if len(columns) < 2:
            raise MedoptError("matrix needs at least two runs")
        for note in filter(None, (tie_note(c.name, c.tied) for c in columns)):
            warn(note)
        extra = [t for t, judged in judgments.items() if judged] if complete else ()
        runset = load_runset(None, judgments, max_grade=max_grade, columns=columns, extra_topics=extra)
        if len(set(runset.names)) != len(runset.names):
            raise MedoptError(f"two runs have the same name ({', '.join(runset.names)}): name them "
                              "(a dict name -> run)")
        present = np.array([length > 0 for length in runset.length])
    in_two = present.sum(axis=0) >= 2
    if not in_two.any() and not complete:
        raise MedoptError(f"no two of the {len(runset.names)} runs share a topic: nothing to compare")
    one_sided = 0 if complete else sum(int(np.count_nonzero(present[i] ^ present[j]))
                                       for i in range(len(present)) for j in range(i + 1, len(present)))
    if one_sided:
        warn(f"{one_sided} (pair, topic) combination(s) skipped: the topic is in only one run of the pair")
    chosen = chosen_topics(runset, in_two, judgments, qrels_source(qrels), complete=complete, topics=topics,
                           warn=warn)
    rows = collect_rows(runset, parsed, settings, engine=engine, jobs=jobs, topics=chosen,
                        complete=complete) if parsed else []
    rows += companion_store_rows(runset, companions, topics=chosen)[0]
    run_order = {name: i for i, name in enumerate(runset.names)}
    topic_order = {topic: i for i, topic in enumerate(sort_topics(runset.topics))}
    metric_order = {str(m): i for i, m in enumerate(parsed + companions)}
    rows.sort(key=lambda r: (run_order[r[0]], run_order[r[1]], topic_order[r[2]], metric_order[r[3]]))
    names = tuple(c for c in MATRIX_COLUMNS if (ranges or c not in MATRIX_RANGE_COLUMNS)
                  and (companions or c not in COMPANION_COLUMNS))
    records = [dict(zip(MATRIX_COLUMNS, row)) for row in rows]
    if summary:
        return pair_summary(records, runset), PAIR_COLUMNS
    return records, names


def matrix(runs, qrels=None, metrics=None, *, ranges: bool = False, jobs: int | None = None, engine: str = "local",
           method: str = "auto", solver=None, time_limit=None, max_grade=None, pad: str = "none",
           residual: bool = False, strategy=None, limits=(), honour_rank: bool = False, complete: bool = False,
           topics=None, fast_path: bool = True, spans=None, summary: bool = False):
    """MED for every unordered pair of ``runs`` x every topic the pair shares x every metric, as a pandas
    DataFrame with the columns of a ``medopt matrix`` results store (``run_a, run_b, topic, metric, method,
    solver, value, direction, certified, upper_bound, status, seconds, assignment, time_limit``; with
    ``ranges`` also ``low, high, low_bound, high_bound, low_certified, high_certified, low_assignment,
    high_assignment``; with a companion ``-m RBO(p=0.9)`` also ``rbo_min, rbo_residual, rbo_ext``, in rows of
    its own, method ``rbo``, no MED).  ``runs``: a dict name -> run in any accepted form, or a list of runs (TREC files
    are read as the command reads them).  ``jobs`` workers (default: every core; 1: this process);
    ``engine`` local or dask.  No store is written: rows are computed, sorted and returned.  Topics and
    G as for :func:`compare` (``complete``, ``topics``, ``max_grade``).  ``summary=True``: the per-pair
    summary instead, one row per pair, metric and method (``run_a, run_b, metric, method, topics,
    score_a, score_b, diff, judged_a, judged_b, med, certified, low, high, low_bound, high_bound,
    verdict``), what ``matrix --summary`` writes.

    MED-U (SPEC 8): ``U(L=..)`` metrics (alone), passage runs (8-column files, PassageRuns or dicts topic ->
    passages) and ``spans``; the assignment JSON is ``{docid: [[offset, length], ...]}``."""
    rows, columns = matrix_rows(runs, qrels, metrics, ranges=ranges, jobs=jobs, engine=engine, method=method,
                                solver=solver, time_limit=time_limit, max_grade=max_grade, pad=pad, residual=residual,
                                strategy=strategy, limits=limits, honour_rank=honour_rank, complete=complete,
                                topics=topics, summary=summary, fast_path=fast_path, spans=spans)
    return rows_frame(rows, columns)


__all__ = ["compare", "compare_rows", "matrix", "matrix_rows", "to_latex", "to_trec_eval", "format_output",
           "write_output", "OUTPUT_FORMATS", "COMPARE_COLUMNS", "RANGE_COLUMNS"]
