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

The peer check reads the CSV of Tan & Clarke's ``med`` tool and compares each value
with the exact MED under that tool's fixed settings (:data:`PEER_METRICS`): a peer
value above our proven upper bound is an infeasible claim, one below our value is a
miss.  The tolerance is the peer's printed precision.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import click

from . import api
from .errors import MedoptError
from .io.results import write_rows
from .io.trec import pair_topics, read_qrels, read_run
from .metrics import parse_metric
from .result import TOLERANCE

# heuristic -> (metric families it computes MED for, the options it takes)
HEURISTICS = {
    "greedy": ({"AP"}, ()),
    "tabu": ({"AP", "SSP"}, ("seed", "iterations", "tenure", "restarts")),
    "tc-err": ({"ERR"}, ("p", "depth")),
    "closed-form": ({"P", "DCG", "SDCG", "RBP"}, ()),
    "alg1": ({"nDCG"}, ()),
}
DEFAULT_HEURISTICS = {"AP": ("greedy", "tabu"), "SSP": ("tabu",), "ERR": ("tc-err",), "P": ("closed-form",),
                      "DCG": ("closed-form",), "SDCG": ("closed-form",), "RBP": ("closed-form",), "nDCG": ("alg1",)}
INSTANCE_COLUMNS = ("run_a", "run_b", "topic", "metric", "heuristic", "heuristic_value", "exact_value", "gap",
                    "heuristic_seconds", "exact_seconds", "exact_certified", "exact_status", "exact_upper_bound",
                    "verdict", "counterexample")
SUMMARY_COLUMNS = ("heuristic", "metric", "instances", "certified", "uncertified", "exact", "fraction_exact",
                   "max_gap", "mean_gap", "above_exact", "exact_errors", "heuristic_seconds", "exact_seconds",
                   "time_ratio")
COUNTEREXAMPLE_FORMAT = "medopt-counterexample/1"


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
        return parse_metric(metric).family in HEURISTICS[self.name][0]

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
    if not match or match.group(1) not in HEURISTICS:
        raise MedoptError(f"unknown heuristic {text!r}; choose from {', '.join(HEURISTICS)} "
                          "(options as NAME(key=value,...), e.g. 'tc-err(p=1)')")
    name, allowed, params = match.group(1), HEURISTICS[match.group(1)][1], []
    for item in filter(None, (s.strip() for s in (match.group(2) or "").split(","))):
        key, sep, value = item.partition("=")
        if not sep or key.strip() not in allowed:
            raise MedoptError(f"heuristic {text!r}: bad option {item!r}; {name} takes "
                              f"{', '.join(allowed) or 'no options'}")
        params.append((key.strip(), _value(value.strip())))
    return Heuristic(name, tuple(params))


def default_heuristics(metric) -> list[Heuristic]:
    metric = parse_metric(metric)
    if metric.family not in DEFAULT_HEURISTICS:
        raise MedoptError(f"no heuristic computes MED for {metric}; certify covers "
                          f"{', '.join(DEFAULT_HEURISTICS)}")
    return [Heuristic(name) for name in DEFAULT_HEURISTICS[metric.family]]


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


def _timed_med(metric, a, b, judgments, **kwargs):
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
            exact, exact_seconds = _timed_med(metric, case.a, case.b, case.judgments, method="exact",
                                              solver=settings.solver, time_limit=settings.time_limit, **common)
        except MedoptError as error:  # kept as a row (verdict "error") when the heuristics accept the input
            exact, exact_seconds, exact_error = None, time.perf_counter() - started, str(error)
        rows, found = [], []
        for heuristic in heuristics:
            result, seconds = _timed_med(metric, case.a, case.b, case.judgments, method=heuristic.name,
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


def counterexample(case: Case, metric, heuristic: Heuristic, result, exact, common: dict) -> dict:
    """The instance cut to what matters, both answers, and how to replay them."""
    from .instance import build_instance

    instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=common["max_grade"],
                              gains=common["gains"], residual=common["residual"])
    in_lists = set(instance.a) | set(instance.b)
    judgments = {d: g for d, g in instance.judgments.items() if d in in_lists}
    outside = {}
    if metric.recall_based:  # judged relevant documents anywhere count towards R and the ideal DCG
        outside = {d: g for d, g in instance.judgments.items() if d not in in_lists and (
            metric.is_relevant(g) or metric.gain(g, instance.grading) > 0)}
    judgments.update(outside)
    gains = instance.grading.gains
    return {
        "format": COUNTEREXAMPLE_FORMAT,
        "metric": str(metric),
        "a": list(instance.a), "b": list(instance.b),
        "judgments": judgments,
        "judged_relevant_outside": len(outside),
        "max_grade": instance.max_grade,
        "gains": None if gains is None else {str(g): float(v) for g, v in gains.items()},
        "residual": instance.residual,
        "heuristic": {"name": heuristic.name, "params": heuristic.options},
        "exact": {"solver": exact.solver, "certified": exact.certified, "status": exact.status,
                  "upper_bound": exact.upper_bound},
        "values": {"heuristic": result.value, "exact": exact.value, "gap": exact.value - result.value},
        "directions": {"heuristic": result.direction, "exact": exact.direction},
        "assignments": {"heuristic": result.assignment, "exact": exact.assignment},
        "source": {"run_a": case.run_a, "run_b": case.run_b, "topic": case.topic, **case.source},
    }


def load_counterexample(path) -> dict:
    """Read a counterexample file written by ``medopt certify`` (gains keys back to integers)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise MedoptError(f"{path}: cannot read counterexample: {error}") from None
    if not isinstance(data, dict) or data.get("format") != COUNTEREXAMPLE_FORMAT:
        raise MedoptError(f"{path}: not a medopt counterexample ({COUNTEREXAMPLE_FORMAT})")
    if data.get("gains") is not None:
        data["gains"] = {int(g): v for g, v in data["gains"].items()}
    return data


@dataclass
class Replay:
    heuristic_value: float
    exact_value: float
    exact_certified: bool
    rescored: dict          # {"heuristic": ..., "exact": ...}: the stored assignments re-scored
    ok: bool


def check_counterexample(data: Mapping, *, solver: str | None = None) -> Replay:
    """Re-run the heuristic and the exact solver on a counterexample; both values must come back."""
    from .instance import build_instance

    gains = None if data["gains"] is None else {int(g): v for g, v in data["gains"].items()}
    kwargs = dict(max_grade=data["max_grade"], gains=gains, residual=data["residual"])
    params = data["heuristic"]["params"]
    heuristic = api.med(data["metric"], data["a"], data["b"], data["judgments"], method=data["heuristic"]["name"],
                        **kwargs, **params)
    exact = api.med(data["metric"], data["a"], data["b"], data["judgments"], method="exact",
                    solver=solver or data["exact"]["solver"], **kwargs)
    instance = build_instance(data["metric"], data["a"], data["b"], data["judgments"], **kwargs)
    rescored = {side: instance.difference(data["assignments"][side], data["directions"][side])
                for side in ("heuristic", "exact")}
    values = data["values"]
    ok = (abs(heuristic.value - values["heuristic"]) <= TOLERANCE and abs(exact.value - values["exact"]) <= TOLERANCE
          and all(abs(rescored[s] - values[s]) <= TOLERANCE for s in rescored)
          and exact.certified == data["exact"]["certified"])
    return Replay(heuristic.value, exact.value, exact.certified, rescored, ok)


def _labels(count: int) -> list[str]:
    """A, B, ..., Z, AA, AB, ... (letters only, so a grade can follow)."""
    labels, width = [], 1
    while len(labels) < count:
        labels.extend("".join(t) for t in itertools.product("ABCDEFGHIJKLMNOPQRSTUVWXYZ", repeat=width))
        width += 1
    return labels[:count]


def format_counterexample(data: Mapping, name: str = "") -> str:
    """A few readable lines: the rankings with grades (A1 = doc A judged 1, B? = unjudged), both answers."""
    docs = list(dict.fromkeys(data["a"] + data["b"]))
    label = dict(zip(docs, _labels(len(docs))))
    judged = data["judgments"]
    show = lambda ranking: " ".join(f"{label[d]}{judged[d] if d in judged else '?'}" for d in ranking)
    values, source = data["values"], data["source"]
    heuristic = data["heuristic"]["name"] + (
        "(" + ",".join(f"{k}={v}" for k, v in data["heuristic"]["params"].items()) + ")"
        if data["heuristic"]["params"] else "")
    where = f"{source.get('run_a')} vs {source.get('run_b')}, topic {source.get('topic')}"
    kind = "falls short by" if values["gap"] > 0 else "is ABOVE the exact value by"
    gains = "" if not data.get("gains") else ", gains " + " ".join(f"{g}:{v:g}" for g, v in data["gains"].items())
    lines = [f"{name + ': ' if name else ''}{data['metric']} (G={data['max_grade']}{gains}), {heuristic} {kind} "
             f"{abs(values['gap']):.6g} ({where})",
             f"  A: {show(data['a'])}", f"  B: {show(data['b'])}"]
    outside = [g for d, g in judged.items() if d not in label]
    if outside:
        lines.append(f"  judged relevant outside both lists: {len(outside)} (grades {' '.join(map(str, outside))})")
    for side, title in (("heuristic", heuristic), ("exact", "exact")):
        assignment = data["assignments"][side]
        grades = " ".join(f"{label[d]}={assignment[d]}" for d in sorted(assignment, key=docs.index))
        certified = ", certified" if side == "exact" and data["exact"]["certified"] else ""
        lines.append(f"  {title}: {values[side]:.6f} ({data['directions'][side].upper()} higher{certified}): "
                     f"{grades or '(nothing unjudged)'}")
    legend = " ".join(f"{label[d]}={d}" for d in docs)
    lines.append(f"  docs: {legend if len(legend) <= 400 else legend[:400] + ' ...'}")
    return "\n".join(lines)


def save_counterexample(data: Mapping, directory, number: int) -> Path:
    source = data["source"]
    stem = "_".join(str(part) for part in (f"cx{number:04d}", data["metric"], data["heuristic"]["name"],
                                           source.get("run_a"), source.get("run_b"), source.get("topic")))
    path = Path(directory) / (re.sub(r"[^A-Za-z0-9._@-]+", "-", stem)[:180] + ".json")
    # one key a line, each value compact: small enough to read, still plain JSON
    path.write_text("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()) + "\n}\n")
    return path


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
    from .cli import run_names  # lazily: cli registers this module's command

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
    from .random_instances import random_instances

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
                              f"({', '.join(map(str, parsed))}); it computes MED for "
                              f"{', '.join(sorted(HEURISTICS[heuristic.name][0]))}")
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


# ---------------------------------------------------------------------------
# peer check (Tan & Clarke's med tool)

# column -> (metric, max_grade, gains, residual, ranking depth read)
TC_GAINS = {0: 0.0, 1: 0.25, 2: 0.75}
PEER_METRICS = {
    "MED-nDCG@20": ("SDCG@20", 2, TC_GAINS, False, None),
    "MED-RBP": ("RBP(p=0.95)", 1, None, True, 1000),
    "MED-ERR": ("ERR@30", 2, TC_GAINS, False, None),
}
PEER_COLUMNS = ("run1", "run2", "topic", "metric", "medopt_metric", "peer", "exact", "upper_bound", "certified",
                "difference", "tolerance", "verdict", "seconds")
PEER_SUMMARY_COLUMNS = ("metric", "rows", "equal", "above", "below", "undecided", "max_above", "max_below")


def printed_tolerance(text: str) -> float:
    """Half a unit in the last printed decimal of the peer's value (at least 1e-6)."""
    mantissa = text.strip().lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else None
    if decimals is None or "e" in text.lower():
        return 1e-6
    return max(1e-6, 0.5 * 10.0 ** -decimals + TOLERANCE)


def read_peer(path) -> list[dict]:
    try:
        handle = open(path, newline="")
    except OSError as error:
        raise MedoptError(f"{path}: cannot open: {error.strerror or error}") from None
    with handle:
        reader = csv.DictReader(handle)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in ("run1", "run2", "topic", *PEER_METRICS) if c not in header]
        if missing:
            raise MedoptError(f"{path}:1: peer CSV lacks column(s) {', '.join(missing)} "
                              f"(expected run1,run2,topic,{','.join(PEER_METRICS)})")
        reader.fieldnames = header
        rows = []
        for number, row in enumerate(reader, start=2):
            entry = {c: (row.get(c) or "").strip() for c in ("run1", "run2", "topic", *PEER_METRICS)}
            for column in PEER_METRICS:
                try:
                    value = float(entry[column])
                except ValueError:
                    raise MedoptError(f"{path}:{number}: {column} {entry[column]!r} is not a number") from None
                if not math.isfinite(value):
                    raise MedoptError(f"{path}:{number}: {column} {entry[column]!r} is not a finite number")
            rows.append({**entry, "line": number})
    return rows


def peer_check(peer_path, named_runs, qrels: Mapping, settings: Settings = Settings(), progress=False,
               warn=lambda message: None) -> tuple[list[dict], list[dict]]:
    """Compare each peer value with the exact MED under the peer's settings; (rows, summary per metric)."""
    from tqdm import tqdm

    by_name = {}
    for name, run in named_runs:
        for key in {name, run.name, run.path, Path(run.path).name, Path(run.path).stem}:
            by_name.setdefault(key, []).append(run)
    peer_rows = read_peer(peer_path)

    def find(name, line):
        runs = by_name.get(name) or by_name.get(Path(name).name) or by_name.get(Path(name).stem) or []
        if len(set(map(id, runs))) != 1:
            reason = "matches several runs" if runs else "is not among the runs given"
            raise MedoptError(f"{peer_path}:{line}: run {name!r} {reason} "
                              f"({', '.join(name for name, _ in named_runs)})")
        return runs[0]

    rows, skipped = [], 0
    for entry in tqdm(peer_rows, disable=not progress, unit="row", desc="peer", file=sys.stderr):
        run_a, run_b, topic = find(entry["run1"], entry["line"]), find(entry["run2"], entry["line"]), entry["topic"]
        if topic not in run_a.rankings or topic not in run_b.rankings:
            skipped += 1
            continue
        for column, (metric, max_grade, gains, residual, depth) in PEER_METRICS.items():
            a, b = run_a.rankings[topic][:depth], run_b.rankings[topic][:depth]
            try:
                result, seconds = _timed_med(metric, a, b, qrels.get(topic, {}), max_grade=max_grade, gains=gains,
                                             residual=residual, solver=settings.solver,
                                             time_limit=settings.time_limit)
            except MedoptError as error:
                raise MedoptError(f"{peer_path}:{entry['line']}: {metric}: {error}") from None
            peer, tolerance = float(entry[column]), printed_tolerance(entry[column])
            if peer > result.upper_bound + tolerance:
                verdict = "above"
            elif peer < result.value - tolerance:
                verdict = "below"
            else:
                verdict = "equal" if result.certified else "undecided"
            rows.append({"run1": entry["run1"], "run2": entry["run2"], "topic": topic, "metric": column,
                         "medopt_metric": metric, "peer": peer, "exact": result.value,
                         "upper_bound": result.upper_bound, "certified": result.certified,
                         "difference": peer - result.value, "tolerance": tolerance, "verdict": verdict,
                         "seconds": seconds})
    if skipped:
        warn(f"{skipped} peer row(s) skipped: the topic is missing from one of the runs")
    summary = []
    for column in PEER_METRICS:
        group = [r for r in rows if r["metric"] == column]
        count = lambda verdict: sum(1 for r in group if r["verdict"] == verdict)
        above = [r["peer"] - r["upper_bound"] for r in group if r["verdict"] == "above"]
        below = [r["exact"] - r["peer"] for r in group if r["verdict"] == "below"]
        summary.append({"metric": column, "rows": len(group), "equal": count("equal"), "above": count("above"),
                        "below": count("below"), "undecided": count("undecided"),
                        "max_above": max(above) if above else math.nan,
                        "max_below": max(below) if below else math.nan})
    return rows, summary


# ---------------------------------------------------------------------------
# the command


class CertifyCommand(click.Command):
    """A MedoptError becomes a one-line message and exit status 2 (as medopt's group does)."""

    def invoke(self, ctx):
        from .cli import one_line_errors  # the command also runs on its own (tests, scripts)

        return one_line_errors(super().invoke, ctx)


def _warn(message: str) -> None:
    click.echo(f"medopt: warning: {message}", err=True)


@click.command("certify", cls=CertifyCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="TREC qrels; none: nothing judged.")
@click.option("-m", "--metric", "metrics", multiple=True, help="Metric (AP@10, SSP@20, ERR@20, nDCG@10, ...). Repeatable.")
@click.option("--heuristic", "heuristics", multiple=True, metavar="NAME[(k=v,...)]",
              help="greedy, tabu, tc-err, closed-form or alg1, with options, e.g. 'tc-err(p=1)', "
                   "'tabu(seed=3,iterations=200)'. Repeatable (default: every heuristic for each metric).")
@click.option("--solver", type=click.Choice(["highs", "cpsat"]), default=None, help="Exact solver (default: CP-SAT for AP, HiGHS otherwise).")
@click.option("--time-limit", type=float, default=None, help="Seconds per exact MED; beyond: uncertified.")
@click.option("--max-grade", type=int, default=None,
              help="Top grade G (runs: default the topic's largest grade; --generate: the grades generated).")
@click.option("--gains", default=None, metavar="G:GAIN,...", help="Explicit gain map, e.g. 0:0,1:0.25,2:0.75.")
@click.option("--residual", is_flag=True, help="RBP: credit the unseen tail to the better list.")
@click.option("--generate", type=click.IntRange(min=1), default=None, help="Certify on N seeded random instances.")
@click.option("--k", "depth", type=click.IntRange(min=1), default=10, show_default=True,
              help="--generate: the depth k of the generated lists.")
@click.option("--seed", type=int, default=0, show_default=True, help="--generate: random seed.")
@click.option("--judged-fraction", type=click.FloatRange(0, 1), default=None, help="--generate: share judged.")
@click.option("--max-unjudged", type=click.IntRange(min=0), default=None,
              help="--generate: most unjudged documents per instance.")
@click.option("--peer", type=click.Path(dir_okay=False), default=None,
              help="CSV of Tan & Clarke's med tool (run1,run2,topic,MED-nDCG@20,MED-RBP,MED-ERR) to check.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Directory for instances.csv, summary.csv and counterexample JSON files (peer.csv, peer_summary.csv).")
@click.option("--show", type=click.IntRange(min=0), default=5, show_default=True, help="Counterexamples printed.")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
def certify_command(runs, qrels, metrics, heuristics, solver, time_limit, max_grade, gains, residual, generate,
                    depth, seed, judged_fraction, max_unjudged, peer, out, show, honour_rank, progress):
    """Heuristic MED against the exact MED: on every topic of every pair of RUNS, or on --generate N instances.

    Prints one summary row per heuristic and metric (fraction of certified instances where the heuristic is
    exact, largest and mean gap, median exact/heuristic time ratio); misses are saved as counterexamples.
    With --peer, checks a peer tool's MED values against the exact ones instead.
    """
    from tqdm import tqdm

    if time_limit is not None and time_limit <= 0:
        raise MedoptError(f"--time-limit must be positive, got {time_limit:g}")
    settings = Settings(solver=solver, time_limit=time_limit, max_grade=None if generate else max_grade,
                        gains=parse_gains(gains), residual=residual)
    show_progress = sys.stderr.isatty() if progress is None else progress
    out_dir = Path(out) if out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    judgments = read_qrels(qrels) if qrels else {}
    if peer:
        if generate or metrics or heuristics:
            raise MedoptError("--peer fixes the metrics and compares no heuristic: drop --generate, -m, --heuristic")
        if not runs:
            raise MedoptError("--peer needs the RUNS the peer compared")
        rows, summary = peer_check(peer, read_runs(runs, honour_rank), judgments, settings, show_progress, _warn)
        if out_dir:
            write_rows(rows, PEER_COLUMNS, "csv", out_dir / "peer.csv")
            write_rows(summary, PEER_SUMMARY_COLUMNS, "csv", out_dir / "peer_summary.csv")
        click.echo(format_table(summary, PEER_SUMMARY_COLUMNS), nl=False)
        return
    if not metrics:
        raise MedoptError("say which metric(s) to certify with -m (e.g. -m AP@10)")
    if generate:
        if runs or qrels:
            raise MedoptError("--generate makes its own instances: drop RUNS and --qrels")
        cases = cases_from_generator(generate, seed=seed, k=depth, max_grade=max_grade,
                                     judged_fraction=judged_fraction, max_unjudged=max_unjudged)
    else:
        if len(runs) < 2:
            raise MedoptError(f"certify needs two or more RUNS (got {len(runs)}), or --generate N")
        cases = cases_from_runs(read_runs(runs, honour_rank), judgments, _warn)
        if not cases:
            raise MedoptError("the runs have no topic in common")
    work = plan(metrics, heuristics)
    for metric in (parse_metric(m) for m in metrics):
        if all(metric != m for m, _ in work):
            _warn(f"no requested heuristic computes MED for {metric}: skipped")
    warm_up(work, settings)
    rows, found = [], []
    jobs = [(case, metric, hs) for case in cases for metric, hs in work]
    for case, metric, hs in tqdm(jobs, disable=not show_progress, unit="instance", desc="certify", file=sys.stderr):
        case_rows, case_found = certify_case(case, metric, hs, settings)
        rows += case_rows
        found += case_found
    for number, (row, data) in enumerate(found, start=1):
        if out_dir:
            row["counterexample"] = save_counterexample(data, out_dir, number).name
        if number <= show or row["verdict"] == "above":
            click.echo(format_counterexample(data, row["counterexample"] or f"counterexample {number}") + "\n")
    if len(found) > show:
        click.echo(f"... {len(found) - show} more counterexample(s){' in ' + str(out_dir) if out_dir else ''}\n")
    summary = summarize(rows)
    if out_dir:
        write_rows(rows, INSTANCE_COLUMNS, "csv", out_dir / "instances.csv")
        write_rows(summary, SUMMARY_COLUMNS, "csv", out_dir / "summary.csv")
    click.echo(format_table(summary, SUMMARY_COLUMNS), nl=False)
    errors = [r for r in rows if r["verdict"] == "error"]
    for row in {(r["run_a"], r["run_b"], r["topic"], r["metric"]): r for r in errors}.values():
        _warn(f"exact solver failed on {row['metric']}, {row['run_a']} vs {row['run_b']}, topic {row['topic']}: "
              f"{row['exact_status'][len('error: '):]} (counted as uncertified)")
    bugs = [r for r in rows if r["verdict"] == "above"]
    if bugs:
        for row in bugs:
            click.echo(f"medopt: BUG: {row['heuristic']} = {row['heuristic_value']:.12g} exceeds the exact "
                       f"{'value' if row['exact_certified'] else 'upper bound'} "
                       f"{row['exact_value' if row['exact_certified'] else 'exact_upper_bound']:.12g} for "
                       f"{row['metric']}, {row['run_a']} vs {row['run_b']}, topic {row['topic']}", err=True)
        click.echo(f"medopt: BUG: {len(bugs)} heuristic value(s) above the exact maximum; see above", err=True)
        sys.exit(1)


__all__ = ["Case", "Heuristic", "Settings", "certify_case", "certify_command", "check_counterexample",
           "load_counterexample", "parse_heuristic", "peer_check", "summarize", "format_counterexample"]
