"""MedResult and the one place where a result is certified (SPEC 5).

Every method, exact or heuristic, hands its assignment, direction, bound and
status to :func:`certify`.  It re-scores the assignment with the project's own
metric evaluators (independent of any model), and a result is certified only
when that re-scored value matches the method's claim, the proven upper bound
exceeds it by at most 1e-9, and the status is ``optimal``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction

from .instance import PAD_PREFIX, Instance

TOLERANCE = 1e-9
STATUSES = ("optimal", "feasible", "timeout", "heuristic")


@dataclass
class MedResult:
    """One MED answer with its certificate (made only by ``certify``): ``value`` = |M(A) - M(B)|
    under ``assignment``, the list ``direction`` scoring higher, a proven ``upper_bound``, the
    solver's ``status`` and whether the result is ``certified``; ``score_a`` and ``score_b`` are
    M(A) and M(B) under the assignment."""

    value: float
    direction: str                 # "a" or "b": which list scores higher under `assignment`
    assignment: dict               # unjudged document -> grade (padding documents omitted)
    upper_bound: float
    status: str
    certified: bool
    method: str
    solver: str | None
    seconds: float
    metric: str = ""
    score_a: float = 0.0
    score_b: float = 0.0
    details: dict = field(default_factory=dict)
    observed: tuple | None = None  # (M(A), M(B)) with every unjudged document at grade 0 (trec_eval's)

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        mark = "certified" if self.certified else self.status
        return (f"MED[{self.metric}] = {self.value:.6f} ({self.direction} higher; bound {self.upper_bound:.6f}; "
                f"{mark}; {self.method}{'/' + self.solver if self.solver else ''}; {self.seconds:.3f}s)")


def certify(instance: Instance, assignment: dict, direction: str, *, upper_bound: float, status: str,
            method: str, solver: str | None, started: float, claimed: float | None = None,
            details: dict | None = None) -> MedResult:
    """Re-score ``assignment`` and decide, per SPEC 5, whether the result is certified."""
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    full = complete(instance, assignment)
    value = instance.difference(full, direction)
    if value < 0:  # the other list is ahead under this assignment: report it that way round
        direction = "b" if direction == "a" else "a"
        value = instance.difference(full, direction)
    score_a, score_b = instance.scores(full)
    details = dict(details or {})
    claim_holds = claimed is None or abs(claimed - value) <= TOLERANCE
    bound_holds = value <= upper_bound + TOLERANCE
    if not claim_holds:
        details["claimed_value"] = claimed
    if not bound_holds:
        details["bound_below_value"] = upper_bound
    if not instance.satisfies_limits(full):
        details["violates_limits"] = True
    proven = (status == "optimal" and claim_holds and bound_holds and upper_bound - value <= TOLERANCE
              and not details.get("violates_limits"))
    return MedResult(
        value=value,
        direction=direction,
        assignment={d: g for d, g in full.items() if not d.startswith(PAD_PREFIX)},
        upper_bound=upper_bound,
        status=status,
        certified=proven,
        method=method,
        solver=solver,
        seconds=time.perf_counter() - started,
        metric=str(instance.metric),
        score_a=score_a,
        score_b=score_b,
        details=details,
    )


def complete(instance, assignment: dict) -> dict:
    """The assignment over every unknown of the instance: a grade per unjudged document (absent: 0);
    an instance with units of its own (MED-U's characters, passages.py) completes it itself."""
    if hasattr(instance, "complete"):
        return instance.complete(assignment)
    return {doc: int(assignment.get(doc, 0)) for doc in instance.unjudged}


@dataclass(frozen=True)
class End:
    """One direction's answer as a method hands it over: the maximum of M(X) - M(Y) for X the
    direction's list (``a``: A - B, the high end; ``b``: B - A, minus the low end)."""

    assignment: dict
    bound: float                   # proven: no assignment's difference in this direction exceeds it
    status: str
    claimed: float | None = None   # the method's value for ``assignment`` (None: no claim)


@dataclass
class RangeResult:
    """A range (SPEC 7): ``kind`` "difference" (M(A) - M(B)) or "score" (M(A) alone), each end
    with its own assignment, proven bound, status and certificate."""

    low: float
    high: float
    low_assignment: dict
    high_assignment: dict
    low_bound: float               # proven: the true low is >= it
    high_bound: float              # proven: the true high is <= it
    low_certified: bool
    high_certified: bool
    low_status: str
    high_status: str
    method: str
    solver: str | None
    seconds: float
    metric: str = ""
    kind: str = "difference"
    details: dict = field(default_factory=dict)
    observed: tuple | None = None  # (M(A), M(B)) with every unjudged document at grade 0 (trec_eval's)

    @property
    def certified(self) -> bool:
        return self.low_certified and self.high_certified

    @property
    def status(self) -> str:
        """The weaker end's status (STATUSES orders them best first)."""
        return max(self.low_status, self.high_status, key=STATUSES.index)

    @property
    def med(self) -> float:
        """MED = max(high, -low) (SPEC 7); for a score range, the larger end's distance from 0."""
        return max(self.high, -self.low)

    @property
    def direction(self) -> str:
        """The side MED favours (range_direction)."""
        return range_direction(self.low, self.high)

    @property
    def verdict(self) -> str:
        """SPEC 7 from the proven bounds and the re-scored ends: decided, can flip or open."""
        return verdict(self.low, self.high, self.low_bound, self.high_bound)

    @property
    def decided(self) -> bool:
        """A proven bound excludes 0: no completion of the judgments changes which side is ahead."""
        return self.verdict == "decided"

    def to_dict(self) -> dict:
        return dict(asdict(self), certified=self.certified, status=self.status, verdict=self.verdict)

    def __str__(self) -> str:
        name = "score range" if self.kind == "score" else "difference range"
        mark = "certified" if self.certified else self.status
        return (f"{name}[{self.metric}] = [{self.low:.6f}, {self.high:.6f}] (bounds [{self.low_bound:.6f}, "
                f"{self.high_bound:.6f}]; {mark}; {self.method}{'/' + self.solver if self.solver else ''}; "
                f"{self.seconds:.3f}s)")


VERDICTS = ("decided", "can flip", "open")


def range_direction(low: float, high: float) -> str:
    """The direction of a range's MED = max(high, -low): "a" (A ahead, the high end) when high >= -low,
    else "b"; the one rule for every range row (API, compare, matrix)."""
    return "a" if high >= -low else "b"


def verdict(low, high, low_bound=None, high_bound=None) -> str:
    """SPEC 7, the one place a verdict is made: ``decided`` when a proven bound excludes 0
    (``low_bound > tol`` or ``high_bound < -tol``); ``can flip`` when the re-scored ends, real
    completions, come within tol of 0 or cross it (a range that touches 0 can flip: a tie is
    possible); ``open`` otherwise (the ends reached exclude 0 but their bounds do not: a solve
    stopped before proving its end; :func:`open_end` says which).  Without bounds the ends are
    taken as proven (a closed form's or an exact end's).  Values may be floats or Fractions."""
    low_bound = low if low_bound is None else low_bound
    high_bound = high if high_bound is None else high_bound
    if low_bound > TOLERANCE or high_bound < -TOLERANCE:
        return "decided"
    if low <= TOLERANCE and high >= -TOLERANCE:
        return "can flip"
    return "open"


def open_end(low, high) -> str | None:
    """Which end of an ``open`` range has its bound still short of excluding 0: ``low`` (every
    completion found favours A) or ``high`` (every completion found favours B)."""
    if low > TOLERANCE:
        return "low"
    if high < -TOLERANCE:
        return "high"
    return None


def exact_value(value: float) -> Fraction:
    """A metric value as the rational it stands for: the simplest fraction with a denominator up to
    10^7 within 1e-15 of ``value`` (P@k's j/k, R@k's j/R, RR's 1/r and their differences, after the
    float rounding of a few operations), else the float's own binary value.  Two such fractions are
    at least 1e-14 apart, so the one found is unique.  Sums of these are exact, so a tie sums to 0,
    not to 1e-17."""
    value = float(value)
    guess = Fraction(value).limit_denominator(10 ** 7)
    return guess if abs(float(guess) - value) <= 1e-15 else Fraction(value)


def exact_mean(values, *, rational: bool = False) -> float:
    """The mean of metric values: summed exactly as Fractions for a rational metric (exact_value), so
    two runs tied on P@10 differ by 0, not 5e-17; else math.fsum (correctly rounded)."""
    values = list(values)
    if not values:
        return math.nan
    if rational and all(math.isfinite(v) for v in values):
        return float(sum((exact_value(v) for v in values), Fraction(0)) / len(values))
    return math.fsum(float(v) for v in values) / len(values)


@dataclass(frozen=True)
class MeanRange:
    """The mean difference range over topics (SPEC 7): the means of the topics' ends, the means of
    their proven bounds, and the verdict from them."""

    low: float
    high: float
    low_bound: float
    high_bound: float
    verdict: str
    open_end: str | None = None


def mean_range(ends, *, rational: bool = False) -> MeanRange:
    """The mean of per-topic ranges ``ends``, an iterable of ``(low, high, low_bound, high_bound)``
    (bounds may be None: the end is proven).  Topics share no documents, so the ends add.  With
    ``rational`` (a metric whose values are rationals with small denominators: P, R, Success, RR;
    ``Metric.rational``) the sums are exact Fractions; otherwise ``math.fsum`` (correctly rounded).
    The verdict is taken from these sums by :func:`verdict`."""
    ends = [(lo, hi, lo if lb is None else lb, hi if hb is None else hb) for lo, hi, lb, hb in ends]
    if not ends:
        raise ValueError("a mean range needs at least one topic")
    n = len(ends)
    if rational:
        columns = [[exact_value(e[i]) for e in ends] for i in range(2)]
        # a bound within 1e-12 of its end is the end's own rational (a closed form's, computed another way);
        # any other bound keeps its binary value
        columns += [[exact_value(e[i - 2]) if abs(e[i] - e[i - 2]) <= 1e-12 else Fraction(float(e[i]))
                     for e in ends] for i in (2, 3)]
        low, high, low_bound, high_bound = (sum(c, Fraction(0)) / n for c in columns)
    else:
        low, high, low_bound, high_bound = (math.fsum(float(e[i]) for e in ends) / n for i in range(4))
    label = verdict(low, high, low_bound, high_bound)
    return MeanRange(float(low), float(high), float(low_bound), float(high_bound), label,
                     open_end(low, high) if label == "open" else None)


def certify_end(instance: Instance, end: End, direction: str) -> tuple[float, dict, bool, dict]:
    """Re-score one end's assignment in its own direction and decide, per SPEC 5, whether it is
    certified: (value, assignment, certified, notes)."""
    if end.status not in STATUSES:
        raise ValueError(f"unknown status {end.status!r}")
    full = complete(instance, end.assignment)
    value = instance.difference(full, direction)
    notes = {}
    if end.claimed is not None and abs(end.claimed - value) > TOLERANCE:
        notes["claimed_value"] = end.claimed
    if value > end.bound + TOLERANCE:
        notes["bound_below_value"] = end.bound
    if not instance.satisfies_limits(full):
        notes["violates_limits"] = True
    proven = end.status == "optimal" and not notes and end.bound - value <= TOLERANCE
    return value, {d: g for d, g in full.items() if not d.startswith(PAD_PREFIX)}, proven, notes


def certify_range(instance: Instance, ends: dict, *, method: str, solver: str | None, started: float,
                  details: dict | None = None) -> RangeResult:
    """The range from the two directions' ends (``ends["a"]``: max M(A) - M(B); ``ends["b"]``: max
    M(B) - M(A)), each re-scored and certified on its own (certify_end)."""
    high, high_assignment, high_certified, high_notes = certify_end(instance, ends["a"], "a")
    top, low_assignment, low_certified, low_notes = certify_end(instance, ends["b"], "b")
    details = dict(details or {})
    details.update({f"high_{k}": v for k, v in high_notes.items()})
    details.update({f"low_{k}": -v if isinstance(v, float) else v for k, v in low_notes.items()})
    return RangeResult(low=-top, high=high, low_assignment=low_assignment, high_assignment=high_assignment,
                       low_bound=-ends["b"].bound, high_bound=ends["a"].bound, low_certified=low_certified,
                       high_certified=high_certified, low_status=ends["b"].status, high_status=ends["a"].status,
                       method=method, solver=solver, seconds=time.perf_counter() - started,
                       metric=str(instance.metric), details=details)


def claimed_med(instance: Instance, ends: dict, *, method: str, started: float) -> MedResult:
    """MED from a solver-free method's two proven ends (``ends[d]``: (max difference in direction d, an
    assignment reaching it)): the larger direction, certified (each value is its own bound)."""
    direction = max(ends, key=lambda d: ends[d][0])
    value, assignment = ends[direction]
    return certify(instance, assignment, direction, upper_bound=value, status="optimal", method=method,
                   solver=None, started=started, claimed=value)


def claimed_range(instance: Instance, ends: dict, *, method: str, started: float) -> RangeResult:
    """Both ends of the difference range from a solver-free method's two proven ends, each certified."""
    ends = {d: End(assignment, value, "optimal", value) for d, (value, assignment) in ends.items()}
    return certify_range(instance, ends, method=method, solver=None, started=started)
