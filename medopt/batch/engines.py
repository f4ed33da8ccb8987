"""Engines of ``medopt matrix``: each runs tasks and yields their rows as they finish.

``LocalEngine`` is a process pool on this machine (or the main process for one worker);
``DaskEngine`` runs the same tasks on Dask distributed.  An error raised in a worker reaches the
caller as it was raised (medopt's errors pickle with their message); a worker that dies (killed,
out of memory) is one clear :class:`MedoptError`.  On KeyboardInterrupt (Ctrl-C, and SIGTERM in
the command) the engines stop their workers at once.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import threading
import time

from ..errors import MedoptError
from .runset import RunSet, read_run_columns
from .passageset import task_rows as run_task  # a MED-U job's tasks, or tasks.run_task
from .tasks import Settings

_DIED = ("a worker process died (killed by a signal, or out of memory?); the rows computed before it "
         "are stored: rerun with --resume")


CONNECT_SECONDS = 20.0  # a --scheduler that does not answer (as a Dask scheduler) within this is refused


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(jobs: int) -> int:
    """``-j`` capped at the cores (more processes than cores only compete for them); MEDOPT_OVERSUBSCRIBE=1
    asks for the number given.  Engines cap it at the number of tasks too."""
    return jobs if os.environ.get("MEDOPT_OVERSUBSCRIBE") == "1" else max(1, min(jobs, cores()))


def make_engine(name: str, *, jobs: int, scheduler: str | None = None, cluster_options: dict | None = None):
    jobs = worker_count(jobs)
    if name == "local":
        if scheduler:
            raise MedoptError("--scheduler applies to --engine dask")
        return LocalEngine(jobs)
    if name == "dask":
        return DaskEngine(jobs, scheduler, cluster_options or {})
    raise MedoptError(f"unknown engine {name!r}; choose local or dask")


_WORKER: dict = {}


def _start_worker(runset: RunSet, settings: Settings, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides what an interrupt stops
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # (the terminal's hangup too)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the command's handler (inherited by fork): a pool
    signal.set_wakeup_fd(-1)  # (nor the command's signal watcher: the main process's, not this one's)
    _WORKER.update(runset=runset, settings=settings)  # stopping its workers sends SIGTERM, and they must go
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """A killed main process (SIGKILL) cannot stop its pool: each worker leaves when it sees it gone."""
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)


def _pool_task(task: list) -> list:
    return run_task(_WORKER["runset"], _WORKER["settings"], task)


def _stop(pool) -> None:
    """Stop a pool now: its workers killed, then its manager thread joined (quick once the workers are
    gone; a thread left running could hold a lock while this process forks its next pool).  SIGKILL, not
    SIGTERM: a worker forked a moment ago still has the command's SIGTERM handler until its initializer
    runs, and one that caught SIGTERM there lived on waiting for tasks while shutdown waited for it (a
    hang seen once in the fault tests, matrix-pool/run)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()
    pool.shutdown(wait=True, cancel_futures=True)


def read_runs(paths, *, honour_rank: bool = False, jobs: int = 1) -> list:
    """Read run files, several at once on a local process pool when ``jobs > 1``."""
    if jobs <= 1 or len(paths) < 2:
        return [read_run_columns(p, honour_rank=honour_rank) for p in paths]
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from functools import partial

    pool = ProcessPoolExecutor(min(jobs, len(paths)), initializer=_start_worker, initargs=(None, None, os.getpid()))
    try:
        columns = list(pool.map(partial(read_run_columns, honour_rank=honour_rank), paths))
    except BrokenProcessPool:
        _stop(pool)
        raise MedoptError(_DIED.split(";")[0]) from None
    except BaseException:
        _stop(pool)  # the first bad file decides: the others are not waited for
        raise
    pool.shutdown()
    return columns


class LocalEngine:
    """A process pool on this machine (``jobs`` workers; 1: in this process)."""

    def __init__(self, jobs: int):
        self.jobs, self.pool = jobs, None

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        self.close(abort=kind is not None)

    def run(self, runset: RunSet, settings: Settings, tasks: list):
        if self.jobs <= 1 or len(tasks) <= 1:  # no pool for work one process does as fast
            for task in tasks:
                yield run_task(runset, settings, task)
            return
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        # The run set reaches each worker once (inherited when processes fork), not with every task.
        self.pool = ProcessPoolExecutor(min(self.jobs, len(tasks)), initializer=_start_worker,
                                        initargs=(runset, settings, os.getpid()))
        for future in as_completed([self.pool.submit(_pool_task, task) for task in tasks]):
            try:
                rows = future.result()
            except BrokenProcessPool:
                raise MedoptError(_DIED) from None
            yield rows

    def close(self, abort: bool = False) -> None:
        if self.pool is None:
            return
        if abort:
            _stop(self.pool)
        else:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = None


def _dask_task(task: list, runset: RunSet, settings: Settings):
    """The task's rows, or the MedoptError it raised (returned: a failed Dask task logs a traceback)."""
    try:
        return run_task(runset, settings, task)
    except MedoptError as error:
        return error


def _lost(error: BaseException) -> bool:
    """An error of Dask's communication or bookkeeping (not one raised by a task)."""
    import asyncio

    module = type(error).__module__ or ""
    return isinstance(error, (OSError, TimeoutError, asyncio.CancelledError)) or module.startswith("distributed")


def _connect(address: str):
    """A Client of the scheduler at ``address``; an address that is not one, a refused connection, or a
    listener that does not answer as a Dask scheduler (Dask's own timeout covers only the connection:
    its handshake can wait for ever) is one MedoptError."""
    from dask.distributed import Client

    seconds = float(os.environ.get("MEDOPT_DASK_TIMEOUT", CONNECT_SECONDS))
    for name in ("distributed", "distributed.client", "distributed.comm", "distributed.core"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # a lost scheduler: our line, not their traceback
    box = {}

    def connect():
        try:
            box["client"] = Client(address, timeout=f"{seconds}s")
        except BaseException as error:  # noqa: BLE001 -- handed to the caller
            box["error"] = error

    thread = threading.Thread(target=connect, name="medopt-dask-connect", daemon=True)
    thread.start()
    thread.join(seconds + 1)
    if thread.is_alive():
        raise MedoptError(f"--scheduler {address}: no Dask scheduler answered within {seconds:g} s "
                          "(is a Dask scheduler listening there?)")
    error = box.get("error")
    if error is not None:
        if isinstance(error, (OSError, TimeoutError, ValueError, TypeError)) or _lost(error):
            raise MedoptError(f"--scheduler {address}: cannot connect ({type(error).__name__}: {error})") from None
        raise error
    return box["client"]


class DaskEngine:
    """Dask distributed: the scheduler at ``scheduler``, or a LocalCluster of ``jobs`` worker processes."""

    def __init__(self, jobs: int, scheduler: str | None, cluster_options: dict):
        if importlib.util.find_spec("distributed") is None:
            raise MedoptError("--engine dask needs dask.distributed (pip install 'dask[distributed]')")
        self.jobs, self.scheduler, self.cluster_options = jobs, scheduler, cluster_options
        self.client = self.cluster = None
        self.futures = []

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        self.close(abort=kind is not None)

    def run(self, runset: RunSet, settings: Settings, tasks: list):
        from dask.distributed import Client, LocalCluster, as_completed
        from distributed import KilledWorker

        if self.scheduler:
            self.client = _connect(self.scheduler)
        else:
            # No dashboard: dashboard_address=None alone still binds the scheduler's HTTP server to port 8787
            # (and warns when that port is taken); its health routes go to a free local port instead.
            options = {"n_workers": self.jobs, "threads_per_worker": 1, "dashboard_address": None,
                       "worker_dashboard_address": None, "silence_logs": logging.CRITICAL,
                       "scheduler_kwargs": {"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                       **self.cluster_options}
            self.cluster = LocalCluster(**options)
            self.client = Client(self.cluster)
        try:
            shared = self.client.scatter(runset, broadcast=True, hash=False)
            self.futures = self.client.map(_dask_task, tasks, runset=shared, settings=settings, pure=False)
            for future in as_completed(self.futures):
                try:
                    rows = future.result()
                except KilledWorker:
                    raise MedoptError(_DIED) from None
                future.release()
                if isinstance(rows, MedoptError):
                    raise rows
                yield rows
        except (MedoptError, KeyboardInterrupt, GeneratorExit):
            raise
        except Exception as error:  # the scheduler or a worker lost: CommClosedError, FutureCancelledError, ...
            if _lost(error):
                raise MedoptError(f"the Dask scheduler or a worker was lost ({type(error).__name__}); the rows "
                                  "computed before are stored: rerun with --resume") from None
            raise

    def close(self, abort: bool = False) -> None:
        if self.client is not None:
            if abort and self.futures:
                self.client.cancel(self.futures)
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None
