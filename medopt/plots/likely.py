"""``medopt plot --kind distribution RUN_A RUN_B --qrels Q -m M --model MODEL``: what is likely beside what
is possible (SPEC 13).  The distribution of the pair's mean difference under the relevance model, its
worst-case range (SPEC 7, shaded) and the observed difference (unjudged documents not relevant) marked."""

from __future__ import annotations

import numpy as np

from ..relevance import pair_distribution
from ..relevance.compute import check_support
from ..workflows.compare import compare_rows
from .figures import _pyplot, _save, check_image_outputs

BINS = 120


def distribution_panel(axis, result, low: float, high: float, metric: str) -> None:
    """One pair's panel: the probability of each bin of the mean difference, the range and the observed value."""
    values, weights = np.asarray(result.values, dtype=float), np.asarray(result.weights, dtype=float)
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    span = (min(low, values.min()), max(high, values.max())) if len(values) else (low, high)
    inner = (float(values.min()), float(values.max())) if len(values) else span
    edges = np.linspace(inner[0], inner[1], BINS + 1) if inner[1] > inner[0] else np.array([inner[0] - 0.5e-3,
                                                                                            inner[0] + 0.5e-3])
    mass, edges = np.histogram(values, bins=edges, weights=weights)
    axis.axvspan(low, high, color="0.9", label=f"worst-case range [{low:+.4f}, {high:+.4f}]")
    axis.stairs(mass, edges, fill=True, alpha=0.7, label=f"P under {result.model.split(';')[0]}")
    axis.axvline(result.reference, color="C3", linewidth=1.2, label=f"observed {result.reference:+.4f}")
    axis.axvline(0.0, color="0.4", linewidth=0.8, linestyle=":")
    low_p, high_p = result.p_positive_interval
    axis.set_title(f"P(A better) = {result.p_positive:.4f} [{low_p:.4f}, {high_p:.4f}] ({result.method}); "
                   f"P(flip) = {result.p_flip:.4f}", fontsize=9)
    axis.set_xlabel(f"mean difference of {metric} over {result.topics} topics, A - B")
    axis.set_ylabel("probability per bin")
    margin = 0.03 * max(span[1] - span[0], 1e-9)
    axis.set_xlim(span[0] - margin, span[1] + margin)
    axis.legend(fontsize=7, loc="upper left")


def plot_model_distribution(run_a, run_b, qrels, metric: str, outputs, *, model="rank", seed: int = 0,
                            draws=None, complete: bool = False, topics=None, time_limit=None, warn=None):
    """Draw one pair's distribution (module docstring); returns the DistributionResult and the range."""
    check_image_outputs(outputs, inputs=[[run_a, run_b], qrels])
    options = {} if warn is None else {"warn": warn}
    rows, _ = compare_rows(run_a, run_b, qrels, [metric], ranges=True, per_topic=False, complete=complete,
                           topics=topics, time_limit=time_limit, **options)
    summary = rows[0]
    result = pair_distribution(metric, run_a, run_b, qrels, model=model, seed=seed, draws=draws, complete=complete,
                               topics=topics, **options)
    check_support(result.support, summary["low_bound"], summary["high_bound"], "the mean difference")
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7.5, 4.0))
    distribution_panel(axis, result, summary["low"], summary["high"], metric)
    figure.suptitle(f"{summary['run_a']} vs {summary['run_b']}: what is likely, what is possible", fontsize=10)
    figure.tight_layout()
    _save(figure, outputs, inputs=[[run_a, run_b], qrels])
    return result, (summary["low"], summary["high"])
