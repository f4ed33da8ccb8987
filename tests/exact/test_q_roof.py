"""The Q-measure boxes' roof dual test (formulations/q_roof.py, exact/lagrangian.py, exact/boxes.py
``BoxRun.roof_test``) against enumeration: the quadratic form is R (difference - lam) on every
assignment of a one-profile box and at least that on a wider one, the Lagrangian bound is at least
every R (difference - lam) in the box, and MED with the test on equals enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import medopt
from medopt.errors import MedoptError
from medopt.exact.lagrangian import Descent, lagrangian_bound, rows_bound
from medopt.formulations import formulation_for
from medopt.core.instance import build_instance
from test_exact_q import (graded_instances, in_box, limits_for, profile_of, random_box, random_instances,
                          roots_and_assignments, shared_rank_instances, small_boxes)


def binary_instances(seed, count):
    """Instances whose boxes are over R alone (one profile grade): binary judgments, or Q(beta=0) with
    graded ones; some with relevance limits."""
    for n, case in enumerate(random_instances(seed=seed, count=count, max_grade=1 + (seed % 2), max_unjudged=6)):
        metric = (f"Q@{case.k}", f"Q(beta=0.5)@{case.k}", f"Q(beta=0)@{case.k}")[n % 3] if case.max_grade == 1 \
            else f"Q(beta=0)@{case.k}"
        limits = () if n % 4 else tuple(lim for lim in limits_for(n // 4, case.judgments)[:1]
                                         if lim.grade <= case.max_grade)
        yield build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, limits=limits)
    for n, case in enumerate(random_instances(seed=seed + 1, count=count // 3, max_grade=2, max_unjudged=5)):
        yield build_instance(f"Q(beta=0)@{case.k}", case.a, case.b, case.judgments, max_grade=2)


def form_value(form, z):
    n, constant, linear, first, second, weights, _ = form
    return constant + float(linear @ z) + float(weights @ (z[first] * z[second]))


def z_of(quadratic, assignment):
    """z[d,g] = [grade(d) >= g] in BoxForm's order."""
    return np.array([float(assignment[d] >= g) for d in quadratic.unjudged for g in range(1, quadratic.grades + 1)])


def instances():
    yield from binary_instances(seed=305, count=30)
    yield from graded_instances(seed=301, count=40)
    yield from shared_rank_instances(seed=302, count=10)
    yield build_instance("Q(beta=1)@4", ["d1", "d2", "d3", "d4"], ["d3", "d5", "d1", "x"], {"x": 3, "d4": 1},
                         max_grade=3)


def test_form_is_the_box_objective_and_the_lagrangian_bounds_it():
    rng = np.random.default_rng(303)
    exact_profiles = boxes = strict = with_row_boxes = 0
    for instance in instances():
        formulation = formulation_for(instance.metric)
        rel = instance.metric.p("rel")
        roots, everything = roots_and_assignments(formulation, instance)
        if not roots:
            continue
        profiles = [profile_of(instance, a) for a in everything]  # each assignment's, read by every box below
        differences = [instance.differences(a) for a in everything]
        for direction in ("a", "b"):
            quadratic = formulation.box_quadratic(instance, direction)
            if quadratic is None:  # nothing can be relevant: no box to test
                continue
            zs = [z_of(quadratic, a) for a in everything]
            for a, z in zip(everything, zs):
                assert quadratic.assignment(z.astype(np.int8)) == a
            for attempt in range(5):
                box = roots[0].box if attempt == 0 else random_box(rng, instance, roots[0])
                if box is None:
                    continue
                if attempt == 4:  # one profile: the box's own
                    inside = [p for p in profiles if in_box(p, box)]
                    profile = inside[int(rng.integers(len(inside)))]
                    box = tuple((g, profile[g], profile[g]) for g, _, _ in box)
                lam = float(rng.uniform(-0.3, 0.8))
                form = quadratic.form(box, lam)
                inside = [i for i, p in enumerate(profiles) if in_box(p, box)]
                assert inside
                one = all(lo == hi for _, lo, hi in box)
                needed = -np.inf
                for i in inside:
                    a = everything[i]
                    target = profiles[i][rel] * (differences[i][direction] - lam)
                    value = form_value(form, zs[i])
                    if one:
                        assert abs(value - target) <= 1e-9, (instance.metric, box, direction, a)
                    else:
                        assert value >= target - 1e-9, (instance.metric, box, direction, a)
                    needed = max(needed, target)
                bound, labels, stopped = lagrangian_bound(form, quadratic.counts(box))
                assert bound >= needed - 1e-9, (instance.metric, box, direction, lam)
                # from any start (a parent's descent: random multipliers, a step size, one that ran out)
                for step in (float(rng.uniform(1e-3, 2.0)), 1e-13, stopped.step):
                    start = Descent(rng.normal(0.0, 0.5, len(box)), step)
                    again, *_ = lagrangian_bound(form, quadratic.counts(box), start=start)
                    assert again >= needed - 1e-9, (instance.metric, box, direction, lam, start)
                # the box's rows (q_rows.py: boxes over R alone) hold at every assignment of the box, and
                # their Lagrangian bounds it
                rows = quadratic.rows.at(box) if quadratic.rows is not None else None
                for i in inside if rows is not None else ():
                    z, a = zs[i], everything[i]
                    values = rows.constant + rows.L @ z + rows.coefficient * z[rows.d_rel] + \
                        rows.S @ (z[form[3]] * z[form[4]])
                    assert (values[rows.active] >= -1e-9).all(), (instance.metric, box, a)
                if rows is not None:
                    with_rows, row_labels, _ = rows_bound(form, rows)
                    assert with_rows >= needed - 1e-9, (instance.metric, box, direction, lam)
                    assert len(row_labels) == form[0]
                    with_row_boxes += 1
                # without the intervals the plain roof dual is a bound too, never below the Lagrangian's
                free, *_ = lagrangian_bound(form, [])
                assert free >= bound - 1e-9
                strict += free > bound + 1e-6
                exact_profiles += one
                boxes += 1
    assert boxes >= 250 and exact_profiles >= 50
    assert strict >= 10, "the multipliers never lowered a bound: the intervals are not used"
    assert with_row_boxes >= 60, with_row_boxes


def test_the_rows_bring_the_roof_dual_to_their_lp():
    """The roof dual of the box's form plus its rows (q_rows.py) times the duals of the LP of the
    products' standard linearisation with those rows is that LP's optimum (LP duality: the roof dual is
    the LP over the products' McCormick rows); rows_bound started there returns it.  So the rows are
    the LP's rows, and where they bind they lower the bound below the LP without them."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, csr_matrix, hstack, vstack

    rng = np.random.default_rng(307)
    lowered = checked = 0
    for instance in instances():
        formulation = formulation_for(instance.metric)
        roots, _ = roots_and_assignments(formulation, instance)
        if not roots or not formulation.is_box(roots[-1]):
            continue
        for direction in ("a", "b"):
            quadratic = formulation.box_quadratic(instance, direction)
            if quadratic is None or quadratic.rows is None:  # rows for boxes over R alone
                continue
            box = random_box(rng, instance, roots[-1]) or roots[-1].box
            form = quadratic.form(box, float(rng.uniform(0.0, 0.6)))
            n, constant, linear, first, second, weights, (imply_from, imply_to) = form
            pairs = len(weights)
            mccormick = []  # y <= z_f, y <= z_s, z_f + z_s - y <= 1; z_i - z_j <= 0 for implications
            for k, (f, s) in enumerate(zip(first.tolist(), second.tolist())):
                mccormick += [([n + k, f], [1, -1], 0), ([n + k, s], [1, -1], 0), ([f, s, n + k], [1, 1, -1], 1)]
            mccormick += [([i, j], [1, -1], 0) for i, j in zip(imply_from.tolist(), imply_to.tolist())]
            rows_r = [r for r, (columns, _, _) in enumerate(mccormick) for _ in columns]
            base = coo_matrix(([v for _, values, _ in mccormick for v in values],
                               (rows_r, [c for columns, _, _ in mccormick for c in columns])),
                              shape=(len(mccormick), n + pairs))
            rows = quadratic.rows.at(box)
            active = np.flatnonzero(rows.active)
            on_z = rows.L + csr_matrix((rows.coefficient, (np.arange(len(rows.active)), rows.d_rel)),
                                       shape=rows.L.shape)
            ours = -hstack([on_z, rows.S]).tocsr()[active]  # constant + L z + S y >= 0, as <=
            objective = -np.concatenate([linear, weights])
            bounds = [(0, 1)] * (n + pairs)
            plain = linprog(objective, A_ub=base, b_ub=[b for *_, b in mccormick], bounds=bounds, method="highs")
            lp = linprog(objective, A_ub=vstack([base, ours]), b_ub=[b for *_, b in mccormick] + list(rows.constant[active]),
                         bounds=bounds, method="highs")
            assert lp.status == 0 and plain.status == 0
            duals = np.zeros(len(rows.active))
            duals[active] = np.maximum(0.0, -lp.ineqlin.marginals[len(mccormick):])
            bound, _, _ = rows_bound(form, rows, floor=np.inf, start=duals)
            assert abs(bound - (constant - lp.fun)) <= 1e-6 * max(1.0, abs(bound)), (instance.metric, box, bound, -lp.fun)
            lowered += (constant - lp.fun) < (constant - plain.fun) - 1e-6
            checked += 1
    assert checked >= 60 and lowered >= 10, (checked, lowered)


def test_a_pair_ranked_both_ways_is_one_product():
    """z[d,rel] z[e,rel] is the same product whichever list ranks d above e, so the form holds it once,
    with the two lists' weights added: its roof dual is then the LP relaxation of the standard
    linearisation with one y per unordered pair (computed here), where two products (one per list,
    the positive one at min(z_d, z_e), the negative one at max(0, z_d + z_e - 1)) let the LP set them
    apart and bound the box far higher (a wide box without judgments: 5.47 against -0.85 for the box LP
    on a DL-HARD Q(beta=1)@100 topic)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    from medopt.solvers.roof_dual import roof_dual_bound

    rng = np.random.default_rng(311)
    checked = 0
    for trial in range(12):
        docs = [f"d{i}" for i in range(7)]
        a = list(rng.permutation(docs))
        b = a[::-1] if trial % 2 == 0 else list(rng.permutation(docs))
        grade = 1 if trial < 6 else 2
        instance = build_instance("Q(beta=1)@7", a, b, {}, max_grade=grade)
        formulation = formulation_for(instance.metric)
        root = formulation.root_boxes(instance)[-1]
        for direction in ("a", "b"):
            quadratic = formulation.box_quadratic(instance, direction)
            n, constant, linear, first, second, weights, implications = quadratic.form(root.box, 0.3)
            rel = [i for i in range(n) if i % quadratic.grades == quadratic.rel - 1]
            unordered = [(min(f, s), max(f, s)) for f, s in zip(first.tolist(), second.tolist()) if f in rel and s in rel]
            duplicated = len(unordered) - len(set(unordered))
            # the LP: max constant + linear x + weights y, y <= x_f, x_s (w > 0), y >= x_f + x_s - 1 (w < 0)
            merged: dict = {}  # one y per unordered pair of variables, whatever the form holds
            for f, s, w in zip(first.tolist(), second.tolist(), weights.tolist()):
                merged[min(f, s), max(f, s)] = merged.get((min(f, s), max(f, s)), 0.0) + w
            pairs, rows, columns, values, upper = len(merged), [], [], [], []
            for k, ((f, s), w) in enumerate(merged.items()):
                for entries, bound in (([(n + k, 1), (f, -1)], 0), ([(n + k, 1), (s, -1)], 0)) if w > 0 else \
                        (([(n + k, -1), (f, 1), (s, 1)], 1),):
                    rows += [len(upper)] * len(entries)
                    columns += [column for column, _ in entries]
                    values += [value for _, value in entries]
                    upper.append(bound)
            for i, j in zip(*implications):  # x_i <= x_j
                rows += [len(upper), len(upper)]
                columns += [i, j]
                values += [1, -1]
                upper.append(0)
            matrix = coo_matrix((values, (rows, columns)), shape=(len(upper), n + pairs))
            lp = linprog(-np.concatenate([linear, list(merged.values())]), A_ub=matrix, b_ub=upper, bounds=(0, 1),
                         method="highs")
            bound, _ = roof_dual_bound(n, constant, linear, first, second, weights, implications)
            assert abs(bound - (constant - lp.fun)) <= 1e-6, (trial, direction, duplicated, bound, constant - lp.fun)
            checked += 1
    assert checked == 24


@pytest.mark.parametrize("row_products, explore, rows_first", [(None, None, False), (0, None, False),
                                                                (None, 1e9, False), (None, None, True)])
def test_med_with_roof_tests_is_enumeration(monkeypatch, row_products, explore, rows_first):
    """The box search with the roof dual tests (the default) against enumeration, ranges included, and
    the tests do run (the log holds their entries); boxes with their rows (formulations/q/rows.py) and, ROW_PRODUCTS
    = 0, without them (boxes over R alone: their LPs as before; graded ones: the intervals' descent
    alone); graded boxes with both tests on every box (EXPLORE huge), and with the rows first."""
    from medopt.exact import boxes
    from medopt.formulations.q import rows as q_rows

    if row_products is not None:
        monkeypatch.setattr(q_rows, "ROW_PRODUCTS", row_products)
    if explore is not None:
        monkeypatch.setattr(boxes, "EXPLORE", explore)
    if rows_first:  # the rows start with a box closed (alone), the descent with none
        original_init = boxes.BoxRun.__init__

        def init(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            self.graded_record = {"intervals": [0.0, 0.0, 0.0], "rows": [1.0, 0.0, 1.0], "weight": 0.0}
        monkeypatch.setattr(boxes.BoxRun, "__init__", init)

    seen = []
    original = boxes.BoxRun.roof_test

    def counting(self, case, inherited, cutoff):
        outcome = original(self, case, inherited, cutoff)
        seen.append(outcome is None)
        return outcome

    boxes.BoxRun.roof_test = counting
    try:
        checked = 0
        for instance in itertools.chain(graded_instances(seed=304, count=24), shared_rank_instances(seed=305, count=6),
                                        binary_instances(seed=306, count=21)):
            kwargs = dict(a=instance.a, b=instance.b, judgments=instance.judgments, max_grade=instance.max_grade,
                          limits=instance.limits)
            metric = str(instance.metric)
            try:
                oracle = medopt.med(metric, **kwargs, method="enumerate")
            except MedoptError:  # no assignment meets the limits
                continue
            ends = medopt.difference_range(metric, **kwargs, method="enumerate")
            with small_boxes(0):
                exact = medopt.med(metric, **kwargs, method="exact", solver="highs")
                found = medopt.difference_range(metric, **kwargs, method="exact", solver="highs")
            assert abs(exact.value - oracle.value) <= 1e-9 and exact.certified, (metric, exact, oracle)
            assert abs(found.low - ends.low) <= 1e-9 and abs(found.high - ends.high) <= 1e-9, (metric, found, ends)
            assert found.low_certified and found.high_certified, (metric, found)
            checked += 1
    finally:
        boxes.BoxRun.roof_test = original
    assert checked >= 45
    assert sum(seen) >= 20, "the roof dual closed or split too few boxes to be tested"


def test_improve_locally_ends_at_a_one_move_optimum():
    """improve_locally: the difference it returns is the evaluator's for the assignment it offers, never
    below the start's, and no single document's other grade beats it (limits kept)."""
    from medopt.exact.common import DirectionResult, improve_locally

    rng = np.random.default_rng(306)
    checked = raised = 0
    for instance in graded_instances(seed=307, count=30):
        if not instance.unjudged:
            continue
        for direction in ("a", "b"):
            start = {d: int(rng.integers(0, instance.max_grade + 1)) for d in instance.unjudged}
            result = DirectionResult()
            value = improve_locally(result, instance, direction, start)
            if not instance.satisfies_limits(start):
                assert value == -np.inf and result.assignment is None
                continue
            assert value >= instance.differences(start)[direction] - 1e-12
            assert result.value == value == instance.differences(result.assignment)[direction]
            assert instance.satisfies_limits(result.assignment)
            for d in instance.unjudged:
                for g in range(instance.max_grade + 1):
                    moved = {**result.assignment, d: g}
                    if instance.satisfies_limits(moved):
                        assert instance.differences(moved)[direction] <= value + 1e-12
            raised += value > instance.differences(start)[direction] + 1e-12
            checked += 1
    assert checked >= 40 and raised >= 10


def test_improve_locally_at_the_deadline_offers_its_best_point(monkeypatch):
    """Stopped by the deadline in mid-pass, improve_locally offers the best point it reached (its value
    the evaluator's) and lets OutOfTime through."""
    import pytest

    from medopt.exact import common
    from medopt.core.deadlines import OutOfTime

    instance = build_instance("Q(beta=1)@6", ["d1", "d2", "d3", "d4", "d5", "d6"], ["d6", "d5", "x", "d1", "d2", "y"],
                              {"x": 2}, max_grade=2)
    calls = []

    def deadline():
        calls.append(1)
        if len(calls) > 4:
            raise OutOfTime

    monkeypatch.setattr(common, "check_time", deadline)
    result = common.DirectionResult()
    start = dict.fromkeys(instance.unjudged, 0)
    with pytest.raises(OutOfTime):
        common.improve_locally(result, instance, "a", start)
    assert result.assignment is not None
    assert result.value == instance.differences(result.assignment)["a"] > instance.differences(start)["a"]


@pytest.mark.parametrize("test", ["rows_bound", "lagrangian_bound"])
def test_graded_tests_start_from_their_parents(monkeypatch, test):
    """The halves of a graded box its tests did not close go on from where the parent's tests ended
    (exact/boxes.py, ``BoxRun.graded_tests``): the rows test from its multipliers, the intervals' descent
    from its multipliers and step size (lagrangian.Descent), not from scratch; the answers stay those of
    enumeration (test_med_with_roof_tests_is_enumeration runs the same path)."""
    from medopt.exact import boxes

    monkeypatch.setattr(boxes, "EXPLORE", 1e9)  # both tests on every graded box
    returned, inherited = [], []
    original = getattr(boxes, test)

    def recording(form, rows, **kwargs):
        start = kwargs.get("start")
        inherited.append(start is not None and any(start is stopped for stopped in returned))
        outcome = original(form, rows, **kwargs)
        returned.append(outcome[2])
        return outcome

    monkeypatch.setattr(boxes, test, recording)
    for instance in graded_instances(seed=304, count=24):
        kwargs = dict(a=instance.a, b=instance.b, judgments=instance.judgments, max_grade=instance.max_grade,
                      limits=instance.limits)
        metric = str(instance.metric)
        try:
            oracle = medopt.med(metric, **kwargs, method="enumerate")
        except MedoptError:
            continue
        with small_boxes(0):
            exact = medopt.med(metric, **kwargs, method="exact", solver="highs")
        assert abs(exact.value - oracle.value) <= 1e-9 and exact.certified, (metric, exact, oracle)
    assert sum(inherited) >= 10, (sum(inherited), len(inherited))


def test_the_descent_goes_on_with_its_start_step():
    """lagrangian_bound takes its first step size from ``start`` (a parent box's Descent): from the same
    multipliers, a tiny carried step and the fresh one end at different multipliers on some box."""
    rng = np.random.default_rng(306)
    differ = tried = 0
    for instance in graded_instances(seed=307, count=30):
        formulation = formulation_for(instance.metric)
        roots, _ = roots_and_assignments(formulation, instance)
        quadratic = formulation.box_quadratic(instance, "a") if roots else None
        if quadratic is None:
            continue
        box = roots[0].box
        form, counts = quadratic.form(box, float(rng.uniform(0.0, 0.5))), quadratic.counts(box)
        zero = np.zeros(len(box))
        fresh = lagrangian_bound(form, counts, floor=-np.inf)[2]
        carried = lagrangian_bound(form, counts, floor=-np.inf, start=Descent(zero, 1e-6))[2]
        tried += 1
        differ += not np.allclose(fresh.nu, carried.nu)
    assert tried >= 10 and differ >= 3, (tried, differ)


def test_the_spread_correction_is_a_tighter_bound():
    """formulations/q_spread.py: on every assignment of a box (enumerated), the corrected objective lies
    between R (difference - lam) and the plain one (every kappa >= 0, on rows that hold on the box), is
    below the plain one somewhere, and its roof dual bound is still above every R (difference - lam);
    a one-profile box is not changed (its D_i do not spread)."""
    rng = np.random.default_rng(309)
    below = boxes = 0
    cases = itertools.chain(random_instances(seed=310, count=16, max_grade=2, max_unjudged=7),
                            random_instances(seed=311, count=12, max_grade=3, max_unjudged=5))
    for n, case in enumerate(cases):
        metric = (f"Q@{case.k}", f"Q(beta=0.5)@{case.k}", f"Q(rel=2)@{case.k}", f"Q(beta=2.0)@{case.k}")[n % 4]
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade)
        formulation = formulation_for(instance.metric)
        roots, everything = roots_and_assignments(formulation, instance)
        if not roots:
            continue
        rel = instance.metric.p("rel")
        profiles = [profile_of(instance, a) for a in everything]
        for direction in ("a", "b"):
            quadratic = formulation.box_quadratic(instance, direction)
            if quadratic is None or quadratic.spread is None:
                continue
            zs = [z_of(quadratic, a) for a in everything]
            for attempt in range(4):
                box = roots[0].box if attempt == 0 else random_box(rng, instance, roots[0])
                if box is None:
                    continue
                lam = float(rng.uniform(-0.3, 0.8))
                kappa = quadratic.spread.kappa(box)
                assert (kappa >= 0).all() and (kappa[~quadratic.rows.parts(box)[2]] == 0).all()
                corrected, plain = quadratic.form(box, lam), quadratic.form(box, lam, tight=False)
                inside = [i for i, p in enumerate(profiles) if in_box(p, box)]
                needed = -np.inf
                for i in inside:
                    target = profiles[i][rel] * (instance.differences(everything[i])[direction] - lam)
                    value, before = form_value(corrected, zs[i]), form_value(plain, zs[i])
                    assert target - 1e-9 <= value <= before + 1e-9, (metric, box, direction, everything[i])
                    below += value < before - 1e-9
                    needed = max(needed, target)
                if all(lo == hi for _, lo, hi in box):
                    assert not kappa.any()
                bound, *_ = lagrangian_bound(quadratic.without_rows(corrected), quadratic.counts(box))
                assert bound >= needed - 1e-9, (metric, box, direction, lam)
                boxes += 1
    assert boxes >= 100, boxes
    assert below >= 200, below
