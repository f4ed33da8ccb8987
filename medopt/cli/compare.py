"""``medopt compare``: MED between two runs, topic by topic, with a mean row per metric (the rows come
from :func:`medopt.workflows.compare.compare_rows`, which ``medopt.compare`` shares: this module reads the options and prints; the metrics are parsed there, once)."""

from __future__ import annotations

import sys

import click

from ..io.paths import check_output_file
from ..workflows.compare import compare_rows
from ..workflows.outputs import OUTPUT_FORMATS, format_output, write_output
from .relevance_options import check_model_options, model_options
from .common import (check_flip_options, flip_options, main, method_options, metric_option, named_runs, parse_limits,
                     topic_options, warn)


@main.command()
@click.argument("run_a", type=click.Path(dir_okay=False))
@click.argument("run_b", type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="TREC qrels; none: nothing judged.")
@click.option("--spans", type=click.Path(dir_okay=False), default=None,
              help="Relevant spans of the judged documents ('topic docid offset length'): the runs are then "
                   "passage runs (8 columns: ... runid offset length) and the metric U(L=..) (MED-U, SPEC 8).")
@metric_option
@method_options
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="csv", show_default=True,
              help="csv, tsv, jsonl, parquet (needs -o); trec_eval: 'MED_<metric> topic value' lines as trec_eval -q "
                   "prints them (with --range MEDlow_ and MEDhigh_ too); latex: a booktabs table of the means.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Output file (default: stdout).")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@topic_options
@click.option("-q", "per_topic", is_flag=True,
              help="As trec_eval -q: a row per topic and metric before the summary rows (topic 'all').")
@click.option("--range", "ranges", is_flag=True,
              help="Also the difference range [low, high] of M(A) - M(B) (each end certified on its own), and in "
                   "the summary the mean difference range with its verdict (SPEC 7): decided (a proven bound "
                   "excludes 0), can flip (a completion ties or reverses the comparison) or open (a time limit "
                   "stopped a solve before it proved its end).")
@flip_options
@click.option("--test", "test", type=click.Choice(["t", "sign"]), default=None,
              help="Significance under every completion (SPEC 12; implies --range): the paired t-test or the sign "
                   "test; the summary rows get p_reference (unjudged = not relevant), p_worst (the largest p over "
                   "every completion) and robust (p_worst < alpha and the mean keeps its sign).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level of --test.")
@model_options
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
def compare(run_a, run_b, qrels, spans, metrics, method, solver, time_limit, max_grade, pad, residual, strategy, at_most,
            at_least, fmt, output, honour_rank, complete, topics, per_topic, ranges, flip, labels, scope, test, alpha,
            model, model_seed, draws, progress):
    """MED between RUN_A and RUN_B: a summary row per metric (topic 'all'): each run's observed mean
    (unjudged = not relevant, as trec_eval), their difference, Judged@k, the mean MED; -q adds a row per
    topic, as trec_eval -q.  Means are over the topics the qrels judge and both runs retrieved (-c: every
    judged topic).

    With --range, the mean difference range too, and its verdict: the comparison is decided when no
    completion of the judgments can change which run is better on average."""
    check_flip_options(flip, labels if test is None else None, scope)  # --labels: with --flip or --test
    check_model_options(model, model_seed, draws)
    limits = parse_limits(at_most, at_least)
    if fmt == "parquet" and not output:
        raise click.UsageError("--format parquet writes a file: give -o FILE")
    (run_a, run_b), names = named_runs([run_a, run_b])
    if output:
        check_output_file(output, "-o", inputs=[run_a, run_b, qrels, spans], binary=fmt == "parquet")
    rows, columns = compare_rows(
        run_a, run_b, qrels, metrics, method=method, solver=solver, time_limit=time_limit, max_grade=max_grade,
        pad=pad, residual=residual, strategy=strategy, limits=limits, honour_rank=honour_rank,
        complete=complete, topics=topics, per_topic=per_topic, ranges=ranges, progress=sys.stderr.isatty() if progress is None else progress,
        warn=warn, sides=("RUN_A", "RUN_B"), spans=spans, names=names, flip=flip, labels=labels, scope=scope,
        test=test, alpha=alpha, model=model, model_seed=model_seed, draws=draws)
    if output:
        write_output(rows, columns, fmt, output, inputs=[run_a, run_b, qrels, spans])
    else:
        click.echo(format_output(rows, columns, fmt), nl=False)
