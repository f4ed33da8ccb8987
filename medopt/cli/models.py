"""``medopt metric`` (canonical metric names) and ``medopt export`` (a model as an LP file)."""

from __future__ import annotations

import click

from ..io.output import check_output
from ..metrics import parse_metric
from .common import main

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
              help="direct, compact, enumerate, dinkelbach or capped (default: the exact solver's default for the metric).")
@click.option("--lam", type=float, default=None,
              help="Dinkelbach: the lam of N - lam*D (default: the direction's MED, the last step).")
@click.option("--case", "case_label", default=None,
              help="enumerate: the case label (default: the case holding the optimum).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="LP file to write.")
def export_command(metric, example_name, direction, strategy, lam, case_label, output):
    """Write the MED model of a worked example as an LP file (the models/ catalogue's exports)."""
    from ..workflows.catalogue import export_model  # Pyomo and the formulations load only for this command
    check_output(output, "-o", binary=True)  # before any work; an LP file is written by name: a regular file

    exported = export_model(metric, example_name, direction=direction, strategy=strategy, lam=lam,
                            case=case_label, path=output)
    detail = f", lam={exported.lam!r}" if exported.lam is not None else (
        f", case {exported.case!r}" if exported.case else "")
    click.echo(f"{output}: MED[{exported.metric}] {example_name}, direction {direction}, "
               f"strategy {exported.strategy}{detail}")
