"""Exact MED for the Q-measure (profile enumeration, branch and bound over profile boxes)
against brute-force enumeration.

Every instance is solved with both backends; instances are kept small (few
unjudged documents) because each profile case is one MILP per direction.  The box
relaxation is pinned by property tests: splitting partitions the reachable profiles,
a one-profile box is that profile's case, and a box's test model F(lam) is at least
R (difference - lam) for every assignment whose profile lies in the box.
"""

import itertools
import math
from contextlib import contextmanager

import numpy as np
import pytest

import medopt
from medopt.errors import MedoptError
from medopt.formulations import formulation_for
from medopt.core.instance import judged_count
from medopt.formulations.q import boxes as q_boxes
from medopt.formulations.q.boxes import ProfileBoxes
from medopt.formulations.q.profiles import QBox, QProfile, box_case, depth, profile_grades, tighten
from medopt.kernels.bounds_by_count import shared_ranks
from medopt.kernels.q_enumeration import chain_rows
from medopt.core.instance import RelevanceLimit, build_instance
from medopt.synthetic.random_instances import random_instances
from medopt.solvers.backends import replace_integer, solve

SOLVERS = ("highs", "cpsat")
GAINS = {0: 0.0, 1: 0.25, 2: 0.75}


@contextmanager
def small_boxes(limit):
    """Boxes of at most ``limit`` assignments settled by evaluating them (0: every box goes to a model)."""
    saved = q_boxes.SMALL_BOX
    q_boxes.SMALL_BOX = limit
    try:
        yield
    finally:
        q_boxes.SMALL_BOX = saved


def check(metric, checked, **kwargs):
    """Exact equals enumeration (or both find no assignment) for both solvers, with the models alone
    and with small boxes evaluated (at these sizes most boxes are small)."""
    try:
        oracle = medopt.med(metric, **kwargs, method="enumerate")
    except MedoptError:
        oracle = None
    for solver, limit in itertools.product(SOLVERS, (0, q_boxes.SMALL_BOX)):
        with small_boxes(limit):
            if oracle is None:
                with pytest.raises(MedoptError):
                    medopt.med(metric, **kwargs, method="exact", solver=solver)
                continue
            exact = medopt.med(metric, **kwargs, method="exact", solver=solver)
        assert abs(exact.value - oracle.value) <= 1e-9, (metric, solver, limit, kwargs, exact, oracle)
        assert exact.certified, (metric, solver, limit, kwargs, exact)
    checked.append(metric)


def test_binary_judgments():
    checked = []
    for n, case in enumerate(random_instances(seed=101, count=146, max_grade=1, max_unjudged=4)):
        metric = (f"Q@{case.k}", f"Q(beta=0.5)@{case.k}")[n % 2]
        check(metric, checked, **case.as_kwargs())
    assert len(checked) == 146


@pytest.mark.slow
def test_graded_judgments():
    checked = []
    for n, case in enumerate(random_instances(seed=102, count=64, max_grade=2, max_unjudged=3)):
        metric = (f"Q@{case.k}", f"Q(rel=2)@{case.k}", f"Q(beta=0.5)@{case.k}", f"Q(beta=2.0,rel=2)@{case.k}")[n % 4]
        gains = GAINS if n % 3 == 2 else None
        check(metric, checked, **case.as_kwargs(), gains=gains)
    assert len(checked) == 64


def test_without_cutoff():
    checked = []
    for n, case in enumerate(random_instances(seed=103, count=50, max_unjudged=3)):
        kwargs = case.as_kwargs() | {"a": case.a[: case.k], "b": case.b[: case.k]}  # bound the unjudged docs
        check(("Q", "Q(beta=0.5)")[n % 2], checked, **kwargs)
    assert len(checked) == 50


def limits_for(n, judgments):
    """Side constraints relative to the judged counts J_g, so that most bind and few are infeasible."""
    j1, j2 = (sum(1 for g in judgments.values() if g >= grade) for grade in (1, 2))
    return [
        [RelevanceLimit(grade=1, high=j1 + 1)],
        [RelevanceLimit(grade=1, high=j1 + 2)],
        [RelevanceLimit(grade=1, low=j1 + 2)],
        [RelevanceLimit(grade=2, high=j2)],  # no unjudged document of grade 2 (a constant when G = 1)
        [RelevanceLimit(grade=1, low=j1 + 1, high=j1 + 3), RelevanceLimit(grade=2, low=j2 + 1)],
        [RelevanceLimit(grade=3, high=0)],  # above G: a constant count
    ][n % 6]


def test_relevance_limits():
    checked = []
    cases = list(random_instances(seed=104, count=25, max_grade=1, max_unjudged=4)) + list(
        random_instances(seed=105, count=25, max_grade=2, max_unjudged=3))
    for n, case in enumerate(cases):
        metric = (f"Q@{case.k}", f"Q(rel=2)@{case.k}" if case.max_grade == 2 else "Q")[n % 2]
        check(metric, checked, **case.as_kwargs(), limits=limits_for(n, case.judgments))
    assert len(checked) == 50
    a, b = ["d1", "d2", "d3"], ["d3", "d4", "d1"]
    with pytest.raises(MedoptError):  # infeasible limits: every case is skipped or infeasible
        medopt.med("Q@3", a, b, {"x": 1}, limits=[RelevanceLimit(grade=1, high=0)], method="exact")
    check("Q@3", checked, a=a, b=b, judgments={"x": 1}, limits=[RelevanceLimit(grade=1, high=1)])  # R = 1 only


def test_edge_cases():
    checked = []
    a, b = ["d1", "d2", "d3"], ["d3", "d4", "d1"]
    check("Q@3", checked, a=a, b=b, judgments={"d1": 1, "d2": 0, "d3": 1, "d4": 0})       # nothing unjudged
    check("Q@3", checked, a=a, b=b, judgments={})                                          # nothing judged
    check("Q(rel=3)@3", checked, a=a, b=b, judgments={"d1": 2}, max_grade=2)               # R = 0 always
    check("Q@3", checked, a=a, b=b, judgments={"d1": 0, "x": 0})                          # R = 0 reachable
    check("Q@5", checked, a=a, b=[], judgments={"d2": 1})                                  # one empty list
    check("Q@4", checked, a=a, b=b, judgments={"d4": 2, "x": 2}, max_grade=2, pad="free")  # padded to k
    check("Q@3", checked, a=a, b=b, judgments={"d2": -1, "x": 1})                          # negative grade
    check("Q@3", checked, a=a, b=b, judgments=dict.fromkeys(a + b, 0))                     # R = 0, nothing unjudged
    assert len(checked) == 8


def test_seed_at_the_trivial_bound_needs_no_solve():
    """d1 (A's top, absent from B) alone relevant: R = 1, Q(A) = 1, Q(B) = 0.  A prefix seed finds
    it, so no model is solved; the oracle agrees.  With d1 judged 0 the seeds cannot reach 1."""
    a, b = ["d1", "d2", "d3"], ["d2", "d3", "d4"]
    assert medopt.med("Q@3", a, b, {}, method="enumerate").value == 1.0
    for solver in SOLVERS:
        result = medopt.med("Q@3", a, b, {}, method="exact", solver=solver)
        assert result.value == 1.0 and result.certified and result.details["solves"] == 0
        assert result.assignment["d1"] == 1
        checked = []
        check("Q@3", checked, a=a, b=b, judgments={"d1": 0})
        with small_boxes(0):
            assert medopt.med("Q@3", a, b, {"d1": 0}, method="exact", solver=solver).details["solves"] > 0


def test_cases_and_model_structure():
    instance = build_instance("Q@3", ["d1", "d2", "d3"], ["d3", "d2", "d1"], {}, max_grade=1)
    formulation = formulation_for(instance.metric)
    assert formulation.strategies(instance) == ("enumerate", "boxes")
    cases = list(formulation.cases(instance))
    assert [c.r for c in cases] == [0, 1, 2, 3]  # G = 1: one case per R
    model = formulation.build(instance, "a", case=cases[2])
    assert len(model.y) == 3  # G = 1: the reversed list reuses A's three pair products
    graded = build_instance("Q@3", ["d1", "d2", "d3"], ["d3", "d2", "d1"], {"x": 2}, max_grade=2)
    profiles = [c.counts for c in formulation_for(graded.metric).cases(graded)]
    # C_1 in 1..4 (R, exact), C_2 in 1..3 capped at L = 3, U_2 <= U_1: 4 + 3 + 2 = 9 reachable profiles
    assert len(profiles) == 9 and len(set(profiles)) == 9


def test_enumerate_strategy_still_exact():
    checked = []
    for n, case in enumerate(random_instances(seed=106, count=12, max_grade=2, max_unjudged=3)):
        metric = (f"Q@{case.k}", f"Q(beta=0.5,rel=2)@{case.k}")[n % 2]
        for solver in SOLVERS:
            oracle = medopt.med(metric, **case.as_kwargs(), method="enumerate")
            exact = medopt.med(metric, **case.as_kwargs(), method="exact", solver=solver, strategy="enumerate")
            assert abs(exact.value - oracle.value) <= 1e-9 and exact.certified
        checked.append(metric)
    assert len(checked) == 12


# -- the box relaxation ------------------------------------------------------------------------

def profile_of(instance, assignment):
    """(g, min(C_g, L)) per profile grade (C_rel itself for rel) of a full assignment."""
    rel, cap = instance.metric.p("rel"), depth(instance)
    counts = {}
    for g in profile_grades(instance):
        c = judged_count(instance, g) + sum(1 for d in instance.unjudged if assignment[d] >= g)
        counts[g] = c if g == rel else min(c, cap)
    return counts


def in_box(profile, box):
    return all(lo <= profile[g] <= hi for g, lo, hi in box)


def leaves(formulation, instance, case):
    """Every one-profile case reached by splitting ``case`` down to single profiles."""
    if not formulation.is_box(case):
        return [case]
    return [leaf for child in formulation.split(instance, case) for leaf in leaves(formulation, instance, child)]


def random_box(rng, instance, root):
    """A random sub-box of the root box (tightened; None when it holds no reachable profile)."""
    box = []
    for g, lo, hi in root.box:
        a, b = sorted(int(v) for v in rng.integers(lo, hi + 1, size=2))
        box.append((g, a, b))
    return tighten(instance, tuple(box))


def roots_and_assignments(formulation, instance):
    """(the root boxes of several profiles, the whole root box not cut at its small part of R; every
    assignment of the unjudged documents, limits or not)."""
    with small_boxes(0):
        roots = [c for c in formulation.root_boxes(instance) if isinstance(c, QBox)]
    docs = instance.unjudged
    return roots, [dict(zip(docs, grades)) for grades in
                   itertools.product(range(instance.max_grade + 1), repeat=len(docs))]


def graded_instances(seed, count):
    """Graded instances (G = 2 or 3 with gain maps), partial judgments, some with relevance limits."""
    cases = itertools.chain(random_instances(seed=seed, count=count - count // 2, max_grade=2, max_unjudged=4),
                            random_instances(seed=seed + 1, count=count // 2, max_grade=3, max_unjudged=3))
    for n, case in enumerate(cases):
        metric = (f"Q@{case.k}", f"Q(beta=0.5)@{case.k}", f"Q(rel=2)@{case.k}", f"Q(beta=2.0)@{case.k}")[n % 4]
        limits = () if n % 3 else limits_for(n // 3, case.judgments)[:1]
        limits = tuple(lim for lim in limits if lim.grade <= case.max_grade)
        yield build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade,
                             gains=GAINS if n % 5 == 4 and case.max_grade == 2 else None, limits=limits)


def shared_rank_instances(seed, count):
    """Graded instances whose B is A with two neighbours swapped and its last document replaced,
    so that many ranks are shared (same document, same set above: shared_ranks)."""
    rng = np.random.default_rng(seed)
    for instance in graded_instances(seed, count):
        a = list(instance.a) + [f"n{j}" for j in range(max(0, 4 - len(instance.a)))]
        b = a[:]
        i = int(rng.integers(0, len(b) - 2))  # rank 1 (i > 0) or rank 3, not the last (i = 0), stays shared
        b[i], b[i + 1] = b[i + 1], b[i]
        b[-1] = "fresh"
        yield build_instance(str(instance.metric), a, b, instance.judgments, max_grade=instance.max_grade,
                             limits=instance.limits)


@pytest.mark.slow
def test_shared_ranks():
    instance = build_instance("Q@5", ["d1", "d2", "d3", "d4", "d5"], ["d1", "d3", "d2", "d4", "x"], {})
    assert shared_ranks(instance) == {1, 4}
    checked = []
    for instance in shared_rank_instances(seed=111, count=12):
        assert shared_ranks(instance)
        check(str(instance.metric), checked, a=instance.a, b=instance.b, judgments=instance.judgments,
              max_grade=instance.max_grade, limits=instance.limits)
    assert len(checked) == 12


def test_splitting_partitions_the_reachable_profiles():
    """Root boxes split down to single profiles give every case of cases() exactly once, as the same Case."""
    checked = 0
    for instance in graded_instances(seed=107, count=40):
        formulation = formulation_for(instance.metric)
        cases = list(formulation.cases(instance))
        found = [leaf for root in formulation.root_boxes(instance) for leaf in leaves(formulation, instance, root)]
        assert sorted(c.label for c in found) == sorted(c.label for c in cases), instance.metric
        assert {c.label: c for c in found} == {c.label: c for c in cases}  # the same fields: the same model
        checked += 1
    assert checked == 40


def test_singleton_box_is_the_case_model():
    instance = build_instance("Q(beta=1)@4", ["d1", "d2", "d3", "d4"], ["d3", "d5", "d1", "x"], {"x": 3, "d4": 1},
                              max_grade=3)
    formulation = formulation_for(instance.metric)
    for case in formulation.cases(instance):
        if case.r == 0:
            continue
        box = tuple((g, v, v) for g, v, _ in sorted(case.counts))
        same = box_case(instance, tighten(instance, box))
        assert same == case
        assert str(formulation.build(instance, "a", case=same).objective.expr) == \
            str(formulation.build(instance, "a", case=case).objective.expr)


@pytest.mark.parametrize("solver", SOLVERS)
def test_box_model_bounds_every_assignment_of_the_box(solver):
    """F(lam) >= R (difference - lam) for every assignment whose profile lies in the box (both directions),
    and the bound the driver derives, lam + max(F, 0) / R_lo, is >= every such difference."""
    rng = np.random.default_rng(108)
    checked = 0
    for instance in itertools.chain(graded_instances(seed=108, count=30), shared_rank_instances(seed=112, count=10)):
        formulation = formulation_for(instance.metric)
        roots, assignments = roots_and_assignments(formulation, instance)
        if not roots:
            continue
        assignments = [a for a in assignments if instance.satisfies_limits(a)]
        for _ in range(4):
            box = random_box(rng, instance, roots[0]) if checked % 4 else roots[0].box
            if box is None:
                continue
            case = box_case(instance, box)
            inside = [a for a in assignments if in_box(profile_of(instance, a), box)]
            assert inside, (instance.metric, box)  # a tightened box holds a reachable profile
            for direction in ("a", "b"):
                lam = float(rng.uniform(-0.5, 0.8))
                if isinstance(case, QBox):
                    model = formulation.build(instance, direction, case=case, lam=lam)
                    outcome = solve(model, solver)
                    assert outcome.status == "optimal"
                    needed = max(profile_of(instance, a)[instance.metric.p("rel")]
                                 * (instance.differences(a)[direction] - lam) for a in inside)
                    assert outcome.bound >= needed - 1e-7, (instance.metric, box, direction, lam)
                    bound = lam + max(outcome.bound, 0.0) / case.denominator
                else:
                    bound = solve(formulation.build(instance, direction, case=case), solver).bound
                best = max(instance.differences(a)[direction] for a in inside)
                assert bound >= best - 1e-7, (instance.metric, box, direction)
            checked += 1
    assert checked >= 80


@pytest.mark.parametrize("solver", SOLVERS)
def test_patched_template_is_the_built_model(solver):
    """BoxModels.patched (what solve_boxes solves) has the optimum of build() for boxes and profiles."""
    rng = np.random.default_rng(109)
    checked = 0
    for instance in graded_instances(seed=109, count=16):
        formulation = formulation_for(instance.metric)
        with small_boxes(0):  # the whole root box, not cut at its small part of R
            roots = [c for c in formulation.root_boxes(instance) if isinstance(c, QBox)]
        for direction in ("a", "b"):
            templates = formulation.box_models(instance, direction)
            if templates is None or not roots:
                continue
            boxes = [roots[0].box, random_box(rng, instance, roots[0])]
            cases = [box_case(instance, b) for b in boxes if b is not None]
            cases += [c for c in formulation.cases(instance) if c.r != 0][:3]
            for case in cases:
                lam = float(rng.uniform(-0.3, 0.6)) if isinstance(case, QBox) else None
                built = solve(formulation.build(instance, direction, case=case, lam=lam), solver)
                patched = solve(templates.patched(case, lam), solver)
                assert built.status == patched.status
                if built.status == "optimal":
                    assert abs(built.objective - patched.objective) <= 1e-7, (instance.metric, case.label)
                checked += 1
    assert checked >= 40


def test_one_sided_product_rows_match_the_objective_signs():
    """A direction's template drops y >= u + v - 1 only for products whose objective coefficient is >= 0
    in every patched box and profile of that direction, and y <= u, y <= v only for those <= 0; its
    box relaxation still bounds the exact profile maximum found by enumeration (small_box)."""
    rng = np.random.default_rng(127)
    dropped = checked = 0
    for instance in itertools.chain(graded_instances(seed=127, count=12), (
            build_instance(f"Q@{c.k}", c.a, c.b, c.judgments) for c in random_instances(seed=128, count=12))):
        formulation = formulation_for(instance.metric)
        with small_boxes(0):
            roots = [c for c in formulation.root_boxes(instance) if isinstance(c, QBox)]
        for direction in ("a", "b"):
            templates = formulation.box_models(instance, direction)
            if templates is None or not roots:
                continue
            rows = templates.one_sided(direction)
            assert len(rows) == len(set(rows.tolist())) and templates.matrix.A.shape[0] + len(rows) == \
                len(templates.m.rows)
            dropped += len(rows)
            lower = {first + 2 for _, first in templates.and_rows} & set(rows.tolist())
            sign = {j: (1 if first + 2 in lower else -1) for j, first in templates.and_rows
                    if first in rows or first + 2 in rows}
            boxes = [roots[0].box] + [random_box(rng, instance, roots[0]) for _ in range(3)]
            cases = [box_case(instance, b, exact=False) for b in boxes if b is not None]
            cases += [c for c in formulation.cases(instance) if c.r != 0][:3]
            for case in cases:
                lam = float(rng.uniform(-0.3, 0.6)) if isinstance(case, QBox) else None
                matrix = templates.patched(case, lam)
                for j, s in sign.items():
                    assert s * matrix.c[j] >= -1e-12, (instance.metric, case.label, j)
                relaxation = solve(replace_integer(matrix), "highs")
                best = formulation.small_box(instance, direction, case, limit=10 ** 6)
                if best is not None and best[1] is not None and relaxation.status == "optimal":
                    # every assignment x of the case: R (difference - lam) <= F (a box), difference <= F (a profile)
                    rel = instance.metric.p("rel")
                    r = sum(1 for g in best[1].values() if g >= rel) + judged_count(instance, rel)
                    bound = relaxation.objective if lam is None else lam + max(relaxation.objective, 0) / max(r, 1)
                    assert best[0] <= bound + 1e-7, (instance.metric, case.label, best, relaxation.objective)
                    checked += 1
    assert dropped > 0 and checked >= 40


def test_chain_rows_are_every_assignment_of_the_chain():
    """kernels.q_enumeration.chain_rows lists each assignment with exactly U_g documents of grade >= g once."""
    checked = 0
    for n in range(0, 7):
        for top in (1, 2, 3):
            for chain in itertools.product(range(n + 1), repeat=top):
                if any(chain[g] < chain[g + 1] for g in range(top - 1)):
                    continue
                rows = chain_rows(n, chain)
                expected = {r for r in itertools.product(range(top + 1), repeat=n)
                            if all(sum(v >= g for v in r) == chain[g - 1] for g in range(1, top + 1))}
                assert rows.shape == (len(expected), n) and {tuple(r) for r in rows} == expected, (n, chain)
                checked += 1
    assert checked > 100


def test_scores_many_is_the_evaluator():
    """Q.scores_many (the small-box evaluation) equals Q.score on random graded collections: judged
    grades above G and below 0, gain maps, rel = 2, beta = 0, empty and padded rankings."""
    rng = np.random.default_rng(113)
    checked = 0
    for instance in graded_instances(seed=113, count=24):
        metric, grading = instance.metric, instance.grading
        docs = list(dict.fromkeys(instance.a + instance.b)) + ["elsewhere1", "elsewhere2"]
        for variant in (metric, medopt.parse_metric(f"Q(beta=0.0)@{max(1, len(instance.a))}")):
            collections = [{d: int(rng.integers(-1, instance.max_grade + 2)) for d in docs if rng.random() < 0.8}
                           for _ in range(20)]
            for ranking in (instance.a, instance.b, [], docs):
                rows = np.array([[c.get(d, 0) for d in ranking] for c in collections]).reshape(20, len(ranking))
                grades = sorted({g for c in collections for g in c.values()})
                counts = {g: np.array([sum(1 for v in c.values() if v == g) for c in collections]) for g in grades}
                many = variant.scores_many(rows, counts, grading) if ranking else np.zeros(20)
                for c, value in zip(collections, many):
                    assert abs(value - variant.score(ranking, c, grading)) <= 1e-12, (variant, ranking, c)
                    checked += 1
    assert checked >= 24 * 2 * 3 * 20


def test_small_box_is_the_maximum_over_the_box():
    """small_box's value is the largest difference over the box's assignments that meet the limits
    (enumerated here with the evaluator), its assignment reaches it; more assignments than the limit: None."""
    rng = np.random.default_rng(114)
    formulation, checked = formulation_for(medopt.parse_metric("Q@3")), 0
    for instance in itertools.chain(graded_instances(seed=114, count=30), shared_rank_instances(seed=115, count=8)):
        roots = [c for c in formulation.root_boxes(instance) if isinstance(c, QBox)]
        docs = instance.unjudged
        assignments = [dict(zip(docs, grades)) for grades in
                       itertools.product(range(instance.max_grade + 1), repeat=len(docs))]
        assignments = [a for a in assignments if instance.satisfies_limits(a)]
        cases = [c for c in formulation.root_boxes(instance) if not isinstance(c, QBox)]  # R = 0
        if roots and instance.limits:  # the root box before tighten(): the limits are not in its intervals
            rel, cap, n = instance.metric.p("rel"), depth(instance), len(docs)
            judged = {g: judged_count(instance, g) for g in profile_grades(instance)}
            raw = tuple((g, max(j, 1), j + n) if g == rel else (g, min(j, cap), min(j + n, cap)) for g, j in judged.items())
            cases.append(box_case(instance, raw, exact=False))
        cases += [box_case(instance, box) for box in
                  [roots[0].box if roots else None] + [random_box(rng, instance, roots[0]) for _ in range(3) if roots]
                  if box is not None]
        for case in cases:
            inside = [a for a in assignments if in_case(instance, a, case)]
            for direction in ("a", "b"):
                settled = formulation.small_box(instance, direction, case, limit=10 ** 6)
                if isinstance(case, QProfile) and not case.counts:  # nothing can be relevant: no profile to bound
                    assert settled is None
                    continue
                value, best = settled
                if not inside:
                    assert best is None and value == -math.inf
                    continue
                truth = max(instance.differences(a)[direction] for a in inside)
                assert abs(value - truth) <= 1e-12, (instance.metric, case.label, direction)
                assert in_case(instance, best, case) and abs(instance.differences(best)[direction] - truth) <= 1e-12
                if len(inside) > 1:
                    assert formulation.small_box(instance, direction, case, limit=0) is None
                checked += 1
    assert checked >= 100


def in_case(instance, assignment, case):
    """Whether an assignment's profile lies in a box or profile case (R = 0: no relevant document)."""
    profile = profile_of(instance, assignment)
    if isinstance(case, QBox):
        return in_box(profile, case.box)
    return all((profile[g] >= v) if at else (profile[g] == v) for g, v, at in case.counts) \
        and instance.satisfies_limits(assignment)


def test_roots_and_splits_cut_r_at_its_small_part():
    """Without judgments R ranges over 1..n: the roots are the R's whose assignments number at most
    SMALL_BOX (settled by evaluation) and the rest, whose R_lo is then above them."""
    a = [f"d{i}" for i in range(12)]
    instance = build_instance("Q@12", a, a[::-1], {})
    formulation = formulation_for(instance.metric)
    roots = [c.box for c in formulation.root_boxes(instance) if isinstance(c, QBox)]
    small = max(r for r in range(1, 13) if sum(math.comb(12, u) for u in range(1, r + 1)) <= q_boxes.SMALL_BOX)
    assert roots == [((1, 1, small),), ((1, small + 1, 12),)]
    whole = box_case(instance, ((1, 1, 12),), exact=False)  # a split of R cuts at the same place
    assert [c.box for c in formulation.split(instance, whole)] == roots
    with small_boxes(0):  # no small part: halves
        assert [c.box for c in formulation.split(instance, whole)] == [((1, 1, 6),), ((1, 7, 12),)]


def collection_instances():
    """One-grade instances (binary judgments, some limits, rel and beta varied) and graded ones."""
    metrics = ("Q@{k}", "Q(beta=0.5)@{k}", "Q(beta=2.0)@{k}")
    for n, case in enumerate(random_instances(seed=113, count=24, max_grade=1, max_unjudged=7)):
        limits = () if n % 3 else tuple(lim for lim in limits_for(n // 3, case.judgments)[:1] if lim.grade <= 1)
        yield build_instance(metrics[n % 3].format(k=case.k), case.a, case.b, case.judgments, max_grade=1,
                             limits=limits)
    yield from graded_instances(seed=201, count=16)


@pytest.mark.slow
def test_collection_template_bounds_and_solves_each_profile():
    """A profile is first solved as the LP of the template with the collection cuts (solve_boxes trusts
    its optimum as the profile's bound, and as its maximum once a re-scored point reaches it).  Against
    enumeration, per profile and direction: the LP optimum is at least the profile's maximum, and the
    MILP over the same matrix is exactly it (so no cut removes an assignment); and the LP is tight on
    almost every profile (what makes the LP-first path pay)."""
    checked = tight = 0
    for instance in collection_instances():
        formulation = formulation_for(instance.metric)
        docs = instance.unjudged
        grades = range(instance.max_grade + 1)
        assignments = [a for a in (dict(zip(docs, g)) for g in itertools.product(grades, repeat=len(docs)))
                       if instance.satisfies_limits(a)]
        for direction in ("a", "b"):
            template = formulation.box_models(instance, direction, cases=True)
            if template is None:
                continue
            assert template.exact_lp
            for profile in formulation.cases(instance):
                if profile.r == 0:
                    continue
                box = tuple((g, v, v) for g, v, _ in profile.counts)
                inside = [a for a in assignments if in_box(profile_of(instance, a), box)]
                matrix = template.patched(profile)
                lp, milp = solve(replace_integer(matrix), "highs"), solve(matrix, "highs")
                if not inside:
                    assert milp.status == "infeasible"
                    continue
                best = max(instance.differences(a)[direction] for a in inside)
                assert lp.status == "optimal" and lp.bound >= best - 1e-9, (instance.metric, profile.label)
                assert milp.status == "optimal" and abs(milp.objective - best) <= 1e-9, (instance.metric, profile.label)
                tight += abs(lp.bound - best) <= 1e-9
                checked += 1
    assert checked >= 300 and tight >= 0.9 * checked


def test_profile_lp_optimal_without_a_point_falls_back_to_the_milp(monkeypatch):
    """HiGHS may call a profile's LP optimal with no feasible primal point (seen on a DL-HARD
    Q(beta=1)@100 topic, where it crashed solve_boxes): the profile then goes to its MILP, and the
    answer is still the enumerated maximum, certified."""
    from medopt.solvers.backends import HighsSession, Outcome

    calls = []

    def pointless(self, matrix, time_limit):
        calls.append(matrix.A.shape)
        return Outcome("optimal", math.nan, 1.0, None, 0.0, None)

    monkeypatch.setattr(HighsSession, "solve", pointless)
    # the profile LPs are reached only where the boxes' roof dual tests do not settle everything first
    monkeypatch.setattr(ProfileBoxes, "box_quadratic", lambda self, instance, direction: None)
    checked = 0
    for case in random_instances(seed=7, count=12, max_grade=1, max_unjudged=6):
        kwargs = dict(a=case.a, b=case.b, judgments=case.judgments, max_grade=1)
        oracle = medopt.med(f"Q@{case.k}", **kwargs, method="enumerate")
        with small_boxes(0):
            exact = medopt.med(f"Q@{case.k}", **kwargs, method="exact", solver="highs")
        assert abs(exact.value - oracle.value) <= 1e-9 and exact.certified, (case, exact, oracle)
        checked += 1
    assert calls, "no profile LP was tried: the test does not reach the fallback"
    assert checked == 12
