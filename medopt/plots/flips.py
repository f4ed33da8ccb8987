"""``medopt plot --kind flip``: how fragile each comparison is (SPEC 11).  One point per pair of runs: its
observed mean difference (x, unjudged documents not relevant) against its flip distance as a share of the
documents that may change, F / N (y); the pairs no completion flips ("never") drawn apart at the top."""

from __future__ import annotations

import numpy as np

from ..errors import MedoptError
from ..workflows.matrix import matrix_rows
from .figures import _save, check_image_outputs
from .labels import label_panels, labelled_figure, pair_label


def flip_points(runs, qrels, metric: str, *, jobs: int | None = 1, **options) -> list[dict]:
    """The per-pair summary rows of ``runs`` under ``metric`` with the flip columns (medopt.matrix with
    ``summary=True, flip=True``; ``options`` as for it: labels, scope, time_limit, complete, topics)."""
    rows, _ = matrix_rows(runs, qrels, [metric], jobs=jobs, summary=True, flip=True, **options)
    return rows


def plot_flips(runs, qrels, metric: str, outputs, *, jobs: int | None = 1, **options) -> list[dict]:
    """Each pair's observed mean difference against F / N; "never" pairs (the worst case decides them)
    marked at the top, uncertified distances hollow.  Returns the rows drawn."""
    paths = list(runs.values()) if isinstance(runs, dict) else list(runs)
    check_image_outputs(outputs, inputs=[paths, qrels])
    rows = flip_points(runs, qrels, metric, jobs=jobs, **options)
    if not rows:
        raise MedoptError("no pair of runs shares a judged topic: nothing to draw")
    x = np.array([r["diff"] for r in rows], dtype=float)
    never = np.array([r["flip_distance"] is None for r in rows])
    share = np.array([1.1 if r["flip_distance"] is None else r["flip_distance"] / max(r["flip_documents"], 1)
                      for r in rows])
    certified = np.array([bool(r["flip_certified"]) for r in rows])
    figure, (axis,), key = labelled_figure(len(rows))
    for mask, marker, label in ((~never & certified, "o", "flips: F / N (certified)"),
                                (~never & ~certified, "o", "flips: F / N (a bound, uncertified)"),
                                (never, "^", "never flips (the worst case decides it)")):
        if mask.any():
            axis.scatter(x[mask], share[mask], marker=marker, s=28, label=label,
                         facecolors="none" if marker == "o" and not certified[mask].all() else None)
    axis.axvline(0.0, color="0.6", linewidth=0.8)
    axis.axhline(1.0, color="0.85", linewidth=0.8)
    axis.set_xlabel(f"observed mean difference of {metric}, run_a - run_b (unjudged = not relevant)")
    axis.set_ylabel("flip distance F / N documents that may change")
    axis.set_ylim(-0.03, 1.18)
    from matplotlib.ticker import MaxNLocator  # matplotlib is loaded by labelled_figure above

    axis.xaxis.set_major_locator(MaxNLocator(5))
    figure.legend(*axis.get_legend_handles_labels(), fontsize=7, loc="lower center", ncol=3, frameon=False,
                  bbox_to_anchor=(0.5, -0.02))
    axis.set_title(f"How fragile each comparison is: {int(never.sum())} of {len(rows)} pairs never flip", fontsize=9)
    label_panels([axis], key, [(x, share)], [pair_label((r["run_a"], r["run_b"])) for r in rows])
    _save(figure, outputs, inputs=[paths, qrels])
    return rows
