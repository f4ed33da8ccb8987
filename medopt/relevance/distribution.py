"""The distribution of a difference M(A) - M(B) under a relevance model (SPEC 13), per topic and for
the mean over topics, each probability labelled with how it was computed.

One topic is a :class:`TopicTerms`: its instance, its unjudged documents (each drawn once, a document
of both lists included: shared documents take one grade) and their grade distributions.  Three ways:

- **linear** metrics (``sum_i W(i) u(grade_i)``: P, DCG, SDCG, RBP; ``methods.is_dot_product``): the
  difference is a constant plus one independent term per document, ``(W_A(rank_A) - W_B(rank_B))
  u(grade)``.  Mean and variance are exact sums.  Probabilities are **bounded**: every term's values
  are rounded down (and, separately, up) to a grid of step h and the integer distributions convolved
  (over the topics too, for the mean); with S_lo <= d / h <= S_hi for every assignment,
  P(S_lo > 0) <= P(d > 0) <= P(S_hi > 0), and the same for d < 0.  h shrinks until the interval is at
  most ``width`` wide (or the grid reaches MAX_CELLS: the width reached is reported; a difference of
  exactly 0 reached by terms that cancel, a tie, stays between the two roundings on every grid, so the
  width cannot fall below the tie's probability).  When the grid cannot bring the width below the
  sampler's (compute.SAMPLED_WIDTH: deep rankings with slowly falling weights, DCG@1000), the
  probabilities are sampled instead; the moments stay exact.  Convolutions by
  FFT carry a floating-point error allowance (``FFT_ERROR`` times length times log2 length per
  convolution, a standard bound for vectors of total mass 1), added to both ends; mass trimmed from the
  ends of a distribution (below TRIM) is added to the upper ends.  A rational metric (P@k) whose
  values all fall on the grid is computed **exactly** (the interval has equal ends).
- **small** topics of any metric (at most ``enumerate_limit`` assignments): every assignment is scored
  by the project's evaluator and weighted by its probability (**exact**); for the mean, the topic's
  atoms enter the grid convolution as one term.
- otherwise a seeded, vectorised **Monte Carlo** sampler draws every unjudged document's grade (once per
  document), scores the draws, and reports Clopper-Pearson 99% intervals (``sampled``).

A difference counts as positive when it exceeds TOLERANCE (SPEC 7's tie tolerance).
"""

# size: one topic's three computations (exact moments, the proven grid, the sampler) with their proofs,
# beside the result they fill

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ..core.instance import Instance
from ..core.result import TOLERANCE
from ..errors import MedoptError

ENUMERATE_LIMIT = 4096
WIDTH = 1e-3
DRAWS = 20000
CONFIDENCE = 0.99
MAX_CELLS = 1 << 22
FFT_ERROR = 8 * np.finfo(float).eps
TRIM = 1e-18
TRIM_FROM = 4096  # pmfs shorter than this are never trimmed (a short grid stays exact)
BATCH = 1 << 22
DIRECT_LENGTH = 256        # rows this short are convolved directly (no FFT, no error allowance)
DIRECT_PRODUCT = 1 << 22   # two pmfs whose lengths multiply to at most this: directly too  # sampled grade cells per batch (draws x documents)


@dataclass
class TopicTerms:
    """One topic under a model: ``probs[i]`` the grade distribution of unjudged document ``docs[i]``;
    ``values[i][g]`` its term of the difference at grade g and ``constant`` the rest (linear metrics;
    else None); ``reference`` the difference with every unjudged document at 0."""

    topic: str
    instance: Instance
    docs: tuple
    probs: np.ndarray
    values: np.ndarray | None
    constant: float
    reference: float

    @property
    def linear(self) -> bool:
        return self.values is not None

    def assignments(self) -> int:
        return (self.instance.max_grade + 1) ** len(self.docs)


def is_linear(metric) -> bool:
    return hasattr(metric, "rank_weights") and hasattr(metric, "unit_gain")


def topic_terms(instance: Instance, model, topic: str = "") -> TopicTerms:
    """The terms of one topic's difference under ``model`` (models.Model)."""
    if instance.residual:
        raise MedoptError("relevance models take no RBP residual (the tail has no documents to draw)")
    if instance.limits:
        raise MedoptError("relevance models take no relevance limits (grades are drawn independently)")
    docs = instance.unjudged
    rank_a, rank_b = instance.rank_a, instance.rank_b
    ranks = [min(rank_a.get(d, math.inf), rank_b.get(d, math.inf)) for d in docs]
    top = instance.max_grade
    probs = np.asarray(model.probabilities(topic, docs, ranks, top), dtype=float).reshape(len(docs), top + 1)
    score_a, score_b = instance.scores({})
    reference = score_a - score_b
    values, constant = None, reference
    metric = instance.metric
    if is_linear(metric):
        weights_a = metric.rank_weights(len(instance.a))
        weights_b = metric.rank_weights(len(instance.b))
        unit = np.array([metric.unit_gain(g, instance.grading) for g in range(top + 1)])
        net = np.array([(weights_a[rank_a[d] - 1] if d in rank_a else 0.0)
                        - (weights_b[rank_b[d] - 1] if d in rank_b else 0.0) for d in docs])
        values = net[:, None] * unit[None, :] if docs else np.zeros((0, top + 1))
    return TopicTerms(topic, instance, docs, probs, values, constant, reference)


# -- the result -------------------------------------------------------------------------------------
@dataclass
class DistributionResult:
    """The distribution of one topic's difference, or (``topics`` > 1 or ``mean``) of the mean difference
    over topics.  ``p_positive_interval``/``p_negative_interval``: (low, high), equal ends when
    ``method`` is ``exact``; ``width``: the larger interval width.  ``support``: (min, max) of the
    difference over the assignments of positive probability (sampled: over the draws).  ``reference``:
    the difference with unjudged documents at 0 (D_L, SPEC 11).  ``values``/``weights``: a picture of
    the distribution (grid cells or atoms with their probabilities; sampled: the draws, equal weights)."""

    metric: str
    expected: float
    sd: float
    p_positive: float
    p_negative: float
    p_positive_interval: tuple
    p_negative_interval: tuple
    method: str
    reference: float
    support: tuple
    width: float = 0.0
    draws: int = 0
    seed: int | None = None
    topics: int = 1
    moments: str = "exact"   # how expected and sd were computed (sampled: estimates)
    model: str = ""
    seconds: float = 0.0
    values: np.ndarray = field(default=None, repr=False)
    weights: np.ndarray = field(default=None, repr=False)

    @property
    def p_flip(self) -> float:
        """The point value: the interval's midpoint when bounded, else one minus the point P(keeps its sign)."""
        if self.method == "bounded":
            return sum(self.p_flip_interval) / 2
        if abs(self.reference) <= TOLERANCE * self.topics:
            return 1.0
        return min(1.0, max(0.0, 1.0 - (self.p_positive if self.reference > 0 else self.p_negative)))

    @property
    def p_flip_interval(self) -> tuple:
        """P(the mean difference does not keep the sign of the reference): 1 when the reference is a tie."""
        if abs(self.reference) <= TOLERANCE * self.topics:
            return (1.0, 1.0)
        low, high = self.p_positive_interval if self.reference > 0 else self.p_negative_interval
        return (min(1.0, max(0.0, 1.0 - high)), min(1.0, max(0.0, 1.0 - low)))

    def __str__(self) -> str:
        low, high = self.p_positive_interval
        return (f"E[d] = {self.expected:+.6f} (sd {self.sd:.6f}); P(d > 0) = {self.p_positive:.4f} "
                f"[{low:.4f}, {high:.4f}] {self.method}; P(flip) = {self.p_flip:.4f}")


# -- exact moments and enumeration ---------------------------------------------------------------------
def linear_moments(terms: TopicTerms) -> tuple[float, float]:
    """(E[d], Var[d]) of a linear topic, exactly (sums over the independent terms)."""
    if not terms.docs:
        return terms.constant, 0.0
    means = (terms.probs * terms.values).sum(axis=1)
    second = (terms.probs * terms.values ** 2).sum(axis=1)
    return terms.constant + math.fsum(means), float(max(0.0, math.fsum(second - means ** 2)))


def enumerate_atoms(terms: TopicTerms) -> tuple[np.ndarray, np.ndarray]:
    """(differences, probabilities) of every assignment of positive probability, scored by the evaluator."""
    instance, docs, probs = terms.instance, terms.docs, terms.probs
    options = [[g for g in range(probs.shape[1]) if probs[i, g] > 0] for i in range(len(docs))]
    values, weights = [], []
    for grades in itertools.product(*options):
        score_a, score_b = instance.scores(dict(zip(docs, grades)))
        values.append(score_a - score_b)
        weights.append(math.prod(probs[i, g] for i, g in enumerate(grades)))
    return np.array(values, dtype=float), np.array(weights, dtype=float)


def atom_count(terms: TopicTerms) -> int:
    return math.prod(int(np.count_nonzero(row > 0)) for row in terms.probs) if len(terms.docs) else 1


# -- the grid ------------------------------------------------------------------------------------------
def _round(values: np.ndarray, h: float, snap: bool, down: bool) -> tuple[np.ndarray, bool]:
    """values / h rounded down (or up) to integers, safely: a value within float error of a grid point
    goes one cell further unless it is 0 or (``snap``: a rational metric's exact multiple) snapped."""
    scaled = values / h
    nearest = np.rint(scaled)
    close = np.abs(scaled - nearest) <= 1e-9 * np.maximum(1.0, np.abs(scaled))
    if down:
        out = np.floor(scaled - 1e-9 * np.maximum(1.0, np.abs(scaled)))
    else:
        out = np.ceil(scaled + 1e-9 * np.maximum(1.0, np.abs(scaled)))
    on_grid = (values == 0) | (close if snap else False)
    out = np.where(on_grid, nearest, out)
    return out.astype(np.int64), bool(np.all(on_grid))


class _Pmf:
    """An integer-valued distribution: ``mass[i]`` at ``offset + i``; ``lost`` mass trimmed; ``error``
    the floating-point allowance of its FFT convolutions."""

    __slots__ = ("offset", "mass", "lost", "error")

    def __init__(self, offset, mass, lost=0.0, error=0.0):
        self.offset, self.mass, self.lost, self.error = offset, mass, lost, error

    @classmethod
    def of(cls, cells: np.ndarray, weights: np.ndarray) -> "_Pmf":
        low = int(cells.min())
        mass = np.zeros(int(cells.max()) - low + 1)
        np.add.at(mass, cells - low, weights)
        return cls(low, mass)

    def __mul__(self, other: "_Pmf") -> "_Pmf":
        from scipy.signal import fftconvolve

        a, b = self.mass, other.mass
        error = self.error + other.error
        if min(len(a), len(b)) <= 64 or len(a) * len(b) <= DIRECT_PRODUCT:
            mass = np.convolve(a, b)
        else:
            mass = fftconvolve(a, b)
            n = len(mass)
            error += FFT_ERROR * n * math.log2(n)
            np.maximum(mass, 0.0, out=mass)
        result = _Pmf(self.offset + other.offset, mass, self.lost + other.lost, error)
        result.trim()
        return result

    def trim(self):
        """Drop end cells holding at most TRIM in all (their mass goes to ``lost``)."""
        mass = self.mass
        if len(mass) < TRIM_FROM:
            return
        head = np.cumsum(mass)
        tail = np.cumsum(mass[::-1])
        start = int(np.searchsorted(head, TRIM, side="right"))
        end = int(np.searchsorted(tail, TRIM, side="right"))
        if start + end >= len(mass) or (start == 0 and end == 0):
            return
        self.lost += (float(head[start - 1]) if start else 0.0) + (float(tail[end - 1]) if end else 0.0)
        self.offset += start
        self.mass = mass[start:len(mass) - end]


def _product(pmfs: list) -> _Pmf:
    """The distribution of the sum: pairwise convolutions, the smallest first."""
    import heapq

    heap = [(len(p.mass), i, p) for i, p in enumerate(pmfs)]
    heapq.heapify(heap)
    count = len(heap)
    while len(heap) > 1:
        _, _, first = heapq.heappop(heap)
        _, _, second = heapq.heappop(heap)
        combined = first * second
        heapq.heappush(heap, (len(combined.mass), count, combined))
        count += 1
    return heap[0][2]


@dataclass
class GridAnswer:
    positive: tuple
    negative: tuple
    exact: bool
    step: float
    values: np.ndarray
    weights: np.ndarray


def _sides(pmf: _Pmf, shift: int) -> tuple[float, float]:
    """(P(S > 0), P(S < 0)) of the pmf shifted by ``shift``."""
    cells = np.arange(len(pmf.mass)) + pmf.offset + shift
    return float(pmf.mass[cells > 0].sum()), float(pmf.mass[cells < 0].sum())


def grid_bounds(terms_list, width: float = WIDTH, snap: bool = False, max_cells: int = MAX_CELLS) -> GridAnswer:
    """Bounds on P(sum d > 0) and P(sum d < 0) for the sum of the differences of ``terms_list``: triples
    (values (n, m), probabilities (n, m), constant), each row an independent term, by rounding to a grid
    (module docstring)."""
    blocks, constant = [], 0.0
    for values, weights, const in terms_list:
        constant += const
        values, weights = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
        if values.size:
            blocks.append((values, weights))
    spans = [np.where(w > 0, v, -np.inf).max(axis=1) - np.where(w > 0, v, np.inf).min(axis=1) for v, w in blocks]
    spread = float(sum(s.sum() for s in spans)) + abs(constant)
    step = _rational_step([v for v, _ in blocks] + [np.array([constant])]) if snap else None
    if step is None:
        step = max(spread, 1e-12) / 1024.0
    spans = np.concatenate(spans) if spans else np.zeros(0)
    cells_at = lambda h: int(np.ceil(spans[spans >= h] / h).sum()) + 2 * int(np.count_nonzero(spans >= h))  # noqa
    while True:
        answer = _grid_at(blocks, constant, step, snap)
        widest = max(answer.positive[1] - answer.positive[0], answer.negative[1] - answer.negative[0])
        if answer.exact or widest <= width:
            return answer
        # the width shrinks about in proportion to the step: aim below the target in one move, within
        # the grid's budget of cells
        finer = step * min(0.5, max(1.0 / 64, 0.7 * width / widest))
        while cells_at(finer) > max_cells and finer < step / 1.5:
            finer *= 1.5
        if finer >= step / 1.5 or cells_at(finer) > max_cells:
            return answer
        step = finer


def _rational_step(arrays) -> float | None:
    """A step on which every value of a rational metric lies (1/q for the smallest q listed that works)."""
    values = np.concatenate([np.ravel(a) for a in arrays])
    values = values[values != 0]
    if not len(values):
        return 1.0
    for q in (1, 2, 3, 4, 5, 6, 8, 10, 12, 20, 30, 50, 60, 100, 120, 200, 840, 1000, 2520, 5040):
        scaled = values * q
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 1.0 / q
    return None


def _block_pmfs(values: np.ndarray, weights: np.ndarray, step: float, snap: bool, down: bool):
    """The rows of a block rounded to the grid, reduced to a few pmfs (rows of similar span convolved
    together, in batches); and whether every value fell on the grid."""
    cells, on_grid = _round(values, step, snap, down)
    live = weights > 0
    low = np.where(live, cells, np.iinfo(np.int64).max).min(axis=1)
    high = np.where(live, cells, np.iinfo(np.int64).min).max(axis=1)
    cells = np.where(live, cells, low[:, None])
    span = high - low
    out = []
    classes = np.ceil(np.log2(span + 1.0)).astype(np.int64)
    for size_class in np.unique(classes):
        rows = np.flatnonzero(classes == size_class)
        length = int(span[rows].max()) + 1
        mass = np.zeros((len(rows), length))
        local = cells[rows] - low[rows][:, None]
        np.add.at(mass, (np.repeat(np.arange(len(rows)), cells.shape[1]), local.ravel()), weights[rows].ravel())
        out.append(_reduce_rows(low[rows].astype(np.int64), mass))
    return out, on_grid


def _reduce_rows(offsets: np.ndarray, mass: np.ndarray) -> _Pmf:
    """The convolution of every row of ``mass`` (row i at ``offsets[i]``), pairwise in batches."""
    from scipy.fft import irfft, next_fast_len, rfft

    error, leftovers = 0.0, []
    while len(mass) > 1:
        if len(mass) % 2:
            leftovers.append(_Pmf(int(offsets[-1]), mass[-1].copy()))
            mass, offsets = mass[:-1], offsets[:-1]
        first, second = mass[0::2], mass[1::2]
        length = mass.shape[1]
        size = 2 * length - 1
        if length <= DIRECT_LENGTH:
            combined = np.zeros((len(first), size))
            for j in range(length):
                combined[:, j:j + length] += first * second[:, j:j + 1]
        else:
            n = next_fast_len(size, real=True)
            combined = irfft(rfft(first, n, axis=1) * rfft(second, n, axis=1), n, axis=1)[:, :size]
            np.maximum(combined, 0.0, out=combined)
            error += len(first) * FFT_ERROR * size * math.log2(size)
        mass, offsets = combined, offsets[0::2] + offsets[1::2]
    result = _Pmf(int(offsets[0]), mass[0], 0.0, error)
    result.trim()
    for extra in leftovers:
        result = result * extra
    return result


def _grid_at(blocks, constant: float, step: float, snap: bool) -> GridAnswer:
    """The grid answer at ``step``.  A term whose values span less than a step would cost a whole cell
    of uncertainty rounded on its own; such terms are summed into the constant instead, as the sure
    interval [sum of their smallest values, sum of their largest] (its ends rounded down and up)."""
    lows, highs, exact = [], [], True
    light_low = light_high = 0.0
    for values, weights in blocks:
        live = weights > 0
        smallest = np.where(live, values, np.inf).min(axis=1)
        largest = np.where(live, values, -np.inf).max(axis=1)
        light = (largest - smallest) < step
        if light.any():
            light_low += math.fsum(smallest[light])
            light_high += math.fsum(largest[light])
            exact &= bool(np.all(largest[light] == smallest[light]))
            values, weights = values[~light], weights[~light]
        if not len(values):
            continue
        pmfs, on_grid = _block_pmfs(values, weights, step, snap, True)
        lows.extend(pmfs)
        exact &= on_grid
        pmfs, _ = _block_pmfs(values, weights, step, snap, False)
        highs.extend(pmfs)
    c_down, c_on = _round(np.array([constant + light_low]), step, snap, True)
    c_up, _ = _round(np.array([constant + light_high]), step, snap, False)
    exact &= c_on
    one = _Pmf(0, np.ones(1))
    low = _product(lows) if lows else one
    high = _product(highs) if highs else one
    low_pos, low_neg = _sides(low, int(c_down[0]))
    high_pos, high_neg = _sides(high, int(c_up[0]))
    slack_low, slack_high = low.error + low.lost, high.error + high.lost
    # S_lo <= d/h <= S_hi: P(d > 0) in [P(S_lo > 0), P(S_hi > 0)]; P(d < 0) in [P(S_hi < 0), P(S_lo < 0)]
    clamp = lambda value: min(1.0, max(0.0, value))  # noqa: E731
    positive = (clamp(low_pos - low.error), clamp(high_pos + slack_high))
    negative = (clamp(high_neg - high.error), clamp(low_neg + slack_low))
    exact = exact and low.error == 0 and low.lost == 0
    if exact:
        positive, negative = (clamp(low_pos),) * 2, (clamp(low_neg),) * 2
    cells = (np.arange(len(low.mass)) + low.offset + int(c_down[0])) * step
    return GridAnswer(positive, negative, exact, step, cells, low.mass)


# -- sampling ------------------------------------------------------------------------------------------
def clopper_pearson(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    from scipy.stats import beta

    alpha = 1.0 - confidence
    low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return low, high


def grades_of(uniform: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    """(draws, documents) grades from uniforms: a document's grade is the number of its CDF's values at
    grades 0..G-1 at or below its uniform (the inverse CDF)."""
    grades = np.zeros(uniform.shape, dtype=np.int64)
    for g in range(cdf.shape[1] - 1):
        grades += uniform >= cdf[None, :, g]
    return grades


def draw_grades(probs: np.ndarray, rng, draws: int) -> np.ndarray:
    """(draws, documents) grades, each document's drawn from its row of ``probs``."""
    return grades_of(rng.random((draws, probs.shape[0])), np.cumsum(probs, axis=1))


def sample_differences(terms: TopicTerms, rng, draws: int) -> np.ndarray:
    """``draws`` seeded draws of the topic's difference (each unjudged document drawn once, from one
    uniform: the same seed gives the same grades whichever scorer reads them)."""
    from .scoring import compiled_scores, vector_scores  # deferred: scoring reaches the numba kernels

    if not terms.docs:
        return np.full(draws, terms.reference)
    out = np.empty(draws)
    cdf = np.cumsum(terms.probs, axis=1)
    batch = max(1, BATCH // max(1, len(terms.docs)))
    for start in range(0, draws, batch):
        n = min(batch, draws - start)
        uniform = rng.random((n, len(terms.docs)))
        fast = None if terms.linear else compiled_scores(terms.instance, terms.docs, uniform, cdf)
        if fast is not None:
            out[start:start + n] = fast
            continue
        if terms.linear:
            from .fast import linear_draws  # deferred: numba compiles on first use

            out[start:start + n] = linear_draws(np.ascontiguousarray(uniform), np.ascontiguousarray(cdf),
                                                np.ascontiguousarray(terms.values), float(terms.constant))
        else:
            grades = grades_of(uniform, cdf)
            out[start:start + n] = vector_scores(terms.instance, terms.docs, grades)
    return out
