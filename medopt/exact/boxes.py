"""Strategy ``boxes``: branch and bound over boxes of cases, for any formulation that offers boxes
(``formulations.base.BoxSearch``; today the Q-measure)."""

from __future__ import annotations

import heapq
import math
from dataclasses import replace

from ..core.bounds import trivial_bound
from ..core.deadlines import OutOfTime, check_time
from ..modeling import assignment_from
from ..solvers import CUTOFF_SLACK, SOLVERS, HighsSession, solve
from .common import (DirectionResult, cutoff_for, improve_locally, offer_rescored, proven_bound,
                     settle_without_relevance)
from .lagrangian import lagrangian_bound, rows_bound


# HiGHS dual pricing for box LPs of at most this many rows: devex (no steepest-edge weights to set up
# from each new start basis); larger LPs keep steepest edge, which pays off there.  Chosen by
# measurement: docs/explanation/solvers.md#highs-options-for-the-q-measure-box-lps
DEVEX_ROWS = 2000

# A graded box's test by its rows (BoxRun.graded_tests): this many roof duals from its parent's rows
# multipliers (0 at a root).  Graded boxes run both tests while the second tests of such boxes have
# taken at most EXPLORE of all the tests' work; the averages over those boxes (older ones weighed down
# by DECAY each; priors PRIOR_CLOSED boxes closed, PRIOR_WORK work) choose the order and whether the
# second runs.  Values: docs/explanation/q-measure.md#q-measure-the-rows-for-graded-boxes
GRADED_ROW_STEPS, EXPLORE, DECAY = 5, 0.1, 0.8
PRIOR_CLOSED, PRIOR_WORK = 0.5, 50_000
# Work, in the rows test's units (a variable or product of a network it solves): a unit of the
# descent's networks (a compiled flow going on from the one before) costs WORK_FACTOR of one, and
# a box test BOX_OVERHEAD whatever runs (its objective, re-scoring its labels).  Measured:
# docs/explanation/q-measure.md#q-measure-the-descent-on-a-compiled-flow
WORK_FACTOR, BOX_OVERHEAD = {"intervals": 0.5, "rows": 1.0}, 8_000
# A graded box's test by the intervals' descent (on its objective tightened where the ideal gains
# spread): at most this many roof duals, going on from where its parent's descent stopped (multipliers
# and step size).  Value: docs/explanation/q-measure.md#q-measure-the-spread-of-the-ideal-gains-corrected
GRADED_DESCENT_STEPS = 15

# seconds for a box's test model (CP-SAT) at first; a box not settled in that time is split (the
# budget doubles while tests end with no bound: solve_boxes).  Value: docs/explanation/constants.md
BOX_TIME_LIMIT = 0.25


def solve_boxes(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """Exact branch and bound over boxes of cases (``formulation.root_boxes`` / ``split``, the Q-measure).

    A box is first tested by the roof dual of its objective (``BoxRun.roof_test``, when the
    formulation writes its boxes as quadratic functions: ``box_quadratic``).  A case (one profile) is
    solved with its exact model and the cutoff max(start, best difference found), as solve_cases
    does.  A box of cases is tested at lam = that cutoff: its model's optimum
    F(lam) is >= R(x) (difference(x) - lam) for every assignment x of the box (R(x) >= R_lo >= 1), so
    every difference in the box is <= lam + max(F_ub, 0) / R_lo for any proven upper bound F_ub of F
    (HiGHS: the LP relaxation's optimum, solved to the end since a child's LP is as large as its
    parent's; CP-SAT: the MILP's bound within a budget that starts at BOX_TIME_LIMIT and doubles each
    time a test ends without any bound, i.e. inside presolve on a large model).  A box whose
    bound does not beat the cutoff is closed; any other is split, its halves inheriting its bound (or
    the formulation's closed-form bound of a half, ``box_bound``, when lower; a root opens at the
    trivial bound or at that one), and boxes are taken best bound first.  Every solution is re-scored by the evaluator (a box's objective
    is only a bound) and offered when it meets the relevance limits (an LP point is rounded), so the
    value is a true difference.  The bound reported is the largest bound of a closed box (and of the
    open ones when time ran out): every case lies in exactly one box.  The formulation may compile one
    template per direction (``box_models``) whose ``patched(case, lam)`` is the model's matrix, and a
    second one for profiles (``box_models(cases=True)``); when that one says its LP relaxation is
    tight (``exact_lp``), a profile is solved as an LP first (HiGHS) and goes to its MILP only when the
    LP optimum beats both the cutoff and the re-scored rounding of its point."""
    search = BoxRun(formulation, instance, direction, solver, clock, start)
    while search.step():
        pass
    return search.finish()


class BoxRun:
    """solve_boxes one box at a time, so that the driver can share the time between both directions
    (exact.driver.solve_jointly): ``step`` takes the open box of best bound and settles, closes or
    splits it; ``open_bound`` is the largest bound of the boxes still open; ``finish`` gives the
    direction's result.  ``floor`` (a function) is a difference reached elsewhere (for MED the other
    direction's best): the cutoff is max(start, floor(), the best difference found here).

    The bound when time runs out.  Every case lies in exactly one box: a closed one (its bound joined
    ``result.bound``), an open one (its bound in the heap: its parent's proven bound, the trivial
    one for a root not yet tested) or the one being worked on (its inherited bound, ``current``).
    So the maximum of the three is a proven bound for the direction, never above the trivial one."""

    def __init__(self, formulation, instance, direction, solver, clock, start: float = -math.inf, floor=None):
        self.formulation, self.instance, self.direction, self.solver, self.clock = \
            formulation, instance, direction, solver, clock
        self.start, self.floor = start, floor or (lambda: -math.inf)
        self.result = DirectionResult()
        self.feasible_boxes, self.order, self.templates, self.case_templates = 0, 0, False, False
        self.quadratic = False  # the formulation's box_quadratic, once a box needs it
        self.multipliers = {}  # box label -> its parent's Lagrangian multipliers (roof_test)
        # graded_tests: per test, decayed sums over the explored boxes of closed, work, closed alone
        self.graded_record = {"intervals": [0.0, 0.0, 0.0], "rows": [0.0, 0.0, 0.0], "weight": 0.0}
        self.graded_work = [0, 0]  # graded_tests: all the tests' work, the work of the explored boxes' second tests
        self.last_basis = None  # the final basis of the direction's last box LP
        self.box_budget = BOX_TIME_LIMIT
        self.rescored = {}  # solver points already re-scored (offer_rescored)
        self.lp_solver = SOLVERS[solver].lp_relaxation  # box LPs: their relaxation, in one session per template
        self.sessions = {}
        self.ceiling = trivial_bound(instance)  # no difference exceeds it: a box that reaches it needs no more work
        self.heap = None  # (-bound, order, case, start basis); the roots, once the first step has built them
        self.current = None  # the inherited bound of the box being worked on
        self.over = False

    def cutoff(self) -> float:
        return max(self.start, self.floor(), self.result.value)

    def open_bound(self) -> float:
        """The largest bound of an open box (the trivial one before the roots are built; -inf when none)."""
        if self.over:
            return -math.inf
        if self.heap is None:
            return self.ceiling
        return -self.heap[0][0] if self.heap else -math.inf

    def session(self, template):
        if id(template) not in self.sessions:
            self.sessions[id(template)] = HighsSession()
        return self.sessions[id(template)]

    def push(self, bound, case, basis) -> None:
        """Open a box under its parent's bound (the trivial one for a root), or the formulation's own
        bound of the box when that is lower (``box_bound``: found without a model)."""
        bound = min(bound, self.formulation.box_bound(self.instance, self.direction, case))
        heapq.heappush(self.heap, (-bound, self.order, case, basis))
        self.order += 1

    def step(self) -> bool:
        """Work on the open box of best bound; False once the search is over (no box left, or no time)."""
        if self.over:
            return False
        try:
            if self.heap is None:
                roots = self.formulation.root_boxes(self.instance)
                self.heap = []
                for case in roots:
                    self.push(self.ceiling, case, None)
            remaining = self.clock.remaining()
            if self.heap and remaining is not None and remaining <= 0:
                self.result.proven = False
            if not self.heap or (remaining is not None and remaining <= 0):
                self.over = True
                return False
            inherited, _, case, start_basis = heapq.heappop(self.heap)
            self.current = -inherited  # the parent's bound (the trivial one for a root)
            self.test(case, self.current, start_basis)
            self.current = None
        except OutOfTime:  # a template or a box's model was still being built at the deadline
            self.result.proven = False
            self.over = True
            return False
        return True

    def finish(self) -> DirectionResult:
        """The direction's result: when time ran out, its bound is the largest of the closed boxes', the
        open ones' and the current one's (the class docstring); when every box was infeasible, only
        assignments with no relevant document remain (settle_without_relevance)."""
        result = self.result
        if not result.proven:
            open_bounds = [-entry[0] for entry in self.heap] if self.heap is not None else [self.ceiling]
            result.bound = max([result.bound] + open_bounds + ([self.current] if self.current is not None else []))
        elif self.feasible_boxes == 0:
            settle_without_relevance(result, self.instance)
        return result

    def roof_test(self, case, inherited, cutoff):
        """A box tested by the roof dual of its F(lam) at lam = the cutoff, its intervals moved into the
        objective with multipliers (exact/lagrangian.py; the box in that form: ``box_quadratic``): every
        difference in the box is <= lam + max(F_ub, 0) / R_lo as for its LP (solve_boxes).  A box over
        R alone (one profile grade: no judgments, or binary ones) has instead the rows of its profiles'
        LP (the collection cuts, and its intervals) moved into the objective (rows_bound,
        formulations/q/rows.py), which brings the roof dual to that LP's bound; a graded box may be
        tested both ways (``graded_tests``).  With those rows, the objective is first tightened where
        the box's ideal gains spread (formulations/q/spread.py).  A box that bound closes is closed.
        A box of several profiles it does not close is split at once under it (its LP costs far more
        than the roof dual's few maximum flows and bounded only a little lower), and so is a one-profile
        box over R alone (into its case: the roof dual with the rows already bounds it about as its LP
        would); a one-profile box over several grades goes on to its LP under the lower bound (measured:
        docs/explanation/q-measure.md#q-measure-roof-dual-box-tests and
        docs/explanation/q-measure.md#q-measure-the-box-lps-rows-in-the-roof-dual).  The cut's labels are
        re-scored as candidates (undetermined ones read as 0, then as 1), and one that beats the best
        difference is improved by one-document moves.  The halves of a box split here start their LPs,
        if they need them, from the last box LP's final basis (no LP of their parent gave one).  None
        when closed or split, else the box's bound (``inherited`` when there is no test)."""
        if not math.isfinite(cutoff):
            return inherited
        if self.quadratic is False:
            self.quadratic = self.formulation.box_quadratic(self.instance, self.direction)
        if self.quadratic is None:
            return inherited
        result, quadratic = self.result, self.quadratic
        form = quadratic.form(case.box, cutoff)
        # where the parent's tests ended: the intervals' descent (multipliers and step size), the rows'
        # multipliers, or both (a graded box), as the branch below uses
        start = self.multipliers.pop(case.label, None)
        found = []  # the labels of every cut tried
        if quadratic.rows is None:  # no rows: the intervals' descent
            excess, labels, start = lagrangian_bound(form, quadratic.counts(case.box), check=check_time,
                                                     floor=0.0, start=start)
            found.append(labels)
        elif quadratic.one_grade:  # a box over R alone: the rows of its profiles' LP (formulations/q/rows.py)
            excess, labels, start = rows_bound(form, quadratic.rows.at(case.box), check=check_time,
                                               floor=0.0, start=start)
            found.append(labels)
        else:
            excess, start = self.graded_tests(case, form, start, found, cutoff)
        result.solves += 1
        before = result.value
        for labels in found:
            for undetermined in (0, 1) if (labels < 0).any() else (0,):  # the LP's halves read both ways
                offer_rescored(result, self.instance, self.direction, quadratic.assignment(labels, undetermined),
                               self.rescored)
        if result.value > before:  # a new best difference: one-document moves from it
            improve_locally(result, self.instance, self.direction, result.assignment)
        bound = min(inherited, cutoff + max(excess, 0.0) / case.denominator)
        result.log.append((f"{case.label} (roof dual)", excess, bound))
        if bound <= self.cutoff() + CUTOFF_SLACK:
            result.bound = max(result.bound, bound)
            self.feasible_boxes += 1  # not known infeasible
            return None
        # split at once: a box of several profiles over several grades, and any box over R alone with its
        # rows (a one-profile one into its case), which the roof dual bounded about as their LPs would
        if (quadratic.one_grade and quadratic.rows is not None) or \
                (len(case.box) > 1 and any(lo != hi for _, lo, hi in case.box)):
            for child in self.formulation.split(self.instance, case):
                if self.formulation.is_box(child):  # (a profile's case has no roof dual test)
                    self.multipliers[child.label] = start  # the children start where the parent ended
                self.push(bound, child, self.last_basis)  # no LP of their own parent: the last box LP's basis
            return None
        return bound

    def graded_tests(self, case, form, start, found, cutoff) -> tuple:
        """(the excess F_ub of a graded box, where its tests ended (intervals', rows') for its halves) by
        two tests: the intervals' descent (lagrangian_bound, GRADED_DESCENT_STEPS roof duals, on ``form``:
        the box's objective tightened where its ideal gains spread, formulations/q/spread.py, without
        the rows' extra products when it does not use them) and the rows (rows_bound, the collection
        cuts and the intervals, GRADED_ROW_STEPS roof duals, on the plain objective at lam = ``cutoff``),
        each going on from where its test of the parent box ended (``start``: the descent's
        multipliers and step size, the rows' multipliers; none at a root: multipliers 0).  Each gives a
        proven bound (any multipliers do), and the lower is kept.

        Which pays depends on the instance and on how far the search is (the rows close the boxes of a
        topic whose few judged documents are all relevant; the descent, in one or two maximum flows,
        the narrow boxes of a topic with many judged ones: docs/explanation/q-measure.md#q-measure-the-rows-for-graded-boxes).
        So graded boxes run both tests to the end while the second tests of such boxes have taken at
        most EXPLORE of all the tests' work (the first box always), and keep, per test, averages over
        these boxes (recent ones weighing more: DECAY per older one) of its work (the sizes, variables +
        products, of the networks it solved, times WORK_FACTOR), of whether it closed the box, and of
        whether it closed a box the other did not.  On the other boxes the test with more boxes closed
        per unit of cost, (closed + PRIOR_CLOSED) / (work + PRIOR_WORK + BOX_OVERHEAD), runs first; the
        other runs when the first does not close the box, and only when closing a box the first did not
        (which saves splitting it: at least two more box tests) is worth its work: 2 x its share of
        such boxes x (the first's work + BOX_OVERHEAD) >= its own work.  The counts are deterministic,
        so the same instance takes the same path.  ``found`` receives each cut's labels."""
        quadratic, record, spent = self.quadratic, self.graded_record, self.graded_work
        descent, row_nu = start if start is not None else (None, None)
        explore = spent[1] <= EXPLORE * spent[0]
        excess, closed, work = math.inf, {}, {}

        def average(test, k):  # closed (0), work (1), closed alone (2) over the explored boxes
            weight = record["weight"]
            prior = (PRIOR_CLOSED, PRIOR_WORK, PRIOR_CLOSED)[k]
            return (record[test][k] + prior) / (weight + 1)

        tests = ("intervals", "rows")
        first = max(tests, key=lambda t: average(t, 0) / (average(t, 1) + BOX_OVERHEAD))  # ties: the descent
        second = tests[1] if first == tests[0] else tests[0]
        worth = 2 * average(second, 2) * (average(first, 1) + BOX_OVERHEAD) >= average(second, 1)

        def counting(test, network):  # the deadline check before each roof dual, counting the network's size
            work[test] = 0

            def check():
                check_time()
                work[test] += (network[0] + len(network[3])) * WORK_FACTOR[test]
            return check

        for test in (first, second):
            if not explore and test == second and (excess <= 0 or not worth):
                break
            if test == "intervals":  # on the tightened objective (the rows' products too, where it uses them)
                network = quadratic.without_rows(form)
                bound, labels, descent = lagrangian_bound(network, quadratic.counts(case.box),
                                                          check=counting(test, network), floor=0.0, start=descent,
                                                          steps=GRADED_DESCENT_STEPS)
            else:  # on the plain objective (on the tightened one the rows closed fewer boxes for their work)
                network = quadratic.form(case.box, cutoff, tight=False)
                bound, labels, row_nu = rows_bound(network, quadratic.rows.at(case.box), floor=0.0, start=row_nu,
                                                   check=counting(test, network), steps=GRADED_ROW_STEPS)
            found.append(labels)
            excess = min(excess, bound)
            closed[test] = bound <= 0
            spent[0] += work[test]
        if explore:
            spent[1] += work[second]  # both tests on the same box: their averages compare them fairly
            record["weight"] = DECAY * record["weight"] + 1
            for test, other in zip(tests, reversed(tests)):
                record[test] = [DECAY * record[test][0] + closed[test], DECAY * record[test][1] + work[test],
                                DECAY * record[test][2] + (closed[test] and not closed[other])]
        return excess, (descent, row_nu)

    def test(self, case, inherited, start_basis) -> None:
        """Settle, close or split one box (or solve one case): solve_boxes's docstring."""
        formulation, instance, direction, result, clock = \
            self.formulation, self.instance, self.direction, self.result, self.clock
        cutoff = self.cutoff()
        if inherited <= cutoff + CUTOFF_SLACK:  # the parent's bound (or the trivial one) already settles it
            result.bound = max(result.bound, inherited)
            self.feasible_boxes += 1  # not known infeasible: some assignment reaches the cutoff
            return
        settled = formulation.small_box(instance, direction, case)  # few assignments: each evaluated
        if settled is not None:
            bound, assignment = settled
            result.log.append((f"{case.label} (all assignments)", bound, bound))
            if assignment is not None:
                self.feasible_boxes += 1
                value = instance.differences(assignment)[direction]
                result.offer(value, assignment)
                result.bound = max(result.bound, bound, value)
            return
        single = not formulation.is_box(case)
        if not single:
            inherited = self.roof_test(case, inherited, cutoff)
            if inherited is None:  # closed, or split, by its roof dual
                return
        if not single and formulation.too_wide(instance, case):
            for child in formulation.split(instance, case):  # its relaxation would not bound it: split at once
                self.push(inherited, child, start_basis)
            return
        if self.templates is False:  # a compiled template patched per box, when the formulation has one
            self.templates = formulation.box_models(instance, direction)
        if single and self.case_templates is False:  # the formulation's template for one-profile cases
            self.case_templates = formulation.box_models(instance, direction, cases=True) \
                if self.templates is not None else None
        lam = None if single else (cutoff if math.isfinite(cutoff) else -self.ceiling)
        template = self.case_templates if single else self.templates
        matrix = template.patched(case, lam) if template is not None else None
        model = formulation.build(instance, direction, case=case, lam=lam) if matrix is None else matrix
        if single and self.lp_solver and matrix is not None and template.exact_lp:
            # a profile whose template makes its LP relaxation tight (the collection cuts): the LP's
            # optimum bounds the profile, so it settles the profile when it does not beat the cutoff
            # or when its rounded point, re-scored, reaches it; otherwise the MILP below
            outcome = self.session(template).solve(replace(matrix, highs_options={"presolve": "off"}),
                                                   clock.remaining())  # (after building the template)
            result.solves += 1
            # HiGHS can call an LP optimal with no feasible primal point (primal_solution_status 1 after
            # unscaling; docs/explanation/solvers.md#highs-called-a-profile-lp-optimal-with-no-feasible-point): no
            # point to re-score, so the MILP settles it
            if outcome.status == "optimal" and outcome.x is not None:
                value = offer_rescored(result, instance, direction, template.assignment(outcome.x), self.rescored)
                if outcome.bound <= max(cutoff, value) + CUTOFF_SLACK:
                    self.feasible_boxes += 1
                    result.log.append((f"{case.label} (LP)", outcome.objective, min(inherited, outcome.bound)))
                    result.bound = max(result.bound, min(inherited, outcome.bound), value)
                    return
        if single:  # one case: its exact model, solved like solve_cases does
            outcome = solve(model, self.solver, clock.remaining(), cutoff=cutoff_for(cutoff))
        else:  # the box's test model at lam: F(lam) <= 0 proves that no assignment of the box beats lam
            if self.lp_solver and matrix is not None:  # the LP relaxation: a weaker bound, found much faster
                # presolve off and the parent's final basis as the start (both faster, the same optima:
                # docs/explanation/solvers.md#highs-options-for-the-q-measure-box-lps); one HiGHS instance for all
                # of them (the template's HighsSession)
                options = {"presolve": "off"}
                if matrix.A.shape[0] <= DEVEX_ROWS:
                    options["simplex_dual_edge_weight_strategy"] = 1  # devex
                outcome = self.session(self.templates).solve(
                    replace(matrix, highs_options=options, basis=start_basis), clock.remaining())
                self.last_basis = outcome.basis  # the start of boxes split by their roof dual (roof_test)
            else:
                budget = clock.remaining()
                budget = budget if budget is None else min(budget, self.box_budget)
                outcome = solve(model, self.solver, budget, cutoff=0.0 if math.isfinite(cutoff) else None)
            if not math.isfinite(outcome.bound) and outcome.status == "timeout":
                self.box_budget *= 2  # stopped before it had any bound: the next box gets longer
        result.solves += 1
        if outcome.status == "infeasible":
            return
        self.feasible_boxes += 1
        if outcome.values is not None:
            assignment = assignment_from(model, outcome.values) if matrix is None else template.assignment(outcome.x)
            offer_rescored(result, instance, direction, assignment, self.rescored)
        if single:
            bound = proven_bound(outcome, instance)
        elif math.isfinite(outcome.bound):  # every x of the box: R(x) (difference - lam) <= F <= F_ub, R(x) >= R_lo
            bound = lam + max(outcome.bound, 0.0) / case.denominator
        else:
            bound = self.ceiling
        bound = min(inherited, bound)
        result.log.append((case.label, outcome.objective, bound))
        if outcome.status != "optimal" and (single or (clock.remaining() is not None and clock.remaining() <= 0)):
            result.proven = False
            result.bound = max(result.bound, bound)
            return
        if single or bound <= self.cutoff() + CUTOFF_SLACK:
            result.bound = max(result.bound, bound)
            return
        for child in formulation.split(instance, case):
            self.push(bound, child, outcome.basis)
