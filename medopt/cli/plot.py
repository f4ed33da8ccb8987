"""``medopt plot``: heatmap, scatter and distribution from a store; Tan & Clarke's judged-fraction figure."""

from __future__ import annotations

import click

from .. import plots
from ..errors import MedoptError
from .common import main

@main.command("plot")
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--kind", type=click.Choice(["heatmap", "scatter", "distribution", "judged-fraction"]),
              default="heatmap", show_default=True,
              help="heatmap: clustered mean MED between runs; scatter: mean MED of two metrics per pair; "
                   "distribution: per-topic MED per pair; judged-fraction: MED under part of the qrels against "
                   "the actual difference under all of them (computed from RUNS, --qrels, -m).")
@click.option("--store", type=click.Path(dir_okay=False), default="medopt-matrix.sqlite", show_default=True)
@click.option("-m", "--metric", "metrics", multiple=True, help="Metric(s) to draw (default: those in the store).")
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="judged-fraction: the full qrels.")
@click.option("--fractions", default="0,25,50,75,100", show_default=True,
              help="judged-fraction: percentages of the qrels kept (a seeded random subset, nested).")
@click.option("--seed", type=int, default=0, show_default=True, help="judged-fraction: subsampling seed.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="judged-fraction: workers.")
@click.option("-o", "--output", "outputs", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="Image file, .png or .pdf. Repeatable.")
def plot_command(runs, kind, store, metrics, qrels, fractions, seed, jobs, outputs):
    """Plots of MED results: from a matrix store, or (judged-fraction) computed from runs and qrels."""

    plots.check_image_outputs(outputs)  # before any work: the suffix, and a place the file can be written
    if kind == "judged-fraction":
        if len(runs) < 2 or not qrels or len(metrics) != 1:
            raise MedoptError("--kind judged-fraction needs two or more RUNS, --qrels and one -m METRIC")
        try:
            percents = [float(p) for p in fractions.split(",") if p.strip()]
        except ValueError:
            percents = []
        if not percents or not all(0 <= p <= 100 for p in percents):  # (NaN is not between 0 and 100)
            raise MedoptError(f"--fractions {fractions!r}: expected percentages like 0,25,50,75,100")
        plots.plot_judged_fraction(list(runs), qrels, metrics[0], list(outputs), percents=percents, seed=seed,
                                   jobs=jobs)
    else:
        if runs:
            raise MedoptError(f"--kind {kind} draws from --store; RUNS are for --kind judged-fraction")
        draw = {"heatmap": plots.plot_heatmap, "scatter": plots.plot_scatter,
                "distribution": plots.plot_distribution}[kind]
        draw(store, list(outputs), metrics=list(metrics) or None)
    click.echo(f"medopt: wrote {', '.join(outputs)}", err=True)
