"""The SPEC 13 columns of the summary rows of ``compare --model`` and ``matrix --summary --model``."""

from __future__ import annotations

from ..errors import MedoptError
from ..io.topics import read_topic_choice
from .compute import check_support, pair_distribution

MODEL_COLUMNS = ("expected", "p_a_better", "p_flip", "p_low", "p_high", "p_flip_low", "p_flip_high", "p_method",
                 "p_width", "p_model")


def model_columns(result) -> dict:
    """A DistributionResult of the mean difference as the summary row's columns."""
    flip_low, flip_high = result.p_flip_interval
    return {"expected": result.expected, "p_a_better": result.p_positive, "p_flip": result.p_flip,
            "p_low": result.p_positive_interval[0], "p_high": result.p_positive_interval[1],
            "p_flip_low": flip_low, "p_flip_high": flip_high, "p_method": result.method, "p_width": result.width,
            "p_model": result.model}


def relevance_columns(summary: dict, run_a, run_b, qrels, *, topics, complete, model, max_grade, seed, draws, warn,
                      ranges: bool) -> dict:
    """One pair's columns (SPEC 13) over ``topics``; with ``ranges`` (the summary carries the mean
    difference range) the distribution's support is checked to lie inside it."""
    result = pair_distribution(summary["metric"], run_a, run_b, qrels, model=model, max_grade=max_grade,
                               complete=complete, topics=list(topics), seed=seed, draws=draws, warn=warn)
    if ranges and summary.get("low_bound") is not None:
        check_support(result.support, summary["low_bound"], summary["high_bound"], "the mean difference")
    return model_columns(result)


def pair_models(pairs, runs: dict, qrels, *, model, warn, complete=False, topics=None, max_grade=None, seed=0,
                draws=None) -> list[dict]:
    """The per-pair summary rows ``pairs`` (batch.summary's, or a store's ``pairs`` table) with the SPEC 13
    columns added, each (pair, metric) over the pair's SPEC 10 topics (``complete``, ``topics``).
    ``runs``: run name -> run in any form; the ``rank`` model is fitted on each pair's two runs."""
    chosen = read_topic_choice(topics)
    said, done, out = set(), {}, []
    once = lambda message: message in said or said.add(message) or warn(message)  # noqa: E731
    for row in pairs:
        key = (row["run_a"], row["run_b"], row["metric"])
        if key not in done:
            missing = [name for name in key[:2] if name not in runs]
            if missing:
                raise MedoptError(f"--model: no run named {missing[0]} among {', '.join(runs)}")
            result = pair_distribution(row["metric"], runs[key[0]], runs[key[1]], qrels, model=model,
                                       max_grade=max_grade, complete=complete, topics=chosen, seed=seed, draws=draws,
                                       warn=once)
            if row.get("low_bound") is not None and row.get("high_bound") is not None:
                check_support(result.support, row["low_bound"], row["high_bound"], "the mean difference")
            done[key] = model_columns(result)
        out.append({**row, **done[key]})
    return out
