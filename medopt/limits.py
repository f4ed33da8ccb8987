"""The limits every computation honours (docs/limits.md).

**Time.**  A time-limited computation runs inside ``until(deadline)``; the code that builds models
and the heuristics call ``check_time()`` in their loops, which raises :class:`OutOfTime` once the
deadline has passed, so a limit covers model building, not only the solver's own run.  The
exact strategies and the time-limited heuristics catch it and report what they found so far
(status ``timeout``, never certified).  Outside ``until`` nothing is ever out of time.  The
deadline is a context variable: threads and concurrent computations each see their own.

**Size.**  ``memory_limit()``: the most a single instance's exact model may be predicted to take
(exact/common.check_memory refuses larger ones before building anything, with TooLargeError):
2 GB, or the environment's ``MEDOPT_MEMORY_LIMIT_GB``.
"""

from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import MedoptError

# bytes one instance's exact model may be predicted to need (the machine measured: 24 GiB, two cores,
# a process per core; docs/limits.md#memory)
MEMORY_LIMIT = 2 * 1024 ** 3
MEMORY_LIMIT_VARIABLE = "MEDOPT_MEMORY_LIMIT_GB"


def memory_limit() -> int:
    """The memory limit per instance in bytes: MEDOPT_MEMORY_LIMIT_GB (gigabytes) when set, else MEMORY_LIMIT."""
    text = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if not text:
        return MEMORY_LIMIT
    try:
        gigabytes = float(text)
    except ValueError:
        gigabytes = math.nan
    if not (math.isfinite(gigabytes) and gigabytes > 0):
        raise MedoptError(f"{MEMORY_LIMIT_VARIABLE} must be a positive number of gigabytes, got {text!r}")
    return int(gigabytes * 2 ** 30)

_DEADLINE: ContextVar[float | None] = ContextVar("medopt_deadline", default=None)


class OutOfTime(Exception):
    """The deadline of the current computation has passed (check_time)."""


def deadline_after(time_limit: float | None) -> float | None:
    """The perf_counter deadline ``time_limit`` seconds from now (None: no limit)."""
    return None if time_limit is None else time.perf_counter() + time_limit


@contextmanager
def until(deadline: float | None):
    """Run the body under ``deadline`` (a perf_counter time; None: no limit of its own); an
    enclosing earlier deadline still holds."""
    outer = _DEADLINE.get()
    if deadline is None or (outer is not None and outer < deadline):
        deadline = outer
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining() -> float | None:
    """Seconds left before the current deadline (None: none)."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.perf_counter()


def expired() -> bool:
    """Whether the current deadline has passed (for loops that stop rather than raise)."""
    deadline = _DEADLINE.get()
    return deadline is not None and time.perf_counter() > deadline


def check_time() -> None:
    """Raise OutOfTime when the current deadline has passed."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.perf_counter() > deadline:
        raise OutOfTime


class Ticker:
    """``check_time()`` every ``every`` calls: for hot loops (a call costs one integer update)."""

    __slots__ = ("count", "every")

    def __init__(self, every: int = 1024):
        self.count, self.every = 0, every

    def __call__(self) -> None:
        self.count += 1
        if self.count >= self.every:
            self.count = 0
            check_time()
