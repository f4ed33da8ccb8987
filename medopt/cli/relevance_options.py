"""SPEC 13's options of compare and matrix --summary: --model, --seed, --draws."""

from __future__ import annotations

import click


def model_options(function):
    """--model (a relevance model: the summary rows get the distribution's columns), --seed, --draws."""
    function = click.option("--draws", type=click.IntRange(min=100), default=None,
                            help="With --model: Monte Carlo draws where the distribution is sampled (default: "
                                 "enough for a 99% interval at most 0.02 wide, from a pilot).")(function)
    function = click.option("--seed", "model_seed", type=int, default=0, show_default=True,
                            help="With --model: the sampler's seed (the same seed gives the same draws).")(function)
    return click.option("--model", "model", default=None, metavar="MODEL",
                        help="A relevance model for the unjudged documents (SPEC 13): rank (P(grade | rank) fitted "
                             "on the judged documents of the runs compared), uniform(p=0.3), or a probabilities "
                             "file ('topic docid p' or 'topic docid p0 ... pG').  The summary rows get expected "
                             "(E[mean difference]), p_a_better (P(mean > 0)) with its interval p_low, p_high, "
                             "p_flip (P(the mean does not keep the sign of the trec_eval difference)) with "
                             "p_flip_low, p_flip_high, p_method (exact, bounded or sampled) and p_width.")(function)


def check_model_options(model, model_seed: int, draws) -> None:
    if model is None and (model_seed != 0 or draws is not None):
        raise click.UsageError("--seed and --draws go with --model")
