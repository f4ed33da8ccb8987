"""The SPEC 13 columns of the summary rows of ``compare --model`` and ``matrix --summary --model``."""

from __future__ import annotations

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
