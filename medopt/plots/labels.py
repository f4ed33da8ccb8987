"""Points that stand for pairs of runs, named so that a reader finds them: beside each point (adjustText
keeps the names apart) up to :data:`NAMED` points, else numbered with a key of names; and a scatter with
Kendall's tau."""

from __future__ import annotations

import numpy as np

from .figures import _pyplot

def tau_scatter(axis, x, y, *, size: float = 18, alpha: float = 0.75) -> float:
    """Points (x, y) on ``axis`` with a light grid; Kendall's tau between x and y (nan below two points)."""
    from scipy.stats import kendalltau

    axis.scatter(x, y, s=size, alpha=alpha, edgecolors="none")
    axis.grid(alpha=0.3)
    return kendalltau(x, y).statistic if len(x) > 1 else float("nan")


def pair_label(pair) -> str:
    """The label of a point that stands for a pair of runs."""
    return f"{pair[0]} | {pair[1]}"


NAMED = 40  # up to this many points are named beside them; more are numbered, the names in a key


def labelled_figure(points: int, panels: int = 1):
    """A figure for ``panels`` square scatter panels of ``points`` points each: (figure, axes, key), key the
    axis of the names' key when the points are numbered (more than :data:`NAMED`), else None."""
    plt = _pyplot()
    side = float(min(10.0, max(5.0, 3.5 + 0.05 * points)))
    if points <= NAMED:
        figure, axes = plt.subplots(1, panels, figsize=(side * panels, side), squeeze=False)
        return figure, list(axes[0]), None
    columns = -(-points // 70)
    figure = plt.figure(figsize=(side * panels + 2.4 * columns, side))
    grid = figure.add_gridspec(1, panels + 1, width_ratios=[side] * panels + [2.4 * columns], wspace=0.25)
    axes = [figure.add_subplot(grid[0, i]) for i in range(panels)]
    key = figure.add_subplot(grid[0, panels])
    key.axis("off")
    return figure, axes, key


def numbering(labels, x, y) -> list[int]:
    """Point numbers 1, 2, ... from the upper right (largest x + y) down, for the key of many points."""
    order = sorted(range(len(labels)), key=lambda i: (-(x[i] + y[i]), labels[i]))
    numbers = [0] * len(labels)
    for number, i in enumerate(order, 1):
        numbers[i] = number
    return numbers


def label_points(axis, x, y, labels, numbers=None) -> None:
    """Name each point (x, y) of ``axis`` by its label, or by its number when ``numbers`` are given (the
    names then in :func:`draw_key`), the texts pushed apart (adjustText) so that none covers another or a
    point, each joined to its point by a thin line.  Call it last, once the axis limits are set."""
    from adjustText import adjust_text

    texts = [str(n) for n in numbers] if numbers is not None else list(labels)
    size = 5.5 if numbers is not None else 7 if len(texts) <= 20 else 6
    drawn = [axis.text(a, b, text, fontsize=size, color="0.15") for a, b, text in zip(x, y, texts)]
    if drawn:
        adjust_text(drawn, x=np.asarray(x, dtype=float), y=np.asarray(y, dtype=float), ax=axis,
                    expand=(1.2, 1.5), force_text=(0.3, 0.6), time_lim=3,
                    arrowprops={"arrowstyle": "-", "color": "0.55", "lw": 0.4})


def draw_key(key, labels, numbers) -> None:
    """The names of numbered points, in columns of 70, on the axis ``key``."""
    lines = [f"{n:>3}  {label}" for n, label in sorted(zip(numbers, labels))]
    width = max(len(line) for line in lines) + 2
    columns = [lines[i:i + 70] for i in range(0, len(lines), 70)]
    rows = ["".join(column[r].ljust(width) for column in columns if r < len(column)) for r in range(len(columns[0]))]
    key.text(0.0, 1.0, "\n".join(rows), transform=key.transAxes, va="top", ha="left", fontsize=5.5,
             family="monospace")


def label_panels(axes, key, points, labels) -> None:
    """Label the points of every panel of ``axes`` (``points``: one (x, y) per panel; the same labels)."""
    numbers = None
    if key is not None:
        numbers = numbering(labels, *points[0])
        draw_key(key, labels, numbers)
    for axis, (x, y) in zip(axes, points):
        label_points(axis, x, y, labels, numbers)
