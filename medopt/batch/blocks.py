"""Which array kernel computes a block of topics for ``medopt matrix``: those of :mod:`medopt.batch.fastpath`
(closed forms, Alg. 1, the nDCG profile search) and the kernels of one metric family each, RR
(:mod:`medopt.batch.fastpath_rr`) and Rprec (:mod:`medopt.batch.fastpath_rprec`).  One table: the planner
(batch.matrix) asks it which methods have a kernel, the tasks (batch.tasks) which function to call."""

from __future__ import annotations

import numpy as np

from . import fastpath
from .fastpath import _directions, _names
from .fastpath_rprec import rprec_ends
from .fastpath_rr import rr_ends
from .runset import RunSet

# method -> its two directions' proven ends over a block of topics, (runset, run_a, run_b, metric, topics) ->
# (max M(A) - M(B), max M(B) - M(A), their assignments' JSON): the values are exact, so each is its own bound
FAMILY_KERNELS = {"rr": rr_ends, "rprec": rprec_ends}
KERNEL_METHODS = fastpath.KERNEL_METHODS + tuple(FAMILY_KERNELS)
RANGE_KERNELS = fastpath.RANGE_KERNELS + tuple(FAMILY_KERNELS)  # those that give both ends of a range


def med_columns(runset: RunSet, run_a: int, run_b: int, metric, method: str, topics: np.ndarray) -> tuple:
    """:func:`medopt.batch.fastpath.med_columns`'s lists, for every method of KERNEL_METHODS."""
    if method in FAMILY_KERNELS:  # the larger direction (b only when strictly larger), certified
        topics = np.asarray(topics, dtype=np.int64)
        value_a, value_b, json_a, json_b = FAMILY_KERNELS[method](runset, run_a, run_b, metric, topics)
        n, direction_b = len(topics), value_b > value_a
        values = np.where(direction_b, value_b, value_a).tolist()
        assignments = [json_b[i] if flip else json_a[i] for i, flip in enumerate(direction_b.tolist())]
        return (_names(runset, topics), values, _directions(direction_b), [True] * n, values, ["optimal"] * n,
                assignments)
    return fastpath.med_columns(runset, run_a, run_b, metric, method, topics)


def med_rows(runset: RunSet, run_a: int, run_b: int, metric, method: str, topics: np.ndarray) -> list[tuple]:
    """``(topic, value, direction, certified, upper_bound, status, assignment_json)`` for each topic code."""
    return list(zip(*med_columns(runset, run_a, run_b, metric, method, topics)))


def range_columns(runset: RunSet, run_a: int, run_b: int, metric, topics: np.ndarray,
                  method: str = "closed-form") -> tuple:
    """:func:`medopt.batch.fastpath.range_columns`'s lists, for every method of RANGE_KERNELS."""
    if method in FAMILY_KERNELS:  # low = -max M(B) - M(A), high = max M(A) - M(B), both certified
        topics = np.asarray(topics, dtype=np.int64)
        value_a, value_b, json_a, json_b = FAMILY_KERNELS[method](runset, run_a, run_b, metric, topics)
        n = len(topics)
        low, high = (-value_b).tolist(), value_a.tolist()
        return (_names(runset, topics), low, high, low, high, [True] * n, [True] * n, ["optimal"] * n, json_b, json_a)
    return fastpath.range_columns(runset, run_a, run_b, metric, topics, method)
