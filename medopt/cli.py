"""The ``medopt`` command (trec_eval habits: runs and qrels in, one row per topic and metric out)."""

from __future__ import annotations

import sys
import time

import click

from . import api
from .errors import MedoptError
from .io.results import FORMATS, mean, write_rows
from .io.trec import pair_topics, read_qrels, read_run
from .metrics import parse_metric

COMPARE_COLUMNS = ("run_a", "run_b", "topic", "metric", "med", "direction", "certified", "upper_bound",
                   "method", "seconds")


class MedoptGroup(click.Group):
    """Turn every MedoptError into a one-line message and exit status 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MedoptError as error:
            click.echo(f"medopt: error: {error}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("medopt: interrupted", err=True)
            sys.exit(130)


@click.group(cls=MedoptGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="medopt")
def main():
    """Maximized Effectiveness Difference between search rankings, computed exactly."""


def metric_option(function):
    return click.option("-m", "--metric", "metrics", multiple=True, required=True,
                        help="Metric, ir_measures style (nDCG@10, RBP(p=0.95), AP(norm=min)@100) or trec_eval "
                             "(ndcg_cut.10, P.5, map_cut.100). Repeatable.")(function)


def method_options(function):
    for option in reversed([
        click.option("--method", default="auto", show_default=True,
                     help="auto, closed-form, alg1, enumerate, exact, ..."),
        click.option("--solver", default=None, help="Exact solver: highs or cpsat."),
        click.option("--time-limit", type=float, default=None, help="Seconds per MED (exact methods)."),
        click.option("--max-grade", type=int, default=None, help="Top grade G (default: largest grade in the topic's qrels, at least 1)."),
        click.option("--pad", type=click.Choice(["none", "free"]), default="none", show_default=True,
                     help="free: fill short rankings to k with unjudged documents (Tan & Clarke)."),
        click.option("--residual", is_flag=True, help="RBP: credit the unseen tail to the better list."),
        click.option("--strategy", default="auto", show_default=True,
                     help="Exact ratio metrics: enumerate (the denominator) or dinkelbach."),
        click.option("--at-most", "at_most", multiple=True, metavar="GRADE:N",
                     help="Side constraint: at most N documents of grade >= GRADE in the collection. Repeatable."),
        click.option("--at-least", "at_least", multiple=True, metavar="GRADE:N",
                     help="Side constraint: at least N documents of grade >= GRADE. Repeatable."),
    ]):
        function = option(function)
    return function


@main.command()
@click.argument("run_a", type=click.Path(dir_okay=False))
@click.argument("run_b", type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="TREC qrels; none: nothing judged.")
@metric_option
@method_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="csv", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Output file (default: stdout).")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
def compare(run_a, run_b, qrels, metrics, method, solver, time_limit, max_grade, pad, residual, strategy, at_most,
            at_least, fmt, output, honour_rank, progress):
    """MED between RUN_A and RUN_B for every common topic and metric, then the mean (topic 'all')."""
    from tqdm import tqdm

    parsed = [parse_metric(m) for m in metrics]
    limits = parse_limits(at_most, at_least)
    first, second = read_run(run_a, honour_rank=honour_rank), read_run(run_b, honour_rank=honour_rank)
    judgments = read_qrels(qrels) if qrels else {}
    name_a, name_b = run_names(first, second)
    topics = pair_topics(first, second)
    for side, only in (("RUN_A", topics.only_a), ("RUN_B", topics.only_b)):
        if only:
            click.echo(f"medopt: warning: {len(only)} topic(s) only in {side}, skipped: {' '.join(only[:10])}"
                       f"{' ...' if len(only) > 10 else ''}", err=True)
    if not topics.common:
        raise MedoptError(f"{run_a} and {run_b} have no topic in common")
    rows, per_metric = [], {str(m): [] for m in parsed}
    show = sys.stderr.isatty() if progress is None else progress
    work = [(t, m) for t in topics.common for m in parsed]
    for topic, metric in tqdm(work, disable=not show, unit="med", desc="compare"):
        try:
            result = api.med(metric, first.rankings[topic], second.rankings[topic], judgments.get(topic, {}),
                             max_grade=max_grade, method=method, solver=solver, time_limit=time_limit, pad=pad,
                             residual=residual, limits=limits, **({"strategy": strategy} if strategy != "auto" else {}))
        except MedoptError as error:
            raise MedoptError(f"topic {topic}, {metric}: {error}") from None
        row = {"run_a": name_a, "run_b": name_b, "topic": topic, "metric": str(metric),
               "med": result.value, "direction": result.direction, "certified": result.certified,
               "upper_bound": result.upper_bound, "method": result.method, "seconds": result.seconds}
        rows.append(row)
        per_metric[str(metric)].append(row)
    for metric, metric_rows in per_metric.items():
        methods = {r["method"] for r in metric_rows}
        rows.append({"run_a": name_a, "run_b": name_b, "topic": "all", "metric": metric,
                     "med": mean(r["med"] for r in metric_rows), "direction": "",
                     "certified": all(r["certified"] for r in metric_rows),
                     "upper_bound": mean(r["upper_bound"] for r in metric_rows),
                     "method": methods.pop() if len(methods) == 1 else "mixed",
                     "seconds": sum(r["seconds"] for r in metric_rows)})
    if output:
        write_rows(rows, COMPARE_COLUMNS, fmt, output)
    else:
        from .io.results import format_rows
        click.echo(format_rows(rows, COMPARE_COLUMNS, fmt), nl=False)


def parse_limits(at_most, at_least) -> list:
    """--at-most / --at-least GRADE:N options as RelevanceLimit side constraints."""
    from .instance import RelevanceLimit

    limits = []
    for text, side in [(t, "high") for t in at_most] + [(t, "low") for t in at_least]:
        grade, sep, count = text.partition(":")
        if not sep or not grade.strip().isdigit() or not count.strip().isdigit() or int(grade) < 1:
            raise MedoptError(f"--at-{'most' if side == 'high' else 'least'} {text!r}: expected GRADE:N, e.g. 2:1")
        limits.append(RelevanceLimit(grade=int(grade), **{side: int(count)}))
    return limits


def run_names(*runs) -> list[str]:
    """Run ids, or file names where run ids collide (many tools write the same run id)."""
    names = [run.name for run in runs]
    if len(set(names)) == len(names):
        return names
    from pathlib import Path
    stems = [Path(run.path).name for run in runs]
    return stems if len(set(stems)) == len(stems) else [run.path for run in runs]


@main.command("metric")
@click.argument("names", nargs=-1, required=True)
def metric_command(names):
    """Print the canonical form of metric strings (and reject malformed ones)."""
    for name in names:
        metric = parse_metric(name)
        click.echo(f"{metric}\t{type(metric).doc}")


@main.command("export")
@click.option("-m", "--metric", required=True, help="Metric, e.g. SDCG@10, nDCG@10, AP@10, ERR@10, Q@10.")
@click.option("--example", "example_name", required=True,
              help="Worked example: moffat-x3x4 (Moffat's X3/X4) or tan-clarke-x1x2.")
@click.option("--direction", type=click.Choice(["a", "b"]), default="a", show_default=True,
              help="a: maximise M(A) - M(B); b: M(B) - M(A).")
@click.option("--strategy", default=None,
              help="direct, enumerate or dinkelbach (default: the exact solver's default for the metric).")
@click.option("--lam", type=float, default=None,
              help="Dinkelbach: the lam of N - lam*D (default: the direction's MED, the last step).")
@click.option("--case", "case_label", default=None,
              help="enumerate: the case label (default: the case holding the optimum).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="LP file to write.")
def export_command(metric, example_name, direction, strategy, lam, case_label, output):
    """Write the MED model of a worked example as an LP file (the models/ catalogue's exports)."""
    from .catalogue import export_model

    exported = export_model(metric, example_name, direction=direction, strategy=strategy, lam=lam,
                            case=case_label, path=output)
    detail = f", lam={exported.lam!r}" if exported.lam is not None else (
        f", case {exported.case!r}" if exported.case else "")
    click.echo(f"{output}: MED[{exported.metric}] {example_name}, direction {direction}, "
               f"strategy {exported.strategy}{detail}")


if __name__ == "__main__":
    main()
