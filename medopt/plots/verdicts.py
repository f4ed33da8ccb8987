"""``medopt plot --kind verdicts``: a run x run matrix of the verdicts (SPEC 7) of a matrix store's per-pair
summary (its ``pairs`` table), one panel per metric, runs ordered by their observed score."""

from __future__ import annotations

import numpy as np

from ..errors import MedoptError
from ..io.output import store_files
from ..io.store import open_existing
from ..metrics import parse_metric
from .figures import _pyplot, _save
from .ranges import ABOVE, ACROSS, BELOW, OPEN, ahead


CELL_KINDS = ("row", "column", "can flip", "open")  # decided for the row's run, for the column's; can flip; open
CELL_COLOURS = {"row": ABOVE, "column": BELOW, "can flip": ACROSS, "open": OPEN}


def pair_verdicts(store, metrics=None, method: str | None = None) -> dict:
    """The store's per-pair summary rows (its ``pairs`` table) with a verdict, by metric: {metric: [row]},
    at most one row per pair and metric (``method`` chooses among a pair's methods; without it, a pair
    computed by two methods is refused rather than mixed)."""
    with open_existing(store) as results:
        rows = results.pairs()
        held = results.count()
    if not rows:
        if held:
            raise MedoptError(f"{store} holds no per-pair summary (made before it existed): rerun medopt matrix "
                              "--resume on it to write one")
        raise MedoptError(f"{store}: the store holds no results")
    if method is not None:
        methods = sorted({r["method"] for r in rows})
        rows = [r for r in rows if r["method"] == method]
        if not rows:
            raise MedoptError(f"{store}: no results of method {method} (it has {', '.join(methods)})")
    stored = list(dict.fromkeys(r["metric"] for r in rows))
    chosen = stored if not metrics else list(dict.fromkeys(str(parse_metric(m)) for m in metrics))
    missing = [m for m in chosen if m not in stored]
    if missing:
        raise MedoptError(f"{store}: no results for {', '.join(missing)} (it has {', '.join(stored)})")
    rows = [r for r in rows if r["metric"] in chosen]
    if all(r["verdict"] is None for r in rows):
        raise MedoptError(f"{store} made without --range: no verdicts; rerun matrix with --range")
    by_metric: dict = {metric: {} for metric in chosen}
    for row in rows:
        if row["verdict"] is None:
            continue
        key = (row["run_a"], row["run_b"])
        other = by_metric[row["metric"]].setdefault(key, row)
        if other is not row:
            raise MedoptError(f"{store}: {row['metric']} of {key[0]} {key[1]} was computed by {other['method']} and "
                              f"{row['method']}: choose one with --method")
    return {metric: list(pairs.values()) for metric, pairs in by_metric.items()}


def verdict_matrix(rows) -> tuple[list[str], dict, dict]:
    """From one metric's pair rows: the runs best first (by observed score, then name), each run's observed
    score and {(row run, column run): (cell kind, mean observed difference row - column)}.  A run's score
    is its mean observed score over its pairs' rows (one value when every pair covers the same topics)."""
    scores: dict = {}
    cells = {}
    for row in rows:
        scores.setdefault(row["run_a"], []).append(row["score_a"])
        scores.setdefault(row["run_b"], []).append(row["score_b"])
        said = row["verdict"]
        if said == "decided":
            first, second = ("row", "column") if ahead(row["low_bound"]) == "a" else ("column", "row")
        else:
            first = second = said
        cells[row["run_a"], row["run_b"]] = (first, row["diff"])
        cells[row["run_b"], row["run_a"]] = (second, -row["diff"])
    score = {run: float(np.mean(values)) for run, values in scores.items()}
    order = sorted(score, key=lambda run: (-score[run], run))
    return order, score, cells


def _compact(value: float) -> str:
    """A difference in few characters: +.012, -.300, 0."""
    if value == 0:
        return "0"
    text = f"{value:+.3f}".replace("0.", ".", 1)
    return text if text not in ("+.000", "-.000") else f"{value:+.0e}"


def plot_verdicts(store, outputs, metrics=None, method: str | None = None) -> dict:
    """Run x run matrix of the verdicts (SPEC 7) of a store made with ``matrix --range``, one panel per
    metric: a cell is coloured by the verdict of its row's run against its column's (decided for the row's
    run, decided for the column's, can flip, open) and shows their mean observed difference (row minus
    column, unjudged documents not relevant); the runs are ordered by their observed score, best first.
    Returns {metric: (runs in order, {(row, column): cell kind})}."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    panels = pair_verdicts(store, metrics, method)
    plt = _pyplot()
    drawn = {metric: verdict_matrix(rows) for metric, rows in panels.items()}
    n = max(len(order) for order, _, _ in drawn.values())
    side = max(4.5, 0.42 * n + 2.6)
    columns = min(2, len(drawn))
    lines = -(-len(drawn) // columns)
    figure, axes = plt.subplots(lines, columns, figsize=(side * columns + 0.8, side * lines + 0.6), squeeze=False,
                                layout="constrained")
    colours = ListedColormap([CELL_COLOURS[kind] for kind in CELL_KINDS]).with_extremes(bad="white")
    result = {}
    for axis, (metric, (order, score, cells)) in zip(axes.ravel(), drawn.items()):
        size = len(order)
        kinds = np.full((size, size), np.nan)
        for i, row_run in enumerate(order):
            for j, column_run in enumerate(order):
                if (row_run, column_run) in cells:
                    kind, diff = cells[row_run, column_run]
                    kinds[i, j] = CELL_KINDS.index(kind)
                    if size <= 30:
                        axis.text(j, i, _compact(diff), ha="center", va="center", fontsize=6 if size <= 16 else 4.5,
                                  color="white" if kind in ("row", "column") else "black")
        axis.imshow(kinds, cmap=colours, vmin=-0.5, vmax=len(CELL_KINDS) - 0.5, interpolation="nearest")
        axis.set_xticks(range(size), order, rotation=90, fontsize=7)
        axis.set_yticks(range(size), [f"{run} ({score[run]:.4f})" for run in order], fontsize=7)
        axis.set_xticks(np.arange(size + 1) - 0.5, minor=True)
        axis.set_yticks(np.arange(size + 1) - 0.5, minor=True)
        axis.grid(which="minor", color="white", linewidth=0.8)
        axis.tick_params(which="minor", length=0)
        decided = sum(kind == "row" for kind, _ in cells.values())
        flips = sum(kind == "can flip" for kind, _ in cells.values()) // 2
        unproven = sum(kind == "open" for kind, _ in cells.values()) // 2
        axis.set_title(f"{metric}: {decided} of {len(cells) // 2} pairs decided, {flips} can flip, {unproven} open",
                       fontsize=9)
        axis.set_xlabel("runs best first by their observed score; cell: mean observed difference, row minus column",
                        fontsize=7)
        result[metric] = (order, {key: kind for key, (kind, _) in cells.items()})
    for axis in axes.ravel()[len(drawn):]:
        axis.axis("off")
    labels = {"row": "decided: the row's run ahead", "column": "decided: the column's run ahead",
              "can flip": "can flip", "open": "open (an end not proven)"}
    figure.legend(handles=[Patch(color=CELL_COLOURS[k], label=labels[k]) for k in CELL_KINDS],
                  loc="outside lower center", ncol=4, fontsize=7, frameon=False)
    _save(figure, outputs, inputs=store_files(store))
    return result
