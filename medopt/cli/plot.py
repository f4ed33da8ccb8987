"""``medopt plot``: heatmap, scatter, distribution, ranges and verdicts from a store; Tan & Clarke's judged-fraction
figure and the runs' score ranges (bounds), computed from runs."""

from __future__ import annotations

import click

from ..plots import matrix as plots
from ..plots.figures import check_image_outputs
from ..plots import flips as flip_plots
from ..plots import ranges as range_plots
from ..plots import verdicts as verdict_plots
from ..plots import rbo as rbo_plots
from ..plots.likely import plot_model_distribution
from ..errors import MedoptError
from ..io.output import store_files
from ..io.trec import read_run
from .common import DEFAULT_TIME_LIMIT, main, named_runs, topic_options, warn

FROM_RUNS = ("judged-fraction", "bounds", "rbo", "depths", "flip")


@main.command("plot")
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--kind", type=click.Choice(["heatmap", "scatter", "distribution", "ranges", "verdicts",
                                           "judged-fraction", "bounds", "rbo", "depths", "flip"]),
              default="heatmap", show_default=True,
              help="heatmap: clustered mean MED between runs; scatter: mean MED of two metrics per pair; "
                   "distribution: per-topic MED per pair; ranges: per-topic difference ranges of one pair (--pair) "
                   "and their mean, from a store made with 'matrix --range', the observed difference marked (each "
                   "topic's when RUNS and --qrels are given), beyond 50 topics paged in a PDF, the 50 widest and a "
                   "summary row in a PNG; verdicts: run x run matrix of the pairs' verdicts, runs by observed score, "
                   "from a store made with 'matrix --range'; judged-fraction: MED under part of the "
                   "qrels against the actual difference under all of them; bounds: runs ranked by their trec_eval "
                   "score, with the range of their mean score; rbo: Tan & Clarke's Fig. 3(a), mean MED (-m, default "
                   "RBP(p=0.9)) of each pair against 1 - its mean RBO (-m RBO(p=...), default RBO(p=0.9)); depths: "
                   "their Fig. 3(e, f), mean MED-M@k against MED-M@20 for each k of --depths (-m M without @k, default SDCG: the paper's nDCG) "
                   "(these four computed from RUNS, --qrels, -m); flip: each pair's observed mean difference against "
                   "its flip distance F / N (SPEC 11), the pairs that never flip at the top (from RUNS, --qrels and "
                   "one -m).")
@click.option("--store", type=click.Path(dir_okay=False), default="medopt-matrix.sqlite", show_default=True)
@click.option("-m", "--metric", "metrics", multiple=True, help="Metric(s) to draw (default: those in the store).")
@click.option("--pair", nargs=2, default=None, metavar="RUN_A RUN_B",
              help="ranges: the pair of runs (default: the only pair in the store).")
@click.option("--method", default=None,
              help="From a store: draw the rows of this method (a store completed with 'matrix --add-method' "
                   "holds several; they are never averaged together).")
@click.option("--qrels", type=click.Path(dir_okay=False), default=None,
              help="judged-fraction: the full qrels; bounds: the qrels; ranges: the store's qrels (with RUNS).")
@click.option("--fractions", default="0,25,50,75,100", show_default=True,
              help="judged-fraction: percentages of the qrels kept (a seeded random subset, nested).")
@click.option("--depths", default="5,20,100", show_default=True,
              help="depths: the cutoffs k; each but 20 is drawn against 20.")
@click.option("--seed", type=int, default=0, show_default=True, help="judged-fraction: subsampling seed.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="judged-fraction: workers.")
@click.option("--model", default=None, metavar="MODEL",
              help="distribution with RUN_A RUN_B, --qrels and one -m: the distribution of the pair's mean "
                   "difference under this relevance model (SPEC 13: rank, uniform(p=..) or a probabilities "
                   "file), its worst-case range and the observed difference marked (--seed seeds the sampler).")
@topic_options
@click.option("-o", "--output", "outputs", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="Image file, .png or .pdf. Repeatable.")
def plot_command(runs, kind, store, metrics, pair, method, qrels, fractions, depths, seed, jobs, model, complete,
                 topics, outputs):
    """Plots of MED results and ranges: from a matrix store, or (judged-fraction, bounds) computed from runs
    and qrels."""

    # before any work: the suffix, a place the file can be written, and none of the inputs
    runs, names = named_runs(runs)  # NAME=PATH names a run (the plots computed from runs)
    if model is not None or (kind == "distribution" and runs):  # SPEC 13: one pair under a relevance model
        if kind != "distribution" or len(runs) != 2 or not qrels or len(metrics) != 1 or model is None:
            raise MedoptError("--model draws --kind distribution of two RUNS with --qrels, one -m METRIC and "
                              "--model MODEL")
        plot_model_distribution(runs[0], runs[1], qrels, metrics[0], list(outputs), model=model, seed=seed,
                                complete=complete, topics=topics, time_limit=DEFAULT_TIME_LIMIT, warn=warn)
        click.echo(f"medopt: wrote {', '.join(outputs)}", err=True)
        return
    check_image_outputs(outputs, inputs=[list(runs), qrels] if kind in FROM_RUNS else store_files(store))
    if pair and kind != "ranges":
        raise MedoptError("--pair chooses the pair of runs for --kind ranges")
    if method and kind in FROM_RUNS:
        raise MedoptError(f"--method chooses the rows of a store; --kind {kind} computes from RUNS")
    if (complete or topics) and kind not in FROM_RUNS:
        raise MedoptError("-c and --topics choose the topics of the plots computed from RUNS; a store's topics "
                          "were chosen by its matrix job")
    selection = {"complete": complete, "topics": topics}
    named = runs if not any(names) else {name or read_run(path).name: path for name, path in zip(names, runs)}
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
                                   jobs=jobs, names=names, **selection)
    elif kind == "bounds":
        if not runs or not qrels or len(metrics) != 1:
            raise MedoptError("--kind bounds needs one or more RUNS, --qrels and one -m METRIC")
        range_plots.plot_bounds(list(runs), qrels, metrics[0], list(outputs), warn=warn,
                                time_limit=DEFAULT_TIME_LIMIT, names=names, **selection)
    elif kind == "flip":
        if len(runs) < 2 or not qrels or len(metrics) != 1:
            raise MedoptError("--kind flip needs two or more RUNS, --qrels and one -m METRIC")
        flip_plots.plot_flips(named, qrels, metrics[0], list(outputs), jobs=jobs or 1,
                              time_limit=DEFAULT_TIME_LIMIT, **selection)
    elif kind == "rbo":
        if len(runs) < 2:
            raise MedoptError("--kind rbo needs two or more RUNS (--qrels optional)")
        rbo = [m for m in metrics if rbo_plots.parse_companion(m)]
        med = [m for m in metrics if not rbo_plots.parse_companion(m)]
        if len(rbo) > 1 or len(med) > 1:
            raise MedoptError("--kind rbo draws one MED metric against one RBO: e.g. -m 'RBP(p=0.9)' -m 'RBO(p=0.9)'")
        rbo_plots.plot_rbo(named, qrels, list(outputs), metric=(med or ["RBP(p=0.9)"])[0],
                           rbo=(rbo or ["RBO(p=0.9)"])[0], jobs=jobs or 1, **selection)
    elif kind == "depths":
        if len(runs) < 2 or len(metrics) > 1:
            raise MedoptError("--kind depths needs two or more RUNS and at most one -m METRIC (no cutoff)")
        try:
            cutoffs = [int(k) for k in depths.split(",") if k.strip()]
        except ValueError:
            cutoffs = []
        if not cutoffs or min(cutoffs) < 1:
            raise MedoptError(f"--depths {depths!r}: expected cutoffs like 5,20,100")
        rbo_plots.plot_depths(named, qrels, list(outputs), metric=(metrics or ("SDCG",))[0], depths=cutoffs,
                              jobs=jobs or 1, **selection)
    else:
        if runs and kind != "ranges":
            raise MedoptError(f"--kind {kind} draws from --store; RUNS are for --kind {', '.join(FROM_RUNS)} "
                              "and ranges")
        if kind == "ranges":
            if len(metrics) > 1:
                raise MedoptError("--kind ranges draws one metric: give one -m")
            if bool(runs) != bool(qrels):
                raise MedoptError("--kind ranges marks each topic's observed difference from RUNS and --qrels: "
                                  "give both or neither")
            range_plots.plot_ranges(store, list(outputs), metrics[0] if metrics else None, pair, method,
                                    runs=list(runs) or None, qrels=qrels)
        elif kind == "verdicts":
            verdict_plots.plot_verdicts(store, list(outputs), metrics=list(metrics) or None, method=method)
        else:
            draw = {"heatmap": plots.plot_heatmap, "scatter": plots.plot_scatter,
                    "distribution": plots.plot_distribution}[kind]
            draw(store, list(outputs), metrics=list(metrics) or None, method=method)
    click.echo(f"medopt: wrote {', '.join(outputs)}", err=True)
