"""What one task of ``medopt matrix`` computes: its settings, its units, and the rows it returns.

A task is a list of *units*, each one pair of runs, one metric, one method and a block of topics.
Units the array kernels cover (closed forms, Alg. 1, the nDCG profile search, RR, Rprec) run as array
code over the whole block (:mod:`medopt.batch.blocks`); every other unit calls :func:`medopt.med` topic by
topic.  Tasks run in a worker (process pool, Dask) or in the main process; their rows go to the
store in :data:`medopt.io.store.COLUMNS` order.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from .. import api, methods
from ..metrics.companions import COMPANION_METHOD
from ..errors import MedoptError
from ..metrics import parse_metric
from ..core.result import range_direction
from .blocks import med_columns, range_columns
from ..io.store import RANGE_COLUMNS
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
    ranges: bool = False  # both ends of each difference range (SPEC 7), the MED from them

    def __post_init__(self):
        checked = methods.checked_options(self.options())  # the checks of methods.plan, before any work
        object.__setattr__(self, "time_limit", checked.get("time_limit"))
        object.__setattr__(self, "strategy", checked.get("strategy"))
        if self.method != "auto" and self.ranges:
            methods.check_ranges(methods.get(self.method))

    def options(self) -> dict:
        """The method options of each MED (methods.plan's ``options``)."""
        return {"solver": self.solver, "time_limit": self.time_limit, "strategy": self.strategy}


@dataclass
class Unit:
    run_a: int
    run_b: int
    metric: str
    method: str
    fast: bool
    topics: np.ndarray  # topic codes


def run_task(runset: RunSet, settings: Settings, task: list) -> list[tuple]:
    """The store rows of one task (tuples in medopt.io.store.COLUMNS order)."""
    rows = []
    for unit in task:
        metric = parse_metric(unit.metric)
        name_a, name_b = runset.names[unit.run_a], runset.names[unit.run_b]
        if unit.fast:
            started = time.perf_counter()
            if settings.ranges:
                topics, *ends = range_columns(runset, unit.run_a, unit.run_b, metric, unit.topics, unit.method)
                seconds = (time.perf_counter() - started) / max(len(topics), 1)
                rows.extend(_range_row(name_a, name_b, topic, unit, "numpy", low, high, low_bound, high_bound,
                                       low_certified, high_certified, status, seconds, low_json, high_json, None)
                            for topic, low, high, low_bound, high_bound, low_certified, high_certified, status,
                            low_json, high_json in zip(topics, *ends))
                continue
            topics, values, directions, certified, bounds, statuses, assignments = med_columns(
                runset, unit.run_a, unit.run_b, metric, unit.method, unit.topics)
            seconds = (time.perf_counter() - started) / max(len(topics), 1)
            same = lambda value: repeat(value, len(topics))  # noqa: E731
            nothing = (None,) * len(RANGE_COLUMNS)
            rows.extend(row + nothing for row in zip(
                same(name_a), same(name_b), topics, same(unit.metric), same(unit.method), same("numpy"), values,
                directions, certified, bounds, statuses, same(seconds), assignments, same(None)))
            continue
        ask = api.difference_range if settings.ranges else api.med
        for t in unit.topics.tolist():
            topic = runset.topics[t]
            try:
                result = ask(metric, runset.ranking(unit.run_a, t), runset.ranking(unit.run_b, t),
                             runset.judgments(t), max_grade=int(runset.max_grade[t]), method=unit.method,
                             solver=settings.solver, time_limit=settings.time_limit, pad=settings.pad,
                             residual=settings.residual, limits=settings.limits, strategy=settings.strategy)
            except MedoptError as error:  # the message names the pair, the topic and the metric
                raise MedoptError(f"{name_a} vs {name_b}, topic {topic}, {unit.metric}: {error}") from None
            if settings.ranges:
                rows.append(_range_row(name_a, name_b, topic, unit, result.solver, result.low, result.high,
                                       result.low_bound, result.high_bound, result.low_certified,
                                       result.high_certified, result.status, result.seconds,
                                       positive_grades(result.low_assignment),
                                       positive_grades(result.high_assignment), settings.time_limit))
                continue
            rows.append((name_a, name_b, topic, unit.metric, unit.method, result.solver, result.value,
                         result.direction, result.certified, result.upper_bound, result.status, result.seconds,
                         positive_grades(result.assignment), settings.time_limit) + (None,) * len(RANGE_COLUMNS))
    return rows


def positive_grades(assignment: dict) -> str:
    """The store's assignment JSON: the unjudged documents given a positive grade."""
    return json.dumps({d: g for d, g in assignment.items() if g > 0}, separators=(",", ":"))


def _range_row(name_a, name_b, topic, unit: Unit, solver, low, high, low_bound, high_bound, low_certified,
               high_certified, status, seconds, low_json, high_json, time_limit) -> tuple:
    """A store row of a difference range: the MED columns from its ends (MED = max(high, -low), the
    direction of the larger, certified when both ends are), then the ends themselves."""
    direction = range_direction(low, high)
    return (name_a, name_b, topic, unit.metric, unit.method, solver, max(high, -low), direction,
            low_certified and high_certified, max(high_bound, -low_bound), status, seconds,
            high_json if direction == "a" else low_json, time_limit,
            low, high, low_bound, high_bound, low_certified, high_certified, low_json, high_json)


def companion_rows(runset: RunSet, companions, store=None, topics: np.ndarray | None = None) -> tuple[list, int]:
    """Store rows of the companion measures (RBO, SPEC 9) for every unordered pair x common topic: method
    ``rbo``, status ``companion``, no MED; computed here, in the main process (a pass over two lists per
    row); rows ``store`` holds already are left out, and counted (the second value)."""
    rows, held = [], 0
    for i in range(len(runset.names)):
        for j in range(i + 1, len(runset.names)):
            common = runset.common_topics(i, j)
            if topics is not None:
                common = common[topics[common]]
            a, b = store.pair_order(runset.names, i, j) if store else (i, j)
            for companion in companions:
                metric = str(companion)
                stored = store.stored_topics(runset.names[a], runset.names[b], metric) if store else set()
                for t in common.tolist():
                    topic = runset.topics[t]
                    if (topic, COMPANION_METHOD) in stored:
                        held += 1
                        continue
                    started = time.perf_counter()
                    value = companion.evaluate(runset.ranking(a, t), runset.ranking(b, t))
                    rows.append((runset.names[a], runset.names[b], topic, metric, COMPANION_METHOD, None, None, None,
                                 None, None, "companion", time.perf_counter() - started, None, None)
                                + (None,) * len(RANGE_COLUMNS) + tuple(value))
    return rows, held
