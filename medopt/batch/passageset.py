"""MED-U in ``medopt matrix`` (SPEC 8): many passage runs, their qrels and spans, planned into units and
computed topic by topic through :func:`medopt.api.med` / :func:`medopt.api.difference_range` (the closed
form over characters, milliseconds a topic pair).

A job is character-level when its metrics are (``U(L=..)``); it then holds no document metric and no
companion (refused before any store is made).  The rows have the store's columns; ``method`` is the
character method (``closed-form``), and the assignment JSON is ``{docid: [[offset, length], ...]}``: the
unknown characters set relevant, as merged runs of characters (judged characters are not listed, their
relevance is fixed by the spans).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import numpy as np

from .. import api, methods
from ..errors import MedoptError, option
from ..io.passages import read_passage_run
from ..io.trec import sort_topics
from ..metrics import is_character_metric, parse_metric
from ..io.store import RANGE_COLUMNS
from .tasks import Settings, Unit, _range_row, run_task


@dataclass
class PassageSet:
    """Passage runs as ``medopt matrix`` plans them: ``passages[i]`` maps topic -> passages of run ``i``;
    topic codes index ``topics`` (every topic of every run, in topic order)."""

    names: list
    paths: list
    passages: list
    judgments: dict
    spans: dict
    topics: list
    characters: bool = True  # what task_rows dispatches on

    def has(self, i: int) -> np.ndarray:
        return np.array([topic in self.passages[i] for topic in self.topics], dtype=bool)

    def common_topics(self, i: int, j: int) -> np.ndarray:
        return np.flatnonzero(self.has(i) & self.has(j))


def passage_set(runs: list, judgments: dict, spans: dict) -> PassageSet:
    """A PassageSet of ``runs``: (name, path, topic -> passages) triples."""
    names = [name for name, _, _ in runs]
    if len(set(names)) != len(names):
        raise MedoptError(f"two passage runs have the same name ({', '.join(names)}): give each run a distinct "
                          "runid or file name")
    topics = sort_topics({topic for _, _, passages in runs for topic in passages})
    return PassageSet(names, [path for _, path, _ in runs], [dict(passages) for _, _, passages in runs],
                      judgments, spans, list(topics))


def read_passage_set(paths, judgments: dict, spans: dict, *, honour_rank: bool = False) -> PassageSet:
    """Passage run files (8 columns; a malformed line: an InputFormatError naming file and line)."""
    read = [read_passage_run(path, honour_rank=honour_rank) for path in paths]
    return passage_set([(run.name, run.path, run.passages) for run in read], judgments, spans)


def character_job(metrics: list, companions: list, spans) -> bool:
    """Whether a job computes MED-U; a job mixing it with document metrics or companions is refused,
    and so are spans without a character-level metric."""
    characters = [str(m) for m in metrics if is_character_metric(m)]
    documents = [str(m) for m in metrics if not is_character_metric(m)]
    if characters and (documents or companions):
        others = ", ".join(documents + [str(c) for c in companions])
        raise MedoptError(f"{', '.join(characters)} scores passage runs: a matrix job computes it alone, not with "
                          f"{others} (run those in a job of their own, on document runs)")
    if spans is not None and not characters:
        raise MedoptError(f"{option('spans', None)} goes with passage metrics (U(L=..)), not "
                          f"{', '.join(documents) or 'none'}")
    return bool(characters)


def check_character_settings(settings: Settings) -> None:
    """Refuse the options of the document methods (U: binary characters, the closed form)."""
    given = [option(name, None) for name, value in (
        ("solver", settings.solver), ("max_grade", settings.max_grade), ("pad", None if settings.pad == "none" else
                                                                          settings.pad),
        ("residual", settings.residual or None), ("limits", settings.limits or None), ("strategy", settings.strategy))
        if value]
    if given:
        raise MedoptError(f"U(L=..) takes no {', '.join(given)} (SPEC 8: binary characters; the closed form)")
    methods.character_method(settings.method, "U(L=..)")


def plan_passages(plan, pset: PassageSet, metrics: list, settings: Settings, store, *, jobs: int, rows: int,
                  topics: np.ndarray | None = None, retry: bool = False):
    """Fill ``plan`` (a :class:`medopt.batch.matrix.Plan`) with the units the store lacks, in tasks of about
    ``rows`` rows (fewer when that keeps every worker busy)."""
    method = methods.character_method(settings.method, "U(L=..)")
    units = []
    n = len(pset.names)
    for i in range(n):
        for j in range(i + 1, n):
            common = pset.common_topics(i, j)
            plan.one_sided += int(np.count_nonzero(pset.has(i) | pset.has(j))) - len(common)
            a, b = store.pair_order(pset.names, i, j) if store else (i, j)
            if topics is not None:
                common = common[topics[common]]
            for metric in metrics:
                stored, again = store.stored_and_retried(pset.names[a], pset.names[b], str(metric), retry=retry) \
                    if store else (set(), set())
                keep = [t for t in common.tolist() if (pset.topics[t], method) not in stored]
                plan.stored += len(common) - len(keep)
                plan.retried += sum((pset.topics[t], method) in again for t in keep)
                if keep:
                    units.append(Unit(a, b, str(metric), method, False, np.array(keep, np.int64)))
                    plan.rows += len(keep)
    size = max(1, min(rows, math.ceil(plan.rows / max(4 * jobs, 1))))
    plan.tasks = [[Unit(u.run_a, u.run_b, u.metric, u.method, False, u.topics[k:k + size])]
                  for u in units for k in range(0, len(u.topics), size)]
    return plan


def character_runs(assignment) -> str:
    """The store's assignment JSON of MED-U: ``{docid: [[offset, length], ...]}``."""
    return json.dumps({doc: [[int(o), int(n)] for o, n in runs] for doc, runs in (assignment or {}).items() if runs},
                      separators=(",", ":"))


def task_rows(runset, settings: Settings, task: list) -> list[tuple]:
    """The store rows of one task: :func:`passage_rows` for a PassageSet, else :func:`tasks.run_task`."""
    if getattr(runset, "characters", False):
        return passage_rows(runset, settings, task)
    return run_task(runset, settings, task)


def passage_rows(pset: PassageSet, settings: Settings, task: list) -> list[tuple]:
    """The store rows of one task of a MED-U job."""
    rows = []
    ask = api.difference_range if settings.ranges else api.med
    for unit in task:
        metric = parse_metric(unit.metric)
        name_a, name_b = pset.names[unit.run_a], pset.names[unit.run_b]
        for t in unit.topics.tolist():
            topic = pset.topics[t]
            started = time.perf_counter()
            try:
                result = ask(metric, pset.passages[unit.run_a][topic], pset.passages[unit.run_b][topic],
                             pset.judgments.get(topic, {}), spans=pset.spans.get(topic, {}), method=unit.method,
                             time_limit=settings.time_limit)
            except MedoptError as error:  # the message names the pair, the topic and the metric
                raise MedoptError(f"{name_a} vs {name_b}, topic {topic}, {unit.metric}: {error}") from None
            seconds = time.perf_counter() - started
            if settings.ranges:
                rows.append(_range_row(name_a, name_b, topic, unit, result.solver, result.low, result.high,
                                       result.low_bound, result.high_bound, result.low_certified,
                                       result.high_certified, result.status, seconds,
                                       character_runs(result.low_assignment), character_runs(result.high_assignment),
                                       settings.time_limit))
                continue
            rows.append((name_a, name_b, topic, unit.metric, unit.method, result.solver, result.value,
                         result.direction, result.certified, result.upper_bound, result.status, seconds,
                         character_runs(result.assignment), settings.time_limit) + (None,) * len(RANGE_COLUMNS))
    return rows
