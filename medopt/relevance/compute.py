"""``difference_distribution`` (one topic) and ``pair_distribution`` (the mean over SPEC 10's topics):
which computation each topic gets (distribution.py's module docstring) and the result."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from ..core.instance import build_instance
from ..core.result import TOLERANCE
from ..errors import MedoptError, MedoptWarning
from ..io.frames import as_qrels, as_run, one_topic, qrels_source
from ..io.topics import mean_topics, read_topic_choice
from ..io.trec import pair_topics
from ..metrics import PER_TOPIC, default_max_grade, parse_metric, resolve_max_grade
from .distribution import (ENUMERATE_LIMIT, WIDTH, DistributionResult, atom_count, clopper_pearson,
                           enumerate_atoms, grid_bounds, linear_moments, sample_differences, topic_terms)
from .models import ONE_TOPIC, FileModel, Model, fit_rank_model, parse_model

SUPPORT_TOLERANCE = 1e-9
SAMPLED_WIDTH = 0.02  # the default width of a sampled 99% interval (draws chosen from a pilot)
PILOT = 500
MAX_DRAWS = 40000


def _warn(message: str) -> None:
    warnings.warn(message, MedoptWarning, stacklevel=3)


def resolve_model(model, rankings, judgments, max_grade: int, *, warn=_warn, depth: int | None = None) -> Model:
    """A Model from ``model`` (models.parse_model's forms): ``rank`` fitted on ``rankings`` (the runs
    compared, each topic -> ranking) and ``judgments``; a file's rows for judged documents dropped
    with one warning."""
    parsed = parse_model(model)
    if parsed == "rank":
        return fit_rank_model(rankings, judgments, max_grade, depth=depth)
    if isinstance(parsed, FileModel):
        return parsed.without_judged(judgments, warn)
    return parsed


# -- one topic -----------------------------------------------------------------------------------------
def _support(terms, atoms=None) -> tuple[float, float]:
    if atoms is not None:
        values, weights = atoms
        values = values[weights > 0]
        return float(values.min()), float(values.max())
    if not terms.docs:
        return terms.reference, terms.reference
    masked_low = np.where(terms.probs > 0, terms.values, np.inf).min(axis=1)
    masked_high = np.where(terms.probs > 0, terms.values, -np.inf).max(axis=1)
    return terms.constant + math.fsum(masked_low), terms.constant + math.fsum(masked_high)


def _atom_moments(values, weights) -> tuple[float, float]:
    expected = math.fsum(values * weights)
    return expected, float(max(0.0, math.fsum(weights * (values - expected) ** 2)))


def topic_distribution(terms, *, width: float = WIDTH, draws: int | None = None, seed: int = 0,
                       enumerate_limit: int = ENUMERATE_LIMIT, model: str = "") -> DistributionResult:
    """The distribution of one topic's difference (TopicTerms)."""
    started = time.perf_counter()
    metric = terms.instance.metric
    name = str(metric)
    grid = None
    if terms.linear:
        expected, variance = linear_moments(terms)
        grid = grid_bounds([(terms.values, terms.probs, terms.constant)], width, snap=metric.rational)
    if grid is not None and (_width(grid.positive, grid.negative) <= width or (
            _width(grid.positive, grid.negative) <= SAMPLED_WIDTH and atom_count(terms) > enumerate_limit)):
        result = DistributionResult(name, expected, math.sqrt(variance), sum(grid.positive) / 2,
                                    sum(grid.negative) / 2, grid.positive, grid.negative,
                                    "exact" if grid.exact else "bounded", terms.reference,
                                    _support(terms), width=_width(grid.positive, grid.negative), model=model,
                                    values=grid.values, weights=grid.weights)
    elif atom_count(terms) <= enumerate_limit:  # (a linear topic whose grid stayed wide too: a tie by cancelling)
        values, weights = enumerate_atoms(terms)
        expected, variance = _atom_moments(values, weights)
        positive = math.fsum(weights[values > TOLERANCE])
        negative = math.fsum(weights[values < -TOLERANCE])
        result = DistributionResult(name, expected, math.sqrt(variance), positive, negative, (positive, positive),
                                    (negative, negative), "exact", terms.reference, _support(terms, (values, weights)),
                                    model=model, values=values, weights=weights)
    else:
        draws = draws or auto_draws([terms], seed)
        result = _sampled(name, _sampled_sums([terms], seed, 1, draws), terms.reference, 1, draws, seed, model)
        if terms.linear:  # the moments stay exact
            result.expected, variance = linear_moments(terms)
            result.sd, result.moments = math.sqrt(variance), "exact"
    result.seconds = time.perf_counter() - started
    return result


def _width(positive, negative) -> float:
    return max(positive[1] - positive[0], negative[1] - negative[0])


def _sampled(name, means, reference, topics, draws, seed, model) -> DistributionResult:
    up = int(np.count_nonzero(means > TOLERANCE))
    down = int(np.count_nonzero(means < -TOLERANCE))
    positive, negative = clopper_pearson(up, draws), clopper_pearson(down, draws)
    return DistributionResult(name, float(means.mean()), float(means.std(ddof=1)) if draws > 1 else 0.0,
                              up / draws, down / draws, positive, negative, "sampled", reference,
                              (float(means.min()), float(means.max())), width=_width(positive, negative),
                              draws=draws, seed=seed, topics=topics, moments="sampled", model=model,
                              values=means, weights=np.full(draws, 1.0 / draws))


def difference_distribution(metric, a, b, judgments=None, *, model="uniform(p=0.1)", max_grade=None, gains=None,
                            seed: int = 0, draws: int | None = None, width: float = WIDTH,
                            enumerate_limit: int = ENUMERATE_LIMIT, pad: str = "none",
                            check_range: bool = False) -> DistributionResult:
    """The distribution of M(a) - M(b) for one topic when every unjudged document of the two lists
    draws its grade from ``model`` (SPEC 13): ``"uniform(p=..)"``, ``"rank"`` (fitted on a and b with
    these judgments), a probabilities file, ``{docid: p or [p0..pG]}`` or a models.Model.
    ``.expected``, ``.sd``, ``.p_positive`` (P(d > 0)) with ``.p_positive_interval``, ``.p_negative``,
    ``.method`` (exact, bounded or sampled; bounded intervals at most ``width`` wide where the grid
    allows, sampled ones Clopper-Pearson 99% from ``draws`` draws seeded by ``seed``).
    ``check_range``: also solve the difference range (SPEC 7) and check that it contains the support."""
    metric = parse_metric(metric)
    a, b, judgments, top = one_topic(a, b, judgments)
    grade = None if max_grade == PER_TOPIC else (top if max_grade is None else max_grade)
    instance = build_instance(metric, a, b, judgments, max_grade=grade, gains=gains, pad=pad)
    model = _one_topic_model(parse_model(model))
    fitted = resolve_model(model, [{ONE_TOPIC: instance.full_a}, {ONE_TOPIC: instance.full_b}],
                           {ONE_TOPIC: instance.judgments}, instance.max_grade)
    terms = topic_terms(instance, fitted, ONE_TOPIC)
    result = topic_distribution(terms, width=width, draws=draws, seed=seed, enumerate_limit=enumerate_limit,
                                model=fitted.describe())
    if check_range:
        from .. import api  # deferred: the exact range machinery loads only when check_range asks for it

        span = api.difference_range(metric, a, b, judgments, max_grade=grade, gains=gains, pad=pad)
        check_support(result.support, span.low_bound, span.high_bound, "the topic")
    return result


def _one_topic_model(model):
    """A probabilities file for one topic given to the one-topic API: its rows, whatever the topic's id."""
    if isinstance(model, FileModel) and ONE_TOPIC not in model.rows:
        if len(model.rows) != 1:
            raise MedoptError(f"{model.source} has rows for {len(model.rows)} topics; give one topic's rows "
                              "(or use medopt.compare with runs)")
        return FileModel({ONE_TOPIC: next(iter(model.rows.values()))}, model.source)
    return model


def check_support(support, low_bound, high_bound, where: str) -> None:
    """SPEC 13: the worst-case range contains the support."""
    low, high = support
    if low < low_bound - SUPPORT_TOLERANCE or high > high_bound + SUPPORT_TOLERANCE:
        raise MedoptError(f"internal: {where}'s support [{low!r}, {high!r}] leaves its worst-case range "
                          f"[{low_bound!r}, {high_bound!r}]")


# -- the mean over topics --------------------------------------------------------------------------------
def pair_terms(metric, run_a, run_b, qrels, *, model, max_grade=None, complete=False, topics=None,
               honour_rank=False, warn=_warn):
    """(TopicTerms per SPEC 10 topic, the fitted model) of a pair."""
    metric = parse_metric(metric)
    first, second = as_run(run_a, "run_a", honour_rank=honour_rank), as_run(run_b, "run_b", honour_rank=honour_rank)
    judgments = as_qrels(qrels)
    chosen, _ = mean_topics(pair_topics(first, second).common, judgments, qrels_source(qrels), complete=complete,
                            chosen=read_topic_choice(topics))
    grade = resolve_max_grade(max_grade, judgments)
    rankings = [{t: first.rankings.get(t, ()) for t in chosen}, {t: second.rankings.get(t, ()) for t in chosen}]
    instances = []
    for topic in chosen:
        judged = judgments.get(topic, {})
        top = default_max_grade(judged) if grade is None else grade
        instances.append((topic, build_instance(metric, tuple(rankings[0][topic]), tuple(rankings[1][topic]), judged,
                                                max_grade=top)))
    tops = {i.max_grade for _, i in instances}
    if parse_model(model) == "rank" and len(tops) > 1:
        raise MedoptError("the rank model needs one G for every topic (not --max-grade per-topic)")
    # the rank model over the ranks the metric counts (deeper ranks hold no document it draws)
    depth = max((max(len(i.a), len(i.b)) for _, i in instances), default=1)
    fitted = resolve_model(model, rankings, {t: i.judgments for t, i in instances}, max(tops, default=1), warn=warn,
                           depth=depth)
    return [topic_terms(instance, fitted, topic) for topic, instance in instances], fitted


def mean_distribution(terms_list, *, width: float = WIDTH, draws: int | None = None, seed: int = 0,
                      enumerate_limit: int = ENUMERATE_LIMIT, model: str = "", name: str = "") -> DistributionResult:
    """The distribution of the mean difference over the topics of ``terms_list`` (independent topics)."""
    started = time.perf_counter()
    count = len(terms_list)
    if not count:
        raise MedoptError("no topic to average over")
    name = name or str(terms_list[0].instance.metric)
    rational = terms_list[0].instance.metric.rational
    reference = math.fsum(t.reference for t in terms_list) / count
    small = [t.linear or atom_count(t) <= enumerate_limit for t in terms_list]
    if all(small):
        parts, means, variances, low, high = [], [], [], [], []
        for terms in terms_list:
            if terms.linear:
                mean, variance = linear_moments(terms)
                parts.append((terms.values, terms.probs, terms.constant))
                support = _support(terms)
            else:
                values, weights = enumerate_atoms(terms)
                mean, variance = _atom_moments(values, weights)
                parts.append((values[None, :], weights[None, :], 0.0))
                support = _support(terms, (values, weights))
            means.append(mean)
            variances.append(variance)
            low.append(support[0])
            high.append(support[1])
        grid = grid_bounds(parts, width, snap=rational)
        method = "exact" if grid.exact else "bounded"
    if all(small) and _width(grid.positive, grid.negative) <= SAMPLED_WIDTH:
        result = DistributionResult(name, math.fsum(means) / count, math.sqrt(math.fsum(variances)) / count,
                                    sum(grid.positive) / 2, sum(grid.negative) / 2, grid.positive, grid.negative,
                                    method, reference, (math.fsum(low) / count, math.fsum(high) / count),
                                    width=_width(grid.positive, grid.negative), topics=count, model=model,
                                    values=grid.values / count, weights=grid.weights)
    else:  # some topic is too large to enumerate, or the grid could not reach a useful width
        draws = draws or auto_draws(terms_list, seed)
        result = _sampled(name, _sampled_sums(terms_list, seed, 1, draws) / count, reference, count, draws, seed,
                          model)
        if all(small):  # the moments stay exact
            result.expected = math.fsum(means) / count
            result.sd, result.moments = math.sqrt(math.fsum(variances)) / count, "exact"
    result.seconds = time.perf_counter() - started
    return result


def _sampled_sums(terms_list, seed: int, stage: int, draws: int) -> np.ndarray:
    """The sum of the topics' differences in ``draws`` draws; every topic its own stream of the seed
    (stage 0: the pilot, 1: the draws reported)."""
    streams = np.random.SeedSequence([seed, stage]).spawn(len(terms_list))
    total = np.zeros(draws)
    for terms, stream in zip(terms_list, streams):
        total += sample_differences(terms, np.random.default_rng(stream), draws)
    return total


def auto_draws(terms_list, seed: int, width: float = SAMPLED_WIDTH) -> int:
    """Draws enough for Clopper-Pearson 99% intervals at most ``width`` wide, from a pilot of PILOT draws
    (its own stream, so the draws reported are independent of how many were chosen): the pilot's
    proportions moved 3 standard errors towards 1/2, then the smallest count that gives the width."""
    count = len(terms_list)
    pilot = _sampled_sums(terms_list, seed, 0, PILOT) / count
    needed = 100
    for share in (np.mean(pilot > TOLERANCE), np.mean(pilot < -TOLERANCE)):
        error = 3 * math.sqrt(max(share * (1 - share), 1.0 / PILOT) / PILOT)
        p = min(0.5, share + error) if share < 0.5 else max(0.5, share - error)
        draws = 100
        while draws < MAX_DRAWS:
            low, high = clopper_pearson(int(round(p * draws)), draws)
            if high - low <= width:
                break
            draws = int(draws * 1.25)
        needed = max(needed, min(draws, MAX_DRAWS))
    return needed


def pair_distribution(metric, run_a, run_b, qrels, *, model="rank", max_grade=None, complete=False, topics=None,
                      honour_rank=False, seed: int = 0, draws: int | None = None, width: float = WIDTH,
                      enumerate_limit: int = ENUMERATE_LIMIT, warn=_warn) -> DistributionResult:
    """The distribution of the mean difference of runs A and B over SPEC 10's topics under ``model``
    (``rank``: fitted on these two runs and the qrels), with P(flip) against the reference D_L
    (unjudged at 0).  Runs and qrels in any form medopt.compare takes."""
    terms_list, fitted = pair_terms(metric, run_a, run_b, qrels, model=model, max_grade=max_grade, complete=complete,
                                    topics=topics, honour_rank=honour_rank, warn=warn)
    return mean_distribution(terms_list, width=width, draws=draws, seed=seed, enumerate_limit=enumerate_limit,
                             model=fitted.describe(), name=str(parse_metric(metric)))
