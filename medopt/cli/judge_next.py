"""``medopt judge-next``: which documents to judge next so that the runs' comparisons are decided."""

from __future__ import annotations

import click

from ..io.paths import check_output_file
from ..io.results import FORMATS
from ..judging.confident import CONFIDENCE
from ..judging.next import JUDGE_COLUMNS, POLICIES, judge_next
from ..workflows.outputs import format_output, write_output
from .common import DEFAULT_TIME_LIMIT, MaxGrade, TimeLimit, distinct_files, main, named_runs, topic_options, warn


@main.command("judge-next")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None,
              help="TREC qrels: the judgments so far (none: nothing judged yet).")
@click.option("-m", "--metric", required=True, help="One metric, ir_measures style (AP@100, nDCG@10) or trec_eval.")
@click.option("--budget", type=click.IntRange(min=1), default=10, show_default=True, help="Documents to list.")
@click.option("--per-topic", type=click.IntRange(min=1), default=None, help="At most this many per topic.")
@click.option("--policy", type=click.Choice(POLICIES), default=None,
              help="lookahead (default without --model): worst-case shrinkage of the mean difference range, "
                   "exact; expected (default with --model): the expected fall of wrong decisions under the "
                   "model, sampled; mtc: Carterette et al.'s MTC weights; assignment: documents the ends' "
                   "assignments disagree on; depth: pooling order; random: seeded.")
@click.option("--model", default=None,
              help="Relevance model (SPEC 13): rank, uniform(p=..) or a probabilities file; a pair is also done "
                   "when P(its mean difference keeps the favoured sign) reaches --confidence.")
@click.option("--confidence", type=click.FloatRange(min=0.5, max=1, min_open=True, max_open=True),
              default=CONFIDENCE, show_default=True, help="The confidence that decides a pair (with --model).")
@click.option("--target", type=click.FloatRange(min=0), default=None,
              help="Goal: each pair's mean MED at most this (default goal: every pair decided).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random policy.")
@click.option("--max-grade", type=MaxGrade(), default=None,
              help="Top grade G (default: the largest grade in the whole qrels file, at least 1); per-topic: each "
                   "topic's largest judged grade.")
@click.option("--method", default="auto", show_default=True, help="Method for the ranges (auto, exact, ...).")
@click.option("--solver", default=None, help="Exact solver: highs, cpsat or scip.")
@click.option("--time-limit", type=TimeLimit(), default=DEFAULT_TIME_LIMIT,
              help=f"Seconds per range (default {DEFAULT_TIME_LIMIT:g}); an uncertified end counts at its bound.")
@click.option("--format", "fmt", type=click.Choice((*FORMATS, "parquet")), default="csv", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Output file (default: stdout).")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@topic_options
def judge_next_command(runs, qrels, metric, budget, per_topic, policy, model, confidence, target, seed, max_grade,
                       method, solver, time_limit, fmt, output, honour_rank, complete, topics):
    """List the (topic, docid) to judge next for RUNS (every pair of them), best first, each with why it
    was chosen.  Goal: every pair's mean difference range decided (SPEC 7), or with --target every pair's
    mean MED at most the target.  Each pair's current mean range is printed on stderr."""
    if fmt == "parquet" and not output:
        raise click.UsageError("--format parquet writes a file: give -o FILE")
    paths, names = named_runs(runs)
    if output:
        check_output_file(output, "-o", inputs=[list(paths), qrels], binary=fmt == "parquet")
    distinct_files(paths)
    summary = []
    frame = judge_next(paths, qrels, metric, names=names, budget=budget, policy=policy, per_topic=per_topic,
                       target=target, seed=seed, max_grade=max_grade, method=method, solver=solver,
                       time_limit=time_limit, honour_rank=honour_rank, complete=complete, topics=topics,
                       summary=summary, warn=warn, model=model, confidence=confidence)
    for row in summary:
        state = f"done ({row['decided_by']})" if row["done"] and row.get("decided_by") else \
            "done" if row["done"] else "open"
        belief = ""
        if "p_a_better" in row:
            belief = (f", P({row['run_a']} better) {row['p_a_better']:.4f} ({row['p_method']}), "
                      f"confidence {row['confidence']:.4f}")
        click.echo(f"medopt: {row['run_a']} - {row['run_b']}: mean difference range [{row['low']:.4f}, "
                   f"{row['high']:.4f}] ({row['verdict']}), mean MED {row['mean_med']:.4f}{belief}, {state}",
                   err=True)
    rows = frame.to_dict("records")
    if output:
        write_output(rows, JUDGE_COLUMNS, fmt, output, inputs=[list(runs), qrels])
    else:
        click.echo(format_output(rows, JUDGE_COLUMNS, fmt), nl=False)
