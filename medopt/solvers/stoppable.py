"""Solver calls that Ctrl-C stops and that end when their time is up.

Python runs a signal handler only in the main thread, and only between bytecodes: while HiGHS or
CP-SAT works inside one C++ call (minutes at depth 1000), a SIGINT waits until the call returns.
And a solver's own time limit is not checked everywhere: HiGHS 1.14 overran its limit in its MIP
set-up (the clique partition of the objective, HighsObjectiveFunction::setupCliquePartition) on an
SSP@300 model, where it calls no interrupt callback either (docs/explanation/solvers.md).

So every solve runs in a worker thread (both solvers release the GIL while they work) and the
calling thread waits for it in short steps, where KeyboardInterrupt (or SystemExit from a SIGTERM
handler) does arrive.  Then the solver is asked to stop (HiGHS: its user-interrupt callbacks,
which highspy calls from the simplex, IPM and MIP loops; CP-SAT: ``stop_search``), the worker is
given ``STOP_WAIT`` seconds to return, and the exception goes on to the caller: an interrupted
solve never comes back as if it had timed out.  With a time limit the calling thread waits at most
the limit and ``OVERRUN_GRACE``; a solve still running then is stopped the same way, and if it
does not return within ``STOP_WAIT`` it is left to finish on its own (it will: its limit has
passed) and the call raises :class:`SolverOverran`.  Measured: docs/limits.md.

The waiting uses an Event the worker sets, never ``Thread.join``: a KeyboardInterrupt arriving in
``join(timeout)`` can leave the thread's lock in a state where a later ``join`` returns at once
(CPython 3.11), the process then exits under a running HiGHS and aborts.
"""

from __future__ import annotations

import atexit
import threading
import time
from typing import Callable

from ..core.deadlines import over_memory

POLL = 0.05          # seconds between the waiting thread's checks for a signal
STOP_WAIT = 0.4      # seconds a stopped solver is given to return
OVERRUN_GRACE = 0.1  # seconds past its time limit a solver may take before it is stopped


EXIT_WAIT = 30.0          # seconds the interpreter's exit waits for a solver left past its time limit
INTERRUPTED_EXIT_WAIT = 0.8  # ... and for one still running after an interrupt (so that Ctrl-C ends the program promptly)

# done-event -> seconds the exit may wait for that solver thread: a process that exits under a running
# HiGHS or CP-SAT call can abort (C++ terminate, "terminate called without an active exception"), so
# the interpreter's exit waits for the threads left running (_wait_for_left_solvers): long for one that
# overran its limit (it ends at its next check), briefly after an interrupt
_LEFT: dict = {}


class SolverOverran(Exception):
    """A solver still running STOP_WAIT after it was stopped at its time limit (left to finish)."""


@atexit.register
def _wait_for_left_solvers(limit: float = EXIT_WAIT) -> None:
    started = time.monotonic()
    for done, wait in list(_LEFT.items()):
        done.wait(max(0.0, started + min(wait, limit) - time.monotonic()))


def run_stoppable(run: Callable[[], object], stop: Callable[[], None], time_limit: float | None = None):
    """``run()`` in a worker thread, the calling thread waiting in POLL steps.

    On any exception while waiting (KeyboardInterrupt, SystemExit) ``stop()`` is called (again at
    each step: a stop asked for before the solver started may be lost), the worker gets STOP_WAIT
    seconds, and the exception is re-raised.  Past ``time_limit`` + OVERRUN_GRACE the same stop, and
    SolverOverran if the worker is still running after it.  Past the memory ceiling of the current
    computation (limits.memory_ceiling) the same stop, and the solver's own answer is returned (the
    computation is out of time from then on).  Exceptions of ``run`` propagate."""
    outcome: dict = {}
    done = threading.Event()

    def work():
        try:
            outcome["value"] = run()
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error
        finally:
            done.set()

    def stop_and_wait(overran: bool = False) -> bool:
        give_up = time.monotonic() + STOP_WAIT
        while not done.is_set() and time.monotonic() < give_up:
            stop()
            done.wait(POLL)
        if not done.is_set():  # left running: the interpreter's exit waits for it (_LEFT)
            for event in [event for event in _LEFT if event.is_set()]:
                del _LEFT[event]
            _LEFT[done] = EXIT_WAIT if overran else INTERRUPTED_EXIT_WAIT
        return done.is_set()

    worker = threading.Thread(target=work, name="medopt-solve", daemon=True)
    started = time.monotonic()
    worker.start()
    try:
        while not done.wait(POLL):
            if time_limit is not None and time.monotonic() - started > time_limit + OVERRUN_GRACE:
                if not stop_and_wait(overran=True):
                    raise SolverOverran(f"the solver ran {time.monotonic() - started:.1f} s with a limit "
                                        f"of {time_limit:.1f} s and did not stop")
                break
            if over_memory():
                if not stop_and_wait(overran=True):
                    raise SolverOverran("the solver passed the memory limit and did not stop")
                break
    except SolverOverran:
        raise
    except BaseException:
        stop_and_wait()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class HighsInterrupt:
    """HiGHS's user interrupt for one ``highspy.Highs``: its simplex, IPM and MIP interrupt callbacks
    stop the solve once ``requested`` is set.  highspy calls them at every simplex iteration and MIP
    node (a Python call of a few microseconds each: a few percent of a small LP's time at most)."""

    def __init__(self, h):
        self.requested = False
        for callback in (h.cbSimplexInterrupt, h.cbIpmInterrupt, h.cbMipInterrupt):
            callback.subscribe(self._check)

    def _check(self, event):
        if self.requested:
            event.interrupt()

    def request(self):
        self.requested = True

    def run(self, h, time_limit: float | None):
        """``h.run()``, stoppable (run_stoppable)."""
        self.requested = False
        return run_stoppable(h.run, self.request, time_limit)
