"""The limits every computation honours (docs/limits.md).

**Time.**  A time-limited computation runs inside ``until(deadline)``; the code that builds models
and the heuristics call ``check_time()`` in their loops, which raises :class:`OutOfTime` once the
deadline has passed, so a limit covers model building, not only the solver's own run.  The
exact strategies and the time-limited heuristics catch it and report what they found so far
(status ``timeout``, never certified).  Outside ``until`` nothing is ever out of time.  The
deadline is a context variable: threads and concurrent computations each see their own.

**Size.**  ``memory_limit()``: the most a single instance's exact model may be predicted to take
(exact/common.check_memory refuses larger ones before building anything, with TooLargeError):
``MEMORY_LIMIT``, or the environment's ``MEDOPT_MEMORY_LIMIT_GB``.

**Memory while solving.**  A prediction bounds the model, not a solver's search (CP-SAT's clause and
cut databases, HiGHS's branch and bound), nor what a solver's own memory limit counts.  So an exact
computation runs inside ``memory_ceiling(limit)`` too: a solve in flight (solvers/stoppable.py) is
stopped once the process's resident set passes the ceiling, ``STOP_SHARE`` of the limit (plus
whatever the process held beyond a fresh one's ``FRESH_PROCESS`` when the computation began, so a
large notebook session is not stopped at once).  From then on the computation is out of time
(``expired``, ``check_time``, ``remaining`` = 0): it stops as at its time limit, with the best
assignment found and the bound proven so far, never certified by the stop.  A step without a
solver whose arrays can be predicted (the roof dual's pairs) asks first: ``check_room(bytes)``
raises :class:`OutOfRoom`, an OutOfTime, when they would not fit under the ceiling.
"""

from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import MedoptError, option

# bytes one instance's exact model may be predicted to need (a process per core on the machine the
# limit was chosen for: docs/limits.md#memory)
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

STOP_SHARE = 0.9                # a solve stops when the process's RSS passes this share of the limit ...
FRESH_PROCESS = 300 * 2 ** 20   # ... beyond a fresh process's own (medopt and both solvers loaded: docs/limits.md#memory)

# the current computation's [ceiling in bytes, crossed]; shared by everything inside one memory_ceiling
_CEILING: ContextVar[list | None] = ContextVar("medopt_memory_ceiling", default=None)
_PROCESS = None


def process_rss() -> int:
    """This process's resident set size in bytes (psutil)."""
    global _PROCESS
    if _PROCESS is None:
        import psutil
        _PROCESS = psutil.Process()
    return _PROCESS.memory_info().rss


@contextmanager
def memory_ceiling(limit: int | None = None):
    """Run the body under a memory ceiling (module docstring); an enclosing one still holds."""
    if _CEILING.get() is not None:
        yield
        return
    limit = memory_limit() if limit is None else limit
    token = _CEILING.set([int(STOP_SHARE * limit) + max(0, process_rss() - FRESH_PROCESS), False])
    try:
        yield
    finally:
        _CEILING.reset(token)


def over_memory() -> bool:
    """Whether the process has passed the current ceiling (reads the RSS: for a waiting loop)."""
    state = _CEILING.get()
    if state is None:
        return False
    if not state[1] and process_rss() > state[0]:
        state[1] = True
    return state[1]


def room() -> int | None:
    """Bytes the process may still take before the current ceiling (None: no ceiling)."""
    state = _CEILING.get()
    return None if state is None else state[0] - process_rss()


SMALL_STEP = 64 * 2 ** 20  # a step predicted to take less than this is never refused (check_room)


def check_room(need: int) -> None:
    """Raise OutOfRoom when ``need`` more bytes would take the process past the current ceiling: for a
    step whose arrays are predicted, before they are built.  Nothing is refused without a ceiling,
    nor a step under SMALL_STEP (the ceiling's watch while solving covers those)."""
    if need <= SMALL_STEP:
        return
    left = room()
    if left is not None and need > left:
        raise OutOfRoom


def memory_crossed() -> bool:
    """Whether a solve of the current computation was stopped at the ceiling (no RSS read)."""
    state = _CEILING.get()
    return state is not None and state[1]


class OutOfTime(Exception):
    """The deadline of the current computation has passed (check_time)."""


class OutOfRoom(OutOfTime):
    """A step's predicted arrays would pass the memory ceiling (check_room): the step is not taken, and
    what it was part of stops as at its deadline (the ceiling itself is not marked as crossed, so
    the rest of the computation goes on)."""


def time_limit_seconds(value) -> float | None:
    """A time limit as every entry point takes it (the one check): None or infinity, no limit; a positive
    finite number of seconds; anything else refused in one line naming the option (errors.option)."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == math.inf):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise MedoptError(f"{option('time_limit', None)} must be a positive number of seconds, got {value!r}")
    return float(value)


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
    if memory_crossed():
        return 0.0
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.perf_counter()


def expired() -> bool:
    """Whether the current deadline has passed (for loops that stop rather than raise)."""
    deadline = _DEADLINE.get()
    return memory_crossed() or (deadline is not None and time.perf_counter() > deadline)


def check_time() -> None:
    """Raise OutOfTime when the current deadline has passed."""
    deadline = _DEADLINE.get()
    if (deadline is not None and time.perf_counter() > deadline) or memory_crossed():
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
