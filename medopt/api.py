"""The Python API: ``medopt.med`` and ``medopt.score``."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from .errors import MedoptError
from .heuristics.alg1 import alg1
from .heuristics.closed_form import closed_form, supports as closed_form_applies
from .heuristics.greedy import greedy
from .heuristics.tabu import tabu
from .heuristics.tc_err import tc_err
from .instance import Instance, RelevanceLimit, build_instance
from .metrics import Grading, default_max_grade, parse_metric
from .result import MedResult
from .solvers.enumerate import DEFAULT_MAX_ASSIGNMENTS, enumerate_med

METHODS: dict[str, Callable[..., MedResult]] = {
    "closed-form": lambda inst, **kw: closed_form(inst),
    "alg1": lambda inst, **kw: alg1(inst),
    "enumerate": lambda inst, **kw: enumerate_med(inst, **_only(kw, "max_assignments")),
    "greedy": lambda inst, **kw: greedy(inst),
    "tabu": lambda inst, **kw: tabu(inst, **_only(kw, "seed", "iterations", "tenure", "restarts")),
    "tc-err": lambda inst, **kw: tc_err(inst, **_only(kw, "p", "depth")),
    "exact": lambda inst, **kw: _exact(inst, **kw),
}


def _only(options: dict, *names: str) -> dict:
    return {k: v for k, v in options.items() if k in names and v is not None}


def register_method(name: str, function: Callable[..., MedResult]) -> None:
    """Add a method (exact solvers and heuristics register themselves here)."""
    METHODS[name] = function


def auto_method(instance: Instance) -> str:
    """The best available exact method for this instance."""
    if closed_form_applies(instance):
        return "closed-form"
    if instance.metric.family == "nDCG" and instance.max_grade == 1 and not instance.limits:
        return "alg1"
    if "exact" in METHODS:
        return "exact"
    return "enumerate"


def med(metric, a: Sequence[str], b: Sequence[str], judgments: Mapping[str, int] | None = None, *,
        max_grade: int | None = None, gains: Mapping[int, float] | None = None, method: str = "auto",
        solver: str | None = None, time_limit: float | None = None, pad: str = "none",
        residual: bool = False, limits: Sequence[RelevanceLimit] = (), **options) -> MedResult:
    """Maximized effectiveness difference of rankings ``a`` and ``b`` under ``metric``.

    ``judgments`` maps doc id -> grade (absent: unjudged).  ``method`` is one of
    ``auto`` (the best exact method available), or a name in ``medopt.api.METHODS``.
    """
    instance = build_instance(metric, a, b, judgments, max_grade=max_grade, gains=gains, pad=pad,
                              residual=residual, limits=limits)
    if time_limit is not None and (not isinstance(time_limit, (int, float)) or time_limit <= 0):
        raise MedoptError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    name = auto_method(instance) if method == "auto" else method
    if name not in METHODS:
        raise MedoptError(f"unknown method {method!r}; available: auto, {', '.join(sorted(METHODS))}")
    return METHODS[name](instance, solver=solver, time_limit=time_limit, **options)


def score(metric, ranking: Sequence[str], grades: Mapping[str, int], *, max_grade: int | None = None,
          gains: Mapping[int, float] | None = None) -> float:
    """Score of one ranking when the collection's documents have ``grades`` (absent: grade 0)."""
    metric = parse_metric(metric)
    instance = build_instance(metric, ranking, (), grades, max_grade=max_grade, gains=gains)
    return metric.score(instance.full_a, instance.judgments, instance.grading)


def _exact(instance, **options):
    from .solvers.exact import exact  # Pyomo and the solvers load only when an exact method runs
    return exact(instance, **options)
