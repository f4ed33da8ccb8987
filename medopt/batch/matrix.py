"""``medopt matrix``: every pair of many runs x every topic x every metric, into a results store.

The job is cut into tasks (:mod:`medopt.batch.tasks`) that run on an *engine* -- a local
process pool, or Dask distributed (:mod:`medopt.batch.engines`) -- and the main process
writes each finished task's rows to the store in one transaction.  A rerun with
``resume=True`` plans only the rows the store lacks (and, with ``retry=True``, those stored
uncertified), so a job killed at any moment finishes with every row present once (rows are
deterministic: the same inputs give the same values).

Everything a job can be told wrong (metrics, settings, the store, the qrels, the runs, topics
in common) is checked before the store is created or changed; a job that fails before its
first row leaves no store behind.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .. import methods
from ..metrics.companions import parse_companion
from ..errors import MedoptError, MedoptWarning
from ..core.instance import RelevanceLimit, build_instance
from ..io.passages import read_passage_judgments
from ..io.paths import check_output_file
from .summary import pair_summary
from ..io.trec import file_sha256, read_qrels, tie_note
from ..io.topics import unretrieved_topics
from ..metrics import parse_metric
from ..io.store import ResultStore, check_store_file, identify, refuse_review, remove_if_unused
from .engines import make_engine, read_runs
from .blocks import KERNEL_METHODS, RANGE_KERNELS
from .passageset import character_job, check_character_settings, plan_passages, read_passage_set
from .runset import chosen_topics, RunSet, load_runset
from .tasks import Settings, Unit, companion_rows

FAST_ROWS_PER_TASK = 4096
INSTANCE_ROWS_PER_TASK = 4


@dataclass
class Plan:
    tasks: list = field(default_factory=list)
    rows: int = 0          # rows the tasks will produce
    stored: int = 0        # rows of this job already in the store
    one_sided: int = 0     # (pair, topic) skipped: the topic is in one run of the pair only
    retried: int = 0       # rows stored uncertified, computed again (retry)


# ---------------------------------------------------------------------------
# planning


# the fast path's profile search runs without a deadline or the memory ceiling, its loops over the grades
# for a whole block of topics: above this many grades each topic goes through medopt.med, under both
FAST_PROFILE_GRADES = 10_000


def resolve_method(metric, max_grade: int, settings: Settings, cache: dict) -> tuple[str, bool]:
    """The method ``medopt.med`` would use for this metric and top grade, and whether the fast path applies."""
    key = (str(metric), max_grade)
    if key not in cache:
        method = settings.method
        if method == "auto":
            probe = build_instance(metric, (), (), {}, max_grade=max_grade, limits=settings.limits)
            method = methods.auto(probe, ranges=settings.ranges).name
        # the array kernels compute what the method computes, for a metric without options (Alg. 1's: with
        # a cutoff; the closed form's: the dot products, not Success or R@k); a range: the kernels that give
        # both ends (Alg. 1 gives none)
        applies = method in KERNEL_METHODS and methods.get(method).computes(metric) and (
            method != "closed-form" or methods.is_dot_product(metric)) and (
            method != "alg1" or metric.cutoff is not None) and (not settings.ranges or method in RANGE_KERNELS)
        fast = (settings.fast and applies and settings.pad == "none" and not settings.residual
                and not settings.limits and (method != "ndcg-profiles" or max_grade <= FAST_PROFILE_GRADES))
        cache[key] = (method, fast)
    return cache[key]


def plan_job(runset: RunSet, metrics: list, settings: Settings, store: ResultStore | None, *, jobs: int = 1,
             fast_rows: int = FAST_ROWS_PER_TASK, instance_rows: int = INSTANCE_ROWS_PER_TASK,
             topics: np.ndarray | None = None, retry: bool = False, complete: bool = False) -> Plan:
    """Units for every unordered pair x common topic x metric the store does not hold yet (with ``retry``:
    or holds uncertified), cut into tasks; ``topics`` (a mask over topic codes) restricts the topics;
    ``complete`` (trec_eval's -c): every pair takes every chosen topic, a run that did not retrieve one
    ranking nothing there."""
    plan, cache, fast_units, slow_units = Plan(), {}, [], []
    chosen = topics
    n = len(runset.names)
    for i in range(n):
        for j in range(i + 1, n):
            if complete and chosen is not None:
                common = np.flatnonzero(chosen)
            else:
                common = runset.common_topics(i, j)
                plan.one_sided += int(np.count_nonzero((runset.length[i] > 0) | (runset.length[j] > 0))) - len(common)
            a, b = store.pair_order(runset.names, i, j) if store else (i, j)
            if chosen is not None:
                common = common[chosen[common]]
            tops = runset.max_grade[common]
            for metric in metrics:
                stored, again = store.stored_and_retried(runset.names[a], runset.names[b], str(metric), retry=retry) \
                    if store else (set(), set())
                groups: dict = {}
                for top in np.unique(tops).tolist():  # the method depends on the metric and G only
                    method, fast = resolve_method(metric, top, settings, cache)
                    part = common[tops == top]
                    if stored or again:
                        keep = [t for t in part.tolist() if (runset.topics[t], method) not in stored]
                        plan.stored += len(part) - len(keep)
                        plan.retried += sum((runset.topics[t], method) in again for t in keep)
                        part = np.array(keep, np.int64)
                    groups.setdefault((method, fast), []).append(part)
                for (method, fast), parts in groups.items():
                    part = np.sort(np.concatenate(parts))
                    if len(part):
                        (fast_units if fast else slow_units).append(Unit(a, b, str(metric), method, fast, part))
                        plan.rows += len(part)
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
    retried: int = 0
    pairs: list | None = None      # the per-pair summary with SPEC 12's columns (run_matrix's ``test``)


def job_settings(qrels_path, settings: Settings, honour_rank: bool, spans_path=None, *,
                 several_methods: bool = False) -> dict:
    """What defines the MED values of a store: rows computed under other settings must not mix (MED-U:
    the spans file too).  The method asked for is one of them (one method per pair, topic and metric)
    unless ``several_methods``: the user asks to store another method's rows beside them."""
    digest = file_sha256(qrels_path) if qrels_path else "none"
    limits = [asdict(limit) for limit in settings.limits]
    spans = file_sha256(spans_path) if spans_path else "none"
    wanted = {"qrels_sha256": digest, "spans_sha256": spans, "max_grade": str(settings.max_grade),
              "pad": settings.pad, "residual": str(settings.residual), "limits": json.dumps(limits),
              "honour_rank": str(honour_rank), "range": str(settings.ranges), "method": settings.method}
    if several_methods:
        del wanted["method"]
    return wanted


def run_inputs(runs) -> list:
    """The identity of each run file; the same file given twice (``a.run``, ``./a.run``) is refused."""
    inputs, seen = [], {}
    for run in runs:
        item = identify("run", run)
        if item.path in seen:
            raise MedoptError(f"{run}: the same file as {seen[item.path]}: give each run once")
        seen[item.path] = run
        inputs.append(item)
    return inputs


def stable_names(defaults: list, inputs: list, review, stored: set) -> list:
    """The name of each run in the store: the name it has there (matched by path, or by content for a
    moved file); a run new to the store its run id (``defaults``: run ids, or file names where they
    collide), else its file name, else its path -- the first that no other run of the store has."""
    names = [review.names.get(item.path) for item in inputs]
    taken = set(stored) | {name for name in names if name}
    for k, name in enumerate(names):
        if name is None:
            candidates = (defaults[k], Path(inputs[k].path).name, inputs[k].path)
            names[k] = next((c for c in candidates if c not in taken), inputs[k].path)
            taken.add(names[k])
    return names


def _warn(message: str) -> None:
    warnings.warn(message, MedoptWarning, stacklevel=3)


def unique_metrics(texts, warn=_warn, *, passages: bool = False) -> list:
    """Parsed metrics, each once: a metric given twice (``P@10`` and ``P.10``) is computed once, with a warning.
    A character-level metric (U, SPEC 8) is refused unless ``passages`` (the callers that read passage runs)."""
    metrics, given = {}, {}
    for text in texts:
        metric = parse_metric(text)
        if getattr(metric, "characters", False) and not passages:
            raise MedoptError(f"{metric} scores passage runs: medopt compare RUN_A RUN_B --qrels QRELS --spans SPANS "
                              f"-m '{metric}' (or medopt.compare(..., spans=...)) computes it")
        if str(metric) in metrics:
            warn(f"metric {text!r} is {metric}, given already as {given[str(metric)]!r}: computed once")
            continue
        metrics[str(metric)], given[str(metric)] = metric, text
    return list(metrics.values())


def unique_measures(texts, warn=_warn, *, passages: bool = False) -> tuple[list, list]:
    """The MED metrics and the companion measures (``RBO(p=0.9)``, :mod:`medopt.metrics.companions`) among
    ``texts``, each once."""
    companions, metrics = {}, []
    for text in texts:
        companion = parse_companion(text)
        if companion is None:
            metrics.append(text)
        elif str(companion) in companions:
            warn(f"{text!r} is {companion}, given already: computed once")
        else:
            companions[str(companion)] = companion
    return unique_metrics(metrics, warn, passages=passages), list(companions.values())


def run_matrix(runs, metrics, *, qrels=None, store="medopt-matrix.sqlite", settings: Settings = Settings(),
               engine: str = "local", jobs: int | None = None, scheduler: str | None = None, resume: bool = False,
               retry: bool = False, complete: bool = False, topics=None, honour_rank: bool = False,
               progress: bool | None = None, fast_rows: int = FAST_ROWS_PER_TASK,
               instance_rows: int = INSTANCE_ROWS_PER_TASK, cluster_options: dict | None = None,
               warn=_warn, spans=None, names=None, refresh: bool = False,
               several_methods: bool = False, test: str | None = None, alpha: float = 0.05,
               correction: str = "none") -> MatrixReport:
    """Compute MED for every unordered pair of ``runs`` (TREC files) x common topic x metric into ``store``.

    ``retry`` (with ``resume``) computes again the rows stored uncertified: a time limit reached, a solver
    stopped early (not a heuristic's rows). Topics per SPEC 10 (io.topics.mean_topics): those the qrels judge
    and the pair retrieved; ``complete`` (-c) every judged topic; ``topics`` only those.
    ``warn`` receives what the user should know (default: :class:`MedoptWarning` warnings).
    MED-U (SPEC 8): ``U(L=..)`` metrics (alone in the job), ``runs`` 8-column passage runs and ``spans`` the
    relevant spans file (:mod:`medopt.batch.passageset`).  ``names`` (aligned with ``runs``, None: the
    run's own) names runs, as ``NAME=PATH`` arguments do.
    ``refresh`` (with ``resume``) computes again the rows of the inputs that changed since they were
    stored (else a changed input is refused); ``several_methods`` (with ``resume``) stores the rows of
    ``settings.method`` beside those of the method the store was made with.
    """
    started = time.perf_counter()
    if len(runs) < 2:
        raise MedoptError("matrix needs at least two runs")
    jobs = jobs or os.cpu_count() or 1
    metrics, companions = unique_measures(metrics, warn, passages=True)
    characters = character_job(metrics, companions, spans)
    settings = Settings(**{**asdict(settings), "limits": tuple(
        RelevanceLimit(**l) if isinstance(l, dict) else l for l in settings.limits)})
    if characters:
        check_character_settings(settings)
    for flag, given in (("--retry-timeouts", retry), ("--refresh", refresh), ("--add-method", several_methods)):
        if given and not resume:
            raise MedoptError(f"{flag} completes a job: pass --resume with it")
    make_engine(engine, jobs=jobs, scheduler=scheduler)  # an unknown engine is refused before any work
    check_store_file(store)
    store = Path(store)
    created = not store.exists()
    if created:
        check_output_file(store, "--store", binary=True)  # a file of its own: never a device or a FIFO
    check_store_file(store)
    if characters:
        judgments, topic_spans = read_passage_judgments(qrels, spans)
    else:
        judgments = read_qrels(qrels) if qrels else {}
    wanted = job_settings(qrels, settings, honour_rank, spans, several_methods=several_methods)
    inputs = [identify(kind, path) for kind, path in (("qrels", qrels), ("spans", spans)) if path]
    if not created:  # an existing store is checked before the runs are read, and not changed yet
        with ResultStore(store, write=False) as existing:
            refuse_review(store, existing.review(wanted, inputs, refresh=refresh), resume=resume, refresh=refresh)
    if characters:
        runset = read_passage_set(list(runs), judgments, topic_spans, honour_rank=honour_rank)
        in_two = np.add.reduce([runset.has(i) for i in range(len(runset.names))]) >= 2
    else:
        columns = read_runs(list(runs), honour_rank=honour_rank, jobs=jobs)
        for note in filter(None, (tie_note(c.name, c.tied) for c in columns)):
            warn(note)
        extra = unretrieved_topics(judgments, complete)
        runset = load_runset(None, judgments, max_grade=settings.max_grade, columns=columns, extra_topics=extra)
        runset.names = [given or own for given, own in zip(names or [None] * len(runset.names), runset.names)]
        if len(set(runset.names)) != len(runset.names):
            raise MedoptError("two runs have the same name and file name; give each run a distinct file")
        in_two = np.add.reduce([length > 0 for length in runset.length]) >= 2  # topics some pair shares
    if not in_two.any() and not complete:
        raise MedoptError(f"no two of the {len(runset.names)} runs share a topic: nothing to compare")
    chosen = chosen_topics(runset, in_two, judgments, qrels, complete=complete, topics=topics, warn=warn)
    ran = run_inputs(runs)
    read_seconds = time.perf_counter() - started
    done = [0]

    def name_runs(review) -> dict:
        if not review.recorded:
            warn(f"{store} was made by an older medopt, which kept no identity of its runs and qrels: they are "
                 "taken to be those its rows were computed from")
        stored = {item.name for item in results.inputs() if item.kind == "run"}
        runset.names = stable_names(runset.names, ran, review, stored)
        return {item.path: name for item, name in zip(ran, runset.names)}

    try:
        with ResultStore(store) as results:
            # the write lock, from here to the first rows: a job started beside this one waits, then is
            # refused if its settings differ (or if this one's rows are stored and it did not ask to resume)
            results.claim(wanted, inputs + ran, resume=resume, refresh=refresh, names=name_runs, warn=warn)
            if characters:
                plan = plan_passages(Plan(), runset, metrics, settings, results, jobs=jobs, rows=fast_rows,
                                     topics=chosen, retry=retry)
            else:
                plan = plan_job(runset, metrics, settings, results, jobs=jobs, fast_rows=fast_rows,
                                instance_rows=instance_rows, topics=chosen, retry=retry, complete=complete)
            if plan.tasks:
                _execute(plan, runset, settings, results, make_engine(engine, jobs=jobs, scheduler=scheduler,
                                                                     cluster_options=cluster_options),
                         progress, done)
            if companions:
                extra, held = companion_rows(runset, companions, results, chosen)
                results.insert(extra)
                done[0] += len(extra)
                plan.rows += len(extra)
                plan.stored += held
            results.release()  # the claim ends (committed with the first rows, or here when none came)
            pairs = pair_summary(results.rows(), runset, test=test, alpha=alpha, correction=correction)
            results.replace_pairs(pairs, runset.names)  # the summary, made anew (SPEC 12's columns: not stored)
    except BaseException as error:
        removed = created and store.exists() and remove_if_unused(store)  # a job that stored nothing leaves nothing
        if not removed and done[0] and isinstance(error, MedoptError):
            raise MedoptError(f"{error} ({done[0]} MED(s) computed before it are stored in {store}: "
                              "--resume completes the job once the cause is fixed)") from None
        raise
    return MatrixReport(str(store), runset.names, [str(m) for m in metrics + companions], plan.rows, plan.stored,
                        plan.one_sided, time.perf_counter() - started, read_seconds, plan.retried,
                        pairs if test is not None else None)


def collect_rows(runset: RunSet, metrics, settings: Settings = Settings(), *, engine: str = "local",
                 jobs: int | None = None, topics: np.ndarray | None = None, complete: bool = False) -> list[tuple]:
    """Every pair x common topic x metric of ``runset``, computed without a store (rows in COLUMNS order);
    ``topics`` (a mask over topic codes) restricts the topics; ``complete`` as for plan_job."""
    jobs = jobs or os.cpu_count() or 1
    parsed = [parse_metric(m) for m in metrics]
    if getattr(runset, "characters", False):  # a PassageSet: MED-U
        plan = plan_passages(Plan(), runset, parsed, settings, None, jobs=jobs, rows=FAST_ROWS_PER_TASK,
                             topics=topics)
    else:
        plan = plan_job(runset, parsed, settings, None, jobs=jobs, topics=topics, complete=complete)
    rows = []
    with make_engine(engine, jobs=jobs) as runner:
        for part in runner.run(runset, settings, plan.tasks):
            rows.extend(part)
    return rows


def _execute(plan: Plan, runset: RunSet, settings: Settings, results: ResultStore, engine, progress,
             done: list) -> None:
    from tqdm import tqdm

    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=plan.rows + plan.stored, initial=plan.stored, unit="med", desc="matrix", disable=not show,
               dynamic_ncols=True, smoothing=0.05)
    try:
        with engine:
            for rows in engine.run(runset, settings, plan.tasks):
                results.insert(rows)
                done[0] += len(rows)
                bar.update(len(rows))
    finally:
        bar.close()
