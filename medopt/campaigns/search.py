"""Adversarial certification: search for instances where a heuristic falls short of MED.

Random instances rarely break a good heuristic: Moffat's eq. 13 greedy for AP missed on none of
about 2.5 million random ones, yet a structured scan breaks it with two unjudged documents
(docs/findings.md).  This search looks where heuristics break:

* **structured starts** -- pairs and triples of shared unjudged documents placed closer together in
  one list than in the other (the shape whose interaction term a one-flip rule cannot see),
  near-permutations (a few swaps or one moved block), judged relevant documents outside both lists
  (they raise R), short lists, and plain random instances;
* **local search** from each start -- mutations of ranks (swaps, moves), judgments (judged or not,
  grades) and of the number of relevant documents outside the lists -- keeping a mutation that
  does not lower the heuristic's relative gap 1 - heuristic / MED (plateau moves included: a walk
  on ties is how a search leaves a region where the heuristic is exact);
* a **budget** in instances evaluated or seconds, and a **seed**: the same seed and instance budget
  give the same instances, the same misses and the same files;
* the **lengths** of the generated lists: by default the metric's cutoff (a metric read at depth 8
  is searched with lists of 8, where its misses are: lists longer than the cutoff hide them behind
  ranks the metric never reads), or a sweep of lengths the starts take in turn.

Each point is scored by the heuristic and by brute-force enumeration (kept small enough for it:
at most ``max_unjudged`` unjudged documents).  A point where the heuristic falls short is then
certified like any ``medopt certify`` case: the exact solver must certify the maximum (SPEC 5),
and the miss is saved as a counterexample JSON that replays.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field

from .. import api
from ..errors import MedoptError
from ..heuristics.greedy import SumOfPrecisions, greedy_path
from ..core.instance import build_instance
from ..metrics import parse_metric
from ..core.result import TOLERANCE
from .certify import Case, Heuristic, Settings, certify_case
from .starts import Generator, Point

GENERATORS = ("permuted-pair", "shared-pair", "shared-triple", "near-permutation", "short-lists", "random")
STEPS_PER_START = 40   # local search steps from a start that is (or reaches) a miss
PROBE_STEPS = 2        # from any other start
# starts for heuristics whose misses have a known shape (docs/findings.md); others cycle through all
FAVOURED = {"greedy": ("permuted-pair", "permuted-pair", "permuted-pair", "shared-pair")}
TEMPERATURE = 0.01  # of the annealing on the margin: a step 0.01 worse is taken at first with probability 1/e


@dataclass
class Miss:
    point: Point
    heuristic_value: float
    exact_value: float
    row: dict = field(default_factory=dict)       # certify_case's row (exact solver's verdict)
    counterexample: dict = field(default_factory=dict)

    @property
    def relative_gap(self) -> float:
        return 1.0 - self.heuristic_value / self.exact_value if self.exact_value > 0 else 0.0


@dataclass
class SearchReport:
    metric: str
    heuristic: str
    seed: int
    lengths: tuple = ()               # the lengths of the generated lists, in the order the starts take them
    evaluated: int = 0
    skipped: int = 0                  # points the heuristic or the oracle refused
    found: int = 0                    # distinct points where the heuristic fell short of enumeration
    misses: list = field(default_factory=list)
    seconds: float = 0.0

    def worst(self) -> Miss | None:
        return max(self.misses, key=lambda m: (m.relative_gap, -sum(m.point.size())), default=None)

    def smallest(self) -> Miss | None:
        return min(self.misses, key=lambda m: (m.point.size(), -m.relative_gap), default=None)


# ---------------------------------------------------------------------------
# the search


def two_change_slack(instance, assignment: dict, value: float) -> float:
    """How close the heuristic's answer is to being beaten by changing one or two grades of it: the
    largest |M(A) - M(B)| over the assignments that differ from ``assignment`` in one or two
    documents and do not score the same, minus ``value`` (-1 when every change scores the same).
    Positive: a miss within two changes; the closer to 0 from below, the nearer the point is to one.
    This is what the search climbs on a plateau where the heuristic is still exact (the greedy's
    misses are pairs whose interaction it cannot see)."""
    docs = list(instance.unjudged)
    grades = range(instance.max_grade + 1)
    base = {d: assignment.get(d, 0) for d in docs}
    best = -1.0

    def offer(changed):
        nonlocal best
        reached = max(instance.differences(changed).values())
        if abs(reached - value) > 1e-12:
            best = max(best, reached - value)

    for i, d in enumerate(docs):
        for g in grades:
            if g != base[d]:
                changed = dict(base)
                changed[d] = g
                offer(changed)
                for e in docs[i + 1:]:
                    for h in grades:
                        if h != base[e]:
                            offer({**changed, e: h})
    return best


def greedy_pair_margin(instance, value: float) -> float:
    """The greedy's margin against a pair: where eq. 13's greedy stops, no single document left
    non-relevant raises SP(X) - SP(Y); the margin is the largest change of the answer, over the pairs
    of those documents, when both become relevant, times the new R (pairs that change nothing left out; -1 when every
    pair does).  Positive exactly when such a pair raises the answer: a miss.  Below 0, how far the
    instance is from one; the search climbs it where the greedy is still exact."""
    best = -1.0
    for direction in ("a", "b"):
        problem = SumOfPrecisions(instance, direction)
        if problem.relevant_grade is None:
            continue
        greedy_path(problem)  # leaves the problem at the greedy's last state
        docs = [d for d in problem.docs if not problem.on[d]]
        for i, d in enumerate(docs):
            for e in docs[i + 1:]:
                problem.flip(d)
                problem.flip(e)
                # in numerator units (times the new R): relevant documents outside the lists shrink
                # every change of the ratio, and the search must not climb by adding them
                change = (problem.value() - value) * max(problem.relevant_count, 1)
                problem.flip(d)
                problem.flip(e)
                if abs(change) > 1e-15:
                    best = max(best, change)
    return best


MARGINS = {"greedy": lambda instance, result: greedy_pair_margin(instance, result.value)}
UNCUT_LENGTH = 10  # the lists' length for a metric without a cutoff (RBP, ERR, AP at full depth)
SHORTEST = 5       # the shortest lists every start can make (a shared triple among two judged documents)


def search_lengths(metric, k=None) -> tuple:
    """The lengths of the generated lists: ``k`` (a length or several, each at least SHORTEST) when
    given, else the metric's cutoff (at least SHORTEST; UNCUT_LENGTH for a metric without one)."""
    if k is None:
        cutoff = parse_metric(metric).cutoff
        return (max(SHORTEST, cutoff) if cutoff is not None else UNCUT_LENGTH,)
    lengths = tuple(dict.fromkeys((k,) if isinstance(k, int) else k))
    if not lengths or any(not isinstance(n, int) or n < SHORTEST for n in lengths):
        given = ",".join(map(str, lengths)) or "none"
        raise MedoptError(f"the search's list lengths must be integers of at least {SHORTEST} (got {given})")
    return lengths


def format_lengths(lengths) -> str:
    """``(8,)`` -> ``8``; a run of consecutive lengths as ``5-8``; others comma-separated."""
    lengths = tuple(lengths)
    if len(lengths) > 2 and lengths == tuple(range(lengths[0], lengths[-1] + 1)):
        return f"{lengths[0]}-{lengths[-1]}"
    return ",".join(map(str, lengths))


def objective(scored: tuple) -> float:
    """What the search climbs: 1 + the relative gap at a miss, else the heuristic's margin (<= 0)."""
    relative, gap, margin = scored[:3]
    return 1.0 + relative if gap > 0 else min(margin, 0.0)


def search(metric, heuristic: Heuristic, *, k=None, seed: int = 0, budget: int | None = 2000,
           seconds: float | None = None, max_unjudged: int | None = None, max_grade: int | None = None,
           generators=GENERATORS, settings: Settings = Settings(), keep: int = 50) -> SearchReport:
    """Local search from structured starts for points where ``heuristic`` falls short of MED.

    ``k`` is the generated lists' length, or several lengths the starts take in turn (default: the
    metric's cutoff, search_lengths).  ``budget`` counts points evaluated (heuristic and enumeration),
    ``seconds`` bounds the wall time; the search stops at the first of the two.  Each miss is
    certified with the exact solver (certify_case) and kept with its counterexample; at most ``keep``
    misses are kept, the worst relative gaps first (a miss is only kept when its exact value is
    certified)."""
    lengths = search_lengths(metric, k)
    metric = parse_metric(metric)
    if not heuristic.applies(metric):
        raise MedoptError(f"heuristic {heuristic} does not compute MED for {metric}")
    if budget is None and seconds is None:
        raise MedoptError("the search needs a budget: points (budget) or seconds")
    if max_grade is None:
        max_grade = max(1, metric.p("rel")) if metric.binary else 2
    if max_unjudged is None:
        max_unjudged = 10 if max_grade == 1 else 6
    outside_grade = max(metric.p("rel"), 1) if metric.binary else max_grade
    rng = random.Random(seed)
    makers = [Generator(rng, length, max_grade, max_unjudged) for length in lengths]
    report = SearchReport(str(metric), str(heuristic), seed, lengths)
    started = time.perf_counter()
    found = {}  # point -> Miss (the same point reached twice counts once)

    def exhausted() -> bool:
        return (budget is not None and report.evaluated >= budget) or (
            seconds is not None and time.perf_counter() - started >= seconds)

    def relative(point: Point):
        """(relative gap, gap, slack, heuristic value, MED) of a point; None when a method refuses it."""
        judgments = point.judgments(outside_grade)
        report.evaluated += 1
        try:
            answer = api.med(metric, point.a, point.b, judgments, max_grade=point.max_grade,
                             method=heuristic.name, **heuristic.options)
            oracle = api.med(metric, point.a, point.b, judgments, max_grade=point.max_grade,
                             method="enumerate").value
        except MedoptError:
            report.skipped += 1
            return None
        gap = oracle - answer.value
        gap = gap if gap > TOLERANCE else 0.0  # rounding noise must not outrank the slack
        instance = build_instance(metric, point.a, point.b, judgments, max_grade=point.max_grade)
        margin = MARGINS.get(heuristic.name)
        slack = margin(instance, answer) if margin else two_change_slack(instance, answer.assignment, answer.value)
        return (gap / oracle if oracle > TOLERANCE else 0.0), gap, slack, answer.value, oracle

    order = FAVOURED.get(heuristic.name, tuple(generators)) if generators == GENERATORS else tuple(generators)
    starts = 0
    while not exhausted():
        # every kind of start at one length, then at the next (a mutation keeps the start's length)
        generator = makers[(starts // len(order)) % len(makers)]
        point = generator.start(order[starts % len(order)])
        starts += 1
        current = relative(point)
        if current is None:
            continue
        # a few probing steps around every start; a full local search once a miss is in hand
        steps, step = (STEPS_PER_START if current[1] > TOLERANCE else PROBE_STEPS), 0
        while step < steps and not exhausted():
            if current[1] > TOLERANCE:
                steps = STEPS_PER_START
                if point not in found:
                    found[point] = Miss(point, current[3], current[4])
            candidate = generator.mutate(point)
            scored = relative(candidate)
            step += 1
            if scored is None:
                continue
            # annealing on one number: a miss by its relative gap (above 1), else the margin (<= 0)
            temperature = TEMPERATURE * (1.0 - step / steps) + 1e-9
            loss = objective(current) - objective(scored)
            if loss <= 0 or rng.random() < math.exp(-loss / temperature):
                point, current = candidate, scored
        if current[1] > TOLERANCE and point not in found:
            found[point] = Miss(point, current[3], current[4])
    report.found = len(found)
    report.seconds = time.perf_counter() - started
    ranked = sorted(found.values(), key=lambda m: (-m.relative_gap, m.point.size()))
    smallest = min(found.values(), key=lambda m: (m.point.size(), -m.relative_gap), default=None)
    chosen = ranked[:keep] + ([smallest] if smallest is not None and smallest not in ranked[:keep] else [])
    for number, miss in enumerate(chosen):
        case = Case("A", "B", f"search{seed}-{number}", miss.point.a, miss.point.b,
                    miss.point.judgments(outside_grade), miss.point.max_grade,
                    {"search": {"seed": seed, "lengths": list(lengths), "metric": str(metric),
                               "heuristic": str(heuristic)}})
        rows, counterexamples = certify_case(case, metric, [heuristic], settings)
        if rows and rows[0]["verdict"] in ("miss", "above") and counterexamples:
            miss.row, miss.counterexample = rows[0], counterexamples[0][1]
            report.misses.append(miss)
    return report


SEARCH_COLUMNS = ("heuristic", "metric", "lengths", "seed", "points", "found", "certified_misses", "worst_relative_gap",
                  "worst_heuristic", "worst_exact", "smallest_documents", "smallest_unjudged", "smallest_outside",
                  "seconds")


def summary_row(report: SearchReport) -> dict:
    """One row of ``medopt certify --search``'s table (SEARCH_COLUMNS; lengths: of the lists searched)."""
    worst, smallest = report.worst(), report.smallest()
    documents, unjudged, outside = smallest.point.size() if smallest else ("", "", "")
    return {"heuristic": report.heuristic, "metric": report.metric, "lengths": format_lengths(report.lengths),
            "seed": report.seed,
            "points": report.evaluated, "found": report.found, "certified_misses": len(report.misses),
            "worst_relative_gap": worst.relative_gap if worst else 0.0,
            "worst_heuristic": worst.heuristic_value if worst else "", "worst_exact": worst.exact_value if worst else "",
            "smallest_documents": documents, "smallest_unjudged": unjudged, "smallest_outside": outside,
            "seconds": round(report.seconds, 2)}
