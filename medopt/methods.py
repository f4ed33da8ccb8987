"""The method registry: every way medopt computes MED, each declaring what it supports.

A method declares the metrics it computes MED for (``computes``), what else an instance must
satisfy (``accepts``: None, or why not), whether its answer is exact on an instance (``exact_on``:
only then can it be certified on its own), the options it takes, and whether it is cheap enough
to seed the exact search (``warm_start``).  ``auto``, ``medopt.med``, ``medopt matrix`` and
``medopt certify`` all ask this registry; nothing else decides which method fits which metric.

``auto`` takes the first method, in registry order, that computes the metric, accepts the
instance and is exact on it: the closed form (the dot products, Success@k, R@k), then Alg. 1
(binary nDCG), then the nDCG profile search (nDCG without limits, any grades), then the kernels
(RR and Rprec without limits: kernels/rr.py, rprec.py), then the exact models, then enumeration.

A method may also declare its *batch kernel* (``kernel``): the array kernel of ``medopt matrix``
(batch/fastpath.py) that computes the same values on a block of topics, and on which instances it
does.  ``plan(instance, options)`` makes every choice for one request, once: the method, its kernel,
the solver and the strategy, with the options checked (docs/explanation/decisions.md); the API,
the batch planner and certify (through the API) all ask it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Mapping

from .core.deadlines import time_limit_seconds
from .errors import MedoptError
from .exact.enumeration import DEFAULT_MAX_ASSIGNMENTS, enumerate_med, enumerate_range
from .heuristics.alg1 import alg1
from .heuristics.closed_form import closed_form, closed_form_range, has_closed_form
from .heuristics.closed_form_u import closed_form_u, closed_form_u_range
from .heuristics.greedy import greedy
from .heuristics.greedy_pairs import greedy_pairs
from .heuristics.ndcg_profiles import ndcg_profiles, ndcg_profiles_range, too_large
from .heuristics.tabu import tabu
from .heuristics.tc_err import tc_err
from .kernels.rprec import rprec_med, rprec_range
from .kernels.rr import rr_med, rr_range
from .core.instance import Instance
from .core.passage_instance import PassageInstance
from .metrics import Metric
from .core.result import MedResult, RangeResult

# accepted by every method: the exact solver, enumeration, the nDCG profile search, greedy, tabu, tc-err
# and greedy-pairs honour it (each stops when it is up and returns the best found, uncertified); the
# closed forms and Alg. 1 take no time worth limiting
ACCEPTED_BY_ALL = ("time_limit",)

# a batch kernel runs without a deadline or the memory ceiling: the profile search's loops over the grades
# for a whole block of topics; above this many grades each topic goes through medopt.med, under both
FAST_PROFILE_GRADES = 10_000


@dataclass(frozen=True)
class Kernel:
    """A method's batch kernel: the array kernel (batch/fastpath.py, by ``name``) that computes, for a
    block of topics at once, what the method computes per instance, on the instances ``covers``
    accepts (a plain instance: no padding, residual or limits, which plan() checks for every kernel)."""

    name: str
    covers: Callable[[Instance], bool] = lambda instance: True
    ranges: bool = False                          # it gives both ends of a range too


@dataclass(frozen=True)
class Method:
    name: str
    run: Callable[..., MedResult]                 # run(instance, **options)
    computes: Callable[[Metric], bool]            # the metrics it computes MED for
    exact_on: Callable[[Instance], bool]          # exact (certifiable on its own) on this instance
    accepts: Callable[[Instance], str | None] = lambda instance: None  # None, or why it refuses
    options: tuple[str, ...] = ()
    warm_start: bool = False                      # a cheap lower bound that seeds the exact search
    summary: str = ""
    ranges: Callable[..., RangeResult] | None = None  # ranges(instance, **options): both ends (SPEC 7)
    kernel: Kernel | None = None                  # its batch kernel, if any

    def supports(self, instance: Instance) -> str | None:
        """None when the method can run on ``instance``, else why not."""
        if not self.computes(instance.metric):
            return f"method {self.name!r} does not compute MED for {instance.metric}"
        reason = self.accepts(instance)
        return None if reason is None else f"method {self.name!r} cannot compute MED[{instance.metric}]: {reason}"


def no_limits(instance: Instance) -> str | None:
    return "it does not support relevance limits" if instance.limits else None


def no_limits_and_fits(instance: Instance) -> str | None:
    return no_limits(instance) or too_large(instance)


def is_dot_product(metric: Metric) -> bool:
    """sum_i W(i) u(grade_i): the metric gives rank weights and a unit gain (P, DCG, SDCG, RBP)."""
    return hasattr(metric, "rank_weights") and hasattr(metric, "unit_gain")


def closed_form_computes(metric: Metric) -> bool:
    """A dot product, or a family with a closed form of its own (Success@k, R@k: metrics/success.py, recall.py)."""
    return is_dot_product(metric) or has_closed_form(metric)


def family_in(*families: str) -> Callable[[Metric], bool]:
    return lambda metric: metric.family in families


def has_formulation(metric: Metric) -> bool:
    """Whether an exact model exists for the metric: formulations.formulation_for, the one lookup."""
    from .formulations import formulation_for  # Pyomo loads only once an exact model is asked for
    try:
        formulation_for(metric)
    except MedoptError:
        return False
    return True


def _warm_starts(instance: Instance) -> list:
    return [m.run for m in REGISTRY.values() if m.warm_start and m.supports(instance) is None]


DEFAULT_SOLVER = "highs"  # the exact method's solver where the formulation prefers none


def exact_settings(instance: Instance, solver: str | None = None, strategy: str | None = None) -> tuple[str, str]:
    """The exact method's solver and strategy for ``instance``, the one place their defaults are
    decided: the solver asked for, else the formulation's preferred one (AP from ``cpsat_depth``:
    CP-SAT), else DEFAULT_SOLVER; the strategy asked for (checked against those the formulation offers
    on this instance and that solver), else the last it offers (its usually fastest)."""
    from .exact.driver import available_strategies  # Pyomo and the solvers load only when needed
    from .formulations import formulation_for  # (as above)
    from .solvers import SOLVERS  # (as above)

    formulation = formulation_for(instance.metric)
    solver = solver or formulation.preferred_solver(instance) or DEFAULT_SOLVER
    if solver not in SOLVERS:
        raise MedoptError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    available = available_strategies(formulation, instance, solver)
    strategy = asked_strategy(strategy) or available[-1]
    if strategy not in available:
        needs_highs = f" with {solver} (its model has continuous variables: use highs)" \
            if strategy in formulation.continuous else ""
        raise MedoptError(f"{instance.metric}: strategy {strategy!r} not available{needs_highs} "
                          f"(choose from {', '.join(available)})")
    return solver, strategy


def _exact(instance: Instance, solver: str | None = None, strategy: str | None = None, **options) -> MedResult:
    """The exact driver on exact_settings' solver and strategy, seeded by every warm-start heuristic
    that runs on the instance."""
    from .exact.driver import exact as exact_solve  # Pyomo and the solvers load only when needed
    solver, chosen = exact_settings(instance, solver, strategy)
    return exact_solve(instance, solver=solver, strategy=chosen, warm_starts=_warm_starts(instance), **options)


def _exact_range(instance: Instance, solver: str | None = None, strategy: str | None = None,
                 **options) -> RangeResult:
    """Both ends by the exact driver (as _exact), each direction seeded by the warm-start heuristics' answers."""
    from .exact.driver import exact_range  # Pyomo and the solvers load only when needed
    solver, chosen = exact_settings(instance, solver, strategy)
    return exact_range(instance, solver=solver, strategy=chosen, warm_starts=_warm_starts(instance),
                       strategy_given=asked_strategy(strategy) is not None, **options)


REGISTRY: dict[str, Method] = {m.name: m for m in (
    Method("closed-form", lambda instance, **_: closed_form(instance), computes=closed_form_computes,
           exact_on=lambda instance: True, accepts=no_limits, ranges=lambda instance, **_: closed_form_range(instance),
           kernel=Kernel("closed-form", covers=lambda instance: is_dot_product(instance.metric), ranges=True),
           summary="Tan & Clarke: each unjudged document at G where it helps the better list, else 0; "
                   "Success@k and R@k: their own proved closed forms"),
    Method("alg1", lambda instance, **_: alg1(instance), computes=family_in("nDCG"),
           exact_on=lambda instance: instance.max_grade == 1, accepts=no_limits, warm_start=True,
           kernel=Kernel("alg1", covers=lambda instance: instance.metric.cutoff is not None),
           summary="Moffat's Algorithm 1 (exact for binary judgments; graded: a lower bound)"),
    Method("ndcg-profiles", lambda instance, **kw: ndcg_profiles(instance, **kw), computes=family_in("nDCG"),
           exact_on=lambda instance: True, accepts=no_limits_and_fits, options=("time_limit",),
           ranges=lambda instance, **kw: ndcg_profiles_range(instance, **kw),
           kernel=Kernel("ndcg-profiles", covers=lambda instance: instance.max_grade <= FAST_PROFILE_GRADES,
                         ranges=True),
           summary="every ideal profile of nDCG, each with its rearrangement, searched as arrays (exact, any G)"),
    Method("rr", lambda instance, **_: rr_med(instance), computes=family_in("RR"), exact_on=lambda instance: True,
           accepts=no_limits, ranges=lambda instance, **_: rr_range(instance),
           kernel=Kernel("rr", ranges=True),
           summary="RR: each candidate first relevant rank of the better list, the rest forced (exact, proof in "
                   "kernels/rr.py)"),
    Method("rprec", lambda instance, **_: rprec_med(instance), computes=family_in("Rprec"),
           exact_on=lambda instance: True, accepts=no_limits, ranges=lambda instance, **_: rprec_range(instance),
           kernel=Kernel("rprec", ranges=True),
           summary="Rprec: for each count of unjudged documents made relevant, the best of that size (exact, "
                   "proof in kernels/rprec.py)"),
    Method("exact", lambda instance, **kw: _exact(instance, **kw),
           computes=has_formulation, exact_on=lambda instance: True,
           options=("solver", "time_limit", "strategy", "reduce", "memory_limit"), ranges=_exact_range,
           summary="explicit MILP solved by HiGHS or CP-SAT"),
    Method("enumerate", lambda instance, **kw: enumerate_med(instance, **kw), computes=lambda metric: True,
           exact_on=lambda instance: True, options=("max_assignments", "time_limit"),
           ranges=lambda instance, **kw: enumerate_range(instance, **kw),
           summary=f"brute force over all (G+1)^n assignments; refuses above {DEFAULT_MAX_ASSIGNMENTS:,}"),
    Method("greedy", lambda instance, **kw: greedy(instance, **kw), computes=family_in("AP"),
           exact_on=lambda instance: False, accepts=no_limits, warm_start=True, options=("time_limit",),
           summary="Moffat's eq. 13 greedy (a lower bound)"),
    Method("greedy-pairs", lambda instance, **kw: greedy_pairs(instance, **kw), computes=family_in("AP"),
           exact_on=lambda instance: False, accepts=no_limits, options=("time_limit",),
           summary="eq. 13's greedy with a look-ahead over pairs of documents (a lower bound)"),
    Method("tabu", lambda instance, **kw: tabu(instance, **kw), computes=family_in("SSP", "AP"),
           exact_on=lambda instance: False, accepts=no_limits,
           options=("seed", "iterations", "tenure", "restarts", "time_limit"),
           summary="one-flip tabu search (a lower bound)"),
    Method("tc-err", lambda instance, **kw: tc_err(instance, **kw), computes=family_in("ERR"),
           exact_on=lambda instance: False, accepts=no_limits, options=("p", "depth", "time_limit"),
           summary="Tan & Clarke's brute force over up to p bound documents (a lower bound)"),
)}


def method_names() -> list[str]:
    return list(REGISTRY)


def get(name: str) -> Method:
    if name not in REGISTRY:
        raise MedoptError(f"unknown method {name!r}; available: auto, {', '.join(REGISTRY)}")
    return REGISTRY[name]


def auto(instance: Instance, *, ranges: bool = False) -> Method:
    """The first method that runs on the instance and is exact on it (with ``ranges``: that gives
    both ends of a range)."""
    for method in REGISTRY.values():
        if method.supports(instance) is None and method.exact_on(instance) and (not ranges or method.ranges):
            return method
    raise MedoptError(f"no exact method for {instance}")  # enumerate computes every metric: unreachable


def heuristic_names() -> list[str]:
    """The methods medopt certify compares with the exact answer: all but the exact ones."""
    return [name for name in REGISTRY if name not in ("exact", "enumerate")]


def heuristics_for(metric: Metric) -> list[Method]:
    """The methods compared with the exact answer for ``metric``."""
    return [REGISTRY[name] for name in heuristic_names() if REGISTRY[name].computes(metric)]


def asked_strategy(strategy: str | None) -> str | None:
    """The strategy asked for, None when exact_settings is to choose ("auto", or not given): the one
    place "auto" is read."""
    return None if strategy in (None, "auto") else strategy


def check_ranges(method: Method) -> None:
    """Refuse a method that gives no exact range ends, naming those that do."""
    if method.ranges is None:
        exact = ", ".join(name for name, m in REGISTRY.items() if m.ranges)
        raise MedoptError(f"method {method.name!r} gives no exact range ends (methods that do: {exact})")


def check_options(method: Method, given) -> list[str]:
    """The names among ``given`` that ``method`` does not take (time_limit is taken by all)."""
    return sorted(set(given) - set(method.options) - set(ACCEPTED_BY_ALL))


def checked_options(options: Mapping | None) -> dict:
    """The options of a request as every method reads them, checked once at the boundary: None counts
    as not given, the time limit is a positive number of seconds or none (core.deadlines), strategy
    "auto" is not given (asked_strategy).  Batch settings call it before any work, plan() per request."""
    given = {k: v for k, v in dict(options or {}).items() if v is not None}
    if "time_limit" in given:
        given["time_limit"] = time_limit_seconds(given["time_limit"])
    if asked_strategy(given.get("strategy")) is None:
        given.pop("strategy", None)
    return {k: v for k, v in given.items() if v is not None}


@dataclass(frozen=True)
class Plan:
    """Every choice for one request, made once (``plan``): the method, its batch kernel (None: the
    instance goes through the method, one topic at a time), the solver and strategy asked for (None:
    the exact method's default for the instance, exact_settings), the time limit, and the options the
    method takes."""

    method: Method
    kernel: str | None = None
    solver: str | None = None
    strategy: str | None = None
    time_limit: float | None = None
    options: tuple = ()           # (name, value) pairs passed to the method, solver and strategy included
    ranges: bool = False


def plan(instance: Instance, options: Mapping | None = None, *, method: str = "auto",
         ranges: bool = False) -> Plan:
    """The plan of one request: the method (``auto``: the first exact one, else the one named), after
    checking once that it supports the instance, gives range ends when ``ranges`` asks for them and
    takes every option given (None counts as not given; with ``auto``, options the chosen method does
    not take are dropped: they were meant for whichever method auto would pick, e.g. a solver).  The
    time limit is checked here (core.deadlines.time_limit_seconds) and strategy "auto" read as not
    given.  ``kernel``: the method's batch kernel when it covers this instance (and the range, with
    ``ranges``) and the instance is plain (no padding, residual or relevance limits)."""
    given = checked_options(options)
    time_limit = given.pop("time_limit", None)
    chosen = auto(instance, ranges=ranges) if method == "auto" else get(method)
    reason = chosen.supports(instance)
    if reason is not None:
        raise MedoptError(reason)
    if ranges:
        check_ranges(chosen)
    unknown = check_options(chosen, given)
    if unknown and method != "auto":
        accepted = ", ".join(chosen.options) or "no options"
        raise MedoptError(f"method {chosen.name!r} does not take {', '.join(unknown)} (it takes {accepted})")
    taken = {k: v for k, v in given.items() if k in chosen.options}
    kernel = chosen.kernel
    fits = kernel is not None and (not ranges or kernel.ranges) and not instance.residual and not instance.limits \
        and not instance.padded and kernel.covers(instance)  # a kernel reads plain runs only
    return Plan(chosen, kernel.name if fits else None, taken.get("solver"), taken.get("strategy"), time_limit,
                tuple(taken.items()), ranges)


def execute(plan: Plan, instance: Instance, *, started: float | None = None) -> MedResult | RangeResult:
    """Run a plan on its instance.  ``started`` (perf_counter) is when the caller's call began: a time
    limit counts from there, so what came before the method runs (the choice, and the check, which
    imports the models on first use) is spent."""
    options = dict(plan.options)
    if plan.time_limit is not None and "time_limit" in plan.method.options:
        spent = time.perf_counter() - started if started is not None else 0.0
        options["time_limit"] = max(0.0, plan.time_limit - spent)
    return (plan.method.ranges if plan.ranges else plan.method.run)(instance, **options)


# ---------------------------------------------------------------------------
# character-level metrics (U, SPEC 8): their instances are trailtexts of characters, not rankings of
# documents, so they have their own, small registry: name -> (MED, range).  The closed form is exact
# on every instance (heuristics/closed_form_u.py), so ``auto`` is it.

CHARACTER_METHODS: dict[str, tuple[Callable, Callable]] = {"closed-form": (closed_form_u, closed_form_u_range)}


def character_method(method: str, metric) -> str:
    """The MED-U method ``method`` names ("auto": the closed form), refused when it computes no MED-U."""
    name = "closed-form" if method == "auto" else method
    if name not in CHARACTER_METHODS:
        raise MedoptError(f"method {method!r} does not compute {metric}; it takes: auto, "
                          f"{', '.join(CHARACTER_METHODS)}")
    return name


def run_characters(instance: PassageInstance, method: str, *, ranges: bool = False) -> MedResult | RangeResult:
    """MED (or with ``ranges`` both ends of the difference range) of a MED-U instance by ``method``."""
    single, both = CHARACTER_METHODS[character_method(method, instance.metric)]
    return both(instance) if ranges else single(instance)
