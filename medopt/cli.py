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
                     help="auto, closed-form, alg1, enumerate, exact, ..."),
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
              help="direct, compact, enumerate, dinkelbach or capped (default: the exact solver's default for the metric).")
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



@main.command("matrix")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="TREC qrels; none: nothing judged.")
@metric_option
@method_options
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Workers (default: every core).")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: a process pool; dask: Dask distributed (a LocalCluster unless --scheduler).")
@click.option("--scheduler", default=None, help="Dask scheduler address, e.g. tcp://10.0.0.5:8786.")
@click.option("--store", type=click.Path(dir_okay=False), default="medopt-matrix.sqlite", show_default=True,
              help="SQLite results store; rows are committed as they finish.")
@click.option("--resume", is_flag=True, help="Continue the job in --store, computing only the rows it lacks.")
@click.option("--fast-path/--no-fast-path", default=True, show_default=True,
              help="Array kernels for P, DCG, SDCG, RBP, nDCG@k (closed form / Alg. 1).")
@click.option("--chunk-size", type=click.IntRange(min=1), default=None,
              help="Rows per task (default: 4096 for the fast path, 4 for per-topic methods).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="When done, export the store here (.csv, .tsv, .jsonl or .parquet).")
@click.option("--heatmap", type=click.Path(dir_okay=False), default=None,
              help="When done, draw the clustered heatmap of mean MED here (.png or .pdf).")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
def matrix_command(runs, qrels, metrics, method, solver, time_limit, max_grade, pad, residual, strategy, at_most,
                   at_least, jobs, engine, scheduler, store, resume, fast_path, chunk_size, output, heatmap,
                   honour_rank, progress):
    """MED for every unordered pair of RUNS x every common topic x every metric, into a results store.

    Stop it at any time (Ctrl-C, or kill): rerun with --resume and it completes the job.
    """
    from .batch import FAST_ROWS_PER_TASK, INSTANCE_ROWS_PER_TASK, Settings, run_matrix

    settings = Settings(method=method, solver=solver, time_limit=time_limit, max_grade=max_grade, pad=pad,
                        residual=residual, limits=tuple(parse_limits(at_most, at_least)),
                        strategy=None if strategy == "auto" else strategy, fast=fast_path)
    report = run_matrix(list(runs), list(metrics), qrels=qrels, store=store, settings=settings, engine=engine,
                        jobs=jobs, scheduler=scheduler, resume=resume, honour_rank=honour_rank, progress=progress,
                        fast_rows=chunk_size or FAST_ROWS_PER_TASK, instance_rows=chunk_size or INSTANCE_ROWS_PER_TASK)
    if report.one_sided:
        click.echo(f"medopt: warning: {report.one_sided} (pair, topic) combination(s) skipped: the topic is in "
                   "only one run of the pair", err=True)
    click.echo(f"medopt: {report.computed} MED(s) computed, {report.stored_before} already stored; "
               f"{len(report.runs)} runs, {len(report.metrics)} metric(s), {report.seconds:.2f} s -> {store}",
               err=True)
    if output:
        from .store import export_results
        count = export_results(store, output)
        click.echo(f"medopt: wrote {count} rows to {output}", err=True)
    if heatmap:
        from .plots import plot_heatmap
        plot_heatmap(store, [heatmap])
        click.echo(f"medopt: wrote {heatmap}", err=True)


@main.command("export-results")
@click.option("--store", type=click.Path(dir_okay=False), default="medopt-matrix.sqlite", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="Output file: .csv, .tsv, .jsonl or .parquet (or say --format).")
@click.option("--format", "fmt", type=click.Choice(["csv", "tsv", "jsonl", "parquet"]), default=None)
@click.option("--assignment/--no-assignment", default=True, show_default=True,
              help="Include the assignment column (JSON of the unjudged documents set relevant).")
def export_results_command(store, output, fmt, assignment):
    """Write the rows of a matrix results store to CSV, TSV, JSON lines or parquet."""
    from .store import export_results

    count = export_results(store, output, fmt, with_assignment=assignment)
    click.echo(f"medopt: wrote {count} rows to {output}", err=True)


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
    from . import plots

    if kind == "judged-fraction":
        if len(runs) < 2 or not qrels or len(metrics) != 1:
            raise MedoptError("--kind judged-fraction needs two or more RUNS, --qrels and one -m METRIC")
        try:
            percents = [float(p) for p in fractions.split(",") if p.strip()]
        except ValueError:
            raise MedoptError(f"--fractions {fractions!r}: expected percentages like 0,25,50,75,100") from None
        plots.plot_judged_fraction(list(runs), qrels, metrics[0], list(outputs), percents=percents, seed=seed,
                                   jobs=jobs)
    else:
        if runs:
            raise MedoptError(f"--kind {kind} draws from --store; RUNS are for --kind judged-fraction")
        draw = {"heatmap": plots.plot_heatmap, "scatter": plots.plot_scatter,
                "distribution": plots.plot_distribution}[kind]
        draw(store, list(outputs), metrics=list(metrics) or None)
    click.echo(f"medopt: wrote {', '.join(outputs)}", err=True)


from .certify import certify_command  # noqa: E402  (defined in its own module, registered here)

main.add_command(certify_command)

if __name__ == "__main__":
    main()
