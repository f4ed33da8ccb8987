"""Plots of ranges (SPEC 7), matplotlib through :mod:`medopt.plots`' helpers.

* :func:`plot_ranges` -- from a store made with ``medopt matrix --range``: a forest plot of one
  pair of runs under one metric, each topic's difference range [low, high] of M(A) - M(B) as a
  bar, and at the bottom the mean difference range [mean low, mean high] with its verdict
  (decided: it excludes 0, no completion of the judgments changes which run is ahead on average;
  else can flip).
* :func:`plot_bounds` -- computed from runs and qrels (:func:`medopt.bounds_table.score_bounds`):
  the runs ranked by their mean trec_eval score (unjudged documents not relevant), each with the
  range of its mean score, [mean low, mean high], as a bar and that score as a marker.
"""

from __future__ import annotations

import numpy as np

from .bounds_table import score_bounds
from .errors import MedoptError
from .metrics import parse_metric
from .io.output import store_files
from .plots import _pyplot, _save
from .result import verdict
from .store import RANGE_COLUMNS, open_existing

# colours: ranges above 0 (A ahead under every assignment), below 0 (B ahead), across 0; the mean
ABOVE, BELOW, ACROSS, MEAN = "tab:blue", "tab:orange", "0.65", "black"


def _some_pairs(pairs, count: int = 5) -> str:
    shown = "; ".join(f"{a} {b}" for a, b in pairs[:count])
    return shown + (f"; ... ({len(pairs)} pairs)" if len(pairs) > count else "")


def _pad_x(axis, lows, highs) -> None:
    """x limits with a margin, so that no bar ends on the frame."""
    left, right = min(lows), max(highs)
    margin = 0.04 * (right - left) or 0.05
    axis.set_xlim(left - margin, right + margin)


def load_ranges(store, metric: str | None = None, pair: tuple[str, str] | None = None) -> tuple[str, tuple, list]:
    """The chosen metric, pair (run_a, run_b) and per-topic ranges ``(topic, low, high, certified)`` of
    M(run_a) - M(run_b), from a store made with ``medopt matrix --range``.

    ``metric`` may be left out when the store holds one, ``pair`` when it holds one pair; a pair
    stored the other way round has its ranges negated (the range of M(B) - M(A) is [-high, -low])."""
    by_key: dict = {}  # (metric, run_a, run_b) -> {topic: (low, high, certified)}
    without_range = 0
    with open_existing(store) as results:
        for row in results.rows():
            if any(row[c] is None for c in RANGE_COLUMNS[:4]):
                without_range += 1
                continue
            by_key.setdefault((row["metric"], row["run_a"], row["run_b"]), {}).setdefault(
                row["topic"], (row["low"], row["high"], bool(row["low_certified"] and row["high_certified"])))
    if not by_key:
        if without_range:
            raise MedoptError(f"{store} was made without --range: it holds MEDs, not difference ranges; rerun "
                              "medopt matrix with --range (and a new --store) for --kind ranges")
        raise MedoptError(f"{store}: the store holds no results")
    metrics = list(dict.fromkeys(key[0] for key in by_key))
    if metric is None:
        if len(metrics) > 1:
            raise MedoptError(f"the store holds ranges for {', '.join(metrics)}: choose one with -m")
        metric = metrics[0]
    else:
        metric = str(parse_metric(metric))
        if metric not in metrics:
            raise MedoptError(f"no ranges for {metric} in the store (it has {', '.join(metrics)})")
    pairs = [key[1:] for key in by_key if key[0] == metric]
    if pair is None:
        if len(pairs) > 1:
            raise MedoptError(f"the store holds {len(pairs)} pairs of runs under {metric}: choose one with "
                              f"--pair RUN_A RUN_B ({_some_pairs(pairs)})")
        pair = pairs[0]
    pair = tuple(pair)
    if (metric, *pair) in by_key:
        ranges = [(t, low, high, ok) for t, (low, high, ok) in by_key[(metric, *pair)].items()]
    elif (metric, pair[1], pair[0]) in by_key:
        ranges = [(t, -high, -low, ok) for t, (low, high, ok) in by_key[(metric, pair[1], pair[0])].items()]
    else:
        raise MedoptError(f"no ranges for the pair {pair[0]} {pair[1]} under {metric} in the store "
                          f"(it has {_some_pairs(pairs)})")
    return metric, pair, ranges


def plot_ranges(store, outputs, metric: str | None = None, pair: tuple[str, str] | None = None) -> dict:
    """Forest plot of one pair's per-topic difference ranges (sorted by their middle), 0 marked, the mean
    difference range as a distinct bar at the bottom and the verdict in the title.  Returns the mean
    range: ``{"low", "high", "verdict"}``."""
    metric, (run_a, run_b), ranges = load_ranges(store, metric, pair)
    ranges.sort(key=lambda r: (r[1] + r[2], r[1]))
    low = float(np.mean([r[1] for r in ranges]))
    high = float(np.mean([r[2] for r in ranges]))
    decided = verdict(low, high)
    plt = _pyplot()
    n = len(ranges)
    figure, axis = plt.subplots(figsize=(7, max(3.2, 0.16 * n + 2.0)), layout="constrained")
    positions = np.arange(n) + 2  # the mean sits at 0, one empty row above it
    colours = [ABOVE if lo > 0 else BELOW if hi < 0 else ACROSS for _, lo, hi, _ in ranges]
    widths = [max(hi - lo, 0.0) for _, lo, hi, _ in ranges]
    axis.barh(positions, widths, left=[lo for _, lo, _, _ in ranges], height=0.7, color=colours,
              edgecolor=["none" if ok else "red" for *_, ok in ranges], linewidth=0.8)
    points = [(r[1], y, c) for r, y, w, c in zip(ranges, positions, widths, colours) if w == 0]
    if points:  # a range that is one point: a tick
        x, y, c = zip(*points)
        axis.scatter(x, y, marker="|", c=list(c), s=60, linewidths=2, zorder=3)
    axis.barh([0], [max(high - low, 0.0)], left=[low], height=0.9, color=MEAN)
    if high == low:
        axis.scatter([low], [0], marker="|", color=MEAN, s=80, zorder=3)
    axis.axvline(0.0, color="black", linewidth=0.9)
    _pad_x(axis, [r[1] for r in ranges] + [0.0], [r[2] for r in ranges] + [0.0])
    from matplotlib.patches import Patch  # matplotlib is loaded by _pyplot() above, only when drawing

    keys = [(ABOVE, f"{run_a} ahead under every grading"), (BELOW, f"{run_b} ahead under every grading"),
            (ACROSS, "can flip"), (MEAN, "mean over topics")]
    shown = [Patch(color=c, label=text) for c, text in keys if c in colours or c == MEAN]
    figure.legend(handles=shown, loc="outside lower center", ncol=len(shown), fontsize=7, frameon=False)
    labels = [str(r[0]) for r in ranges]
    axis.set_yticks([0, *positions], ["mean", *labels], fontsize=7 if n <= 60 else 4)
    axis.get_yticklabels()[0].set_fontweight("bold")
    axis.set_ylim(-0.8, n + 2.6)
    axis.set_xlabel(f"{metric}({run_a}) - {metric}({run_b}), over every grading of the unjudged documents")
    axis.set_ylabel(f"topic ({n})")
    uncertified = sum(not r[3] for r in ranges)
    note = f"; {uncertified} topic(s) uncertified (red edge)" if uncertified else ""
    axis.set_title(f"{run_a} vs {run_b}, {metric}: mean difference range [{low:.4f}, {high:.4f}]: {decided}{note}",
                   fontsize=9)
    axis.grid(axis="x", alpha=0.3)
    _save(figure, outputs, inputs=store_files(store))
    return {"low": low, "high": high, "verdict": decided}


def plot_bounds(runs, qrels, metric, outputs, *, progress: bool | None = None, warn=None, **settings) -> list[dict]:
    """Runs ranked by their mean trec_eval score (best at the top), each with the range of its mean score
    as a bar (mean low to mean high) and the trec_eval score as a marker.  ``settings``: the keywords of
    :func:`medopt.score_range`.  Returns the ``all`` rows drawn, best first."""
    extra = {"warn": warn} if warn is not None else {}
    rows = score_bounds(list(runs), [metric], qrels, progress=progress, **extra, **settings)
    means = sorted((r for r in rows if r["topic"] == "all"), key=lambda r: (-r["trec_eval"], r["run"]))
    if not means:
        raise MedoptError("no run has a topic to score")
    plt = _pyplot()
    n = len(means)
    figure, axis = plt.subplots(figsize=(7, max(2.6, 0.3 * n + 1.6)), layout="constrained")
    positions = np.arange(n)[::-1]  # the best run on top
    axis.barh(positions, [r["high"] - r["low"] for r in means], left=[r["low"] for r in means], height=0.6,
              color="tab:blue", alpha=0.45, label="range of the mean score")
    axis.scatter([r["trec_eval"] for r in means], positions, marker="D", s=22, color="black", zorder=3,
                 label="trec_eval (unjudged = not relevant)")
    axis.set_yticks(positions, [r["run"] for r in means], fontsize=8 if n <= 40 else 5)
    name = means[0]["metric"]
    axis.set_xlabel(f"mean {name} over topics")
    uncertified = sum(not (r["low_certified"] and r["high_certified"]) for r in means)
    note = f"; {uncertified} run(s) with an uncertified end" if uncertified else ""
    axis.set_title(f"{n} run(s) by their mean {name}, with the range every grading of the unjudged documents "
                   f"allows{note}", fontsize=9)
    axis.grid(axis="x", alpha=0.3)
    _pad_x(axis, [r["low"] for r in means] + [r["trec_eval"] for r in means],
           [r["high"] for r in means] + [r["trec_eval"] for r in means])
    figure.legend(loc="outside lower center", ncol=2, fontsize=7, frameon=False)
    _save(figure, outputs, inputs=[runs, qrels])
    return means
