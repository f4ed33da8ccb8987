"""``medopt matrix``: every pair of many runs x every topic x every metric, into a results store.

The job is cut into tasks: a task is a list of *units*, each one pair of runs, one
metric, one method and a block of topics.  Units the closed forms cover (P, DCG,
SDCG, RBP; nDCG@k by Algorithm 1) run as array code over the whole block
(:mod:`medopt.batch.fastpath`); every other unit calls :func:`medopt.med` topic by topic.
Tasks run on an *engine* -- a local process pool, or Dask distributed -- and the main
process writes each finished task's rows to the store in one transaction.  A rerun
with ``resume=True`` plans only the rows the store lacks, so a job killed at any
moment finishes with every row present once (rows are deterministic: the same
inputs give the same values).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from itertools import repeat

import numpy as np

from .. import api, methods
from ..errors import MedoptError
from ..instance import RelevanceLimit, build_instance
from ..io.trec import read_qrels
from ..metrics import parse_metric
from ..store import ResultStore
from .fastpath import KERNEL_METHODS, med_columns
from .runset import RunSet, load_runset, read_run_columns

FAST_ROWS_PER_TASK = 4096
INSTANCE_ROWS_PER_TASK = 4


@dataclass(frozen=True)
class Settings:
    """How each MED is computed (the options of :func:`medopt.med`)."""

    method: str = "auto"
    solver: str | None = None
    time_limit: float | None = None
    max_grade: int | None = None
    pad: str = "none"
    residual: bool = False
    limits: tuple = ()
    strategy: str | None = None
    fast: bool = True  # array kernels where a closed form applies


@dataclass
class Unit:
    run_a: int
    run_b: int
    metric: str
    method: str
    fast: bool
    topics: np.ndarray  # topic codes


@dataclass
class Plan:
    tasks: list = field(default_factory=list)
    rows: int = 0          # rows the tasks will produce
    stored: int = 0        # rows of this job already in the store
    one_sided: int = 0     # (pair, topic) skipped: the topic is in one run of the pair only


# ---------------------------------------------------------------------------
# planning


def resolve_method(metric, max_grade: int, settings: Settings, cache: dict) -> tuple[str, bool]:
    """The method ``medopt.med`` would use for this metric and top grade, and whether the fast path applies."""
    key = (str(metric), max_grade)
    if key not in cache:
        method = settings.method
        if method == "auto":
            probe = build_instance(metric, (), (), {}, max_grade=max_grade, limits=settings.limits)
            method = methods.auto(probe).name
        # the array kernels compute what the method computes, for a cut-off metric without options
        applies = method in KERNEL_METHODS and methods.get(method).computes(metric) and (
            method != "alg1" or metric.cutoff is not None)
        fast = (settings.fast and applies and settings.pad == "none" and not settings.residual
                and not settings.limits)
        cache[key] = (method, fast)
    return cache[key]


def plan_job(runset: RunSet, metrics: list, settings: Settings, store: ResultStore | None, *, jobs: int = 1,
             fast_rows: int = FAST_ROWS_PER_TASK, instance_rows: int = INSTANCE_ROWS_PER_TASK) -> Plan:
    """Units for every unordered pair x common topic x metric the store does not hold yet, cut into tasks."""
    plan, cache, fast_units, slow_units = Plan(), {}, [], []
    n = len(runset.names)
    for i in range(n):
        for j in range(i + 1, n):
            common = runset.common_topics(i, j)
            plan.one_sided += int(np.count_nonzero((runset.length[i] > 0) | (runset.length[j] > 0))) - len(common)
            tops = runset.max_grade[common]
            for metric in metrics:
                stored = store.stored_topics(runset.names[i], runset.names[j], str(metric)) if store else set()
                groups: dict = {}
                for top in np.unique(tops).tolist():  # the method depends on the metric and G only
                    method, fast = resolve_method(metric, top, settings, cache)
                    topics = common[tops == top]
                    if stored:
                        keep = [t for t in topics.tolist() if (runset.topics[t], method) not in stored]
                        plan.stored += len(topics) - len(keep)
                        topics = np.array(keep, np.int64)
                    groups.setdefault((method, fast), []).append(topics)
                for (method, fast), parts in groups.items():
                    topics = np.sort(np.concatenate(parts))
                    if len(topics):
                        (fast_units if fast else slow_units).append(Unit(i, j, str(metric), method, fast, topics))
                        plan.rows += len(topics)
    fast_total = sum(len(u.topics) for u in fast_units)
    # Enough tasks to keep every worker busy to the end, but not so small that overheads dominate.
    size = max(64, min(fast_rows, math.ceil(fast_total / max(4 * jobs, 1))))
    plan.tasks = _pack(fast_units, size) + [[part] for unit in slow_units for part in _split(unit, instance_rows)]
    return plan


def _split(unit: Unit, size: int) -> list:
    return [Unit(unit.run_a, unit.run_b, unit.metric, unit.method, unit.fast, unit.topics[k:k + size])
            for k in range(0, len(unit.topics), size)]


def _pack(units: list, size: int) -> list:
    """Units cut to at most ``size`` topics and packed into tasks of about ``size`` rows."""
    tasks, current, rows = [], [], 0
    for unit in units:
        for part in _split(unit, size):
            if rows + len(part.topics) > size and current:
                tasks.append(current)
                current, rows = [], 0
            current.append(part)
            rows += len(part.topics)
    return tasks + ([current] if current else [])


# ---------------------------------------------------------------------------
# one task (runs in a worker)


def run_task(runset: RunSet, settings: Settings, task: list) -> list[tuple]:
    """The store rows of one task (tuples in medopt.store.COLUMNS order)."""
    rows = []
    for unit in task:
        metric = parse_metric(unit.metric)
        name_a, name_b = runset.names[unit.run_a], runset.names[unit.run_b]
        if unit.fast:
            started = time.perf_counter()
            topics, values, directions, certified, bounds, statuses, assignments = med_columns(
                runset, unit.run_a, unit.run_b, metric, unit.method, unit.topics)
            seconds = (time.perf_counter() - started) / max(len(topics), 1)
            same = lambda value: repeat(value, len(topics))  # noqa: E731
            rows.extend(zip(same(name_a), same(name_b), topics, same(unit.metric), same(unit.method), same("numpy"),
                            values, directions, certified, bounds, statuses, same(seconds), assignments))
            continue
        options = {"strategy": settings.strategy} if settings.strategy else {}
        for t in unit.topics.tolist():
            topic = runset.topics[t]
            try:
                result = api.med(metric, runset.ranking(unit.run_a, t), runset.ranking(unit.run_b, t),
                                 runset.judgments(t), max_grade=int(runset.max_grade[t]), method=unit.method,
                                 solver=settings.solver, time_limit=settings.time_limit, pad=settings.pad,
                                 residual=settings.residual, limits=settings.limits, **options)
            except MedoptError as error:  # re-raised as a plain MedoptError: it crosses process boundaries
                raise MedoptError(f"{name_a} vs {name_b}, topic {topic}, {unit.metric}: {error}") from None
            assignment = json.dumps({d: g for d, g in result.assignment.items() if g > 0}, separators=(",", ":"))
            rows.append((name_a, name_b, topic, unit.metric, unit.method, result.solver, result.value,
                         result.direction, result.certified, result.upper_bound, result.status, result.seconds,
                         assignment))
    return rows


# ---------------------------------------------------------------------------
# the job


@dataclass
class MatrixReport:
    store: str
    runs: list
    metrics: list
    computed: int
    stored_before: int
    one_sided: int
    seconds: float
    read_seconds: float


def job_settings(qrels_path, settings: Settings, honour_rank: bool) -> dict:
    """What defines the MED values of a store: rows computed under other settings must not mix."""
    digest = "none"
    if qrels_path:
        with open(qrels_path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
    limits = [asdict(limit) for limit in settings.limits]
    return {"qrels_sha256": digest, "max_grade": str(settings.max_grade), "pad": settings.pad,
            "residual": str(settings.residual), "limits": json.dumps(limits), "honour_rank": str(honour_rank)}


def read_runs(paths, *, honour_rank: bool = False, jobs: int = 1) -> list:
    """Read run files, several at once on a local process pool when ``jobs > 1``."""
    if jobs <= 1 or len(paths) < 2:
        return [read_run_columns(p, honour_rank=honour_rank) for p in paths]
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial
    with ProcessPoolExecutor(min(jobs, len(paths)), initializer=_start_worker,
                             initargs=(None, None, os.getpid())) as pool:
        return list(pool.map(partial(read_run_columns, honour_rank=honour_rank), paths))


def run_matrix(runs, metrics, *, qrels=None, store="medopt-matrix.sqlite", settings: Settings = Settings(),
               engine: str = "local", jobs: int | None = None, scheduler: str | None = None, resume: bool = False,
               honour_rank: bool = False, progress: bool | None = None, fast_rows: int = FAST_ROWS_PER_TASK,
               instance_rows: int = INSTANCE_ROWS_PER_TASK, cluster_options: dict | None = None) -> MatrixReport:
    """Compute MED for every unordered pair of ``runs`` (TREC files) x common topic x metric into ``store``."""
    started = time.perf_counter()
    if len(runs) < 2:
        raise MedoptError("matrix needs at least two runs")
    jobs = jobs or os.cpu_count() or 1
    metrics = [parse_metric(m) for m in metrics]
    if len({str(m) for m in metrics}) != len(metrics):
        raise MedoptError("a metric is given twice")
    settings = Settings(**{**asdict(settings), "limits": tuple(
        RelevanceLimit(**l) if isinstance(l, dict) else l for l in settings.limits)})
    with ResultStore(store) as results:
        if results.count() and not resume:
            raise MedoptError(f"{store} already holds {results.count()} results: pass --resume to complete "
                              "that job, or choose a new --store")
        results.check_settings(job_settings(qrels, settings, honour_rank))
        columns = read_runs(list(runs), honour_rank=honour_rank, jobs=jobs)
        runset = load_runset(None, read_qrels(qrels) if qrels else {}, max_grade=settings.max_grade,
                             columns=columns)
        if len(set(runset.names)) != len(runset.names):
            raise MedoptError("two runs have the same name and file name; give each run a distinct file")
        read_seconds = time.perf_counter() - started
        plan = plan_job(runset, metrics, settings, results, jobs=jobs, fast_rows=fast_rows,
                        instance_rows=instance_rows)
        if plan.tasks:
            _execute(plan, runset, settings, results, make_engine(engine, jobs=jobs, scheduler=scheduler,
                                                                 cluster_options=cluster_options), progress)
    return MatrixReport(str(store), runset.names, [str(m) for m in metrics], plan.rows, plan.stored,
                        plan.one_sided, time.perf_counter() - started, read_seconds)


def collect_rows(runset: RunSet, metrics, settings: Settings = Settings(), *, engine: str = "local",
                 jobs: int | None = None) -> list[tuple]:
    """Every pair x common topic x metric of ``runset``, computed without a store (rows in COLUMNS order)."""
    jobs = jobs or os.cpu_count() or 1
    plan = plan_job(runset, [parse_metric(m) for m in metrics], settings, None, jobs=jobs)
    rows = []
    with make_engine(engine, jobs=jobs) as runner:
        for part in runner.run(runset, settings, plan.tasks):
            rows.extend(part)
    return rows


def _execute(plan: Plan, runset: RunSet, settings: Settings, results: ResultStore, engine, progress) -> None:
    from tqdm import tqdm

    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=plan.rows + plan.stored, initial=plan.stored, unit="med", desc="matrix", disable=not show,
               dynamic_ncols=True, smoothing=0.05)
    try:
        with engine:
            for rows in engine.run(runset, settings, plan.tasks):
                results.insert(rows)
                bar.update(len(rows))
    finally:
        bar.close()


# ---------------------------------------------------------------------------
# engines: each runs tasks and yields their rows as they finish


def make_engine(name: str, *, jobs: int, scheduler: str | None = None, cluster_options: dict | None = None):
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
    _WORKER.update(runset=runset, settings=settings)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """A killed main process (SIGKILL) cannot stop its pool: each worker leaves when it sees it gone."""
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)


def _pool_task(task: list) -> list:
    return run_task(_WORKER["runset"], _WORKER["settings"], task)


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

        # The run set reaches each worker once (inherited when processes fork), not with every task.
        self.pool = ProcessPoolExecutor(min(self.jobs, len(tasks)), initializer=_start_worker,
                                        initargs=(runset, settings, os.getpid()))
        for future in as_completed([self.pool.submit(_pool_task, task) for task in tasks]):
            yield future.result()

    def close(self, abort: bool = False) -> None:
        if self.pool is None:
            return
        if abort:
            for process in list((getattr(self.pool, "_processes", None) or {}).values()):
                process.terminate()
        self.pool.shutdown(wait=not abort, cancel_futures=True)
        self.pool = None


def _dask_task(task: list, runset: RunSet, settings: Settings) -> list:
    return run_task(runset, settings, task)


class DaskEngine:
    """Dask distributed: the scheduler at ``scheduler``, or a LocalCluster of ``jobs`` worker processes."""

    def __init__(self, jobs: int, scheduler: str | None, cluster_options: dict):
        self.jobs, self.scheduler, self.cluster_options = jobs, scheduler, cluster_options
        self.client = self.cluster = None
        self.futures = []

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        self.close(abort=kind is not None)

    def run(self, runset: RunSet, settings: Settings, tasks: list):
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError:
            raise MedoptError("--engine dask needs dask.distributed (pip install 'dask[distributed]')") from None
        if self.scheduler:
            self.client = Client(self.scheduler)
        else:
            options = {"n_workers": self.jobs, "threads_per_worker": 1, "dashboard_address": None,
                       "silence_logs": logging.ERROR, **self.cluster_options}
            self.cluster = LocalCluster(**options)
            self.client = Client(self.cluster)
        shared = self.client.scatter(runset, broadcast=True, hash=False)
        self.futures = self.client.map(_dask_task, tasks, runset=shared, settings=settings, pure=False)
        for future in as_completed(self.futures):
            rows = future.result()
            future.release()
            yield rows

    def close(self, abort: bool = False) -> None:
        if self.client is not None:
            if abort and self.futures:
                self.client.cancel(self.futures)
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None
