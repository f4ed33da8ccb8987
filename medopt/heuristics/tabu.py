"""One-flip tabu search for MED-SSP@k and MED-AP@k (a lower bound, not an exact method).

Tan & Clarke approximate MED-SSP (their "MED-MAP") with a tabu search for 0-1
quadratic problems after Beasley (1998).  This is that search: the state is the
binary relevance of the unjudged documents; each iteration evaluates every
one-document flip, takes the best one that is not tabu (a tabu flip is allowed
when it beats the best value found so far: aspiration), even when it worsens the
objective, and forbids flipping that document back for ``tenure`` iterations.
Ties between equally good flips are broken by the seeded random generator.

Objective.  For SSP@k the objective is the direction's difference
``(SP(better) - SP(worse)) / k``.  For AP@k and AP(norm=min)@k we search the true
objective, the ratio ``(SP(better) - SP(worse)) / norm(R)``, directly: a flip
changes R by one, and its new ratio is evaluated exactly.  (Moffat's alternative,
a tabu search on the numerator for each fixed R with swap moves, needs up to 2k
searches per direction; the direct search reached the optimum on every small
random instance in the tests, so it is the one implemented.)

Moves are evaluated with eq. 13 weights: flipping the document at rank i of a list
changes its SP by ``(1 + #relevant above i) / i + sum_{j > i relevant} 1/j``, so
all flips are scored in O(k) per iteration.  Answers are re-scored independently
by :func:`medopt.core.result.certify`.

Reductions (proved for both directions of every case searched): an unjudged
document only in the worse list's top k is never relevant at an optimum (it
raises SP(worse) and R); for SSP one only in the better list's top k is always
relevant (it raises SP(better), and the normaliser k is fixed).

Search plan per direction: one run from the greedy solution (eq. 13, see
``greedy.py``), then ``restarts`` runs from random states; each run makes
``iterations`` moves.
"""

from __future__ import annotations

import random
import time

from ..errors import MedoptError
from ..core.instance import Instance
from ..core.deadlines import OutOfTime, deadline_after, expired, until
from ..core.result import MedResult, certify
from ..core.bounds import trivial_bound
from .greedy import SumOfPrecisions, greedy_path

DEFAULT_ITERATIONS = 1000
DEFAULT_RESTARTS = 1
TIE = 1e-12


def default_tenure(variables: int) -> int:
    return min(10, variables // 4 + 1)


def _integer(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise MedoptError(f"tabu: {name} must be an integer >= {low}, got {value!r}")
    return value


def search_variables(problem: SumOfPrecisions) -> tuple[list, list]:
    """(documents searched, documents fixed relevant) under the reductions above."""
    variables, fixed_on = [], []
    if problem.relevant_grade is None:  # rel above the top grade: nothing can be relevant
        return variables, fixed_on
    for doc in problem.docs:
        in_better, in_worse = problem.position[doc]
        if in_better < 0:
            continue  # only in the worse list: never relevant
        if in_worse < 0 and problem.scaled:
            fixed_on.append(doc)
        else:
            variables.append(doc)
    return variables, fixed_on


def tabu_run(problem: SumOfPrecisions, variables: list, start: list, iterations: int, tenure: int,
             rng: random.Random) -> tuple[float, list]:
    """One tabu search from the relevant set ``start``; returns (best value, its relevant documents)."""
    problem.set(start)
    best_value, best_docs = problem.value(), problem.relevant_docs()
    if not variables or problem.relevant_grade is None:
        return best_value, best_docs
    tabu_until = dict.fromkeys(variables, 0)
    flips = [(doc, *problem.position[doc]) for doc in variables]  # rank -1: not in that list
    on = problem.on
    for iteration in range(1, iterations + 1):
        if expired():  # the time limit: the best state so far stands
            break
        weights_better, weights_worse, numerator = problem.weights()
        weights_better.append(0.0)  # read at rank -1: a document not in the list gains nothing there
        weights_worse.append(0.0)
        count = problem.relevant_count
        # the ratio's denominator after a flip off (count - 1, only when some document is on) or on
        off = problem.normaliser(count - 1) if count > 0 else 0
        onto = problem.normaliser(count + 1)
        admissible, fallback = [], []
        admissible_value = fallback_value = -float("inf")
        for doc, in_better, in_worse in flips:
            change = weights_better[in_better] - weights_worse[in_worse]  # problem.gain
            if on[doc]:
                value = (numerator - change) / off if off > 0 else 0.0  # problem.ratio
            else:
                value = (numerator + change) / onto if onto > 0 else 0.0
            if tabu_until[doc] < iteration or value > best_value + TIE:
                admissible, admissible_value = _keep_best(admissible, admissible_value, doc, value)
            else:
                fallback, fallback_value = _keep_best(fallback, fallback_value, doc, value)
        if admissible:
            moves, value = admissible, admissible_value
        else:  # every flip is tabu and none aspirates: take the best tabu one
            moves, value = fallback, fallback_value
        doc = moves[0] if len(moves) == 1 else rng.choice(moves)
        problem.flip(doc)
        tabu_until[doc] = iteration + tenure
        if value > best_value + TIE:
            best_value, best_docs = problem.value(), problem.relevant_docs()
    return best_value, best_docs


def _keep_best(moves: list, best: float, doc, value: float) -> tuple[list, float]:
    if value > best + TIE:
        return [doc], value
    if value >= best - TIE:
        moves.append(doc)
    return moves, best


def tabu_direction(problem: SumOfPrecisions, *, rng: random.Random, iterations: int, tenure: int | None,
                   restarts: int) -> tuple[float, list, dict]:
    variables, fixed_on = search_variables(problem)
    problem.set(fixed_on)
    _, greedy_docs = greedy_path(problem, candidates=variables + fixed_on)
    starts = [sorted(set(greedy_docs) | set(fixed_on), key=problem.docs.index)]
    for _ in range(restarts):
        starts.append(fixed_on + [d for d in variables if rng.random() < 0.5])
    run_tenure = default_tenure(len(variables)) if tenure is None else tenure
    best_value, best_docs = -float("inf"), []
    for start in starts:
        if expired() and best_value > -float("inf"):
            break
        value, docs = tabu_run(problem, variables, start, iterations, run_tenure, rng)
        if value > best_value:
            best_value, best_docs = value, docs
    return best_value, best_docs, {"variables": len(variables), "fixed_relevant": len(fixed_on),
                                   "tenure": run_tenure, "starts": len(starts)}


def tabu(instance: Instance, *, seed: int = 0, iterations: int = DEFAULT_ITERATIONS, tenure: int | None = None,
         restarts: int = DEFAULT_RESTARTS, time_limit: float | None = None) -> MedResult:
    """Tabu search for MED-SSP@k, MED-AP@k, MED-AP(norm=min)@k (and uncut AP); deterministic for a
    ``seed``.  With ``time_limit`` (seconds) the search stops when it is up and the best
    assignment found so far is the answer (``details["timed_out"]``)."""
    started = time.perf_counter()
    with until(deadline_after(time_limit)):
        return _tabu(instance, started, seed, iterations, tenure, restarts)


def _tabu(instance: Instance, started: float, seed: int, iterations: int, tenure: int | None,
          restarts: int) -> MedResult:
    _integer("seed", seed, -(2 ** 63))
    _integer("iterations", iterations, 1)
    _integer("restarts", restarts, 0)
    if tenure is not None:
        _integer("tenure", tenure, 1)
    rng = random.Random(seed)
    best, details = None, {"seed": seed, "iterations": iterations, "restarts": restarts}
    for direction in ("a", "b"):
        problem = SumOfPrecisions(instance, direction)
        try:
            value, docs, info = tabu_direction(problem, rng=rng, iterations=iterations, tenure=tenure,
                                               restarts=restarts)
        except OutOfTime:  # the time limit struck in the greedy start of this direction
            continue
        details[direction] = info
        if best is None or value > best[0]:
            best = (value, direction, problem.assignment(docs))
    details["timed_out"] = expired()
    if best is None:  # out of time before any search: the all-zero assignment
        best = (None, "a", {d: 0 for d in instance.unjudged})
    value, direction, assignment = best
    return certify(instance, assignment, direction, upper_bound=trivial_bound(instance), status="heuristic",
                   method="tabu", solver=None, started=started, claimed=value, details=details)
