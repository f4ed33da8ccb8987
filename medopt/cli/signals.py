"""Signals of the ``medopt`` program, installed before anything heavy is imported.

Two regimes, each covering every moment of the process:

- outside a command (while Python, click, NumPy and the solvers load; after the command's last line
  is written): SIGINT, SIGTERM and SIGHUP end the process at once with ``medopt: interrupted`` and
  status 130, 143 or 129 -- there is nothing to stop cleanly, and a KeyboardInterrupt raised there
  would print a traceback;
- while a command runs (:func:`command_handlers`): SIGINT raises KeyboardInterrupt, SIGTERM and
  SIGHUP behave as SIGINT (through whatever handler SIGINT has while a solve runs), so that jobs stop
  their workers and commit what they computed; the CLI prints the one line and the status.

A signal the main thread cannot act on (it waits inside C code: SQLite waiting on a locked store, a
solver's set-up) is acted on anyway: a watcher thread learns of every signal at once (the C-level
handler writes it to :func:`signal.set_wakeup_fd`), and when no Python handler of this module has run
:data:`GRACE` seconds later, ends the process as above.  A handler that ran is not enough either: its
KeyboardInterrupt can be lost (raised inside an object's ``__del__``, Python only prints it), so a
process still running :data:`STOP_GRACE` seconds after the signal is ended the same way.  Stores stay
consistent (rows are committed one transaction at a time; ``--resume`` completes the job).

Only the standard library is imported here.  A signal ignored when the program starts (``nohup``,
a background job's SIGINT) stays ignored.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
RECEIVED: list = []  # the signals received while a command runs: the first decides the exit status
GRACE = 1.0  # seconds the main thread has to act on a signal before the watcher ends the process
STOP_GRACE = 10.0  # seconds a command has to stop once its handler ran (workers stopped, rows committed)
_HANDLED = [float("-inf")]  # when a Python-level handler of this module last ran (time.monotonic)


def exit_status() -> int:
    return STATUS.get(RECEIVED[0], 130) if RECEIVED else 130


def _exit_now(signum, frame):
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 -- a closed or full stdout: the interrupt still ends the process
        pass
    try:
        os.write(2, b"medopt: interrupted\n")
    except OSError:
        pass
    os._exit(STATUS.get(signum, 130))


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def install_exit_handlers() -> None:
    """The program's handlers outside a command, and the watcher (see the module docstring)."""
    if not _main_thread():
        return
    for number in STATUS:
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, _exit_now)
    reader, writer = os.pipe()
    os.set_blocking(writer, False)
    os.set_inheritable(reader, False)
    os.set_inheritable(writer, False)
    signal.set_wakeup_fd(writer, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(reader,), name="medopt-signals", daemon=True).start()


def _watch(reader: int) -> None:
    while True:
        try:
            data = os.read(reader, 64)
        except OSError:
            return
        if not data:
            return
        numbers = [n for n in data if n in STATUS]
        if not numbers:
            continue
        # The main thread may have run the handler before this thread woke: a run shortly before counts.
        woke = time.monotonic()
        while _HANDLED[0] < woke - 0.5:
            if time.monotonic() > woke + GRACE:
                _exit_now(numbers[0], None)
            time.sleep(0.02)
        # handled: the command stops on its own, unless its KeyboardInterrupt was lost (see the docstring)
        threading.Thread(target=_stop_late, args=(numbers[0], woke), name="medopt-stop", daemon=True).start()


def _stop_late(signum, since: float) -> None:
    time.sleep(max(0.0, since + STOP_GRACE - time.monotonic()))
    _exit_now(signum, None)


def _interrupt(signum, frame):
    """SIGINT while a command runs: KeyboardInterrupt (the CLI prints the line and the status)."""
    RECEIVED.append(signum)
    _HANDLED[0] = time.monotonic()
    raise KeyboardInterrupt


def _as_interrupt(signum, frame):
    """SIGTERM and SIGHUP as Ctrl-C: a KeyboardInterrupt, or whatever handler SIGINT has while a solve runs."""
    RECEIVED.append(signum)
    _HANDLED[0] = time.monotonic()
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler not in (signal.default_int_handler, _interrupt, _as_interrupt, _exit_now):
        return handler(signal.SIGINT, frame)
    raise KeyboardInterrupt


def command_handlers() -> dict:
    """Install the handlers of a running command; returns the previous ones (for :func:`restore`)."""
    RECEIVED.clear()
    if not _main_thread():
        return {}
    previous = {number: signal.getsignal(number) for number in STATUS}
    for number, handler in previous.items():
        if handler is signal.SIG_IGN:
            continue
        signal.signal(number, _interrupt if number == signal.SIGINT else _as_interrupt)
    return previous


def restore(previous: dict) -> None:
    for number, handler in previous.items():
        if handler is not None:
            signal.signal(number, handler)


def is_program() -> bool:
    """This process is the ``medopt`` program (the console script, or ``python -m medopt.cli``), not a
    caller of :mod:`medopt.cli` (a test's CliRunner): only the program installs the exit handlers."""
    first = sys.argv[0] if sys.argv else ""
    return first == "-m" or os.path.basename(first) == "medopt" or \
        first.endswith(os.path.join("medopt", "cli", "__main__.py"))
