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
Both are computed with common random numbers: ``policy_draws`` seeded draws of every unjudged document
of the pair on every topic; the terms with d fixed at g re-score topic t's draws with d set to g by the
metric's own (vectorised) scorer and keep the other topics' draws, and the current probabilities are
taken as the model-weighted mean of the re-scored ones, so the estimates are >= 0 draw for draw as
well.  They are sampled estimates for every family (the re-scoring is exact; the expectation over the
other documents is sampled).  M_p is the model's distribution of d seen from pair p (the ``rank``
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

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ..core.result import TOLERANCE
from ..errors import MedoptError
from ..relevance.compute import mean_distribution, resolve_model
from ..relevance.distribution import draw_grades, topic_terms
from ..relevance.models import parse_model
from ..relevance.scoring import vector_scores

CONFIDENCE = 0.95
DRAWS = 4000          # draws of a pair's distribution for the stop (sampled metrics)
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
                 policy_draws: int = POLICY_DRAWS, seed: int = 0, warn=None):
        self.state, self.spec = state, parse_model(model)
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
        rankings = [{t: state.rankings[name].get(t, ()) for t in state.topics} for name in state.rankings]
        kwargs = {} if self.warn is None else {"warn": self.warn}
        if self.spec == "rank" and not any(d in state.judgments.get(t, {}) for run in rankings
                                           for t, ranking in run.items() for d in ranking):
            self.model = None  # nothing judged yet: no fit, so no confidence and no expected values
        else:
            self.model = resolve_model(self.spec, rankings, state.judgments, self.top, **kwargs)
        self.refits += 1
        self._pairs: dict = {}
        self._draws: dict = {}

    def describe(self) -> str:
        return "rank (not fitted: nothing judged)" if self.model is None else self.model.describe()

    def terms(self, pair, topic):
        return topic_terms(self.state.cells[pair, topic].instance, self.model, topic)

    def distribution(self, pair):
        """The pair's mean difference distribution under the current model (cached until the next refit)."""
        if pair not in self._pairs:
            terms = [self.terms(pair, t) for t in self.state.topics]
            # enumerate_limit=0: a metric that is not linear is sampled over all topics at once (a grid over
            # enumerated topics costs more than the stop can spend after every batch)
            self._pairs[pair] = mean_distribution(terms, draws=self.draws, seed=self.seed, enumerate_limit=0,
                                                  model=self.model.describe())
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
        """(terms, drawn grades, the topic's differences per draw) for the policy, cached per refit."""
        key = (pair, topic)
        if key not in self._draws:
            terms = self.terms(pair, topic)
            index = self.state.topics.index(topic) * 1_000_003 + self.state.pairs.index(pair)
            rng = np.random.default_rng([self.seed, self.refits, index])
            grades = draw_grades(terms.probs, rng, self.policy_draws) if terms.docs else \
                np.zeros((self.policy_draws, 0), dtype=np.int64)
            self._draws[key] = (terms, grades, self._score(terms, grades))
        return self._draws[key]

    @staticmethod
    def _score(terms, grades) -> np.ndarray:
        if not terms.docs:
            return np.full(grades.shape[0], terms.reference)
        if terms.linear:
            columns = np.arange(len(terms.docs))
            return terms.constant + terms.values[columns[None, :], grades].sum(axis=1)
        return vector_scores(terms.instance, terms.docs, grades)

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
        count = len(self.state.topics)
        for pair, docs in by_pair.items():
            others = sum(self._topic_draws(pair, t)[2] for t in self.state.topics if t != topic)
            terms, grades, _ = self._topic_draws(pair, topic)
            column = {d: i for i, d in enumerate(terms.docs)}
            docs = [d for d in docs if d in column]
            if not docs:
                continue
            rows = []
            for doc in docs:
                for representative, _ in classes:
                    fixed = grades.copy()
                    fixed[:, column[doc]] = representative
                    rows.append(fixed)
            scored = self._score(terms, np.concatenate(rows)).reshape(len(docs), len(classes), -1)
            means = (scored + others) / count
            positive = (means > TOLERANCE).mean(axis=2)    # (docs, classes)
            negative = (means < -TOLERANCE).mean(axis=2)
            for i, doc in enumerate(docs):
                row = terms.probs[column[doc]]
                weights = np.array([row[list(members)].sum() for _, members in classes])
                up, down = float(weights @ positive[i]), float(weights @ negative[i])
                now = 1.0 - max(up, down)
                after = float(weights @ (1.0 - np.maximum(positive[i], negative[i])))
                values[doc][0] += max(0.0, gini(up, down) - float(weights @ gini(positive[i], negative[i])))
                values[doc][1] += max(0.0, now - after)
        return {doc: tuple(pair) for doc, pair in values.items()}


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
