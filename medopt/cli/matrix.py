"""``medopt matrix`` (every pair of many runs into a results store) and ``medopt export-results``."""

from __future__ import annotations

import click

from ..batch import FAST_ROWS_PER_TASK, INSTANCE_ROWS_PER_TASK, Settings, run_matrix
from ..errors import MedoptError
from ..io.output import store_files
from ..io.paths import check_output_file
from ..plots.figures import check_image_outputs
from ..plots.matrix import plot_heatmap
from ..core.significance import SUMMARY_COLUMNS as SIGNIFICANCE_COLUMNS
from ..flip.columns import FLIP_COLUMNS, pair_flips
from ..relevance.columns import MODEL_COLUMNS, pair_models
from .relevance_options import check_model_options, model_options
from ..io.frames import as_qrels, as_run
from ..io.store import (PAIR_COLUMNS, ResultStore, export_format, export_pairs, export_results, export_rows,
                        open_existing)
from ..io.trec import run_names
from .common import (check_flip_options, distinct_files, flip_options, main, method_options, metric_option, named_runs,
                     parse_limits, topic_options, warn)


@main.command("matrix")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="TREC qrels; none: nothing judged.")
@click.option("--spans", type=click.Path(dir_okay=False), default=None,
              help="Relevant spans of the judged documents ('topic docid offset length'): with -m 'U(L=..)' the "
                   "RUNS are 8-column passage runs and MED-U is computed (SPEC 8); its sha256 is kept in the store.")
@metric_option
@method_options
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Workers (default: every core).")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: a process pool; dask: Dask distributed (a LocalCluster unless --scheduler).")
@click.option("--scheduler", default=None, help="Dask scheduler address, e.g. tcp://10.0.0.5:8786.")
@click.option("--store", type=click.Path(dir_okay=False), default="medopt-matrix.sqlite", show_default=True,
              help="SQLite results store; rows are committed as they finish.")
@click.option("--resume", is_flag=True, help="Continue the job in --store, computing only the rows it lacks.")
@click.option("--retry-timeouts", "retry", is_flag=True,
              help="With --resume: compute again the rows stored uncertified (time limit reached, solver stopped "
                   "early), e.g. under a larger --time-limit or another --solver.")
@click.option("--refresh", is_flag=True,
              help="With --resume: compute again the rows of the runs (all rows: of the qrels or spans) whose "
                   "bytes changed since they were stored; without it a changed input is refused.")
@click.option("--add-method", "several_methods", is_flag=True,
              help="With --resume: store this --method's rows beside those of the method the store was made "
                   "with (plot then needs --method); without it another method is refused.")
@topic_options
@click.option("--fast-path/--no-fast-path", default=True, show_default=True,
              help="Array kernels for P, DCG, SDCG, RBP (closed form) and nDCG (Alg. 1, profile search).")
@click.option("--chunk-size", type=click.IntRange(min=1), default=None,
              help="Rows per task (default: 4096 for the fast path, 4 for per-topic methods).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="When done, export the store here (.csv, .tsv, .jsonl or .parquet, or say --format).")
@click.option("--format", "fmt", type=click.Choice(["csv", "tsv", "jsonl", "parquet"]), default=None,
              help="The format of -o when its name does not tell it.")
@click.option("--summary", "summary", type=click.Path(dir_okay=False), default=None,
              help="When done, write the per-pair summary here (.csv, .tsv, .jsonl or .parquet): each pair's observed "
                   "means (unjudged = not relevant), their difference, Judged@k, the mean MED and, with --range, the "
                   "mean difference range and verdict (also in the store's 'pairs' table).")
@click.option("--heatmap", type=click.Path(dir_okay=False), default=None,
              help="When done, draw the clustered heatmap of mean MED here (.png or .pdf).")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@click.option("--range", "ranges", is_flag=True,
              help="Store both ends of each difference range of M(A) - M(B) (columns low, high, their bounds, "
                   "certificates and assignments); the MED is max(high, -low).  A store is made with or without "
                   "it: --resume keeps to the store's choice.")
@flip_options
@click.option("--test", "test", type=click.Choice(["t", "sign"]), default=None,
              help="With --summary: significance under every completion per pair (SPEC 12; implies --range): "
                   "p_reference, p_worst and robust in the summary file.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level of --test.")
@click.option("--correction", type=click.Choice(["none", "holm", "bonferroni"]), default="none", show_default=True,
              help="Adjust --test's p-values over the pairs of each metric (as PyTerrier's correction=).")
@model_options
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
def matrix_command(runs, qrels, spans, metrics, method, solver, time_limit, max_grade, pad, residual, strategy, at_most,
                   at_least, jobs, engine, scheduler, store, resume, retry, refresh, several_methods, complete,
                   topics, fast_path, chunk_size, output, fmt, summary, heatmap, honour_rank, ranges, flip, labels, scope,
                   test, alpha, correction, model, model_seed, draws, progress):
    """MED for every unordered pair of RUNS x every common topic x every metric, into a results store.

    Stop it at any time (Ctrl-C, SIGTERM, or kill): rerun with --resume and it completes the job.
    Inputs and output paths are checked before the store is created: a job that fails leaves no store.
    MED-U: -m 'U(L=12000)' --spans SPANS, RUNS being passage runs; U is computed alone in its job.
    """
    settings = Settings(method=method, solver=solver, time_limit=time_limit, max_grade=max_grade, pad=pad,
                        residual=residual, limits=tuple(parse_limits(at_most, at_least)),
                        strategy=strategy, fast=fast_path,
                        ranges=ranges or test is not None)  # SPEC 12 (--test) needs the ranges
    check_flip_options(flip, labels, scope)
    if labels is not None and test is not None:
        raise click.UsageError("matrix --test takes its reference with unjudged = 0: --labels goes with --flip here "
                               "(compare --test --labels takes them)")
    check_model_options(model, model_seed, draws)
    if model is not None and (not summary or str(summary).endswith(".gz")):
        raise click.UsageError("--model adds columns to the per-pair summary: give --summary FILE (not .gz)")
    if (flip or test is not None) and (not summary or str(summary).endswith(".gz")):
        raise click.UsageError("--flip and --test add columns to the per-pair summary: give --summary FILE (not .gz)")
    if fmt is not None and not output:
        raise MedoptError("--format is the format of -o: give -o FILE with it")
    runs, names = named_runs(runs)
    distinct_files(runs)
    inputs = [list(runs), qrels, spans]
    check_output_file(store, "--store", inputs=[inputs, output, heatmap, summary], binary=True)  # an output too
    inputs.append(store_files(store))
    if output:  # checked now: not after an hour of computing
        fmt = export_format(output, fmt)
        check_output_file(output, "-o", inputs=[inputs, heatmap, summary], binary=fmt == "parquet")
    if summary:
        summary_format = export_format(summary)
        check_output_file(summary, "--summary", inputs=[inputs, heatmap, output], binary=summary_format == "parquet")
    if heatmap:
        check_image_outputs([heatmap], "--heatmap", inputs=[inputs, output, summary])
    report = run_matrix(list(runs), list(metrics), qrels=qrels, store=store, settings=settings, engine=engine,
                        jobs=jobs, scheduler=scheduler, resume=resume, retry=retry, complete=complete, topics=topics,
                        honour_rank=honour_rank, progress=progress, fast_rows=chunk_size or FAST_ROWS_PER_TASK,
                        instance_rows=chunk_size or INSTANCE_ROWS_PER_TASK, warn=warn, spans=spans,
                        names=names, refresh=refresh, several_methods=several_methods, test=test, alpha=alpha,
                        correction=correction)
    if report.one_sided:
        warn(f"{report.one_sided} (pair, topic) combination(s) skipped: the topic is in only one run of the pair")
    again = f" ({report.retried} of them again: stored uncertified)" if report.retried else ""
    click.echo(f"medopt: {report.computed} MED(s) computed{again}, {report.stored_before} already stored; "
               f"{len(report.runs)} runs, {len(report.metrics)} metric(s), {report.seconds:.2f} s -> {store}",
               err=True)
    if output:
        count = export_results(store, output, fmt)
        click.echo(f"medopt: wrote {count} rows to {output}", err=True)
    if summary:
        pairs, columns = report.pairs, PAIR_COLUMNS + (SIGNIFICANCE_COLUMNS if test is not None else ())
        if flip:
            pairs = flip_summary(store, pairs, runs, names, qrels, labels=labels, scope=scope, max_grade=max_grade,
                                 time_limit=time_limit, complete=complete, topics=topics, honour_rank=honour_rank)
            columns += FLIP_COLUMNS
            with ResultStore(store) as results:  # the flips stored per pair, beside the summary
                results.replace_pairs(pairs, report.runs)
        if model is not None:  # SPEC 13
            pairs = model_summary(store, pairs, runs, names, qrels, model=model, seed=model_seed, draws=draws,
                                  max_grade=max_grade, complete=complete, topics=topics, honour_rank=honour_rank)
            columns += MODEL_COLUMNS
        count = export_pairs(store, summary) if pairs is None else export_rows(pairs, columns, summary,
                                                                              inputs=inputs)
        click.echo(f"medopt: wrote the summary of {count} pair(s) x metric(s) to {summary}", err=True)
    if heatmap:
        plot_heatmap(store, [heatmap], method=method if several_methods and method != "auto" else None)
        click.echo(f"medopt: wrote {heatmap}", err=True)


def flip_summary(store, pairs, paths, names, qrels, *, honour_rank: bool, **options) -> list:
    """The per-pair summary (the job's, else the store's) with the flip columns (flip.columns.pair_flips)."""
    read = [as_run(path, honour_rank=honour_rank) for path in paths]
    runs = {name or default: run for name, default, run in zip(names, run_names(*read), read)}
    if pairs is None:
        with open_existing(store) as results:
            pairs = results.pairs()
    return pair_flips(pairs, runs, as_qrels(qrels) if qrels is not None else None, warn=warn, **options)


def model_summary(store, pairs, paths, names, qrels, *, honour_rank: bool, **options) -> list:
    """The per-pair summary with the SPEC 13 columns (relevance.columns.pair_models)."""
    read = [as_run(path, honour_rank=honour_rank) for path in paths]
    runs = {name or default: run for name, default, run in zip(names, run_names(*read), read)}
    if pairs is None:
        with open_existing(store) as results:
            pairs = results.pairs()
    return pair_models(pairs, runs, as_qrels(qrels) if qrels is not None else None, warn=warn, **options)


@main.command("export-results")
@click.option("--store", type=click.Path(dir_okay=False), default="medopt-matrix.sqlite", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="Output file: .csv, .tsv, .jsonl or .parquet (or say --format).")
@click.option("--format", "fmt", type=click.Choice(["csv", "tsv", "jsonl", "parquet"]), default=None)
@click.option("--assignment/--no-assignment", default=True, show_default=True,
              help="Include the assignment column (JSON of the unjudged documents set relevant).")
def export_results_command(store, output, fmt, assignment):
    """Write the rows of a matrix results store to CSV, TSV, JSON lines or parquet."""
    count = export_results(store, output, fmt, with_assignment=assignment)
    click.echo(f"medopt: wrote {count} rows to {output}", err=True)
