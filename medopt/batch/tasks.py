"""What one task of ``medopt matrix`` computes: its settings, its units, and the rows it returns.

A task is a list of *units*, each one pair of runs, one metric, one method and a block of topics.
Units the closed forms cover run as array code over the whole block (:mod:`medopt.batch.fastpath`);
every other unit calls :func:`medopt.med` topic by topic.  Tasks run in a worker (process pool,
Dask) or in the main process; their rows go to the store in :data:`medopt.store.COLUMNS` order.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from .. import api
from ..errors import MedoptError
from ..metrics import parse_metric
from .fastpath import med_columns
from .runset import RunSet


@dataclass(frozen=True)
class Settings:
    """How each MED is computed (the options of :func:`medopt.med`)."""

    method: str = "auto"
    solver: str | None = None
    time_limit: float | None = None  # seconds per MED; None: no limit
    max_grade: int | None = None
    pad: str = "none"
    residual: bool = False
    limits: tuple = ()
    strategy: str | None = None
    fast: bool = True  # array kernels where a closed form applies

    def __post_init__(self):
        limit = self.time_limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))
                                  or not math.isfinite(limit) or limit <= 0):
            raise MedoptError(f"time limit must be a positive number of seconds, got {limit!r}")


@dataclass
class Unit:
    run_a: int
    run_b: int
    metric: str
    method: str
    fast: bool
    topics: np.ndarray  # topic codes


def run_task(runset: RunSet, settings: Settings, task: list) -> list[tuple]:
    """The store rows of one task (tuples in medopt.store.COLUMNS order)."""
    rows = []
    for unit in task:
        metric = parse_metric(unit.metric)
        name_a, name_b = runset.names[unit.run_a], runset.names[unit.run_b]
        if unit.fast:
            started = time.perf_counter()
            topics, values, directions, certified, bounds, statuses, assignments = med_columns(
                runset, unit.run_a, unit.run_b, metric, unit.method, unit.topics)
            seconds = (time.perf_counter() - started) / max(len(topics), 1)
            same = lambda value: repeat(value, len(topics))  # noqa: E731
            rows.extend(zip(same(name_a), same(name_b), topics, same(unit.metric), same(unit.method), same("numpy"),
                            values, directions, certified, bounds, statuses, same(seconds), assignments,
                            same(None)))
            continue
        options = {"strategy": settings.strategy} if settings.strategy else {}
        for t in unit.topics.tolist():
            topic = runset.topics[t]
            try:
                result = api.med(metric, runset.ranking(unit.run_a, t), runset.ranking(unit.run_b, t),
                                 runset.judgments(t), max_grade=int(runset.max_grade[t]), method=unit.method,
                                 solver=settings.solver, time_limit=settings.time_limit, pad=settings.pad,
                                 residual=settings.residual, limits=settings.limits, **options)
            except MedoptError as error:  # the message names the pair, the topic and the metric
                raise MedoptError(f"{name_a} vs {name_b}, topic {topic}, {unit.metric}: {error}") from None
            assignment = json.dumps({d: g for d, g in result.assignment.items() if g > 0}, separators=(",", ":"))
            rows.append((name_a, name_b, topic, unit.metric, unit.method, result.solver, result.value,
                         result.direction, result.certified, result.upper_bound, result.status, result.seconds,
                         assignment, settings.time_limit))
    return rows
