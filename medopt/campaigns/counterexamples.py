"""Counterexamples: an instance where a heuristic missed the exact MED, saved as self-contained
JSON that :func:`check_counterexample` replays (re-running both methods must give both values)."""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .. import api
from ..errors import MedoptError
from ..core.instance import build_instance
from ..core.result import TOLERANCE

COUNTEREXAMPLE_FORMAT = "medopt-counterexample/1"


def counterexample(case, metric, heuristic, result, exact, common: dict) -> dict:
    """The instance cut to what matters, both answers, and how to replay them."""
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
