"""Which documents to judge next: judgment budgeting on the difference ranges (SPEC 7).

The state (``Judging``) holds runs, the pairs compared, the topics and the judgments so far.  For each
open pair p and topic t it keeps the difference range [low_pt, high_pt] (``medopt.difference_range``;
its proven bounds, so an uncertified end is never taken for better than it is).  A pair is *done*
when its mean difference range [mean_t low_pt, mean_t high_pt] excludes 0 (``decided``, SPEC 7), or,
with a ``target``, when its mean MED, mean_t max(high_pt, -low_pt), is at most the target.  Judging
only removes assignments, so a range only narrows and a done pair stays done.

Each policy orders the unjudged documents of the open pairs' lists (the metric's top k of each run;
a candidate of topic t is a document some open pair leaves unjudged on t):

* ``lookahead``: the value of judging d on topic t is the worst case over the grades d could receive
  of how much the goal's measure shrinks, summed over the open pairs and divided by the number of
  topics (so it is in units of the pairs' mean): min_g sum_p [obj(low_pt, high_pt) - obj(low_pt^g,
  high_pt^g)] / |T|, where [low_pt^g, high_pt^g] is the range with d judged g (the exact engine) and
  obj is the width high - low (goal: decided) or the MED max(high, -low) (goal: target).  Grades that
  the metric does not tell apart (a binary metric: relevant or not) count once.
* ``assignment``: the documents on which the current maximising assignments of the two ends
  disagree, by the same worst case computed on those assignments alone (no new solve): the bound
  below.
* ``depth``: pooling order, by the best rank of the document in any run of an open pair.
* ``random``: a seeded shuffle.

**The bound that prunes lookahead.**  Let x_hi be an assignment reaching high_pt and x_lo one reaching
low_pt, and x[d:=g] the same assignment with d at grade g (it still meets every relevance limit or
the bound is not used).  x_hi[d:=g] is feasible once d is judged g, so high_pt^g >= diff(x_hi[d:=g]);
likewise low_pt^g <= diff(x_lo[d:=g]).  obj is increasing in high and decreasing in low, hence
obj(low_pt^g, high_pt^g) >= obj(diff(x_lo[d:=g]), diff(x_hi[d:=g])) and each pair's reduction is at
most obj(low_pt, high_pt) - obj(diff(x_lo[d:=g]), diff(x_hi[d:=g])).  Summed over pairs and minimised
over g, that bounds the lookahead value from above, and where both assignments already give d a grade
equivalent to g, the reduction for g is exactly 0.  Lookahead takes candidates best bound first and
solves one only when its bound could still beat the values found (lazy evaluation): a candidate whose
exact value is at the top of the queue is at least every other candidate's bound, hence their value.
Values are one-step values from the current judgments; several documents chosen at once are not
re-optimised jointly.  Documents of equal value go by bound, then by depth.
"""

# size: the judging state, its stop rules and its six policies' orders in one class, and the API beside it;
# the relevance model's parts (the confidence stop, the expected and mtc values) live in confident.py

from __future__ import annotations

import heapq
import math
import random as random_module
from dataclasses import dataclass
from itertools import combinations
from typing import Mapping, Sequence

from .. import api
from ..errors import MedoptError
from ..core.instance import build_instance
from ..io.frames import as_qrels, as_run, qrels_source
from ..io.trec import run_names
from ..io.topics import mean_topics, read_topic_choice
from ..metrics import is_character_metric, parse_metric, resolve_max_grade
from ..core.result import mean_range
from .confident import CONFIDENCE, DRAWS, MODEL_DRAWS, POLICY_DRAWS, Belief, model_values

POLICIES = ("lookahead", "assignment", "depth", "random", "expected", "mtc")
MODEL_POLICIES = ("expected",)   # need a relevance model
JUDGE_COLUMNS = ("rank", "topic", "docid", "policy", "value", "bound", "pairs", "pair", "topic_low",
                 "topic_high", "p_pair", "why")


@dataclass
class Cell:
    """One pair on one topic: its range (proven ends), the assignments reaching them and the instance."""

    low: float
    high: float
    low_assignment: dict
    high_assignment: dict
    certified: bool
    instance: object
    reached_low: float | None = None   # the re-scored ends (real completions) behind the proven ends
    reached_high: float | None = None


class Judging:
    """Runs, pairs, topics, judgments and each open pair's ranges per topic (see the module docstring).

    ``rankings`` maps run name -> {topic: docids best first}; ``pairs`` are (name, name) tuples
    (default: every pair of runs); ``judgments`` maps topic -> {docid: grade}.  ``max_grade`` is the
    top grade G (SPEC 1, default: the largest grade of all the judgments at the start, at least 1;
    ``"per-topic"``: each topic's own; it stays fixed while judgments arrive).  ``method``, ``solver`` and ``time_limit`` go to each range's solve."""

    def __init__(self, metric, rankings: Mapping[str, Mapping[str, Sequence[str]]], topics: Sequence[str],
                 judgments: Mapping[str, Mapping[str, int]] | None = None, *, pairs=None,
                 target: float | None = None, max_grade: int | None = None, method: str = "auto",
                 solver: str | None = None, time_limit: float | None = None, model=None,
                 confidence: float = CONFIDENCE, draws: int = DRAWS, policy_draws: int = POLICY_DRAWS,
                 seed: int = 0, warn=None, fit_start: bool = True, model_draws: int = MODEL_DRAWS):
        self.metric = parse_metric(metric)
        if is_character_metric(self.metric):
            raise MedoptError(f"judge-next takes document metrics, not {self.metric} (SPEC 8)")
        if target is not None and not (isinstance(target, (int, float)) and target >= 0):
            raise MedoptError(f"target must be a number >= 0, got {target!r}")
        self.rankings, self.topics, self.target = rankings, list(topics), target
        if not self.topics:
            raise MedoptError("no topic to judge")
        self.pairs = list(pairs) if pairs is not None else list(combinations(rankings, 2))
        if not self.pairs:
            raise MedoptError("judge-next needs at least two runs (one pair to compare)")
        for pair in self.pairs:
            if len(pair) != 2 or pair[0] == pair[1] or any(name not in rankings for name in pair):
                raise MedoptError(f"a pair is two different runs of {', '.join(map(str, rankings))}, not {pair!r}")
        self.judgments = {t: dict((judgments or {}).get(t, {})) for t in self.topics}
        self.start = {t: dict(j) for t, j in self.judgments.items()}  # the judgments given at the start
        top = resolve_max_grade(max_grade, judgments or {})
        self.max_grade = {t: top if top is not None else max([1, *self.judgments[t].values()]) for t in self.topics}
        self.settings = {"method": method, "solver": solver, "time_limit": time_limit}
        self.cells: dict[tuple, Cell] = {}
        self.decisions: dict = {}  # pair -> (sign, how: "worst case" or "confidence", confidence)
        self.belief = None
        for topic in self.topics:
            self.refresh(topic)
        if model is not None:
            if target is not None:
                raise MedoptError("a relevance model decides pairs by confidence; it takes no target")
            self.belief = Belief(self, model, confidence=confidence, draws=draws, policy_draws=policy_draws,
                                 seed=seed, warn=warn, fit_start=fit_start, model_draws=model_draws)

    # -- ranges -----------------------------------------------------------
    def solve(self, pair, topic: str, judgments: Mapping[str, int], *, instance: bool = False) -> Cell:
        """The range of ``pair`` on ``topic`` under ``judgments`` (with its instance when asked)."""
        a, b = (self.rankings[name].get(topic, ()) for name in pair)
        try:
            result = api.difference_range(self.metric, a, b, judgments, max_grade=self.max_grade[topic],
                                          **self.settings)
        except MedoptError as error:
            raise MedoptError(f"topic {topic}, {self.metric}: {error}") from None
        built = build_instance(self.metric, a, b, judgments, max_grade=self.max_grade[topic]) if instance else None
        return Cell(result.low_bound, result.high_bound, result.low_assignment, result.high_assignment,
                    result.certified, built, result.low, result.high)

    def refresh(self, topic: str) -> None:
        """Solve the ranges of every open pair on ``topic`` under the current judgments."""
        for pair in self.open_pairs():
            self.cells[pair, topic] = self.solve(pair, topic, self.judgments[topic], instance=True)

    def judge(self, topic: str, grades: Mapping[str, int]) -> None:
        """Record judgments on ``topic``, re-solve its ranges and refit the relevance model."""
        self.judgments[topic].update(grades)
        self.refresh(topic)
        if self.belief is not None:
            self.belief.refit()

    def mean_range(self, pair) -> tuple[float, float]:
        """The mean of the topics' proven ends (a cell's low and high are its bounds)."""
        span = self.mean_span(pair)
        return span.low_bound, span.high_bound

    def mean_span(self, pair):
        """The pair's mean difference range (result.mean_range): reached ends, proven bounds, verdict."""
        cells = [self.cells[pair, t] for t in self.topics]
        return mean_range([(c.low if c.reached_low is None else c.reached_low,
                            c.high if c.reached_high is None else c.reached_high, c.low, c.high) for c in cells],
                          rational=self.metric.rational)

    def mean_med(self, pair) -> float:
        return sum(max(self.cells[pair, t].high, -self.cells[pair, t].low) for t in self.topics) / len(self.topics)

    def done(self, pair) -> bool:
        """Target reached; or decided by the worst case or, with a model, by confidence (confident.py).
        A pair decided stays decided, with the sign it was decided with."""
        if self.target is not None:
            return self.mean_med(pair) <= self.target
        if pair in self.decisions:
            return True
        span = self.mean_span(pair)
        if span.verdict == "decided":
            self.decisions[pair] = (1 if span.low_bound > 0 else -1, "worst case", 1.0)
            return True
        if self.belief is not None:
            sign, confidence, _ = self.belief.favoured(pair)
            if sign and confidence >= self.belief.confidence:  # sign 0: no belief yet, or a sure tie
                self.decisions[pair] = (sign, "confidence", confidence)
                return True
        return False

    def open_pairs(self) -> list:
        return [p for p in self.pairs if not all((p, t) in self.cells for t in self.topics) or not self.done(p)]

    def objective(self, low: float, high: float) -> float:
        return max(high, -low) if self.target is not None else high - low

    # -- candidates -------------------------------------------------------
    def candidates(self, topic: str, pairs=None) -> dict[str, list]:
        """{docid: the open pairs that leave it unjudged on ``topic``}, in order of first appearance."""
        found: dict[str, list] = {}
        for pair in pairs if pairs is not None else self.open_pairs():
            for doc in self.cells[pair, topic].instance.unjudged:
                found.setdefault(doc, []).append(pair)
        return found

    def depth(self, topic: str, doc: str, pairs) -> int:
        names = {name for pair in pairs for name in pair}
        return min((self.rankings[n].get(topic, ()).index(doc) + 1 for n in names
                    if doc in self.rankings[n].get(topic, ())), default=math.inf)

    def grades(self, topic: str) -> list[int]:
        """One grade per class the metric tells apart (binary: not relevant, relevant)."""
        chosen, seen = [], set()
        for grade in range(self.max_grade[topic] + 1):
            kind = self.metric.is_relevant(grade) if self.metric.binary else grade
            if kind not in seen:
                seen.add(kind)
                chosen.append(grade)
        return chosen

    def classes(self, topic: str) -> list[tuple[int, tuple[int, ...]]]:
        """The grades the metric tells apart on ``topic``: (representative, every grade of the class)."""
        return [(g, tuple(h for h in range(self.max_grade[topic] + 1) if self._same(g, h)))
                for g in self.grades(topic)]

    def _same(self, first: int, second: int) -> bool:
        return self.metric.is_relevant(first) == self.metric.is_relevant(second) if self.metric.binary \
            else first == second

    def _unchanged(self, cell: Cell, doc: str, grade: int) -> bool:
        """Both ends certified and reached with ``doc`` at ``grade`` (or one the metric does not tell
        apart): judging it so leaves the range as it is."""
        return cell.certified and self._same(cell.high_assignment.get(doc, 0), grade) \
            and self._same(cell.low_assignment.get(doc, 0), grade)

    def bound(self, topic: str, doc: str, pairs) -> float:
        """The lookahead value's upper bound from the current assignments (module docstring)."""
        worst = math.inf
        for grade in self.grades(topic):
            total = 0.0
            for pair in pairs:
                total += self._flip_bound(self.cells[pair, topic], doc, grade)
            worst = min(worst, total)
        return worst / len(self.topics)

    def _flip_bound(self, cell: Cell, doc: str, grade: int) -> float:
        current = self.objective(cell.low, cell.high)
        if not cell.certified:  # a bound may fall further than any assignment shows
            return current
        if self._unchanged(cell, doc, grade):
            return 0.0
        flipped_high = dict(cell.high_assignment, **{doc: grade})
        flipped_low = dict(cell.low_assignment, **{doc: grade})
        instance = cell.instance
        if not (instance.satisfies_limits(flipped_high) and instance.satisfies_limits(flipped_low)):
            return current
        high = instance.differences(flipped_high)["a"]
        low = instance.differences(flipped_low)["a"]
        return min(current, max(0.0, current - self.objective(min(low, cell.high), max(high, cell.low))))

    def value(self, topic: str, doc: str, pairs) -> float:
        """The lookahead value: the worst case over grades of the goal's shrinkage, with the ranges
        re-solved with ``doc`` judged (a grade both current assignments already give it costs no solve)."""
        worst = math.inf
        for grade in self.grades(topic):
            total = 0.0
            for pair in pairs:
                cell = self.cells[pair, topic]
                if self._unchanged(cell, doc, grade):
                    continue
                new = self.solve(pair, topic, dict(self.judgments[topic], **{doc: grade}))
                low, high = max(new.low, cell.low), min(new.high, cell.high)  # judging only narrows
                total += max(0.0, self.objective(cell.low, cell.high) - self.objective(low, high))
            worst = min(worst, total)
            if worst <= 0:
                break
        return worst / len(self.topics)

    # -- selection --------------------------------------------------------
    def select(self, policy: str = "lookahead", *, budget: int = 10, per_topic: int | None = None,
               seed: int = 0, topics: Sequence[str] | None = None) -> list[dict]:
        """Up to ``budget`` documents to judge next (at most ``per_topic`` per topic), best first, as
        rows of JUDGE_COLUMNS."""
        if policy not in POLICIES:
            raise MedoptError(f"unknown policy {policy!r}: choose from {', '.join(POLICIES)}")
        if policy in MODEL_POLICIES and self.belief is None:
            raise MedoptError(f"the {policy} policy needs a relevance model (model=..., --model)")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise MedoptError(f"budget must be a positive whole number, got {budget!r}")
        if per_topic is not None and (isinstance(per_topic, bool) or not isinstance(per_topic, int) or per_topic < 1):
            raise MedoptError(f"per_topic must be a positive whole number, got {per_topic!r}")
        pairs = self.open_pairs()
        entries = []  # (topic, doc, pairs, depth)
        for topic in topics if topics is not None else self.topics:
            for doc, affected in self.candidates(topic, pairs).items():
                entries.append((topic, doc, affected, self.depth(topic, doc, affected)))
        taken: dict[str, int] = {}

        def room(topic):
            return per_topic is None or taken.get(topic, 0) < per_topic

        chosen = []
        if policy in ("expected", "mtc"):  # the model's policies (confident.py)
            values = model_values(self, policy, entries)
            entries.sort(key=lambda e: (-values[e[0], e[1]][0], e[3], self.topics.index(e[0]), e[1]))
            for entry in entries:
                if len(chosen) < budget and room(entry[0]):
                    taken[entry[0]] = taken.get(entry[0], 0) + 1
                    chosen.append((*values[entry[0], entry[1]], entry))
        elif policy in ("depth", "random"):
            if policy == "depth":  # pooling: every topic to depth 1, then depth 2, ...
                entries.sort(key=lambda e: (e[3], self.topics.index(e[0]), e[1]))
            else:
                random_module.Random(seed).shuffle(entries)
            for entry in entries:
                if len(chosen) < budget and room(entry[0]):
                    taken[entry[0]] = taken.get(entry[0], 0) + 1
                    chosen.append((math.nan, math.nan, entry))
        else:
            heap = []
            for index, entry in enumerate(entries):
                bound = self.bound(entry[0], entry[1], entry[2])
                exact = policy == "assignment" or bound <= 0  # a value is >= 0 and <= its bound
                heap.append((-bound, not exact, entry[3], index, bound, bound if exact else None))
            heapq.heapify(heap)
            while heap and len(chosen) < budget:
                key, pending, depth, index, bound, value = heapq.heappop(heap)
                entry = entries[index]
                if not room(entry[0]):
                    continue
                if pending:  # its bound leads: solve it, and queue it again at its exact value
                    value = self.value(entry[0], entry[1], entry[2])
                    heapq.heappush(heap, (-value, False, depth, index, bound, value))
                    continue
                taken[entry[0]] = taken.get(entry[0], 0) + 1
                chosen.append((value, bound, entry))
        return [self._row(rank, policy, value, bound, entry)
                for rank, (value, bound, entry) in enumerate(chosen, start=1)]

    def _row(self, rank: int, policy: str, value: float, bound: float, entry) -> dict:
        topic, doc, pairs, depth = entry
        widest = max(pairs, key=lambda p: self.cells[p, topic].high - self.cells[p, topic].low)
        cell = self.cells[widest, topic]
        goal = "mean MED" if self.target is not None else "mean range width"
        if policy == "lookahead":
            why = f"whatever its grade, judging it shrinks the open pairs' {goal} by >= {value:.4g} in all"
        elif policy == "assignment":
            why = f"the ends' assignments disagree on it; shrinkage bound {value:.4g}"
        elif policy == "expected":
            why = (f"judging it lowers the open pairs' expected sign impurity by {value:.4g} and their expected "
                   f"wrong decisions by {bound:.4g} "
                   f"({'exact' if self.belief.exact_linear(widest) else 'sampled'})")
        elif policy == "mtc":
            why = f"MTC weight {value:.4g} summed over the open pairs"
        elif policy == "depth":
            why = f"rank {depth} in an open pair's run"
        else:
            why = "random pick"
        why += (f"; {len(pairs)} open pair(s); topic range [{cell.low:.4g}, {cell.high:.4g}] "
                f"for {widest[0]} - {widest[1]}")
        p_pair = math.nan
        if self.belief is not None:
            p_pair = self.belief.favoured(widest)[2]
            why += f", P({widest[0]} better on the mean) {p_pair:.3f}"
        return {"rank": rank, "topic": topic, "docid": doc, "policy": policy, "value": value, "bound": bound,
                "pairs": len(pairs), "pair": f"{widest[0]} - {widest[1]}", "topic_low": cell.low,
                "topic_high": cell.high, "p_pair": p_pair, "why": why}

    def summary(self) -> list[dict]:
        """One row per pair: its mean difference range, mean MED and verdict (or target reached)."""
        rows = []
        for pair in self.pairs:
            if not all((pair, t) in self.cells for t in self.topics):
                continue
            span = self.mean_span(pair)
            row = {"run_a": pair[0], "run_b": pair[1], "low": span.low_bound, "high": span.high_bound,
                   "mean_med": self.mean_med(pair), "verdict": span.verdict, "done": self.done(pair)}
            sign, how, confidence = self.decisions.get(pair, (0, "", math.nan))
            row.update(sign=sign, decided_by=how)
            if self.belief is not None:
                favoured, lower, p_a_better = self.belief.favoured(pair)
                method = self.belief.distribution(pair).method if self.belief.model is not None else "none"
                row.update(p_a_better=p_a_better, confidence=lower, favoured=favoured, p_method=method)
            rows.append(row)
        return rows


def judge_next(runs, qrels=None, metric="AP@100", *, budget: int = 10, policy: str | None = None,
               per_topic: int | None = None, target: float | None = None, seed: int = 0,
               max_grade: int | None = None, method: str = "auto", solver: str | None = None,
               time_limit: float | None = None, topics: Sequence[str] | None = None, honour_rank: bool = False,
               complete: bool = False, summary: list | None = None, warn=None, names=None, model=None,
               confidence: float = CONFIDENCE, draws: int = DRAWS, policy_draws: int = POLICY_DRAWS):
    """The documents to judge next for ``runs`` (two or more: every pair is compared), as a DataFrame
    with the columns of ``medopt judge-next`` (JUDGE_COLUMNS), best first.

    ``runs``: TREC files or any run form ``medopt.compare`` takes (a dict name -> run, or ``names``
    aligned with them, names them; default: their run ids); ``qrels``: the judgments so far (a
    file or any qrels form; None: nothing judged).  The goal is a decided mean difference range
    (SPEC 7) for every pair, or with ``target`` a mean MED at most ``target``; with a relevance ``model``
    (SPEC 13: ``"rank"``, ``"uniform(p=..)"``, a probabilities file or mapping) a pair is also done when
    P(its mean difference has the favoured sign) >= ``confidence`` (judging/confident.py).  ``policy``:
    lookahead (the default without a model), expected (the default with one), mtc, assignment, depth or
    random (``seed``); ``budget`` documents in all, at most
    ``per_topic`` per topic.  Topics (SPEC 10): those the qrels judge and every run retrieved
    (``complete``: every judged topic; ``topics`` to choose).  ``summary``:
    a list that receives one row per pair (its mean range, mean MED, verdict; with a model P(A better),
    the confidence and how it was computed)."""
    import pandas as pd  # only here: the state and the command's rows need no pandas

    if isinstance(runs, Mapping):  # name -> run
        names, runs = [str(name) for name in runs], list(runs.values())
    names = list(names or [None] * len(runs))
    loaded = [as_run(run, f"run {i + 1}", honour_rank=honour_rank, name=name)
              for i, (name, run) in enumerate(zip(names, runs))]
    if len(loaded) < 2:
        raise MedoptError(f"judge-next needs at least two runs, got {len(loaded)}")
    names = run_names(*loaded)
    if len(set(names)) < len(names):
        raise MedoptError(f"a run is given twice: {' '.join(names)}")
    judgments = as_qrels(qrels) if qrels is not None else {}
    common = set.intersection(*(set(run.rankings) for run in loaded))
    if topics is not None and not complete:
        missing = [t for t in read_topic_choice(topics) if t not in common]
        if missing:
            raise MedoptError(f"topic {missing[0]} is not in every run")
    if not common and not complete:
        raise MedoptError("the runs have no topic in common")
    topics, notes = mean_topics(common, judgments, qrels_source(qrels) if qrels is not None else None,
                                complete=complete, chosen=read_topic_choice(topics))
    for note in notes:
        if warn is not None:
            warn(note)
    if policy is None:
        policy = "expected" if model is not None else "lookahead"
    state = Judging(metric, {n: r.rankings for n, r in zip(names, loaded)}, topics, judgments, target=target,
                    max_grade=max_grade, method=method, solver=solver, time_limit=time_limit, model=model,
                    confidence=confidence, draws=draws, policy_draws=policy_draws, seed=seed, warn=warn)
    if summary is not None:
        summary.extend(state.summary())
    return pd.DataFrame(state.select(policy, budget=budget, per_topic=per_topic, seed=seed),
                        columns=list(JUDGE_COLUMNS))
