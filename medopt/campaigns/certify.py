"""Certify heuristics against the exact solver (``medopt certify``), and check a peer tool's MED values.

For every instance (a topic of a pair of runs, or a generated instance) and metric,
each heuristic and the exact solver run on the same instance.  A heuristic value is
a lower bound on MED; the exact value is MED itself when certified (SPEC 5).  So:

* gap = exact - heuristic; the heuristic is *exact* on the instance when the gap is
  at most 1e-9 and the exact value is certified.  Uncertified exact values (time
  limit) are counted apart and left out of every gap statistic.
* a heuristic above a certified exact value (or above the exact upper bound) is a
  bug in one of them -- it is reported loudly and the command exits with status 1.
* every miss is saved as a small self-contained counterexample (JSON) that
  :func:`check_counterexample` replays: re-running both methods must give both values.

The peer check is in :mod:`medopt.campaigns.peer`, counterexamples in
:mod:`medopt.campaigns.counterexamples`, the command in :mod:`medopt.cli.certify`.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from .. import api, methods
from ..errors import MedoptError
from ..io.trec import pair_topics, read_run, run_names
from ..metrics import parse_metric
from ..synthetic.random_instances import random_instances
from ..core.result import TOLERANCE
from .counterexamples import counterexample


INSTANCE_COLUMNS = ("run_a", "run_b", "topic", "metric", "heuristic", "heuristic_value", "exact_value", "gap",
                    "heuristic_seconds", "exact_seconds", "exact_certified", "exact_status", "exact_upper_bound",
                    "verdict", "counterexample")
SUMMARY_COLUMNS = ("heuristic", "metric", "instances", "certified", "uncertified", "exact", "fraction_exact",
                   "max_gap", "mean_gap", "above_exact", "exact_errors", "heuristic_seconds", "exact_seconds",
                   "time_ratio")


# ---------------------------------------------------------------------------
# heuristics and settings


@dataclass(frozen=True)
class Heuristic:
    """A heuristic method of ``medopt.med`` with its options, written ``name(key=value,...)``."""

    name: str
    params: tuple = ()

    @property
    def options(self) -> dict:
        return dict(self.params)

    def applies(self, metric) -> bool:
        return methods.get(self.name).computes(parse_metric(metric))

    def __str__(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({','.join(f'{k}={v}' for k, v in self.params)})"


def _value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_heuristic(text: str) -> Heuristic:
    match = re.fullmatch(r"\s*([\w-]+)\s*(?:\((.*)\))?\s*", text)
    names = methods.heuristic_names()
    if not match or match.group(1) not in names:
        raise MedoptError(f"unknown heuristic {text!r}; choose from {', '.join(names)} "
                          "(options as NAME(key=value,...), e.g. 'tc-err(p=1)')")
    name, params = match.group(1), []
    method = methods.get(name)
    for item in filter(None, (s.strip() for s in (match.group(2) or "").split(","))):
        key, sep, value = item.partition("=")
        if not sep or methods.check_options(method, [key.strip()]):  # the rule methods.plan applies
            raise MedoptError(f"heuristic {text!r}: bad option {item!r}; {name} takes "
                              f"{', '.join(method.options) or 'no options'}")
        params.append((key.strip(), _value(value.strip())))
    return Heuristic(name, tuple(params))


def default_heuristics(metric) -> list[Heuristic]:
    metric = parse_metric(metric)
    found = methods.heuristics_for(metric)
    if not found:
        raise MedoptError(f"no heuristic computes MED for {metric}; certify covers "
                          f"{', '.join(methods.heuristic_names())}")
    return [Heuristic(m.name) for m in found]


def parse_gains(text: str | None) -> dict | None:
    """``0:0,1:0.25,2:0.75`` -> {0: 0.0, 1: 0.25, 2: 0.75}."""
    if not text:
        return None
    gains = {}
    for item in text.split(","):
        grade, sep, gain = item.partition(":")
        try:
            gains[int(grade)] = float(gain)
        except ValueError:
            raise MedoptError(f"--gains {text!r}: expected GRADE:GAIN,..., e.g. 0:0,1:0.25,2:0.75") from None
        if not sep:
            raise MedoptError(f"--gains {text!r}: expected GRADE:GAIN,..., e.g. 0:0,1:0.25,2:0.75")
    return gains


@dataclass(frozen=True)
class Settings:
    solver: str | None = None
    time_limit: float | None = None
    max_grade: int | None = None      # None: each case's own (generated) or the topic's qrels
    gains: Mapping | None = None
    residual: bool = False


@dataclass
class Case:
    """One instance to certify: two rankings and the topic's judgments."""

    run_a: str
    run_b: str
    topic: str
    a: tuple
    b: tuple
    judgments: dict
    max_grade: int | None = None
    source: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------
# certifying one case


def timed_med(metric, a, b, judgments, **kwargs):
    started = time.perf_counter()
    result = api.med(metric, a, b, judgments, **kwargs)
    return result, time.perf_counter() - started


def certify_case(case: Case, metric, heuristics: Iterable[Heuristic], settings: Settings = Settings()):
    """Run the exact solver and each heuristic on ``case``; returns (rows, counterexamples).

    Rows follow :data:`INSTANCE_COLUMNS`; verdict is ``exact``, ``miss``, ``uncertified``, ``above`` (a
    bug) or ``error`` (the exact solver refused an instance the heuristics took: a bug in the exact solver,
    kept as a row so that a long run goes on).  A counterexample is made for every miss and every ``above``.
    """
    metric = parse_metric(metric)
    common = dict(max_grade=settings.max_grade if settings.max_grade is not None else case.max_grade,
                  gains=settings.gains, residual=settings.residual)
    try:
        started, exact_error = time.perf_counter(), None
        try:
            exact, exact_seconds = timed_med(metric, case.a, case.b, case.judgments, method="exact",
                                              solver=settings.solver, time_limit=settings.time_limit, **common)
        except MedoptError as error:  # kept as a row (verdict "error") when the heuristics accept the input
            exact, exact_seconds, exact_error = None, time.perf_counter() - started, str(error)
        rows, found = [], []
        for heuristic in heuristics:
            result, seconds = timed_med(metric, case.a, case.b, case.judgments, method=heuristic.name,
                                         **common, **heuristic.options)
            certified = exact is not None and exact.certified
            value, bound = (exact.value, exact.upper_bound) if exact is not None else (math.nan, math.nan)
            if exact is None:
                verdict = "error"
            elif result.value > (value if certified else bound) + TOLERANCE:
                verdict = "above"
            elif not certified:
                verdict = "uncertified"
            else:
                verdict = "exact" if value - result.value <= TOLERANCE else "miss"
            row = {"run_a": case.run_a, "run_b": case.run_b, "topic": case.topic, "metric": str(metric),
                   "heuristic": str(heuristic), "heuristic_value": result.value, "exact_value": value,
                   "gap": value - result.value, "heuristic_seconds": seconds, "exact_seconds": exact_seconds,
                   "exact_certified": certified, "exact_status": exact.status if exact else f"error: {exact_error}",
                   "exact_upper_bound": bound, "verdict": verdict, "counterexample": ""}
            rows.append(row)
            if verdict in ("miss", "above"):
                found.append((row, counterexample(case, metric, heuristic, result, exact, common)))
    except MedoptError as error:
        raise MedoptError(f"{case.run_a} vs {case.run_b}, topic {case.topic}, {metric}: {error}") from None
    return rows, found


# ---------------------------------------------------------------------------
# summaries


def summarize(rows: Iterable[Mapping]) -> list[dict]:
    """One row per (heuristic, metric), in order of first appearance (SUMMARY_COLUMNS).

    Gaps and "fraction exact" are over certified instances only; uncertified ones (time limit, or an
    exact-solver error, also counted as exact_errors) are counted apart.
    """
    groups: dict[tuple, list] = {}
    for row in rows:
        groups.setdefault((row["heuristic"], row["metric"]), []).append(row)
    summary = []
    for (heuristic, metric), group in groups.items():
        certified = [r for r in group if r["exact_certified"]]
        gaps = [r["gap"] for r in certified]
        matches = sum(1 for g in gaps if g <= TOLERANCE)
        ratios = [r["exact_seconds"] / r["heuristic_seconds"] for r in group if r["heuristic_seconds"] > 0]
        summary.append({
            "heuristic": heuristic, "metric": metric, "instances": len(group), "certified": len(certified),
            "uncertified": len(group) - len(certified), "exact": matches,
            "fraction_exact": matches / len(certified) if certified else math.nan,
            "max_gap": max(gaps) if gaps else math.nan, "mean_gap": sum(gaps) / len(gaps) if gaps else math.nan,
            "above_exact": sum(1 for r in group if r["verdict"] == "above"),
            "exact_errors": sum(1 for r in group if r["verdict"] == "error"),
            "heuristic_seconds": sum(r["heuristic_seconds"] for r in group),
            "exact_seconds": sum(r["exact_seconds"] for r in group),
            "time_ratio": statistics.median(ratios) if ratios else math.nan,
        })
    return summary


def format_table(rows: list[dict], columns: Iterable[str]) -> str:
    """Fixed-width text table (floats to 4 significant decimals)."""
    columns = list(columns)

    def text(value):
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            if math.isnan(value):
                return "-"
            value = 0.0 if abs(value) < 1e-12 else value  # rounding noise, far below the 1e-9 tolerance
            return f"{value:.3g}" if value and (abs(value) < 1e-3 or abs(value) >= 1e4) else f"{value:.4f}"
        return str(value)

    cells = [[text(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(line[i]) for line in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.ljust(w) if isinstance(r.get(c), str) else v.rjust(w)
                        for v, w, c in zip(line, widths, columns)) for r, line in zip(rows, cells)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# where cases come from


def read_runs(paths, honour_rank: bool = False) -> list:
    runs = [read_run(p, honour_rank=honour_rank) for p in paths]
    return list(zip(run_names(*runs), runs))


def cases_from_runs(named_runs, qrels: Mapping, warn=lambda message: None) -> list[Case]:
    """Every common topic of every unordered pair of runs."""
    cases = []
    for (name_a, run_a), (name_b, run_b) in itertools.combinations(named_runs, 2):
        topics = pair_topics(run_a, run_b)
        if topics.only_a or topics.only_b:
            warn(f"{name_a} vs {name_b}: {len(topics.only_a) + len(topics.only_b)} topic(s) in one run only, skipped")
        cases += [Case(name_a, name_b, t, run_a.rankings[t], run_b.rankings[t], dict(qrels.get(t, {})))
                  for t in topics.common]
    return cases


def cases_from_generator(count: int, *, seed: int, k: int, max_grade: int | None = None,
                         judged_fraction: float | None = None, max_unjudged: int | None = None) -> list[Case]:
    options = {"k": k, "max_grade": max_grade, "judged_fraction": judged_fraction, "max_unjudged": max_unjudged}
    return [Case("A", "B", f"gen{i}", tuple(c.a), tuple(c.b), c.judgments, c.max_grade,
                 {"generated": {"seed": seed, "index": i, **{o: v for o, v in options.items() if v is not None}}})
            for i, c in enumerate(random_instances(seed, count, **{o: v for o, v in options.items() if v is not None}))]


def plan(metrics, heuristics) -> list[tuple]:
    """(metric, heuristics applying to it) for every metric; errors when nothing applies."""
    parsed = [parse_metric(m) for m in metrics]
    chosen = [parse_heuristic(h) for h in heuristics]
    work = []
    for metric in parsed:
        applying = [h for h in chosen if h.applies(metric)] if chosen else default_heuristics(metric)
        if applying:
            work.append((metric, applying))
    for heuristic in chosen:
        if not any(heuristic in hs for _, hs in work):
            raise MedoptError(f"heuristic {heuristic} applies to none of the metrics "
                              f"({', '.join(map(str, parsed))}): {methods.get(heuristic.name).summary}")
    return work


def warm_up(work, settings: Settings) -> None:
    """Import the solvers and formulations before timing anything (the first call pays for imports)."""
    case = Case("", "", "", ("x", "y", "z"), ("y", "w", "x"), {"z": 1}, 1)
    for metric, heuristics in work:
        try:
            certify_case(case, metric, heuristics, Settings(solver=settings.solver, gains=settings.gains,
                                                            residual=settings.residual))
        except MedoptError:
            pass  # the real cases will say what is wrong
