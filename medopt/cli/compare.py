"""``medopt compare``: MED between two runs, topic by topic, with a mean row per metric."""

from __future__ import annotations

import sys

import click

from .. import api
from ..batch import unique_metrics
from ..errors import MedoptError
from ..io.paths import check_output_file
from ..io.results import FORMATS, format_rows, mean, write_rows
from ..io.trec import judged_topics, pair_topics, read_qrels, read_run, run_names
from ..result import verdict
from .common import judged_only_option, main, method_options, metric_option, parse_limits, warn

COMPARE_COLUMNS = ("run_a", "run_b", "topic", "metric", "med", "direction", "certified", "upper_bound",
                   "method", "seconds")
RANGE_COLUMNS = ("low", "high", "low_certified", "high_certified", "verdict")

@main.command()
@click.argument("run_a", type=click.Path(dir_okay=False))
@click.argument("run_b", type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="TREC qrels; none: nothing judged.")
@metric_option
@method_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="csv", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Output file (default: stdout).")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@judged_only_option
@click.option("--range", "ranges", is_flag=True,
              help="Also the difference range [low, high] of M(A) - M(B) per topic (each end certified on its own), "
                   "and in the 'all' row the mean difference range with its verdict: decided (it excludes 0) or "
                   "can flip.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
def compare(run_a, run_b, qrels, metrics, method, solver, time_limit, max_grade, pad, residual, strategy, at_most,
            at_least, fmt, output, honour_rank, judged_only, ranges, progress):
    """MED between RUN_A and RUN_B for every common topic and metric, then the mean (topic 'all').

    With --range, each topic's difference range too, and the mean difference range: the comparison
    is decided when no completion of the judgments can change which run is better on average."""
    from tqdm import tqdm

    parsed = unique_metrics(metrics, warn)
    limits = parse_limits(at_most, at_least)
    if output:
        check_output_file(output, "-o")
    first, second = read_run(run_a, honour_rank=honour_rank), read_run(run_b, honour_rank=honour_rank)
    judgments = read_qrels(qrels) if qrels else {}
    name_a, name_b = run_names(first, second)
    topics = pair_topics(first, second)
    if not topics.common:
        raise MedoptError(f"{run_a} and {run_b} have no topic in common ({run_a}: {' '.join(topics.only_a[:5])}"
                          f"{' ...' if len(topics.only_a) > 5 else ''}; {run_b}: {' '.join(topics.only_b[:5])}"
                          f"{' ...' if len(topics.only_b) > 5 else ''})")
    for side, only in (("RUN_A", topics.only_a), ("RUN_B", topics.only_b)):
        if only:
            warn(f"{len(only)} topic(s) only in {side}, skipped: {' '.join(only[:10])}{' ...' if len(only) > 10 else ''}")
    common, notes = judged_topics(topics.common, judgments, qrels, judged_only=judged_only)
    for note in notes:
        warn(note)
    rows, per_metric = [], {str(m): [] for m in parsed}
    show = sys.stderr.isatty() if progress is None else progress
    work = [(t, m) for t in common for m in parsed]
    ask = api.difference_range if ranges else api.med
    for topic, metric in tqdm(work, disable=not show, unit="med", desc="compare"):
        try:
            result = ask(metric, first.rankings[topic], second.rankings[topic], judgments.get(topic, {}),
                         max_grade=max_grade, method=method, solver=solver, time_limit=time_limit, pad=pad,
                         residual=residual, limits=limits, **({"strategy": strategy} if strategy != "auto" else {}))
        except MedoptError as error:
            raise MedoptError(f"topic {topic}, {metric}: {error}") from None
        row = {"run_a": name_a, "run_b": name_b, "topic": topic, "metric": str(metric), "method": result.method,
               "seconds": result.seconds}
        if ranges:
            row.update(med=result.med, direction="a" if result.high >= -result.low else "b",
                       certified=result.certified, upper_bound=max(result.high_bound, -result.low_bound),
                       low=result.low, high=result.high, low_certified=result.low_certified,
                       high_certified=result.high_certified, verdict=verdict(result.low, result.high))
        else:
            row.update(med=result.value, direction=result.direction, certified=result.certified,
                       upper_bound=result.upper_bound)
        rows.append(row)
        per_metric[str(metric)].append(row)
    for metric, metric_rows in per_metric.items():
        used = {r["method"] for r in metric_rows}
        row = {"run_a": name_a, "run_b": name_b, "topic": "all", "metric": metric,
               "med": mean(r["med"] for r in metric_rows), "direction": "",
               "certified": all(r["certified"] for r in metric_rows),
               "upper_bound": mean(r["upper_bound"] for r in metric_rows),
               "method": used.pop() if len(used) == 1 else "mixed",
               "seconds": sum(r["seconds"] for r in metric_rows)}
        if ranges:  # topics share no documents: the mean range's ends are the means of the topics' ends (SPEC 7)
            low, high = mean(r["low"] for r in metric_rows), mean(r["high"] for r in metric_rows)
            row.update(low=low, high=high, low_certified=all(r["low_certified"] for r in metric_rows),
                       high_certified=all(r["high_certified"] for r in metric_rows), verdict=verdict(low, high))
        rows.append(row)
    columns = COMPARE_COLUMNS + (RANGE_COLUMNS if ranges else ())
    if output:
        write_rows(rows, columns, fmt, output)
    else:
        click.echo(format_rows(rows, columns, fmt), nl=False)

