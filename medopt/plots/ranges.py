"""Plots of ranges (SPEC 7), matplotlib through :mod:`medopt.plots.matrix`' helpers.

* :func:`plot_ranges` -- from a store made with ``medopt matrix --range``: a forest plot of one
  pair of runs under one metric, each topic's difference range [low, high] of M(A) - M(B) as a
  bar coloured by its verdict, and at the bottom the mean difference range with its verdict
  (:func:`medopt.core.result.mean_range`, from the topics' proven bounds: the one place a verdict is
  made).  The observed difference (unjudged documents not relevant, trec_eval's) is marked: on the
  mean row from the store's per-pair summary, on each topic's row when the runs and qrels are given.
  Beyond :data:`PAGE` topics a PDF has every topic, :data:`PAGE` to a page (the mean row on each),
  and a PNG the :data:`PAGE` widest ranges and one summary row of the others.
* :func:`medopt.plots.verdicts.plot_verdicts` -- from the per-pair summary of such a store (its ``pairs`` table): a run x
  run matrix coloured by each pair's verdict, the runs ordered by their observed score, each cell
  the mean observed difference of its row's run minus its column's.
* :func:`plot_bounds` -- computed from runs and qrels (:func:`medopt.workflows.bounds.score_bounds`):
  the runs ranked by their mean trec_eval score (unjudged documents not relevant), each with the
  range of its mean score, [mean low, mean high], as a bar and that score as a marker.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..batch import read_runs
from ..batch.runset import load_runset
from ..batch.summary import Observed
from ..workflows.bounds import score_bounds
from ..errors import MedoptError
from ..io.output import store_files
from ..io.trec import file_sha256, read_qrels
from ..metrics import PER_TOPIC, parse_metric
from .figures import _pyplot, _save, save_pages
from ..core.result import exact_mean, exact_value, mean_range, verdict
from ..io.store import RANGE_COLUMNS, one_method, open_existing

# colours: ranges decided for A (above 0) and for B (below 0), those that can flip, those left open; the mean
ABOVE, BELOW, ACROSS, OPEN, MEAN = "tab:blue", "tab:orange", "0.72", "#e8d36a", "black"
OBSERVED = "crimson"
PAGE = 50  # topics on one page of the ranges plot


def _some_pairs(pairs, count: int = 5) -> str:
    shown = "; ".join(f"{a} {b}" for a, b in pairs[:count])
    return shown + (f"; ... ({len(pairs)} pairs)" if len(pairs) > count else "")


def _pad_x(axis, lows, highs) -> None:
    """x limits with a margin, so that no bar ends on the frame."""
    left, right = min(lows), max(highs)
    margin = 0.04 * (right - left) or 0.05
    axis.set_xlim(left - margin, right + margin)


def ahead(low_bound: float) -> str:
    """For a ``decided`` verdict (:func:`medopt.core.result.verdict`), the side of 0 its proven bounds lie on:
    ``a`` when the low bound is above 0 (M(A) - M(B) > 0 under every grading), else ``b``."""
    return "a" if low_bound > 0 else "b"


def range_rows(store, metric: str | None = None, pair: tuple[str, str] | None = None,
               method: str | None = None) -> tuple[str, tuple, list]:
    """The chosen metric, pair (run_a, run_b) and per-topic ranges of M(run_a) - M(run_b), dicts with
    ``topic``, ``low``, ``high``, ``low_bound``, ``high_bound`` and ``certified``, from a store made with
    ``medopt matrix --range``.

    ``metric`` may be left out when the store holds one, ``pair`` when it holds one pair; a pair
    stored the other way round has its ranges negated (the range of M(B) - M(A) is [-high, -low])."""
    by_key: dict = {}  # (metric, run_a, run_b) -> {topic: row}
    without_range = 0
    with open_existing(store) as results:
        for row in one_method(results.rows(), store, method):
            if any(row[c] is None for c in RANGE_COLUMNS[:4]):
                without_range += 1
                continue
            by_key.setdefault((row["metric"], row["run_a"], row["run_b"]), {}).setdefault(row["topic"], {
                "topic": row["topic"], "low": row["low"], "high": row["high"], "low_bound": row["low_bound"],
                "high_bound": row["high_bound"], "certified": bool(row["low_certified"] and row["high_certified"])})
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
        ranges = list(by_key[(metric, *pair)].values())
    elif (metric, pair[1], pair[0]) in by_key:
        ranges = [dict(r, low=-r["high"], high=-r["low"], low_bound=-r["high_bound"], high_bound=-r["low_bound"])
                  for r in by_key[(metric, pair[1], pair[0])].values()]
    else:
        raise MedoptError(f"no ranges for the pair {pair[0]} {pair[1]} under {metric} in the store "
                          f"(it has {_some_pairs(pairs)})")
    return metric, pair, ranges


def load_ranges(store, metric: str | None = None, pair: tuple[str, str] | None = None,
                method: str | None = None) -> tuple[str, tuple, list]:
    """As :func:`range_rows`, each topic's range a tuple ``(topic, low, high, certified)``."""
    metric, pair, ranges = range_rows(store, metric, pair, method)
    return metric, pair, [(r["topic"], r["low"], r["high"], r["certified"]) for r in ranges]


def observed_differences(store, runs, qrels, metric: str, pair) -> dict:
    """{topic: M(A) - M(B)} of the pair's runs with every unjudged document not relevant (trec_eval's
    scores), computed from ``runs`` (files; the pair's two among them) and ``qrels``, which must be the
    qrels the store was made with (its sha256 is checked), under the store's top grade G."""
    with open_existing(store) as results:
        settings = results.settings()
    stored, grade = settings.get("qrels_sha256"), settings.get("max_grade")
    if stored and stored != "none" and file_sha256(qrels) != stored:
        raise MedoptError(f"{qrels}: not the qrels {store} was made with (their sha256 differ)")
    max_grade = None if grade in (None, "None") else PER_TOPIC if grade == PER_TOPIC else int(grade)
    runset = load_runset(None, read_qrels(qrels), max_grade=max_grade, columns=read_runs(list(runs)))
    missing = [name for name in pair if name not in runset.names]
    if missing:
        raise MedoptError(f"the pair's run {missing[0]} is not among RUNS ({', '.join(runset.names)})")
    observed = Observed(runset)
    rational = parse_metric(metric).rational
    found = {}
    i, j = runset.names.index(pair[0]), runset.names.index(pair[1])
    for t, topic in enumerate(runset.topics):
        if runset.length[i][t] > 0 or runset.length[j][t] > 0:
            a, b = observed.of(pair[0], topic, metric)[0], observed.of(pair[1], topic, metric)[0]
            found[topic] = float(exact_value(a) - exact_value(b)) if rational else a - b
    return found


def stored_observed_mean(store, metric: str, pair) -> float | None:
    """The pair's mean observed difference M(A) - M(B) from the store's per-pair summary (None when the
    store has none, or its methods' rows disagree)."""
    with open_existing(store) as results:
        rows = [r for r in results.pairs() if r["metric"] == metric and {r["run_a"], r["run_b"]} == set(pair)]
    values = {r["diff"] if r["run_a"] == pair[0] else -r["diff"] for r in rows if r["diff"] is not None}
    return values.pop() if len(values) == 1 else None


def _colour(row) -> str:
    said = verdict(row["low"], row["high"], row["low_bound"], row["high_bound"])
    if said == "decided":
        return ABOVE if ahead(row["low_bound"]) == "a" else BELOW
    return ACROSS if said == "can flip" else OPEN


def _draw_ranges(plt, shown, span, observed, mean_observed, metric, run_a, run_b, *, total: int, others=None,
                 page: str = ""):
    """One figure of the ranges plot: the topics ``shown`` (bottom to top), a summary row of ``others``
    (topics not shown) when given, the mean row at the bottom."""
    n = len(shown)
    extra = 1 if others else 0
    figure, axis = plt.subplots(figsize=(7.5, max(3.2, 0.16 * (n + extra) + 2.2)), layout="constrained")
    positions = np.arange(n) + 2 + extra  # the mean sits at 0, one empty row above it (and the others' row)
    colours = [_colour(r) for r in shown]
    widths = [max(r["high"] - r["low"], 0.0) for r in shown]
    axis.barh(positions, widths, left=[r["low"] for r in shown], height=0.7, color=colours,
              edgecolor=["none" if r["certified"] else "red" for r in shown], linewidth=0.8)
    points = [(r["low"], y, c) for r, y, w, c in zip(shown, positions, widths, colours) if w == 0]
    if points:  # a range that is one point: a tick
        x, y, c = zip(*points)
        axis.scatter(x, y, marker="|", c=list(c), s=60, linewidths=2, zorder=3)
    axis.barh([0], [max(span.high - span.low, 0.0)], left=[span.low], height=0.9, color=MEAN)
    if span.high == span.low:
        axis.scatter([span.low], [0], marker="|", color=MEAN, s=80, zorder=3)
    marks = [(observed[r["topic"]], y) for r, y in zip(shown, positions) if r["topic"] in observed]
    if mean_observed is not None:
        marks.append((mean_observed, 0))
    if marks:
        axis.scatter(*zip(*marks), marker="D", s=14, color=OBSERVED, edgecolors="white", linewidths=0.4, zorder=4)
    ticks, labels = [0, *positions], ["mean", *(str(r["topic"]) for r in shown)]
    summary = ""
    lows = [r["low"] for r in shown] + [span.low, 0.0]
    highs = [r["high"] for r in shown] + [span.high, 0.0]
    if others:
        counts = {c: sum(_colour(r) == c for r in others) for c in (ABOVE, BELOW, ACROSS, OPEN)}
        lows.append(min(r["low"] for r in others))
        highs.append(max(r["high"] for r in others))
        axis.barh([2], [highs[-1] - lows[-1]], left=[lows[-1]], height=0.7, color="0.9", hatch="////",
                  edgecolor="0.6", linewidth=0.5)
        hidden = [observed[r["topic"]] for r in others if r["topic"] in observed]
        if hidden:
            axis.scatter(hidden, [2] * len(hidden), marker="|", s=30, color=OBSERVED, linewidths=0.6, zorder=4)
        words = [f"{counts[ABOVE]} {run_a} ahead", f"{counts[BELOW]} {run_b} ahead", f"{counts[ACROSS]} can flip",
                 f"{counts[OPEN]} open"]
        summary = (f"\nthe {len(others)} narrower topics (hatched row: their lowest low to highest high"
                   f"{', observed marked' if hidden else ''}): {', '.join(words)}")
        ticks.append(2)
        labels.append(f"{len(others)} others")
    axis.axvline(0.0, color="black", linewidth=0.9)
    _pad_x(axis, lows, highs)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch  # matplotlib is loaded by _pyplot() above, only when drawing

    everyone = colours + ([_colour(r) for r in others] if others else [])
    keys = [(ABOVE, f"{run_a} ahead under every grading"), (BELOW, f"{run_b} ahead under every grading"),
            (ACROSS, "can flip"), (OPEN, "open (an end not proven)"), (MEAN, "mean over topics")]
    handles = [Patch(color=c, label=text) for c, text in keys if c in everyone or c == MEAN]
    if marks:
        handles.append(Line2D([], [], marker="D", linestyle="none", markersize=4, color=OBSERVED,
                              label="observed (unjudged = 0)"))
    figure.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 3), fontsize=7,
                  frameon=False)
    axis.set_yticks(ticks, labels, fontsize=7)
    axis.get_yticklabels()[0].set_fontweight("bold")
    axis.set_ylim(-0.8, n + extra + 2.6)
    axis.set_xlabel(f"{metric}({run_a}) - {metric}({run_b}), over every grading of the unjudged documents")
    axis.set_ylabel(f"topic ({n} of {total} shown{', the widest' if others else ''}){page}")
    uncertified = sum(not r["certified"] for r in shown + list(others or []))
    note = f"; {uncertified} topic(s) uncertified (red edge)" if uncertified else ""
    seen = f"; observed {mean_observed:+.4f}" if mean_observed is not None else ""
    axis.set_title(f"{run_a} vs {run_b}, {metric}, {total} topics: mean difference range [{span.low:.4f}, "
                   f"{span.high:.4f}]: {span.verdict}{seen}{note}{summary}", fontsize=8)
    axis.grid(axis="x", alpha=0.3)
    return figure


def plot_ranges(store, outputs, metric: str | None = None, pair: tuple[str, str] | None = None,
                method: str | None = None, *, runs=None, qrels=None) -> dict:
    """Forest plot of one pair's per-topic difference ranges (sorted by their middle), 0 marked, the mean
    difference range as a distinct bar at the bottom and its verdict (:func:`medopt.core.result.mean_range`
    over the topics' proven bounds, exact sums for a rational metric) in the title; the observed
    differences marked (each topic's when ``runs`` and ``qrels`` are given).  Beyond :data:`PAGE` topics a
    ``.pdf`` gets every topic on pages of :data:`PAGE`, a ``.png`` the :data:`PAGE` widest and a summary row
    of the others.  Returns ``{"low", "high", "low_bound", "high_bound", "verdict", "observed"}`` (the mean
    observed difference or None) and ``pages``, the number of PDF pages."""
    metric, (run_a, run_b), ranges = range_rows(store, metric, pair, method)
    ranges.sort(key=lambda r: (r["low"] + r["high"], r["low"]))
    rational = parse_metric(metric).rational
    span = mean_range([(r["low"], r["high"], r["low_bound"], r["high_bound"]) for r in ranges], rational=rational)
    observed = observed_differences(store, runs, qrels, metric, (run_a, run_b)) if runs else {}
    if observed and all(r["topic"] in observed for r in ranges):
        mean_observed = exact_mean([observed[r["topic"]] for r in ranges], rational=rational)
    else:
        mean_observed = stored_observed_mean(store, metric, (run_a, run_b))
    plt = _pyplot()
    n = len(ranges)
    saved_inputs = [store_files(store), list(runs or ()), qrels]
    common = (span, observed, mean_observed, metric, run_a, run_b)
    pages = 1
    if n <= PAGE:
        _save(_draw_ranges(plt, ranges, *common, total=n), outputs, inputs=saved_inputs)
    else:
        pngs = [o for o in outputs if Path(o).suffix.lower() == ".png"]
        pdfs = [o for o in outputs if Path(o).suffix.lower() != ".png"]
        if pngs:
            widest = set(sorted(range(n), key=lambda i: (-(ranges[i]["high"] - ranges[i]["low"]), i))[:PAGE])
            shown = [r for i, r in enumerate(ranges) if i in widest]
            others = [r for i, r in enumerate(ranges) if i not in widest]
            _save(_draw_ranges(plt, shown, *common, total=n, others=others), pngs, inputs=saved_inputs)
        if pdfs:
            chunks = [ranges[i:i + PAGE] for i in range(0, n, PAGE)]
            pages = len(chunks)
            save_pages([_draw_ranges(plt, chunk, *common, total=n, page=f", page {k + 1} of {pages}")
                        for k, chunk in enumerate(chunks)], pdfs, inputs=saved_inputs)
    return {"low": span.low, "high": span.high, "low_bound": span.low_bound, "high_bound": span.high_bound,
            "verdict": span.verdict, "observed": mean_observed, "pages": pages}


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
