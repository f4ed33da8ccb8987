"""Check a peer tool's MED values (Tan & Clarke's ``med`` tool CSV) against the exact MED under
that tool's fixed settings (:data:`PEER_METRICS`): a peer value above our proven upper bound is an
infeasible claim, one below our value is a miss.  The tolerance is the peer's printed precision."""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path
from typing import Mapping

from ..errors import MedoptError
from ..core.result import TOLERANCE
from .certify import Settings, timed_med


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
                result, seconds = timed_med(metric, a, b, qrels.get(topic, {}), max_grade=max_grade, gains=gains,
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
