"""``medopt bounds``: each run's score range per topic and metric, beside the score trec_eval reports."""

from __future__ import annotations

import click

from .. import methods
from ..workflows.bounds import BOUNDS_COLUMNS, score_bounds
from ..io.paths import check_output_file
from ..io.results import FORMATS, format_rows, write_rows
from .common import (DEFAULT_TIME_LIMIT, MaxGrade, TimeLimit, distinct_files, main, metric_option, named_runs,
                     parse_limits, topic_options, warn)


@main.command("bounds")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="TREC qrels; none: nothing judged.")
@metric_option
@click.option("--method", default="auto", show_default=True,
              help=", ".join(["auto", *(name for name, m in methods.REGISTRY.items() if m.ranges)]) + ".")
@click.option("--solver", default=None, help="Exact solver: highs, cpsat or scip (default: as for compare).")
@click.option("--time-limit", type=TimeLimit(), default=DEFAULT_TIME_LIMIT,
              help=f"Seconds per range for the exact solver (default {DEFAULT_TIME_LIMIT:g}); beyond it an end is "
                   "uncertified. 0 or none: no limit.")
@click.option("--max-grade", type=MaxGrade(), default=None,
              help="Top grade G (default: the largest grade in the whole qrels file, at least 1); per-topic: each "
                   "topic's largest judged grade.")
@click.option("--residual", is_flag=True, help="RBP: the tail after the ranking's end is unknown too (it raises high).")
@click.option("--strategy", default="auto", show_default=True, help="Exact model, as for compare.")
@click.option("--at-most", "at_most", multiple=True, metavar="GRADE:N",
              help="Side constraint: at most N documents of grade >= GRADE in the collection. Repeatable.")
@click.option("--at-least", "at_least", multiple=True, metavar="GRADE:N",
              help="Side constraint: at least N documents of grade >= GRADE. Repeatable.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="csv", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Output file (default: stdout).")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@topic_options
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
def bounds_command(runs, qrels, metrics, method, solver, time_limit, max_grade, residual, strategy, at_most, at_least,
                   fmt, output, honour_rank, complete, topics, progress):
    """Score range [low, high] of each run per topic and metric, over every grading of its unjudged
    documents, beside the score trec_eval reports (unjudged = not relevant); then per run and metric
    the range of the mean score (topic 'all': the mean of the lows, the mean of the highs)."""
    limits = parse_limits(at_most, at_least)
    runs, names = named_runs(runs)
    distinct_files(runs)
    if output:
        check_output_file(output, "-o", inputs=[list(runs), qrels])
    rows = score_bounds(list(runs), list(metrics), qrels, names=names, complete=complete, topics=topics,
                        honour_rank=honour_rank,
                        progress=progress, warn=warn, max_grade=max_grade, method=method, solver=solver,
                        time_limit=time_limit, residual=residual, limits=limits, strategy=strategy)
    if output:
        write_rows(rows, BOUNDS_COLUMNS, fmt, output, inputs=[list(runs), qrels])
    else:
        click.echo(format_rows(rows, BOUNDS_COLUMNS, fmt), nl=False)
