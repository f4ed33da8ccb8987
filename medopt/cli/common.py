"""What every ``medopt`` command shares: the group, one-line errors, metric and method options."""

from __future__ import annotations

import sys

import click

from .. import methods
from ..errors import MedoptError
from ..instance import RelevanceLimit


def one_line_errors(invoke, ctx):
    """Run a click invoke; a MedoptError becomes a one-line message and exit status 2."""
    try:
        return invoke(ctx)
    except MedoptError as error:
        click.echo(f"medopt: error: {error}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("medopt: interrupted", err=True)
        sys.exit(130)


class MedoptGroup(click.Group):
    """Turn every MedoptError into a one-line message and exit status 2."""

    def invoke(self, ctx):
        return one_line_errors(super().invoke, ctx)


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
                     help=", ".join(["auto", *methods.method_names()]) + "."),
        click.option("--solver", default=None, help="Exact solver: highs or cpsat (default: CP-SAT for AP at depth 50 and more, HiGHS otherwise)."),
        click.option("--time-limit", type=float, default=None, help="Seconds per MED (exact methods)."),
        click.option("--max-grade", type=int, default=None, help="Top grade G (default: largest grade in the topic's qrels, at least 1)."),
        click.option("--pad", type=click.Choice(["none", "free"]), default="none", show_default=True,
                     help="free: fill short rankings to k with unjudged documents (Tan & Clarke)."),
        click.option("--residual", is_flag=True, help="RBP: credit the unseen tail to the better list."),
        click.option("--strategy", default="auto", show_default=True,
                     help="Exact model: enumerate (the denominator) or dinkelbach for ratio metrics, capped for "
                          "AP(norm=min)@k; "
                          "direct (state expansion) or compact (HiGHS only) for ERR/RR."),
        click.option("--at-most", "at_most", multiple=True, metavar="GRADE:N",
                     help="Side constraint: at most N documents of grade >= GRADE in the collection. Repeatable."),
        click.option("--at-least", "at_least", multiple=True, metavar="GRADE:N",
                     help="Side constraint: at least N documents of grade >= GRADE. Repeatable."),
    ]):
        function = option(function)
    return function


def parse_limits(at_most, at_least) -> list:
    """--at-most / --at-least GRADE:N options as RelevanceLimit side constraints."""
    limits = []
    for text, side in [(t, "high") for t in at_most] + [(t, "low") for t in at_least]:
        grade, sep, count = text.partition(":")
        if not sep or not grade.strip().isdigit() or not count.strip().isdigit() or int(grade) < 1:
            raise MedoptError(f"--at-{'most' if side == 'high' else 'least'} {text!r}: expected GRADE:N, e.g. 2:1")
        limits.append(RelevanceLimit(grade=int(grade), **{side: int(count)}))
    return limits
