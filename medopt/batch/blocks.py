"""Which array kernel computes a block of topics for ``medopt matrix``: those of :mod:`medopt.batch.fastpath`
(closed forms, Alg. 1, the nDCG profile search) and the kernels of one metric family each, RR
(:mod:`medopt.batch.fastpath_rr`) and Rprec (:mod:`medopt.batch.fastpath_rprec`).  One table: the planner
(batch.matrix) asks it which methods have a kernel, the tasks (batch.tasks) which function to call."""

from __future__ import annotations

import numpy as np

from . import fastpath
from .fastpath_rprec import rprec_med_columns, rprec_range_columns
from .fastpath_rr import rr_med_columns, rr_range_columns
from .runset import RunSet

# method -> (MED columns, range columns), each (runset, run_a, run_b, metric, topics)
FAMILY_KERNELS = {"rr": (rr_med_columns, rr_range_columns), "rprec": (rprec_med_columns, rprec_range_columns)}
KERNEL_METHODS = fastpath.KERNEL_METHODS + tuple(FAMILY_KERNELS)
RANGE_KERNELS = fastpath.RANGE_KERNELS + tuple(FAMILY_KERNELS)  # those that give both ends of a range


def med_columns(runset: RunSet, run_a: int, run_b: int, metric, method: str, topics: np.ndarray) -> tuple:
    """:func:`medopt.batch.fastpath.med_columns`'s lists, for every method of KERNEL_METHODS."""
    if method in FAMILY_KERNELS:
        return FAMILY_KERNELS[method][0](runset, run_a, run_b, metric, np.asarray(topics, dtype=np.int64))
    return fastpath.med_columns(runset, run_a, run_b, metric, method, topics)


def med_rows(runset: RunSet, run_a: int, run_b: int, metric, method: str, topics: np.ndarray) -> list[tuple]:
    """``(topic, value, direction, certified, upper_bound, status, assignment_json)`` for each topic code."""
    return list(zip(*med_columns(runset, run_a, run_b, metric, method, topics)))


def range_columns(runset: RunSet, run_a: int, run_b: int, metric, topics: np.ndarray,
                  method: str = "closed-form") -> tuple:
    """:func:`medopt.batch.fastpath.range_columns`'s lists, for every method of RANGE_KERNELS."""
    if method in FAMILY_KERNELS:
        return FAMILY_KERNELS[method][1](runset, run_a, run_b, metric, np.asarray(topics, dtype=np.int64))
    return fastpath.range_columns(runset, run_a, run_b, metric, topics, method)
