"""``medopt.matrix``: every pair of many runs, as the rows of a matrix store (or its per-pair summary),
computed without a store by the batch engine."""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from ..batch import Settings, collect_rows, unique_measures
from ..batch.engines import read_runs
from ..batch.matrix import check_run_count, shared_topics
from ..batch.runset import chosen_topics
from ..batch.passageset import character_job, check_character_settings, passage_set
from ..batch.runset import columns_from_rankings, load_runset, read_run_columns
from ..batch.summary import pair_summary
from ..batch.tasks import companion_rows as companion_store_rows
from ..errors import MedoptError
from ..io.frames import as_qrels, as_run, qrels_source
from ..io.results import rows_frame
from ..io.store import COLUMNS as MATRIX_COLUMNS, COMPANION_COLUMNS, PAIR_COLUMNS, RANGE_COLUMNS as MATRIX_RANGE_COLUMNS
from ..io.trec import Run, sort_topics, tie_note
from ..io.topics import unretrieved_topics
from ..core.significance import SUMMARY_COLUMNS as SIGNIFICANCE_COLUMNS, wants_ranges
from ..flip.columns import FLIP_COLUMNS, pair_flips
from .compare import _metric_list, _passage_inputs, _passage_run, _warn




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
    check_run_count(len(items))
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
                summary: bool = False, flip: bool = False, labels=None, scope: str = "unjudged",
                test: str | None = None, alpha: float = 0.05, correction: str = "none") -> tuple[list, tuple]:
    """The rows of a matrix job (columns of the results store), computed without a store; with
    ``summary``, the per-pair summary rows instead (batch.summary: the store's ``pairs`` table), with
    ``flip`` the flip columns (SPEC 11), with ``test`` (SPEC 12; implies ranges) ``p_reference, p_worst,
    robust``, ``correction`` over the pairs."""
    jobs = jobs or os.cpu_count() or 1
    ranges = wants_ranges(test, alpha, correction) or ranges  # SPEC 12 needs the ranges
    parsed, companions = unique_measures(_metric_list(metrics), warn, passages=True)
    settings = Settings(method=method, solver=solver, time_limit=time_limit, max_grade=max_grade, pad=pad,
                        residual=residual, limits=tuple(limits), strategy=strategy,
                        fast=fast_path, ranges=ranges)
    if character_job(parsed, companions, spans):  # MED-U: passage runs (SPEC 8)
        check_character_settings(settings)
        runset = _passage_set(runs, qrels, spans, parsed, honour_rank)
        judgments = runset.judgments
        present = np.array([runset.has(i) for i in range(len(runset.names))])
    else:
        judgments = as_qrels(qrels)
        columns = _run_columns(runs, honour_rank, jobs)
        check_run_count(len(columns))
        for note in filter(None, (tie_note(c.name, c.tied) for c in columns)):
            warn(note)
        extra = unretrieved_topics(judgments, complete)
        runset = load_runset(None, judgments, max_grade=max_grade, columns=columns, extra_topics=extra)
        present = np.array([length > 0 for length in runset.length])
    in_two = shared_topics(runset, complete)
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
        pairs = pair_summary(records, runset, test=test, alpha=alpha, correction=correction)
        columns = PAIR_COLUMNS + (SIGNIFICANCE_COLUMNS if test is not None else ())
        if flip:
            if character_job(parsed, companions, spans):
                raise MedoptError("flip distances take document metrics, not passage metrics (U)")
            named = {name: Run(name, name, {topic: runset.ranking(i, t) for t, topic in enumerate(runset.topics)
                                            if runset.ranking(i, t)}) for i, name in enumerate(runset.names)}
            return pair_flips(pairs, named, judgments if qrels is not None else None, warn=warn, labels=labels,
                              scope=scope, max_grade=max_grade, time_limit=time_limit, complete=complete,
                              topics=topics), columns + FLIP_COLUMNS
        return pairs, columns
    if flip or test is not None:
        raise MedoptError("flip distances and significance are in the per-pair summary: give summary=True")
    return records, names


def matrix(runs, qrels=None, metrics=None, *, ranges: bool = False, jobs: int | None = None, engine: str = "local",
           method: str = "auto", solver=None, time_limit=None, max_grade=None, pad: str = "none",
           residual: bool = False, strategy=None, limits=(), honour_rank: bool = False, complete: bool = False,
           topics=None, fast_path: bool = True, spans=None, summary: bool = False, flip: bool = False, labels=None,
           scope: str = "unjudged", test: str | None = None, alpha: float = 0.05, correction: str = "none"):
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
    verdict``), what ``matrix --summary`` writes; with ``flip=True`` also ``flip_distance, flip_documents,
    flip_certified`` per pair (SPEC 11, ``labels`` and ``scope`` as for :func:`compare`); with ``test="t"``
    or ``"sign"`` (SPEC 12, implies ranges) also ``p_reference, p_worst, robust`` at ``alpha``, adjusted over
    the pairs of each metric by ``correction`` ("holm" or "bonferroni", as PyTerrier's ``correction=``).

    MED-U (SPEC 8): ``U(L=..)`` metrics (alone), passage runs (8-column files, PassageRuns or dicts topic ->
    passages) and ``spans``; the assignment JSON is ``{docid: [[offset, length], ...]}``."""
    rows, columns = matrix_rows(runs, qrels, metrics, ranges=ranges, jobs=jobs, engine=engine, method=method,
                                solver=solver, time_limit=time_limit, max_grade=max_grade, pad=pad, residual=residual,
                                strategy=strategy, limits=limits, honour_rank=honour_rank, complete=complete,
                                topics=topics, summary=summary, fast_path=fast_path, spans=spans, flip=flip,
                                labels=labels, scope=scope, test=test, alpha=alpha, correction=correction)
    return rows_frame(rows, columns)


__all__ = ["matrix", "matrix_rows"]
