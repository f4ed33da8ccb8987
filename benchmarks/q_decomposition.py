"""A Q-measure box bound in which the favoured list's ideal gains are not fixed per box, measured against
the box search's own tests (issue 57 item 1, an experiment: the bound is not used by medopt).

The box search (exact/boxes.py) bounds a box of profiles by F(lam) with the favoured list X's numerators
N_i divided by D_i at the box's smallest counts and the other list Y's by D_i at its largest
(formulations/q/measure.py).  Here, instead: the grades of the unjudged documents are copied into an X
part and a Y part (a Lagrangian decomposition: multipliers u on the one-hot grades of the documents of
both lists, and mu >= 0 on the box's count rows), and each part is maximised exactly along its list by
a dynamic programme over (beta cg(i), count(i)), with X's rank term N_i / max(D_lo,i, beta cg(i) + i),
valid because cg*(i) >= cg(i) (the top i of X are i documents of the collection) and D_i >= D_lo,i, and
Y's rank term -N_i / D_hi,i.  Any (u, mu) gives an upper bound on F(lam) over the box (weak duality);
the multipliers are found by a Polyak subgradient from 0.  It needs integral beta u(g) (the DP's states).

For one instance the box search runs with its time limit, every box its roof dual tested is recorded
(its bound, whether that closed it), and the first --boxes of them are bounded here too:

    python benchmarks/q_decomposition.py --grades 4 --topic 87452 --pair 3 --boxes 40 --steps 40
"""

from __future__ import annotations

import json
import math
import statistics
import time

import numba
import numpy as np

import harness
import medopt
from harness import DL_HARD, dl_hard_runs, select_pairs
from medopt.core.instance import build_instance, judged_count
from medopt.exact import boxes as box_search
from medopt.formulations.q.profiles import depth, ideal_gains
from medopt.io.trec import read_qrels, read_run
from medopt.kernels.bounds_by_count import shared_ranks

NONE = -1e300


@numba.njit(cache=True)
def list_max(kind, doc, judged_cg, judged_count_, counted, denominator, tight, sign, linear, cg_step, count_step,
             cg_max, count_max):  # pragma: no cover - compiled
    """max over the grades of one list's unjudged documents of sign sum_i N_i / d_i + sum_d linear[d, grade(d)],
    d_i = max(denominator_i, cg(i) + i) when ``tight`` else denominator_i, and a maximiser (grade per rank)."""
    ranks, grades = kind.shape[0], linear.shape[1]
    best = np.full((cg_max + 1, count_max + 1), NONE)
    best[0, 0] = 0.0
    choice = np.zeros((ranks, cg_max + 1, count_max + 1), dtype=np.int8)
    for i in range(ranks):
        after = np.full((cg_max + 1, count_max + 1), NONE)
        options = 1 if kind[i] == 0 else grades
        for c in range(cg_max + 1):
            for n in range(count_max + 1):
                if best[c, n] <= NONE:
                    continue
                for g in range(options):
                    step_cg = judged_cg[i] if kind[i] == 0 else cg_step[g]
                    step_count = judged_count_[i] if kind[i] == 0 else count_step[g]
                    c2, n2 = c + step_cg, n + step_count
                    value = best[c, n] + (0.0 if kind[i] == 0 else linear[doc[i], g])
                    if counted[i] and step_count > 0:
                        d = denominator[i]
                        if tight and c2 + i + 1 > d:
                            d = c2 + i + 1
                        value += sign * (c2 + n2) / d
                    if value > after[c2, n2]:
                        after[c2, n2] = value
                        choice[i, c2, n2] = g
        best = after
    top, c, n = NONE, 0, 0
    for c2 in range(cg_max + 1):
        for n2 in range(count_max + 1):
            if best[c2, n2] > top:
                top, c, n = best[c2, n2], c2, n2
    picked = np.zeros(ranks, dtype=np.int64)
    for i in range(ranks - 1, -1, -1):
        g = choice[i, c, n]
        picked[i] = g
        c -= judged_cg[i] if kind[i] == 0 else cg_step[g]
        n -= judged_count_[i] if kind[i] == 0 else count_step[g]
    return top, picked


class Decomposition:
    """The bound of the module docstring for the boxes of one direction of an instance."""

    def __init__(self, instance, direction):
        metric, grading, top = instance.metric, instance.grading, instance.max_grade
        self.instance, self.rel, self.beta, self.top = instance, metric.p("rel"), metric.p("beta"), top
        self.gain = {g: metric.gain(g, grading) for g in range(top + 1)}
        steps = [self.beta * self.gain[g] for g in range(top + 1)]
        if any(abs(s - round(s)) > 1e-12 for s in steps):
            raise SystemExit("the decomposition needs integral beta * gain(g)")
        self.cg_step = np.array([round(s) for s in steps], dtype=np.int64)
        self.count_step = np.array([int(g >= self.rel) for g in range(top + 1)], dtype=np.int64)
        self.unjudged = list(instance.unjudged)
        index = {d: i for i, d in enumerate(self.unjudged)}
        better, other = (instance.a, instance.b) if direction == "a" else (instance.b, instance.a)
        shared = shared_ranks(instance)
        self.parts = []
        for ranking in (better, other):
            judged = [d in instance.judgments for d in ranking]
            caps = [grading.cap(instance.judgments[d]) if j else 0 for d, j in zip(ranking, judged)]
            self.parts.append((np.array([0 if j else 1 for j in judged], dtype=np.int64),
                               np.array([index.get(d, -1) for d in ranking], dtype=np.int64),
                               np.array([round(self.beta * metric.gain(g, grading)) for g in caps], dtype=np.int64),
                               np.array([int(j and metric.is_relevant(instance.judgments[d]))
                                         for d, j in zip(ranking, judged)], dtype=np.int64),
                               np.array([i + 1 not in shared for i in range(len(ranking))], dtype=np.bool_)))
        in_better, in_other = set(better), set(other)
        self.both = np.array([d in in_better and d in in_other for d in self.unjudged])
        self.other_only = np.array([d in in_other and d not in in_better for d in self.unjudged])
        self.depth = depth(instance)
        self.cg_max, self.count_max = int(self.cg_step.max()) * self.depth, self.depth
        self.judged = {g: judged_count(instance, g) for g in range(1, top + 1)}

    def bound(self, box, lam: float, steps: int) -> float:
        """An upper bound on F(lam) over ``box`` (the best of ``steps`` subgradient steps)."""
        ranks = np.arange(1, self.depth + 1)
        low = self.beta * np.array(ideal_gains(self.instance, self.gain, {g: lo for g, lo, _ in box})) + ranks
        high = self.beta * np.array(ideal_gains(self.instance, self.gain, {g: hi for g, _, hi in box})) + ranks
        rows = [(g, lo, hi if (g == self.rel or hi < self.depth) else None) for g, lo, hi in box]
        n, grades = len(self.unjudged), self.top + 1
        u, mu_low, mu_high = np.zeros((n, grades)), np.zeros(len(rows)), np.zeros(len(rows))
        best, target = math.inf, None
        for _ in range(steps):
            linear, constant = np.zeros((n, grades)), -lam * self.judged[self.rel]
            linear[:, self.rel:] -= lam
            for r, (g, lo, hi) in enumerate(rows):
                linear[:, g:] += mu_low[r] - (mu_high[r] if hi is not None else 0.0)
                constant += mu_low[r] * (self.judged[g] - lo) + (mu_high[r] * (hi - self.judged[g]) if hi is not None else 0.0)
            mine = linear * (~self.other_only)[:, None] + u * self.both[:, None]
            theirs = linear * self.other_only[:, None] - u * self.both[:, None]
            values, points = [], []
            for part, weights, denominator, tight, sign in ((self.parts[0], mine, low, True, 1.0),
                                                            (self.parts[1], theirs, high, False, -1.0)):
                value, picked = list_max(*part, denominator[:len(part[0])], tight, sign, weights, self.cg_step,
                                         self.count_step, self.cg_max, self.count_max)
                grade = np.zeros(n, dtype=np.int64)
                grade[part[1][part[0] == 1]] = picked[part[0] == 1]
                values.append(value)
                points.append(grade)
            value = values[0] + values[1] + constant
            best = min(best, value)
            together = np.where(self.other_only, points[1], points[0])
            slope_u = np.zeros((n, grades))
            shared = np.flatnonzero(self.both)
            np.add.at(slope_u, (shared, points[0][shared]), 1.0)
            np.add.at(slope_u, (shared, points[1][shared]), -1.0)
            slope_u[:, 0] = 0.0
            counts = [self.judged[g] + int((together >= g).sum()) for g, _, _ in rows]
            slope_low = np.array([c - lo for c, (_, lo, _) in zip(counts, rows)], dtype=float)
            slope_high = np.array([(hi - c) if hi is not None else 0.0 for c, (_, _, hi) in zip(counts, rows)])
            slope_low = np.where((mu_low > 0) | (slope_low < 0), slope_low, 0.0)
            slope_high = np.where((mu_high > 0) | (slope_high < 0), slope_high, 0.0)
            norm = float((slope_u ** 2).sum() + (slope_low ** 2).sum() + (slope_high ** 2).sum())
            if norm == 0 or best <= 0:
                break
            target = (min(0.0, value) - 0.05 * abs(value)) if target is None else target
            if value - target < 1e-9:
                target = best - 0.05 * abs(best)
            t = (value - target) / norm
            u -= t * slope_u
            mu_low, mu_high = np.maximum(0.0, mu_low - t * slope_low), np.maximum(0.0, mu_high - t * slope_high)
        return best


def recorded_boxes(metric, a, b, judged, grades, time_limit: float) -> tuple:
    """(medopt.med's exact result, [(direction, box case, lam, its roof-dual bound, closed by it)] for every
    box the box search tested by its roof dual within ``time_limit``)."""
    boxes, original = [], box_search.BoxRun.roof_test

    def recording(run, case, inherited, cutoff):
        before = len(run.result.log)
        outcome = original(run, case, inherited, cutoff)
        if len(run.result.log) > before:
            bound = run.result.log[-1][2]
            boxes.append((run.direction, case, cutoff, bound, outcome is None and bound <= cutoff + 1e-9))
        return outcome

    box_search.BoxRun.roof_test = recording
    try:
        result = medopt.med(metric, a, b, judged, method="exact", max_grade=grades, time_limit=time_limit)
    finally:
        box_search.BoxRun.roof_test = original
    return result, boxes


def main(argv=None):
    parser = harness.parser(__doc__, data=DL_HARD, log="benchmarks/results/q_decomposition.jsonl", fresh=True)
    parser.add_argument("--grades", type=int, choices=(3, 4), default=4,
                        help="3: the DL-HARD qrels; 4: graded_q.py's (half of each topic's threes raised to 4)")
    parser.add_argument("--topic", default="87452")
    parser.add_argument("--pair", type=int, default=0, help="which of exact_depth's seeded pairs (0-9)")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--boxes", type=int, default=40, help="the first boxes tested, bounded here too")
    parser.add_argument("--steps", type=int, default=40, help="subgradient steps per box")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args(argv)
    qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    if args.grades == 4:
        from graded_q import raised_qrels  # here: the G = 4 qrels of the graded set (a sibling script)

        qrels = raised_qrels(qrels)
    first, second = select_pairs(dl_hard_runs(args.data), 10)[args.pair]
    a, b = (list(read_run(path).rankings[args.topic])[: args.k] for path in (first, second))
    metric, judged = f"Q(beta=1)@{args.k}", qrels.get(args.topic, {})
    instance = build_instance(metric, a, b, judged, max_grade=args.grades)
    started = time.perf_counter()
    result, boxes = recorded_boxes(metric, a, b, judged, args.grades, args.time_limit)
    searched = time.perf_counter() - started
    bounds = {direction: Decomposition(instance, direction) for direction in "ab"}
    log = harness.Log(args.log, fresh=args.fresh)
    rows, seconds = [], []
    for direction, case, lam, theirs, closed in boxes[: args.boxes]:
        started = time.perf_counter()
        mine = lam + max(bounds[direction].bound(case.box, lam, args.steps), 0.0) / case.denominator
        seconds.append(time.perf_counter() - started)
        rows.append(dict(key=f"{first.stem}|{second.stem}|{args.topic}|G{args.grades}|{direction}|{case.label}",
                         box=case.label, direction=direction, lam=lam, roof_dual=float(theirs), roof_dual_closed=bool(closed),
                         decomposition=float(mine), decomposition_closed=bool(mine <= lam + 1e-9), seconds=seconds[-1],
                         steps=args.steps))
        log.write(rows[-1])
    print(f"Q(beta=1)@{args.k}, G = {args.grades}, topic {args.topic}, {first.stem} / {second.stem}: the box search "
          f"{'certified' if result.certified else 'open'} in {searched:.1f} s with {len(boxes)} roof-dual box tests")
    print(harness.text_table(
        ["boxes", "closed: roof dual", "closed: decomposition", "decomposition lower", "median excess ratio",
         "median s per box"],
        [[len(rows), sum(r["roof_dual_closed"] for r in rows), sum(r["decomposition_closed"] for r in rows),
          sum(r["decomposition"] < r["roof_dual"] - 1e-9 for r in rows),
          f"{statistics.median((r['decomposition'] - r['lam']) / max(r['roof_dual'] - r['lam'], 1e-12) for r in rows):.2f}"
          if rows else "-", f"{statistics.median(seconds):.3f}" if seconds else "-"]]))
    print(json.dumps(dict(certified=result.certified, value=result.value, bound=result.upper_bound)))


if __name__ == "__main__":
    main()
