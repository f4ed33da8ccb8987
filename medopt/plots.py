"""Plots of MED results (matplotlib; PNG or PDF by the output file's name).

From a ``medopt matrix`` store:

* :func:`plot_heatmap` -- mean MED between every two runs, rows and columns in the
  order of an average-linkage clustering (scipy), with its dendrogram;
* :func:`plot_scatter` -- mean MED of each pair under one metric against another;
* :func:`plot_distribution` -- the per-topic MEDs of each pair, as box plots.

Computed from runs and qrels:

* :func:`plot_judged_fraction` -- Tan & Clarke's Fig. 2: for each pair, mean MED when
  only a (seeded, nested) random part of the qrels is known, against the actual
  difference |mean M(A) - mean M(B)| under all the qrels.  MED can never fall below
  the actual difference of a topic, and it closes in on it as judgments are added.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import api
from .batch import Settings, collect_rows, read_runs
from .batch.runset import load_runset
from .errors import MedoptError
from .io.output import output_file, store_files
from .io.paths import check_output_file
from .io.trec import read_qrels, sort_topics
from .metrics import parse_metric
from .store import open_existing

IMAGE_SUFFIXES = (".png", ".pdf")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_image_outputs(outputs, what: str = "-o", *, inputs=()) -> None:
    """Refuse, before any work, image files that are not .png / .pdf, cannot be written, or are one of
    ``inputs`` (or another of ``outputs``)."""
    for number, output in enumerate(outputs):
        if Path(output).suffix.lower() not in IMAGE_SUFFIXES:
            raise MedoptError(f"{output}: plots are written as .png or .pdf")
        check_output_file(output, what, inputs=[inputs, list(outputs[:number])], binary=True)


def _save(figure, outputs, *, inputs=()) -> None:
    check_image_outputs(outputs, inputs=inputs)
    try:
        for output in outputs:
            with output_file(output, "-o", inputs=inputs, binary=True, compress=False) as handle:
                figure.savefig(handle, dpi=150, bbox_inches="tight", format=Path(output).suffix.lower()[1:])
    finally:
        _pyplot().close(figure)


def load_values(store) -> list[tuple]:
    """(run_a, run_b, topic, metric, value) of every MED row of a matrix store (a companion's rows, RBO,
    have no MED value: :mod:`medopt.rbo_plots` draws them)."""
    with open_existing(store) as results:
        return [(r["run_a"], r["run_b"], r["topic"], r["metric"], r["value"]) for r in results.rows()
                if r["value"] is not None]


def _chosen_metrics(rows, metrics) -> list[str]:
    stored = list(dict.fromkeys(r[3] for r in rows))
    if not stored:
        raise MedoptError("the store holds no results")
    if not metrics:
        return stored
    chosen = list(dict.fromkeys(str(parse_metric(m)) for m in metrics))
    missing = [m for m in chosen if m not in stored]
    if missing:
        raise MedoptError(f"no results for {', '.join(missing)} in the store (it has {', '.join(stored)})")
    return chosen


def pair_means(rows, metric: str) -> tuple[list[str], dict]:
    """Run names (first-seen order) and {(run_a, run_b): mean MED over topics} for one metric."""
    sums: dict = {}
    names: dict = {}
    for run_a, run_b, _topic, row_metric, value in rows:
        if row_metric != metric:
            continue
        names.setdefault(run_a)
        names.setdefault(run_b)
        total = sums.setdefault((run_a, run_b), [0.0, 0])
        total[0] += value
        total[1] += 1
    return list(names), {pair: total / count for pair, (total, count) in sums.items()}


def mean_matrix(rows, metric: str) -> tuple[list[str], np.ndarray]:
    """Symmetric matrix of mean MED (0 on the diagonal, NaN for pairs not computed)."""
    names, means = pair_means(rows, metric)
    index = {name: i for i, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    np.fill_diagonal(matrix, 0.0)
    for (run_a, run_b), value in means.items():
        matrix[index[run_a], index[run_b]] = matrix[index[run_b], index[run_a]] = value
    return names, matrix


def cluster_order(matrix: np.ndarray):
    """Leaf order of an average-linkage clustering of the runs, and the linkage (None for < 3 runs)."""
    if len(matrix) < 3:
        return list(range(len(matrix))), None
    from scipy.cluster.hierarchy import leaves_list, linkage, optimal_leaf_ordering
    from scipy.spatial.distance import squareform

    distances = np.where(np.isnan(matrix), np.nanmax(matrix), matrix)
    condensed = squareform(distances, checks=False)
    tree = optimal_leaf_ordering(linkage(condensed, method="average"), condensed)
    return leaves_list(tree).tolist(), tree


def plot_heatmap(store, outputs, metrics=None) -> None:
    """Clustered heatmap of mean MED between runs (dendrogram on top), one panel per metric."""
    plt = _pyplot()
    rows = load_values(store)
    metrics = _chosen_metrics(rows, metrics)
    sizes = {metric: len(mean_matrix(rows, metric)[0]) for metric in metrics}  # metrics may cover other runs
    few = [metric for metric, n in sizes.items() if n < 2]
    if few:
        raise MedoptError(f"a heatmap needs results for at least two runs ({', '.join(few)} has fewer)")
    size = max(4.0, 0.4 * max(sizes.values()) + 2.8)
    columns = min(3, len(metrics))
    lines = -(-len(metrics) // columns)
    figure = plt.figure(figsize=(size * columns, size * 1.15 * lines), layout="constrained")
    panels = figure.subfigures(lines, columns, squeeze=False).ravel() if len(metrics) > 1 else [figure]
    for panel, metric in zip(panels, metrics):
        names, matrix = mean_matrix(rows, metric)
        n = len(names)
        order, tree = cluster_order(matrix)
        grid = panel.add_gridspec(2, 2, height_ratios=[1, 4.5], width_ratios=[24, 1])
        top, heat, bar = panel.add_subplot(grid[0, 0]), panel.add_subplot(grid[1, 0]), panel.add_subplot(grid[1, 1])
        panel.add_subplot(grid[0, 1]).axis("off")
        top.axis("off")
        if tree is not None:
            from scipy.cluster.hierarchy import dendrogram
            dendrogram(tree, ax=top, no_labels=True, color_threshold=0, above_threshold_color="0.35")
            top.set_xlim(0, 10 * n)  # leaves sit at 5, 15, ...: cell centres of the heatmap below
        shown = matrix[np.ix_(order, order)].copy()
        np.fill_diagonal(shown, np.nan)
        colours = plt.get_cmap("viridis").with_extremes(bad="0.92")
        image = heat.imshow(shown, cmap=colours, interpolation="nearest", aspect="auto")
        labels = [names[i] for i in order]
        heat.set_xticks(range(n), labels, rotation=90, fontsize=8)
        heat.set_yticks(range(n), labels, fontsize=8)
        if n <= 16:
            low, high = np.nanmin(shown), np.nanmax(shown)
            for i in range(n):
                for j in range(n):
                    if i != j and np.isfinite(shown[i, j]):
                        light = high > low and (shown[i, j] - low) / (high - low) > 0.6
                        heat.text(j, i, f"{shown[i, j]:.3f}", ha="center", va="center", fontsize=7,
                                  color="black" if light else "white")
        panel.colorbar(image, cax=bar, label=f"mean MED-{metric}")
        top.set_title(f"MED-{metric}, mean over topics ({n} runs)", fontsize=10)
    _save(figure, outputs, inputs=store_files(store))


def tau_scatter(axis, x, y, *, size: float = 18, alpha: float = 0.75) -> float:
    """Points (x, y) on ``axis`` with a light grid; Kendall's tau between x and y (nan below two points)."""
    from scipy.stats import kendalltau

    axis.scatter(x, y, s=size, alpha=alpha, edgecolors="none")
    axis.grid(alpha=0.3)
    return kendalltau(x, y).statistic if len(x) > 1 else float("nan")


def plot_scatter(store, outputs, metrics=None) -> None:
    """Mean MED of each pair under one metric (x) against another (y)."""
    plt = _pyplot()
    rows = load_values(store)
    metrics = _chosen_metrics(rows, metrics)
    if len(metrics) < 2:
        raise MedoptError("a scatter plot needs two metrics (-m X -m Y); the store has one")
    x_metric, y_metric = metrics[:2]
    _, x_means = pair_means(rows, x_metric)
    _, y_means = pair_means(rows, y_metric)
    pairs = [p for p in x_means if p in y_means]
    x = np.array([x_means[p] for p in pairs])
    y = np.array([y_means[p] for p in pairs])
    figure, axis = plt.subplots(figsize=(5, 5))
    tau = tau_scatter(axis, x, y)
    axis.set_xlabel(f"mean MED-{x_metric}")
    axis.set_ylabel(f"mean MED-{y_metric}")
    axis.set_title(f"{len(pairs)} pairs of runs; Kendall's tau = {tau:.3f}", fontsize=10)
    _save(figure, outputs, inputs=store_files(store))


def plot_distribution(store, outputs, metrics=None) -> None:
    """Per-topic MEDs of each pair (box plots, pairs sorted by median), one panel per metric."""
    plt = _pyplot()
    rows = load_values(store)
    metrics = _chosen_metrics(rows, metrics)
    pairs = list(dict.fromkeys((r[0], r[1]) for r in rows))
    height = max(3.0, 0.22 * len(pairs) + 1.5)
    figure, axes = plt.subplots(1, len(metrics), figsize=(4.5 * len(metrics) + 2.5, height), squeeze=False,
                                sharey=False)
    for axis, metric in zip(axes[0], metrics):
        values: dict = {}
        for run_a, run_b, _topic, row_metric, value in rows:
            if row_metric == metric:
                values.setdefault(f"{run_a} | {run_b}", []).append(value)
        labels = sorted(values, key=lambda k: float(np.median(values[k])))
        axis.boxplot([values[k] for k in labels], orientation="horizontal", widths=0.6, showfliers=True,
                     flierprops={"markersize": 2, "alpha": 0.5})
        axis.set_yticks(range(1, len(labels) + 1), labels, fontsize=7 if len(labels) < 40 else 5)
        axis.set_xlabel(f"MED-{metric} per topic")
        axis.grid(axis="x", alpha=0.3)
        axis.set_title(f"MED-{metric}", fontsize=10)
    figure.tight_layout()
    _save(figure, outputs, inputs=store_files(store))


# ---------------------------------------------------------------------------
# Tan & Clarke Fig. 2


def subsample_qrels(qrels: dict, fraction: float, seed: int) -> dict:
    """A seeded random part of the judgments; nested: a larger fraction keeps a superset."""
    rng = np.random.default_rng(seed)
    kept = {}
    for topic in sort_topics(qrels):
        judged = qrels[topic]
        draws = rng.random(len(judged))
        kept[topic] = {d: g for (d, g), u in zip(judged.items(), draws) if u < fraction}
    return kept


def judged_fraction_points(runs, qrels_path, metric, *, percents=(0, 25, 50, 75, 100), seed: int = 0,
                           jobs: int | None = None) -> dict:
    """{percent: (actual, med)} arrays over the pairs of runs: actual |mean M(A) - mean M(B)| under the
    full qrels, and mean MED when only ``percent``% of the qrels is known (topic's G from the full qrels)."""
    metric = parse_metric(metric)
    full = read_qrels(qrels_path)
    columns = read_runs(list(runs), jobs=jobs or 1)
    runset = load_runset(None, full, columns=columns)
    scores = {}  # (run, topic code) -> M under the full qrels, unjudged documents at grade 0
    for r in range(len(runset.names)):
        for t in np.flatnonzero(runset.length[r] > 0).tolist():
            scores[r, t] = api.score(metric, runset.ranking(r, t), runset.judgments(t),
                                     max_grade=int(runset.max_grade[t]))
    actual = {}
    for i in range(len(runset.names)):
        for j in range(i + 1, len(runset.names)):
            common = runset.common_topics(i, j).tolist()
            if common:
                actual[runset.names[i], runset.names[j]] = abs(
                    np.mean([scores[i, t] for t in common]) - np.mean([scores[j, t] for t in common]))
    points = {}
    for percent in percents:
        if not 0 <= percent <= 100:
            raise MedoptError(f"judged fraction {percent}% is not between 0 and 100")
        partial = subsample_qrels(full, percent / 100.0, seed) if percent < 100 else full
        subset = load_runset(None, partial, columns=columns, grade_scale=full)
        rows = collect_rows(subset, [metric], Settings(), jobs=jobs)
        totals: dict = {}
        for row in rows:
            total = totals.setdefault((row[0], row[1]), [0.0, 0])
            total[0] += row[6]
            total[1] += 1
        pairs = [p for p in actual if p in totals]
        points[percent] = (np.array([actual[p] for p in pairs]),
                           np.array([totals[p][0] / totals[p][1] for p in pairs]))
    return points


def plot_judged_fraction(runs, qrels_path, metric, outputs, *, percents=(0, 25, 50, 75, 100), seed: int = 0,
                         jobs: int | None = None) -> dict:
    """Tan & Clarke Fig. 2: actual difference vs MED under part of the qrels, one panel per fraction."""
    plt = _pyplot()
    metric = parse_metric(metric)
    points = judged_fraction_points(runs, qrels_path, metric, percents=percents, seed=seed, jobs=jobs)
    figure, axes = plt.subplots(1, len(points), figsize=(3.4 * len(points), 3.8), squeeze=False, sharex=True,
                                sharey=True)
    x_top = max(max(float(np.max(a, initial=0.0)) for a, _ in points.values()), 1e-6) * 1.08
    y_top = max(max(float(np.max(m, initial=0.0)) for _, m in points.values()), x_top) * 1.05
    for axis, (percent, (actual, med)) in zip(axes[0], points.items()):
        axis.plot([0, x_top], [0, x_top], color="0.5", linewidth=0.8, linestyle="--", label="MED = actual")
        tau = tau_scatter(axis, actual, med, size=12, alpha=0.7)
        axis.set_title(f"{percent:g}% of qrels (Kendall tau {tau:.2f})", fontsize=9)
        axis.set_xlim(0, x_top)
        axis.set_ylim(0, y_top)
        axis.set_xlabel(f"actual |diff {metric}|", fontsize=8)
    axes[0][0].set_ylabel(f"mean MED-{metric} (pairs of runs)")
    axes[0][0].legend(loc="upper left", fontsize=7, frameon=False)
    figure.tight_layout()
    _save(figure, outputs, inputs=[runs, qrels_path])
    return points
