"""Tan & Clarke's Fig. 3, computed from runs: MED against RBO (panel a) and MED at other depths
against depth 20 (panels e and f).  Each point is one pair of runs, its value the mean over the
topics the pair shares, as in the paper (whose Fig. 2 counts its points in pairs).

Each point is named by its pair (numbered, with a key, beyond :data:`medopt.plots.matrix.NAMED` pairs).

* :func:`plot_rbo` -- mean MED-RBP(p=0.9) of each pair against its mean RBO(p=0.9), both
  computed by :func:`medopt.workflows.matrix.matrix_rows` (RBO as the companion of SPEC 9).  In the paper's
  every panel larger differences lie to the upper right, so RBO, a similarity, is drawn as the
  distance 1 - RBO_ext; the residual of each mean is shown in the title (at a run's depth it is
  negligible: 0.9^100 is 3e-5).
* :func:`plot_depths` -- mean MED-SDCG@5 and MED-SDCG@100 of each pair (two panels) against
  MED-SDCG@20, the paper's Fig. 3(e) and 3(f): the paper's "nDCG" is SDCG, DCG@k over the
  DCG@k of k top-grade documents (SPEC 3), so SDCG is the default (``metric`` chooses another).

Drawn with matplotlib through :mod:`medopt.plots.matrix` (its saving and output checks); Kendall's tau
from scipy.
"""

from __future__ import annotations

import numpy as np

from ..errors import MedoptError
from .figures import _save, check_image_outputs
from .labels import label_panels, labelled_figure, pair_label, tau_scatter
from ..workflows.matrix import matrix_rows
from ..metrics.companions import parse_companion  # noqa: F401 (the command asks it too)
from ..metrics import parse_metric


def _pair_means(rows, metric: str, column: str) -> dict:
    sums: dict = {}
    for row in rows:
        if row["metric"] == metric and row[column] is not None:
            total = sums.setdefault((row["run_a"], row["run_b"]), [0.0, 0])
            total[0] += row[column]
            total[1] += 1
    return {pair: total / count for pair, (total, count) in sums.items()}


def rbo_points(runs, qrels=None, metric: str = "RBP(p=0.9)", rbo: str = "RBO(p=0.9)", *, jobs: int | None = 1,
               complete: bool = False, topics=None):
    """Per pair of runs: (mean MED-``metric``, mean RBO_ext, mean residual), in the pairs' order."""
    companion = parse_companion(rbo)
    if companion is None:
        raise MedoptError(f"{rbo!r} is not an RBO companion, e.g. RBO(p=0.9)")
    if parse_companion(metric) is not None:
        raise MedoptError(f"{metric!r}: the MED metric to draw against RBO must be a metric, e.g. RBP(p=0.9)")
    rows, _ = matrix_rows(runs, qrels, [metric, str(companion)], jobs=jobs, complete=complete, topics=topics)
    med = _pair_means(rows, med_label(metric), "value")
    ext = _pair_means(rows, str(companion), "rbo_ext")
    residual = _pair_means(rows, str(companion), "rbo_residual")
    pairs = [p for p in med if p in ext]
    return pairs, np.array([med[p] for p in pairs]), np.array([ext[p] for p in pairs]), \
        np.array([residual[p] for p in pairs])


def plot_rbo(runs, qrels, outputs, *, metric: str = "RBP(p=0.9)", rbo: str = "RBO(p=0.9)",
             jobs: int | None = 1, complete: bool = False, topics=None) -> None:
    """Tan & Clarke's Fig. 3(a): mean MED-``metric`` (y) of each pair against 1 - its mean RBO_ext (x)."""
    check_image_outputs(outputs, inputs=[list(runs.values()) if isinstance(runs, dict) else runs, qrels])
    pairs, med, ext, residual = rbo_points(runs, qrels, metric, rbo, jobs=jobs, complete=complete, topics=topics)
    if not pairs:
        raise MedoptError("no pair of runs shares a topic: nothing to draw")
    figure, (axis,), key = labelled_figure(len(pairs))
    tau = tau_scatter(axis, 1 - ext, med)
    axis.set_xlabel(f"1 - mean {parse_companion(rbo)} (extrapolated)")
    axis.set_ylabel(f"mean MED-{med_label(metric)}")
    axis.set_title(f"{len(pairs)} pairs of runs; Kendall's tau = {tau:.3f}; largest mean residual "
                   f"{float(residual.max()):.1e}", fontsize=9)
    label_panels([axis], key, [(1 - ext, med)], [pair_label(p) for p in pairs])
    _save(figure, outputs, inputs=[list(runs.values()) if isinstance(runs, dict) else runs, qrels])


def med_label(metric: str, cutoff: int | None = None) -> str:
    """The metric as medopt writes it; with ``cutoff``, a metric given without its cutoff (the depths
    plot supplies one per depth), written without it."""
    if cutoff is None:
        return str(parse_metric(metric))
    text, tail = str(parse_metric(f"{metric}@{cutoff}")), f"@{cutoff}"
    return text[:-len(tail)] if text.endswith(tail) else text


def depth_points(runs, qrels=None, metric: str = "SDCG", depths=(5, 20, 100), *, jobs: int | None = 1,
                 complete: bool = False, topics=None) -> dict:
    """Per depth k of ``depths``: {pair: mean MED-``metric``@k} (``metric`` without a cutoff)."""
    if "@" in metric:
        raise MedoptError(f"{metric!r}: give the metric without a cutoff; --depths sets them")
    names = {k: str(parse_metric(f"{metric}@{k}")) for k in depths}
    rows, _ = matrix_rows(runs, qrels, list(names.values()), jobs=jobs, complete=complete, topics=topics)
    return {k: _pair_means(rows, name, "value") for k, name in names.items()}


def plot_depths(runs, qrels, outputs, *, metric: str = "SDCG", depths=(5, 20, 100), reference: int = 20,
                jobs: int | None = 1, complete: bool = False, topics=None) -> None:
    """Tan & Clarke's Fig. 3(e, f): mean MED-``metric``@k of each pair (y) against MED-``metric``@``reference``
    (x), one panel per other depth k."""
    check_image_outputs(outputs, inputs=[list(runs.values()) if isinstance(runs, dict) else runs, qrels])
    depths = sorted(set(depths) | {reference})
    others = [k for k in depths if k != reference]
    if not others:
        raise MedoptError(f"--depths: give depths besides {reference}, e.g. 5,20,100")
    means = depth_points(runs, qrels, metric, depths, jobs=jobs, complete=complete, topics=topics)
    pairs = list(means[reference])
    if not pairs:
        raise MedoptError("no pair of runs shares a topic: nothing to draw")
    x = np.array([means[reference][p] for p in pairs])
    figure, axes, key = labelled_figure(len(pairs), len(others))
    label = med_label(metric, reference)
    points = []
    for axis, k in zip(axes, others):
        y = np.array([means[k][p] for p in pairs])
        points.append((x, y))
        tau = tau_scatter(axis, x, y)
        limits = axis.get_xlim(), axis.get_ylim()  # the axes fit the points: room for their labels
        axis.axline((0, 0), slope=1, color="grey", linewidth=0.8, linestyle="--")  # y = x, where it is in view
        axis.set_xlim(*limits[0])
        axis.set_ylim(*limits[1])
        axis.set_xlabel(f"mean MED-{label}@{reference}")
        axis.set_ylabel(f"mean MED-{label}@{k}")
        axis.set_title(f"{len(pairs)} pairs; Kendall's tau = {tau:.3f}", fontsize=10)
    label_panels(axes, key, points, [pair_label(p) for p in pairs])
    _save(figure, outputs, inputs=[list(runs.values()) if isinstance(runs, dict) else runs, qrels])


__all__ = ["depth_points", "plot_depths", "plot_rbo", "rbo_points"]
