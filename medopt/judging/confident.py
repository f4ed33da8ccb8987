"""Judging with a relevance model (SPEC 13): when a comparison is done *with confidence*, and which
documents get it there soonest.

**The confidence stop.**  Under a model M (``rank`` is refitted on the judgments so far after every
batch; ``uniform(p=..)`` and probability files stay as given) a pair's mean difference over the
topics has a distribution (``medopt.relevance``).  Its *favoured sign* is the sign of the larger of
P(mean > 0) and P(mean < 0); its *confidence* is the lower end of that probability's interval (the
value itself when ``exact``, the lower end of a proven interval when ``bounded``, of a Clopper-Pearson
99% interval when ``sampled``: never more than the computation supports).  A pair is done when its
confidence reaches the requested level, or when its worst-case range decides it (SPEC 7; then the
decision is proven).  With ``rank`` and nothing judged in the runs' lists there is nothing to fit:
no pair is confident and every ``expected`` value is 0 (depth order) until the first judgments.  A done pair stays done with the sign it was decided with: the campaign stops
judging for it.  A mean difference of exactly 0 favours neither sign.

**The rank model's uncertainty.**  A curve fitted on a few hundred judgments is not known: taking it
as exact makes P(sign) overconfident.  P(sign) is therefore the posterior mean
E_theta[P(sign | theta)] over the curve theta, the posterior approximated by the Bayesian bootstrap
(Rubin 1981) with the topic as the exchangeable unit: ``model_draws`` fits, each weighting every
judged topic's observations by a Dirichlet(1, .., 1) weight (times the number of topics), and the
mixture of the fits' distributions (``mixture``).  Topics, not documents, are resampled because the
documents of one topic share its difficulty: the spread of the curve across topics is the uncertainty
that matters.  Within one fit the documents stay independent (no per-topic random effect).

**What the curve is fitted on.**  P(grade | rank) fitted on judged documents is unbiased when the
choice of what was judged depended on the ranks (and other judgments) only, as a campaign's choices do.
Judgments given at the start need not be so: a pool's judgments (the qrels) are of the documents other
runs retrieved, relevant ones over-represented (DL-HARD from 25% of its qrels: the fit says P(rel | rank
1) 0.84, the unjudged documents' rate is 0.37).  ``fit_start=False`` fits on the judgments made since
the start only (the start's grades still count in every difference); the simulation uses it, since its
start is a share of the qrels.

**The ``expected`` policy** (one-step lookahead under the model).  For an open pair p let
wrong_p = 1 - max(P(mean > 0), P(mean < 0)), the probability that a decision taken now is wrong (a tie
counts as wrong).  Judging document d of topic t reveals its grade g, drawn from M, and the expected
fall of the wrong decisions is

    fall(d) = sum_p [ wrong_p - sum_g M_p(d = g) * wrong_p(d = g) ],

over the pairs whose lists hold d unjudged on t, and over the grades the metric tells apart (a binary
metric: relevant or not).  1 - max is concave in the sign's distribution (P+, P-, P0) (P0 the tie) and
that distribution is the model-weighted mixture of the ones with d fixed, so each term is >= 0
(Jensen).  But 1 - max is linear wherever the favoured sign does not change, so fall(d) = 0 for every
document whose grade alone cannot change which sign is favoured: most documents, most of the time.
It cannot rank them, so the policy ranks documents by the same expected fall of a strictly concave
measure of the same uncertainty, the Gini impurity of the sign, 1 - P+^2 - P-^2 - P0^2: >= 0 by the
same argument, > 0 whenever d's grade moves the probabilities, and 0 exactly when the sign is
certain; that is the ``value`` column, and fall(d) is reported beside it (``bound`` column, and ``why``).
The values are under the point fit of the model (not the bootstrap mixture).

*Linear metrics* (P, DCG, SDCG, RBP: a constant plus one independent term per document, ``is_linear``)
whose every term lies on a grid of step h = 1/q (P@k: h = 1/k; ``linear_step``) get exact values:
on the grid every difference is an integer number of cells, nothing is rounded, and a tie is the cell
0.  (DCG's logarithmic discounts lie on no such grid; rounding them would turn ties made by cancelling
terms into small differences, so DCG, SDCG and nDCG are sampled.)  The pmf of the other topics' sum (prefix and
suffix products over the topics) and of topic t without d (the same over its documents) are convolved,
and P(mean > 0 | d = g) is the mass of the cells above -(cell of d at g + the constants), P(mean < 0 |
d = g) the mass below, and the current probabilities their model-weighted mean (the law of total
probability).  *Other metrics* are computed with common random numbers: ``policy_draws`` seeded draws
of every unjudged document of the pair on every topic; the terms with d fixed at g re-score topic t's
draws with d set to g by the metric's own (vectorised) scorer and keep the other topics' draws, and
the current probabilities are taken as the model-weighted mean of the re-scored ones, so the
estimates are >= 0 draw for draw as well (sampled: the expectation over the other documents).  M_p is the model's distribution of d seen from pair p (the ``rank``
model conditions on d's best rank in the pair's two lists).  The documents of a batch are the best
one-step values, not re-optimised jointly.

**The ``mtc`` policy** (Carterette, Allan & Sitaraman, "Minimal test collections for retrieval
evaluation", SIGIR 2006, section 3).  For AP they write the difference (up to the shared 1/R) as
sum_i sum_j c_ij x_i x_j over binary relevances x, with a_ij = 1 / max(r_A(i), r_A(j)) (0 unless both
are ranked by A), b_ij likewise for B, and c_ij = a_ij - b_ij; the weight of an unjudged document i is
w_i = c_ii + sum_{j judged relevant} c_ij, and the document of largest |w_i| is judged next.  For
precision at k the weight is 1[r_A(i) <= k] / k - 1[r_B(i) <= k] / k.  medopt uses the precision rule
with the metric's own rank weights for the other sums over ranks (DCG, SDCG, RBP) and with DCG's
discount 1 / log2(1 + r) for nDCG (an extension: the paper gives AP and precision), and sums |w_i| over
the open pairs (the paper's rule for several systems).  Other families have no MTC weight.
"""

# size: the model half of judging: the stop under a bootstrap mixture, the expected policy's exact (grid) and
# sampled one-step values with their proofs, and MTC's weights; the state and the other policies live in next.py

from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping

import numpy as np

from ..core.result import TOLERANCE
from ..errors import MedoptError
from ..relevance.compute import mean_distribution, resolve_model
from ..relevance.distribution import clopper_pearson, grades_of, topic_terms
from ..relevance.models import parse_model, rank_model_from_counts, rank_positions, topic_rank_counts
from ..relevance.scoring import COMPILED_FAMILIES, compiled_scores, vector_scores

CONFIDENCE = 0.95
DRAWS = 4000          # draws of a pair's distribution for the stop (sampled metrics)
MODEL_DRAWS = 8       # bootstrap fits of the rank model whose mixture gives P(sign)
POLICY_DRAWS = 500    # draws per pair and topic for the expected policy's values
MTC_FAMILIES = ("AP", "P", "DCG", "SDCG", "RBP", "nDCG")


def check_confidence(confidence) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.5 < confidence < 1:
        raise MedoptError(f"confidence must be a number between 0.5 and 1 (exclusive), got {confidence!r}")
    return float(confidence)


class Belief:
    """What the model says about each pair of a ``Judging`` state (module docstring): the fitted model,
    each pair's distribution and favoured sign, and the expected policy's values."""

    def __init__(self, state, model, *, confidence: float = CONFIDENCE, draws: int = DRAWS,
                 policy_draws: int = POLICY_DRAWS, seed: int = 0, warn=None, fit_start: bool = True,
                 model_draws: int = MODEL_DRAWS):
        self.state, self.spec = state, parse_model(model)
        self.fit_start = fit_start
        if isinstance(model_draws, bool) or not isinstance(model_draws, int) or model_draws < 1:
            raise MedoptError(f"model_draws must be a whole number >= 1, got {model_draws!r}")
        self.model_draws = model_draws
        self.confidence = check_confidence(confidence)
        for name, value in (("draws", draws), ("policy_draws", policy_draws)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 100:
                raise MedoptError(f"{name} must be a whole number >= 100, got {value!r}")
        self.draws, self.policy_draws, self.seed, self.warn = draws, policy_draws, seed, warn
        tops = set(state.max_grade.values())
        if self.spec == "rank" and len(tops) > 1:
            raise MedoptError("the rank model needs one G for every topic (not --max-grade per-topic)")
        self.top = max(tops)
        self.refits = 0
        self.refit()

    # -- the model and the pairs' distributions ---------------------------------------------------------
    def refit(self) -> None:
        """Fit the model on the judgments so far (rank); forget every distribution."""
        state = self.state
        judgments = self.fitted_on()
        if self.spec != "rank":
            rankings = [{t: state.rankings[name].get(t, ()) for t in state.topics} for name in state.rankings]
            kwargs = {} if self.warn is None else {"warn": self.warn}
            self.model = resolve_model(self.spec, rankings, judgments, self.top, **kwargs)
            self.models = [self.model]
        else:
            counts = self._rank_counts(judgments)
            if not any(c.any() for c in counts.values()):
                self.model, self.models = None, []  # nothing judged yet: no fit, no confidence, no expected values
            else:
                runs = len(state.rankings)
                self.model = rank_model_from_counts(counts, self.top, runs=runs)
                self.models = [self.model]
            if self.model is not None and self.model_draws > 1:
                # the Bayesian bootstrap over topics (module docstring): Dirichlet(1, .., 1) topic weights
                judged = list(counts)
                rng = np.random.default_rng([self.seed, self.refits, 7])
                self.models = [rank_model_from_counts(counts, self.top, runs=runs, topic_weights=dict(
                    zip(judged, rng.dirichlet(np.ones(len(judged))) * len(judged)))) for _ in range(self.model_draws)]
        self.refits += 1
        self._pairs: dict = {}
        self._draws: dict = {}

    def _rank_counts(self, judgments) -> dict:
        """Each judged topic's rank counts (models.topic_rank_counts), recounted where its judgments grew."""
        if not hasattr(self, "_positions"):
            state = self.state
            rankings = [{t: state.rankings[name].get(t, ()) for t in state.topics} for name in state.rankings]
            self._positions, self._depth = rank_positions(rankings)
            self._counts, self._counted = {}, {}
        changed = [t for t in self.state.topics if len(judgments.get(t, {})) != self._counted.get(t)]
        self._counts.update(topic_rank_counts(self._positions, judgments, self.top, self._depth, topics=changed))
        self._counted.update({t: len(judgments.get(t, {})) for t in changed})
        return self._counts

    def fitted_on(self) -> dict:
        """The judgments the rank model is fitted on: all of them, or (``fit_start=False``) those made
        since the start (module docstring)."""
        state = self.state
        if self.fit_start:
            return state.judgments
        return {t: {d: g for d, g in state.judgments[t].items() if d not in state.start[t]} for t in state.topics}

    def describe(self) -> str:
        return "rank (not fitted: nothing judged)" if self.model is None else self.model.describe()

    def terms(self, pair, topic):
        return topic_terms(self.state.cells[pair, topic].instance, self.model, topic)

    def distribution(self, pair):
        """The pair's mean difference distribution under the current model (cached until the next refit)."""
        if pair not in self._pairs:
            results = []
            for k, model in enumerate(self.models):
                terms = [topic_terms(self.state.cells[pair, t].instance, model, t) for t in self.state.topics]
                # enumerate_limit=0: a metric that is not linear is sampled over all topics at once (a grid
                # over enumerated topics costs more than the stop can spend after every batch)
                results.append(mean_distribution(terms, draws=max(100, self.draws // len(self.models)),
                                                 seed=self.seed * 1009 + k, enumerate_limit=0,
                                                 model=self.model.describe()))
            self._pairs[pair] = mixture(results)
        return self._pairs[pair]

    def favoured(self, pair) -> tuple[int, float, float]:
        """(favoured sign, its probability's lower end (the confidence), P(mean > 0)) of the pair."""
        if self.model is None:
            return 0, 0.0, math.nan
        result = self.distribution(pair)
        if result.p_positive >= result.p_negative and result.p_positive > 0:
            return 1, result.p_positive_interval[0], result.p_positive
        if result.p_negative > 0:
            return -1, result.p_negative_interval[0], result.p_positive
        return 0, 0.0, result.p_positive

    def confident(self, pair) -> bool:
        return self.favoured(pair)[1] >= self.confidence

    # -- the expected policy ----------------------------------------------------------------------------
    def _topic_draws(self, pair, topic):
        """(terms, uniforms, drawn grades, the topic's differences per draw) for the policy, cached per refit."""
        key = (pair, topic)
        if key not in self._draws:
            terms = self.terms_of(pair, topic)
            index = self.state.topics.index(topic) * 1_000_003 + self.state.pairs.index(pair)
            rng = np.random.default_rng([self.seed, self.refits, index])
            uniform = rng.random((self.policy_draws, len(terms.docs)))
            grades = grades_of(uniform, np.cumsum(terms.probs, axis=1)) if terms.docs else \
                np.zeros((self.policy_draws, 0), dtype=np.int64)
            self._draws[key] = (terms, uniform, grades, self._score(terms, grades))
        return self._draws[key]

    @staticmethod
    def _score(terms, grades) -> np.ndarray:
        if not terms.docs:
            return np.full(grades.shape[0], terms.reference)
        if terms.linear:
            columns = np.arange(len(terms.docs))
            return terms.constant + terms.values[columns[None, :], grades].sum(axis=1)
        return vector_scores(terms.instance, terms.docs, grades)

    def terms_of(self, pair, topic):
        key = ("terms", pair, topic)
        if key not in self._draws:
            self._draws[key] = self.terms(pair, topic)
        return self._draws[key]

    def exact_linear(self, pair) -> bool:
        """The pair's one-step values are computed exactly (every topic linear, on a grid: module docstring)."""
        key = ("step", pair)
        if self.model is None:
            return False
        if key not in self._draws:
            terms = [self.terms_of(pair, t) for t in self.state.topics]
            self._draws[key] = linear_step(terms, self.state.metric.rational) \
                if all(t.linear for t in terms) else None
        return self._draws[key] is not None

    def _sampled_sides(self, pair, topic, columns, classes):
        """(P+, P-) per candidate column and grade class, from the common random draws: the draws' grades
        with the candidate's set to the class, re-scored (AP, nDCG: by the compiled sampler, the candidate's
        uniform moved inside the class's most likely grade's CDF step, which gives that grade)."""
        count = len(self.state.topics)
        others = sum(self._topic_draws(pair, t)[3] for t in self.state.topics if t != topic)
        terms, uniform, grades, _ = self._topic_draws(pair, topic)
        cdf = np.cumsum(terms.probs, axis=1)
        scored = None
        if self.state.metric.family in COMPILED_FAMILIES:
            rows = np.repeat(uniform[None, :, :], len(columns) * len(classes), axis=0)
            for i, column in enumerate(columns):
                probs = terms.probs[column]
                for k, (_, members) in enumerate(classes):
                    grade = max(members, key=lambda g: probs[g])
                    rows[i * len(classes) + k, :, column] = (cdf[column, grade] + (cdf[column, grade - 1]
                                                                                   if grade else 0.0)) / 2
            scored = compiled_scores(terms.instance, terms.docs, rows.reshape(-1, len(terms.docs)), cdf)
        if scored is None:
            rows = []
            for column in columns:
                for representative, _ in classes:
                    fixed = grades.copy()
                    fixed[:, column] = representative
                    rows.append(fixed)
            scored = self._score(terms, np.concatenate(rows))
        means = (scored.reshape(len(columns), len(classes), -1) + others) / count
        return (means > TOLERANCE).mean(axis=2), (means < -TOLERANCE).mean(axis=2)

    def _linear_grid(self, pair):
        """The pair's integer grid (cached per refit): the step h, each topic's cells (values / h) with
        their documents' pmfs, each topic's pmf, and the pmf of the other topics' sum for every topic."""
        key = ("grid", pair)
        if key not in self._draws:
            topics = self.state.topics
            terms = [self.terms_of(pair, t) for t in topics]
            step = self._draws["step", pair]
            cells, docs, pmfs, constant = [], [], [], 0
            for part in terms:
                constant += int(np.rint(part.constant / step))
                grid = np.rint(part.values / step).astype(np.int64) if part.docs else np.zeros((0, 1), np.int64)
                cells.append(grid)
                rows = [_doc_pmf(grid[i], part.probs[i]) for i in range(len(part.docs))]
                docs.append(rows)
                pmfs.append(_convolve_all(rows))
            others = _leave_one_out(pmfs, range(len(topics)))
            self._draws[key] = (step, constant, cells, docs, others)
        return self._draws[key]

    def _linear_sides(self, pair, topic, columns, classes):
        """(P+, P-) per candidate column and grade class, exactly on the grid (module docstring)."""
        step, constant, cells, docs, others = self._linear_grid(pair)
        index = self.state.topics.index(topic)
        rows, grid = docs[index], cells[index]
        without = _leave_one_out(rows, columns)
        positive = np.zeros((len(columns), len(classes)))
        negative = np.zeros((len(columns), len(classes)))
        for i, column in enumerate(columns):
            rest = _convolve(others[index], without[i])
            offset, mass = rest
            above = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])   # above[j] = P(rest cell >= offset + j)
            below = np.concatenate([[0.0], np.cumsum(mass)])                 # below[j] = P(rest cell < offset + j)
            for k, (representative, _) in enumerate(classes):
                shift = constant + int(grid[column, representative])  # the sum is rest + shift; > 0 from cell 1
                first = int(np.clip(1 - shift - offset, 0, len(mass)))
                last = int(np.clip(-shift - offset, 0, len(mass)))
                positive[i, k], negative[i, k] = above[first], below[last]
        return np.clip(positive, 0.0, 1.0), np.clip(negative, 0.0, 1.0)

    def values(self, topic: str, candidates: Mapping[str, list], classes) -> dict[str, tuple[float, float]]:
        """{doc: (expected fall of the sign's Gini impurity, expected fall of the wrong decisions) over the
        open pairs when doc is judged} (module docstring).  ``candidates``: doc -> the open pairs leaving it unjudged on
        ``topic``; ``classes``: the grades the metric tells apart, each as (representative, members)."""
        by_pair: dict = {}
        for doc, pairs in candidates.items():
            for pair in pairs:
                by_pair.setdefault(pair, []).append(doc)
        values = {doc: [0.0, 0.0] for doc in candidates}
        if self.model is None:  # no belief yet: every value 0 (the policy falls back to depth order)
            return {doc: (0.0, 0.0) for doc in candidates}
        for pair, docs in by_pair.items():
            terms = self.terms_of(pair, topic)
            column = {d: i for i, d in enumerate(terms.docs)}
            docs = [d for d in docs if d in column]
            if not docs:
                continue
            if self.exact_linear(pair):
                positive, negative = self._linear_sides(pair, topic, [column[d] for d in docs], classes)
            else:
                positive, negative = self._sampled_sides(pair, topic, [column[d] for d in docs], classes)
            for i, doc in enumerate(docs):
                row = terms.probs[column[doc]]
                weights = np.array([row[list(members)].sum() for _, members in classes])
                up, down = float(weights @ positive[i]), float(weights @ negative[i])
                now = 1.0 - max(up, down)
                after = float(weights @ (1.0 - np.maximum(positive[i], negative[i])))
                values[doc][0] += max(0.0, gini(up, down) - float(weights @ gini(positive[i], negative[i])))
                values[doc][1] += max(0.0, now - after)
        return {doc: tuple(pair) for doc, pair in values.items()}


def mixture(results):
    """The distribution under the equal mixture of the models behind ``results`` (one per bootstrap fit):
    P(sign) is the mean of the fits' probabilities.  Sampled: the draws pooled (each fit drew its own
    share), one Clopper-Pearson interval; exact or bounded: the mean of the ends (the mean of lower bounds
    bounds the mean from below).  Moments: the mixture's."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    count = len(results)
    up, down = (math.fsum(getattr(r, side) for r in results) / count for side in ("p_positive", "p_negative"))
    expected = math.fsum(r.expected for r in results) / count
    variance = math.fsum(r.sd ** 2 + (r.expected - expected) ** 2 for r in results) / count
    if all(r.method == "sampled" for r in results):
        draws = sum(r.draws for r in results)
        positive = clopper_pearson(int(round(math.fsum(r.p_positive * r.draws for r in results))), draws)
        negative = clopper_pearson(int(round(math.fsum(r.p_negative * r.draws for r in results))), draws)
        method = "sampled"
    else:
        positive = tuple(math.fsum(r.p_positive_interval[i] for r in results) / count for i in (0, 1))
        negative = tuple(math.fsum(r.p_negative_interval[i] for r in results) / count for i in (0, 1))
        method = "exact" if all(r.method == "exact" for r in results) else \
            "sampled" if any(r.method == "sampled" for r in results) else "bounded"
        draws = sum(r.draws for r in results)
    return replace(first, expected=expected, sd=math.sqrt(variance), p_positive=up, p_negative=down,
                   p_positive_interval=positive, p_negative_interval=negative, method=method, draws=draws,
                   width=max(positive[1] - positive[0], negative[1] - negative[0]),
                   support=(min(r.support[0] for r in results), max(r.support[1] for r in results)),
                   values=None, weights=None)


RATIONAL_STEPS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 30, 32, 50, 60, 64, 100, 120, 128, 200, 256, 840, 1000, 1024)


def linear_step(terms_list, rational: bool) -> float | None:
    """The grid step of the exact one-step values: 1/q for the smallest q on whose multiples every value
    and constant lies (a rational metric, P@k: every q up to 1000, so 1/k; others: RATIONAL_STEPS); None
    when there is none (DCG's logarithmic discounts: the values are sampled)."""
    arrays = [t.values.ravel() for t in terms_list if t.docs] + [np.array([t.constant for t in terms_list])]
    values = np.concatenate(arrays)
    values = values[values != 0]
    for q in range(1, 1001) if rational else RATIONAL_STEPS:
        scaled = values * q
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 1.0 / q
    return None


def _doc_pmf(cells: np.ndarray, probs: np.ndarray):
    low = int(cells.min())
    mass = np.zeros(int(cells.max()) - low + 1)
    np.add.at(mass, cells - low, probs)
    return low, mass


def _convolve(first, second):
    from scipy.signal import oaconvolve  # deferred: scipy loads with the first exact one-step value

    (a, x), (b, y) = first, second
    mass = np.convolve(x, y) if min(len(x), len(y)) <= 64 else np.maximum(oaconvolve(x, y), 0.0)
    return a + b, mass


def _leave_one_out(pmfs, indices) -> list:
    """For each i of ``indices``, the convolution of every pmf but the i-th (prefix and suffix products:
    one pass each way, then one convolution per index)."""
    before, after = [(0, np.ones(1))], [(0, np.ones(1))]
    for pmf in pmfs[:-1]:
        before.append(_convolve(before[-1], pmf))
    for pmf in pmfs[:0:-1]:
        after.append(_convolve(after[-1], pmf))
    return [_convolve(before[i], after[len(pmfs) - 1 - i]) for i in indices]


def _convolve_all(pmfs):
    total = (0, np.ones(1))
    for pmf in pmfs:
        total = _convolve(total, pmf)
    return total


def gini(up, down):
    """1 - P+^2 - P-^2 - P0^2 with P0 = 1 - P+ - P- (the tie)."""
    return 1.0 - up * up - down * down - (1.0 - up - down) ** 2


# -- MTC ------------------------------------------------------------------------------------------------
def mtc_weight(instance, doc) -> float:
    """Carterette et al.'s weight of ``doc`` for one pair on one topic (module docstring)."""
    metric = instance.metric
    rank_a, rank_b = instance.rank_a, instance.rank_b
    if metric.family == "AP":
        relevant = [d for d, g in instance.judgments.items() if metric.is_relevant(g)
                    and (d in rank_a or d in rank_b)]

        def c(i, j):
            a = 1.0 / max(rank_a[i], rank_a[j]) if i in rank_a and j in rank_a else 0.0
            b = 1.0 / max(rank_b[i], rank_b[j]) if i in rank_b and j in rank_b else 0.0
            return a - b

        return c(doc, doc) + math.fsum(c(doc, j) for j in relevant)
    if metric.family == "nDCG":
        def weight(rank):
            return 1.0 / math.log2(1 + rank)
    elif hasattr(metric, "rank_weights"):
        weights_a, weights_b = metric.rank_weights(len(instance.a)), metric.rank_weights(len(instance.b))
        return (weights_a[rank_a[doc] - 1] if doc in rank_a else 0.0) - \
            (weights_b[rank_b[doc] - 1] if doc in rank_b else 0.0)
    else:
        raise MedoptError(f"the mtc policy has weights for {', '.join(MTC_FAMILIES)}, not {metric}")
    return (weight(rank_a[doc]) if doc in rank_a else 0.0) - (weight(rank_b[doc]) if doc in rank_b else 0.0)


def model_values(state, policy: str, entries) -> dict:
    """{(topic, doc): (value, bound)} of ``entries`` ((topic, doc, open pairs, depth) of a ``Judging``
    state) for the ``expected`` policy (Gini fall, wrong-decision fall) or ``mtc`` (the summed |weight|)."""
    values = {}
    for topic in {entry[0]: None for entry in entries}:
        group = {e[1]: e[2] for e in entries if e[0] == topic}
        if policy == "expected":
            found = state.belief.values(topic, group, state.classes(topic))
        else:
            found = {doc: (math.fsum(abs(mtc_weight(state.cells[p, topic].instance, doc)) for p in affected),
                           math.nan) for doc, affected in group.items()}
        values.update({(topic, doc): value for doc, value in found.items()})
    return values
