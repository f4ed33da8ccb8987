"""Plots of MED results (matplotlib; PNG or PDF by the output file's name).

From a ``medopt matrix`` store:

* :func:`plot_heatmap` -- mean MED between every two runs, rows and columns in the
  order of an average-linkage clustering (scipy), with its dendrogram, one order for every
  panel, the colour scale from 0;
* :func:`plot_scatter` -- mean MED of each pair under one metric against another, each point
  named by its pair (:func:`label_points`: adjustText keeps the names apart; beyond
  :data:`NAMED` points they are numbered, with a key);
* :func:`plot_distribution` -- the per-topic MEDs of each pair, as box plots.

Computed from runs and qrels:

* :func:`plot_judged_fraction` -- Tan & Clarke's Fig. 2: for each pair, mean MED when
  only a (seeded, nested) random part of the qrels is known, against the actual
  difference |mean M(A) - mean M(B)| under all the qrels.  MED can never fall below
  the actual difference of a topic, and it closes in on it as judgments are added.
"""

from __future__ import annotations


import numpy as np

from .. import api
from ..batch import Settings, collect_rows, read_runs
from ..batch.runset import chosen_topics
from ..batch.runset import load_runset
from ..errors import MedoptError
from ..io.output import store_files
from ..io.trec import read_qrels, sort_topics
from ..io.topics import unretrieved_topics
from ..metrics import parse_metric
from ..io.store import one_method, open_existing
from .figures import _pyplot, _save
from .labels import label_panels, labelled_figure, pair_label, tau_scatter

def load_values(store, method: str | None = None) -> list[tuple]:
    """(run_a, run_b, topic, metric, value) of every MED row of a matrix store (a companion's rows, RBO,
    have no MED value: :mod:`medopt.plots.rbo` draws them), one method per pair, topic and metric
    (:func:`medopt.io.store.one_method`)."""
    with open_existing(store) as results:
        rows = one_method((r for r in results.rows() if r["value"] is not None), store, method)
    return [(r["run_a"], r["run_b"], r["topic"], r["metric"], r["value"]) for r in rows]


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


def shared_order(rows, metrics) -> tuple[list[str], list, object]:
    """One run order for every panel of a heatmap: the runs of all ``metrics`` (first-seen order), the
    leaf order of one clustering and its linkage.  The clustering is of the mean, over the metrics, of
    each metric's mean-MED matrix scaled by its largest value (so that no metric's scale dominates); a
    pair a metric lacks counts only in the others.  With one metric it is that metric's clustering."""
    matrices = [mean_matrix(rows, metric) for metric in metrics]
    names = list(dict.fromkeys(name for names, _ in matrices for name in names))
    index = {name: i for i, name in enumerate(names)}
    stack = np.full((len(matrices), len(names), len(names)), np.nan)
    for layer, (own, matrix) in zip(stack, matrices):
        at = [index[name] for name in own]
        top = np.nanmax(matrix)
        layer[np.ix_(at, at)] = matrix / top if top > 0 else matrix
    counts = np.isfinite(stack).sum(axis=0)
    combined = np.where(counts > 0, np.nansum(stack, axis=0) / np.maximum(counts, 1), np.nan)  # NaN: no metric has it
    np.fill_diagonal(combined, 0.0)
    order, tree = cluster_order(combined)
    return names, order, tree


def plot_heatmap(store, outputs, metrics=None, method: str | None = None) -> None:
    """Clustered heatmap of mean MED between runs (dendrogram on top), one panel per metric, every panel
    in the same run order (:func:`shared_order`, its dendrogram on each panel); the colour scale runs
    from 0 (MED is never negative) to the panel's largest mean."""
    plt = _pyplot()
    rows = load_values(store, method)
    metrics = _chosen_metrics(rows, metrics)
    sizes = {metric: len(mean_matrix(rows, metric)[0]) for metric in metrics}  # metrics may cover other runs
    few = [metric for metric, n in sizes.items() if n < 2]
    if few:
        raise MedoptError(f"a heatmap needs results for at least two runs ({', '.join(few)} has fewer)")
    everyone, order, tree = shared_order(rows, metrics)
    labels = [everyone[i] for i in order]
    n = len(labels)
    size = max(4.0, 0.4 * n + 2.8)
    columns = min(3, len(metrics))
    lines = -(-len(metrics) // columns)
    figure = plt.figure(figsize=(size * columns, size * 1.15 * lines), layout="constrained")
    panels = figure.subfigures(lines, columns, squeeze=False).ravel() if len(metrics) > 1 else [figure]
    for panel, metric in zip(panels, metrics):
        names, matrix = mean_matrix(rows, metric)
        at = {name: i for i, name in enumerate(names)}
        shown = np.full((n, n), np.nan)  # in the shared order; a run this metric lacks stays empty
        for i, row_name in enumerate(labels):
            for j, column_name in enumerate(labels):
                if i != j and row_name in at and column_name in at:
                    shown[i, j] = matrix[at[row_name], at[column_name]]
        grid = panel.add_gridspec(2, 2, height_ratios=[1, 4.5], width_ratios=[24, 1])
        top, heat, bar = panel.add_subplot(grid[0, 0]), panel.add_subplot(grid[1, 0]), panel.add_subplot(grid[1, 1])
        panel.add_subplot(grid[0, 1]).axis("off")
        top.axis("off")
        if tree is not None:
            from scipy.cluster.hierarchy import dendrogram
            dendrogram(tree, ax=top, no_labels=True, color_threshold=0, above_threshold_color="0.35")
            top.set_xlim(0, 10 * n)  # leaves sit at 5, 15, ...: cell centres of the heatmap below
        colours = plt.get_cmap("viridis").with_extremes(bad="0.92")
        high = float(np.nanmax(shown)) if np.isfinite(shown).any() else 0.0
        image = heat.imshow(shown, cmap=colours, interpolation="nearest", aspect="auto", vmin=0.0,
                            vmax=high if high > 0 else 1.0)
        heat.set_xticks(range(n), labels, rotation=90, fontsize=8)
        heat.set_yticks(range(n), labels, fontsize=8)
        if n <= 16:
            for i in range(n):
                for j in range(n):
                    if np.isfinite(shown[i, j]):
                        light = high > 0 and shown[i, j] / high > 0.6
                        heat.text(j, i, f"{shown[i, j]:.3f}", ha="center", va="center", fontsize=7,
                                  color="black" if light else "white")
        panel.colorbar(image, cax=bar, label=f"mean MED-{metric}")
        top.set_title(f"MED-{metric}, mean over topics ({sizes[metric]} runs)", fontsize=10)
    if len(metrics) > 1:
        figure.suptitle("runs in one order in every panel: a clustering of all panels' means, each scaled by its "
                        "largest", fontsize=9)
    _save(figure, outputs, inputs=store_files(store))


def plot_scatter(store, outputs, metrics=None, method: str | None = None) -> None:
    """Mean MED of each pair under one metric (x) against another (y), each point named by its pair (or
    numbered, with a key, beyond :data:`NAMED` pairs)."""
    rows = load_values(store, method)
    metrics = _chosen_metrics(rows, metrics)
    if len(metrics) < 2:
        raise MedoptError("a scatter plot needs two metrics (-m X -m Y); the store has one")
    x_metric, y_metric = metrics[:2]
    _, x_means = pair_means(rows, x_metric)
    _, y_means = pair_means(rows, y_metric)
    pairs = [p for p in x_means if p in y_means]
    x = np.array([x_means[p] for p in pairs])
    y = np.array([y_means[p] for p in pairs])
    figure, (axis,), key = labelled_figure(len(pairs))
    tau = tau_scatter(axis, x, y)
    axis.set_xlabel(f"mean MED-{x_metric}")
    axis.set_ylabel(f"mean MED-{y_metric}")
    axis.set_title(f"{len(pairs)} pairs of runs; Kendall's tau = {tau:.3f}", fontsize=10)
    label_panels([axis], key, [(x, y)], [pair_label(p) for p in pairs])
    _save(figure, outputs, inputs=store_files(store))


def plot_distribution(store, outputs, metrics=None, method: str | None = None) -> None:
    """Per-topic MEDs of each pair (box plots, pairs sorted by median), one panel per metric."""
    plt = _pyplot()
    rows = load_values(store, method)
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
                           jobs: int | None = None, complete: bool = False, topics=None, names=None) -> dict:
    """{percent: (actual, med)} arrays over the pairs of runs: actual |mean M(A) - mean M(B)| under the
    full qrels, and mean MED when only ``percent``% of the qrels is known (G from the full qrels, SPEC 1);
    the means are over SPEC 10's topics of the full qrels (judged, and shared by the pair; ``complete``,
    ``topics`` as for :func:`medopt.compare`)."""
    metric = parse_metric(metric)
    full = read_qrels(qrels_path)
    columns = read_runs(list(runs), jobs=jobs or 1)
    extra = unretrieved_topics(full, complete)
    runset = load_runset(None, full, columns=columns, extra_topics=extra)
    runset.names = [given or own for given, own in zip(names or [None] * len(runset.names), runset.names)]
    in_two = np.add.reduce([length > 0 for length in runset.length]) >= 2
    chosen = chosen_topics(runset, in_two, full, qrels_path, complete=complete, topics=topics)
    scores = {}  # (run, topic code) -> M under the full qrels, unjudged documents at grade 0
    for r in range(len(runset.names)):
        for t in np.flatnonzero(runset.length[r] > 0).tolist():
            scores[r, t] = api.score(metric, runset.ranking(r, t), runset.judgments(t),
                                     max_grade=int(runset.max_grade[t]))
    actual = {}
    for i in range(len(runset.names)):
        for j in range(i + 1, len(runset.names)):
            common = np.flatnonzero(chosen).tolist() if complete else [
                t for t in runset.common_topics(i, j).tolist() if chosen[t]]
            if common:  # (-c: a topic a run did not retrieve scores 0, an empty ranking)
                actual[runset.names[i], runset.names[j]] = abs(
                    np.mean([scores.get((i, t), 0.0) for t in common]) - np.mean([scores.get((j, t), 0.0)
                                                                                   for t in common]))
    points = {}
    for percent in percents:
        if not 0 <= percent <= 100:
            raise MedoptError(f"judged fraction {percent}% is not between 0 and 100")
        partial = subsample_qrels(full, percent / 100.0, seed) if percent < 100 else full
        subset = load_runset(None, partial, columns=columns, grade_scale=full, extra_topics=extra)
        subset.names = runset.names
        rows = collect_rows(subset, [metric], Settings(), jobs=jobs, topics=chosen, complete=complete)
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
                         jobs: int | None = None, complete: bool = False, topics=None, names=None) -> dict:
    """Tan & Clarke Fig. 2: actual difference vs MED under part of the qrels, one panel per fraction."""
    plt = _pyplot()
    metric = parse_metric(metric)
    points = judged_fraction_points(runs, qrels_path, metric, percents=percents, seed=seed, jobs=jobs,
                                    complete=complete, topics=topics, names=names)
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
