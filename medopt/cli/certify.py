"""``medopt certify``: heuristic MED against the exact MED on real or generated instances, and the
peer check (the work is done by :mod:`medopt.campaigns`)."""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

import click
from tqdm import tqdm

from ..batch import unique_metrics
from ..campaigns.certify import (INSTANCE_COLUMNS, SUMMARY_COLUMNS, Settings, cases_from_generator, cases_from_runs,
                                 certify_case, format_table, parse_gains, plan, read_runs, summarize, warm_up)
from ..campaigns.counterexamples import format_counterexample, save_counterexample
from ..campaigns.peer import PEER_COLUMNS, PEER_SUMMARY_COLUMNS, peer_check
from ..campaigns.search import SEARCH_COLUMNS, search, summary_row
from ..errors import MedoptError
from ..io.paths import check_output_directory, check_output_file
from ..io.results import write_rows
from ..io.trec import read_qrels
from ..io.topics import mean_topics, read_topic_choice
from ..metrics import PER_TOPIC, parse_metric, resolve_max_grade
from .common import MaxGrade, MedoptCommand, main, time_limit_option, topic_options
from .common import warn as _warn

DEFAULT_SEARCH_BUDGET = 20_000  # points per heuristic and metric
GENERATED_DEPTH = 10            # --generate: the lists' length without --k


@main.command("certify", cls=MedoptCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="TREC qrels; none: nothing judged.")
@click.option("-m", "--metric", "metrics", multiple=True, help="Metric (AP@10, SSP@20, ERR@20, nDCG@10, ...). Repeatable.")
@click.option("--heuristic", "heuristics", multiple=True, metavar="NAME[(k=v,...)]",
              help="greedy, tabu, tc-err, closed-form or alg1, with options, e.g. 'tc-err(p=1)', "
                   "'tabu(seed=3,iterations=200)'. Repeatable (default: every heuristic for each metric).")
@click.option("--solver", type=click.Choice(["highs", "cpsat", "scip"]), default=None, help="Exact solver (default: CP-SAT for AP, HiGHS otherwise).")
@time_limit_option
@click.option("--max-grade", type=MaxGrade(), default=None,
              help="Top grade G (runs: default the largest grade of the whole qrels, per-topic: each topic's; "
                   "--generate: the grades generated).")
@click.option("--gains", default=None, metavar="G:GAIN,...", help="Explicit gain map, e.g. 0:0,1:0.25,2:0.75.")
@click.option("--residual", is_flag=True, help="RBP: credit the unseen tail to the better list.")
@click.option("--generate", type=click.IntRange(min=1), default=None, help="Certify on N seeded random instances.")
@click.option("--k", "depth", default=None, metavar="K",
              help="The length of the generated lists (--generate: default 10; --search: default the metric's "
                   "cutoff, or a sweep such as 5-8 or 6,8).")
@click.option("--seed", type=int, default=0, show_default=True, help="--generate: random seed.")
@click.option("--judged-fraction", type=click.FloatRange(0, 1), default=None, help="--generate: share judged.")
@click.option("--max-unjudged", type=click.IntRange(min=0), default=None,
              help="--generate: most unjudged documents per instance.")
@click.option("--search", is_flag=True,
              help="Search adversarially for instances where the heuristic falls short (seeded; --k, --seed, "
                   "--budget or --seconds, --max-unjudged); misses are certified and saved like any counterexample.")
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="--search: points to evaluate (default 20000 without --seconds).")
@click.option("--seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="--search: wall seconds per heuristic and metric.")
@click.option("--peer", type=click.Path(dir_okay=False), default=None,
              help="CSV of Tan & Clarke's med tool (run1,run2,topic,MED-nDCG@20,MED-RBP,MED-ERR) to check.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Directory for instances.csv, summary.csv and counterexample JSON files (peer.csv, peer_summary.csv).")
@click.option("--show", type=click.IntRange(min=0), default=5, show_default=True, help="Counterexamples printed.")
@click.option("--honour-rank", is_flag=True, help="Order by the rank column instead of trec_eval's score order.")
@topic_options
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
def certify_command(runs, qrels, metrics, heuristics, solver, time_limit, max_grade, gains, residual, generate,
                    depth, seed, judged_fraction, max_unjudged, search, budget, seconds, peer, out, show, honour_rank,
                    complete, topics, progress):
    """Heuristic MED against the exact MED: on every topic of every pair of RUNS, or on --generate N instances.

    Prints one summary row per heuristic and metric (fraction of certified instances where the heuristic is
    exact, largest and mean gap, median exact/heuristic time ratio); misses are saved as counterexamples.
    With --search, looks for the instances where each heuristic falls furthest short instead; with --peer,
    checks a peer tool's MED values against the exact ones.
    """
    if max_grade == PER_TOPIC and (generate or search):
        raise MedoptError("--max-grade per-topic applies to RUNS with --qrels (generated instances have their own G)")
    if complete:
        raise MedoptError("-c adds topics a run did not retrieve; certify checks heuristics on the topics the runs "
                          "share: drop -c")
    settings = Settings(solver=solver, time_limit=time_limit, max_grade=None if generate else max_grade,
                        gains=parse_gains(gains), residual=residual)
    show_progress = sys.stderr.isatty() if progress is None else progress
    out_dir = Path(out) if out else None
    made = False
    if out_dir:
        check_output_directory(out_dir, "--out")  # made only when the results are written
        made = not out_dir.exists()
        for name in ("peer.csv", "peer_summary.csv", "instances.csv", "summary.csv", "search.csv") * (not made):
            check_output_file(out_dir / name, "--out", inputs=[list(runs), qrels, peer])  # none of them an input
    try:
        _certify(runs, qrels, metrics, heuristics, settings, show_progress, generate, depth, seed, judged_fraction,
                 max_unjudged, max_grade, search, budget, seconds, peer, out_dir, show, honour_rank, complete, topics)
    except BaseException as error:
        if made and not isinstance(error, SystemExit):  # (SystemExit: bugs found, their files kept)
            shutil.rmtree(out_dir, ignore_errors=True)  # a failed job leaves no directory of its own behind
        raise


def _certify(runs, qrels, metrics, heuristics, settings, show_progress, generate, depth, seed, judged_fraction,
             max_unjudged, max_grade, search, budget, seconds, peer, out_dir, show, honour_rank, complete, topics):
    if search:
        if runs or qrels or generate or peer or complete or topics:
            raise MedoptError("--search makes its own instances: drop RUNS, --qrels, --generate, --peer, -c and "
                              "--topics")
        return search_command(metrics, heuristics, settings, parse_lengths(depth), seed, budget, seconds,
                              max_unjudged, max_grade, out_dir, show)
    if budget is not None or seconds is not None:
        raise MedoptError("--budget and --seconds apply to --search")
    judgments = read_qrels(qrels) if qrels else {}
    if not generate:  # SPEC 1: G of the whole qrels (an integer --max-grade as given; per-topic: each topic's)
        settings = replace(settings, max_grade=resolve_max_grade(max_grade, judgments))
    if peer:
        if generate or metrics or heuristics:
            raise MedoptError("--peer fixes the metrics and compares no heuristic: drop --generate, -m, --heuristic")
        if not runs:
            raise MedoptError("--peer needs the RUNS the peer compared")
        rows, summary = peer_check(peer, read_runs(runs, honour_rank), judgments, settings, show_progress, _warn)
        if out_dir:
            out_dir.mkdir(exist_ok=True)
            write_rows(rows, PEER_COLUMNS, "csv", out_dir / "peer.csv")
            write_rows(summary, PEER_SUMMARY_COLUMNS, "csv", out_dir / "peer_summary.csv")
        click.echo(format_table(summary, PEER_SUMMARY_COLUMNS), nl=False)
        return
    if not metrics:
        raise MedoptError("say which metric(s) to certify with -m (e.g. -m AP@10)")
    if generate:
        if runs or qrels or complete or topics:
            raise MedoptError("--generate makes its own instances: drop RUNS, --qrels, -c and --topics")
        depth = parse_lengths(depth) or (GENERATED_DEPTH,)
        if len(depth) > 1:
            raise MedoptError(f"--k {','.join(map(str, depth))}: --generate takes one depth")
        cases = cases_from_generator(generate, seed=seed, k=depth[0], max_grade=max_grade,
                                     judged_fraction=judged_fraction, max_unjudged=max_unjudged)
    else:
        if len(runs) < 2:
            raise MedoptError(f"certify needs two or more RUNS (got {len(runs)}), or --generate N")
        cases = cases_from_runs(read_runs(runs, honour_rank), judgments, _warn)
        if not cases:
            raise MedoptError("the runs have no topic in common")
        kept, notes = mean_topics({case.topic for case in cases}, judgments, qrels, chosen=read_topic_choice(topics))
        for note in notes:
            _warn(note)
        cases = [case for case in cases if case.topic in set(kept)]
    metrics = [str(m) for m in unique_metrics(metrics, _warn)]
    work = plan(metrics, heuristics)
    for metric in (parse_metric(m) for m in metrics):
        if all(metric != m for m, _ in work):
            _warn(f"no requested heuristic computes MED for {metric}: skipped")
    warm_up(work, settings)
    rows, found = [], []
    jobs = [(case, metric, hs) for case in cases for metric, hs in work]
    for case, metric, hs in tqdm(jobs, disable=not show_progress, unit="instance", desc="certify", file=sys.stderr):
        case_rows, case_found = certify_case(case, metric, hs, settings)
        rows += case_rows
        found += case_found
    if out_dir:
        out_dir.mkdir(exist_ok=True)
    for number, (row, data) in enumerate(found, start=1):
        if out_dir:
            row["counterexample"] = save_counterexample(data, out_dir, number).name
        if number <= show or row["verdict"] == "above":
            click.echo(format_counterexample(data, row["counterexample"] or f"counterexample {number}") + "\n")
    if len(found) > show:
        click.echo(f"... {len(found) - show} more counterexample(s){' in ' + str(out_dir) if out_dir else ''}\n")
    summary = summarize(rows)
    if out_dir:
        write_rows(rows, INSTANCE_COLUMNS, "csv", out_dir / "instances.csv")
        write_rows(summary, SUMMARY_COLUMNS, "csv", out_dir / "summary.csv")
    click.echo(format_table(summary, SUMMARY_COLUMNS), nl=False)
    errors = [r for r in rows if r["verdict"] == "error"]
    for row in {(r["run_a"], r["run_b"], r["topic"], r["metric"]): r for r in errors}.values():
        _warn(f"exact solver failed on {row['metric']}, {row['run_a']} vs {row['run_b']}, topic {row['topic']}: "
              f"{row['exact_status'][len('error: '):]} (counted as uncertified)")
    bugs = [r for r in rows if r["verdict"] == "above"]
    if bugs:
        for row in bugs:
            click.echo(f"medopt: BUG: {row['heuristic']} = {row['heuristic_value']:.12g} exceeds the exact "
                       f"{'value' if row['exact_certified'] else 'upper bound'} "
                       f"{row['exact_value' if row['exact_certified'] else 'exact_upper_bound']:.12g} for "
                       f"{row['metric']}, {row['run_a']} vs {row['run_b']}, topic {row['topic']}", err=True)
        click.echo(f"medopt: BUG: {len(bugs)} heuristic value(s) above the exact maximum; see above", err=True)
        sys.exit(1)


def parse_lengths(text: str | None) -> tuple | None:
    """``--k``: ``8``, ``5-8`` (every length from 5 to 8) or ``6,8``; None when not given."""
    if text is None:
        return None
    lengths = []
    for item in text.split(","):
        low, dash, high = item.strip().partition("-")
        try:
            low, high = int(low), int(high if dash else low)
        except ValueError:
            raise MedoptError(f"--k {text!r}: expected a length, a range LOW-HIGH or lengths a,b,...") from None
        if low < 1 or high < low:
            raise MedoptError(f"--k {text!r}: lengths are positive and a range LOW-HIGH has LOW <= HIGH")
        lengths += range(low, high + 1)
    return tuple(dict.fromkeys(lengths))


def search_command(metrics, heuristics, settings: Settings, k: tuple | None, seed: int, budget, seconds,
                   max_unjudged, max_grade, out_dir, show: int) -> None:
    """``certify --search``: one seeded search per heuristic and metric, its table and its counterexamples
    (``k``: the lists' lengths; None: each metric's cutoff)."""
    if not metrics:
        raise MedoptError("say which metric(s) to search with -m (e.g. -m AP@8)")
    work = plan([str(m) for m in unique_metrics(metrics, _warn)], heuristics)
    if budget is None and seconds is None:
        budget = DEFAULT_SEARCH_BUDGET
    rows, misses = [], []
    for metric, chosen in work:
        for heuristic in chosen:
            report = search(metric, heuristic, k=k, seed=seed, budget=budget, seconds=seconds,
                            max_unjudged=max_unjudged, max_grade=max_grade, settings=settings)
            rows.append(summary_row(report))
            misses += report.misses
    if out_dir:
        out_dir.mkdir(exist_ok=True)
        write_rows(rows, SEARCH_COLUMNS, "csv", out_dir / "search.csv")
    for number, miss in enumerate(misses, start=1):
        name = save_counterexample(miss.counterexample, out_dir, number).name if out_dir else f"counterexample {number}"
        if number <= show:
            click.echo(format_counterexample(miss.counterexample, name) + "\n")
    if len(misses) > show:
        click.echo(f"... {len(misses) - show} more counterexample(s){' in ' + str(out_dir) if out_dir else ''}\n")
    click.echo(format_table(rows, SEARCH_COLUMNS), nl=False)
