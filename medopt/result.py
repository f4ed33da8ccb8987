"""MedResult and the one place where a result is certified (SPEC 5).

Every method, exact or heuristic, hands its assignment, direction, bound and
status to :func:`certify`.  It re-scores the assignment with the project's own
metric evaluators (independent of any model), and a result is certified only
when that re-scored value matches the method's claim, the proven upper bound
exceeds it by at most 1e-9, and the status is ``optimal``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from .instance import PAD_PREFIX, Instance

TOLERANCE = 1e-9
STATUSES = ("optimal", "feasible", "timeout", "heuristic")


@dataclass
class MedResult:
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
    full = {doc: int(assignment.get(doc, 0)) for doc in instance.unjudged}
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
