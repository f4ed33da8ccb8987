"""One formulation, several solvers: a Pyomo model is compiled once to matrix form
(Pyomo's LinearStandardFormCompiler) and handed to HiGHS (highspy), CP-SAT (OR-Tools) or SCIP
(PySCIPOpt).

Every backend returns a :class:`Outcome` in the model's own objective units
(maximisation): the objective at the integral solution found, a proven upper
bound, and a status.  Neither is trusted further: callers re-score the
assignment with the metric evaluators (result.certify).

CP-SAT needs integers.  Every medopt formulation has integer variables and
integral constraint coefficients; only the objective has real coefficients.
The backend multiplies them by a scale ``S`` and rounds.  For any feasible
integral x, ``|S c.x - round(S c).x| <= E = sum_j |S c_j - round(S c_j)| max|x_j|``,
so the true maximum is at most ``(CP-SAT bound + E) / S``: that is the bound
reported, and it holds whatever the rounding did.
"""

# size: the three solver backends (HiGHS, CP-SAT, SCIP) behind one interface, with what each declares

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import MedoptError, interruptible_import
from ..core.deadlines import memory_limit
from ..modeling.matrix import ColumnValues, MatrixModel, compile_model
from .stoppable import HighsInterrupt, SolverOverran, run_stoppable


@dataclass(frozen=True)
class Solver:
    """What a backend can do, declared here so that models and strategies need not know solvers."""

    name: str
    integer_only: bool     # only integer variables (a model with continuous ones is refused)
    lp_relaxation: bool    # solves LP relaxations (HighsSession: box LPs sharing one instance)
    warm_basis: bool       # takes a simplex basis to start an LP from (MatrixModel.basis)
    cutoff: str            # how ``solve(cutoff=...)`` prunes: a bound option or a best-bound stop


SOLVERS = {
    "highs": Solver("highs", integer_only=False, lp_relaxation=True, warm_basis=True,
                    cutoff="objective_bound option"),
    "cpsat": Solver("cpsat", integer_only=True, lp_relaxation=False, warm_basis=False,
                    cutoff="stop from the best-bound callback"),
    "scip": Solver("scip", integer_only=False, lp_relaxation=False, warm_basis=False,
                   cutoff="objective limit (setObjlimit)"),
}


@dataclass
class Outcome:
    status: str            # optimal | timeout | infeasible
    objective: float       # model objective at the (rounded) integral solution; nan without one
    bound: float           # proven upper bound on the model's maximum (inf when none)
    values: object | None  # ColumnValues: column (VarData) -> value, rounded for integer columns
    seconds: float
    x: np.ndarray | None = None  # the same values in column order
    basis: object = None  # HiGHS, an LP solved to optimality: its final basis (a start for a similar LP)


CUTOFF_SLACK = 1e-10  # added to a cutoff a solver proved nothing beats (see solve)


def solve(model, solver: str = "highs", time_limit: float | None = None, cutoff: float | None = None) -> Outcome:
    """Maximise the model.  With ``cutoff``, only solutions with objective > cutoff are sought:
    when the solver proves there is none, the outcome is ``optimal`` with no solution and the
    bound ``cutoff + CUTOFF_SLACK`` (the model's maximum is at most the cutoff).  HiGHS prunes
    with it (objective_bound); CP-SAT stops as soon as its best bound proves it (see solve_cpsat).
    Callers pass
    a difference some assignment already reaches, so a proven cutoff settles the question
    "can this model beat it?" without closing its own gap.  Use it only when the model is known
    to be feasible, since an infeasible model is then indistinguishable from a cut-off one."""
    if solver not in SOLVERS:
        raise MedoptError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    from pyomo.common.errors import InfeasibleConstraintException

    try:
        matrix = model if isinstance(model, MatrixModel) else compile_model(model)
    except InfeasibleConstraintException:  # a constraint on constants only that fails
        return Outcome("infeasible", math.nan, -math.inf, None, 0.0)
    if time_limit is not None and time_limit <= 0:
        return Outcome("timeout", math.nan, math.inf, None, 0.0)
    if not matrix.columns:  # nothing to decide (every document judged): the objective is a constant
        return Outcome("optimal", matrix.offset, matrix.offset, ColumnValues([], np.zeros(0)), 0.0, np.zeros(0))
    # looked up at each call (not kept in a table): a test or a profiler that wraps a backend is seen
    backend = {"highs": solve_highs, "cpsat": solve_cpsat, "scip": solve_scip}[solver]
    outcome = backend(matrix, time_limit, cutoff)
    if cutoff is not None:
        if outcome.status == "infeasible":
            return Outcome("optimal", math.nan, cutoff + CUTOFF_SLACK, None, outcome.seconds)
        if math.isfinite(outcome.bound):
            # the solver's bound covers only what it did not cut off, and the part cut off holds
            # nothing above the cutoff.  (HiGHS may even return a solution below the cutoff as
            # "optimal" with that solution's value as its bound: tests/exact/test_cutoff.py.)
            outcome.bound = max(outcome.bound, cutoff + CUTOFF_SLACK)
    return outcome


def _values(matrix: MatrixModel, x) -> tuple[ColumnValues, float, np.ndarray]:
    x = np.asarray(x, dtype=float)
    x = np.where(matrix.integer, np.round(x), x)
    return ColumnValues(matrix.columns, x), float(matrix.c @ x + matrix.offset), x


def _highs(matrix: MatrixModel, time_limit: float | None):
    """A HiGHS instance with medopt's options and ``matrix`` passed in."""
    with interruptible_import():
        import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 1e-12)
    h.setOptionValue("mip_feasibility_tolerance", 1e-9)
    # tiny objective coefficients (deep ERR states, 1e-8 and below) must not fall under the
    # LP tolerances, or the dual bound can miss them: tighten both feasibility tolerances
    h.setOptionValue("primal_feasibility_tolerance", 1e-10)
    h.setOptionValue("dual_feasibility_tolerance", 1e-10)
    h.setOptionValue("threads", 1)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    for name, value in (matrix.highs_options or {}).items():
        h.setOptionValue(name, value)
    lp = highspy.HighsLp()
    n_cols = len(matrix.columns)
    lp.num_col_, lp.num_row_ = n_cols, matrix.A.shape[0]
    lp.col_cost_ = matrix.c
    lp.col_lower_, lp.col_upper_ = matrix.lower, matrix.upper
    lp.row_lower_, lp.row_upper_ = matrix.row_lower, matrix.row_upper
    lp.offset_ = matrix.offset
    lp.sense_ = highspy.ObjSense.kMaximize
    csc = matrix.A.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = csc.indptr, csc.indices, csc.data
    lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
                       for i in matrix.integer]
    h.passModel(lp)
    # Ctrl-C stops h's runs, and its time limit holds (_run), except for a small model: it ends within
    # milliseconds anyway, and a worker thread and interrupt callbacks would cost it several percent
    inline = INLINE_MIP_NONZEROS if matrix.integer.any() else INLINE_LP_NONZEROS
    h.medopt_interrupt = None if matrix.A.nnz <= inline else HighsInterrupt(h)
    return h


# a model with at most this many nonzeros runs in the calling thread, without interrupt callbacks:
# LPs up to the Q-measure's box LPs at k = 30, MIPs up to the AP / AP(norm=min) Dinkelbach steps at
# k = 20 (docs/limits.md#interrupts)
INLINE_LP_NONZEROS = 50_000
INLINE_MIP_NONZEROS = 10_000


def _run(h, time_limit: float | None) -> bool:
    """``h.run()``, stoppable by Ctrl-C and ended at its time limit (solvers/stoppable.py); False
    when HiGHS overran its limit and was left to finish (no outcome to read)."""
    if h.medopt_interrupt is None:
        h.run()
        return True
    try:
        h.medopt_interrupt.run(h, time_limit)
    except SolverOverran:
        return False
    return True


def _highs_outcome(h, matrix: MatrixModel, started: float) -> Outcome:
    """The Outcome of a finished h.run() on ``matrix``."""
    import highspy

    status = h.getModelStatus()
    info = h.getInfo()
    seconds = time.perf_counter() - started
    if status == highspy.HighsModelStatus.kInfeasible:
        return Outcome("infeasible", math.nan, -math.inf, None, seconds)
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    values, objective, x = _values(matrix, h.getSolution().col_value) if has_solution else (None, math.nan, None)
    if status == highspy.HighsModelStatus.kOptimal:
        bound = info.mip_dual_bound if matrix.integer.any() else info.objective_function_value
        if not math.isfinite(bound):
            bound = info.objective_function_value
        basis = None if matrix.integer.any() else h.getBasis()
        return Outcome("optimal", objective, max(bound, objective), values, seconds, x, basis)
    bound = info.mip_dual_bound if matrix.integer.any() else math.inf
    return Outcome("timeout", objective, bound if math.isfinite(bound) else math.inf, values, seconds, x)


def solve_highs(matrix: MatrixModel, time_limit: float | None, cutoff: float | None = None) -> Outcome:
    started = time.perf_counter()
    h = _highs(matrix, time_limit)
    if time_limit is not None:  # passing the model in counts too
        time_limit = started + time_limit - time.perf_counter()
        if time_limit <= 0:
            return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
        h.setOptionValue("time_limit", time_limit)
    if cutoff is not None:
        # HiGHS solves a maximisation as the minimisation of -(c.x + offset), and objective_bound
        # is the upper limit on that internal objective: nodes that cannot get below it are
        # pruned, and without a solution below it the status is infeasible
        h.setOptionValue("objective_bound", -float(cutoff))
    if matrix.basis is not None:
        h.setBasis(matrix.basis)  # a start only: an unusable basis is rejected and the LP runs cold
    if not _run(h, time_limit):
        return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
    return _highs_outcome(h, matrix, started)


class HighsSession:
    """LPs of one shape solved one after another in one HiGHS instance (exact.boxes):
    each model is passed as its differences from the previous one (costs, offset, row bounds and
    matrix values on the same sparsity pattern), so HiGHS keeps its factorisation where it can and
    nothing is rebuilt (a fresh instance per LP costs a large fraction of a small LP's solve).
    HiGHS's clock runs across run() calls of one instance (HiGHS issue #1477), so each time limit is
    set from its current run time.  A model without a start basis runs cold (clearSolver):
    continuing from the last LP's final basis, a different box's, took more iterations than a cold
    start.  Measured: docs/explanation/solvers.md#highs-one-instance-for-a-directions-box-lps."""

    def __init__(self):
        self.h, self.model = None, None

    def solve(self, matrix: MatrixModel, time_limit: float | None) -> Outcome:
        """The LP relaxation of ``matrix`` (integrality ignored), as solve() with solver 'highs'."""
        started = time.perf_counter()
        if time_limit is not None and time_limit <= 0:
            return Outcome("timeout", math.nan, math.inf, None, 0.0)
        matrix = replace_integer(matrix)
        previous = self.model
        same_shape = previous is not None and previous.A.shape == matrix.A.shape and \
            previous.A.nnz == matrix.A.nnz and np.array_equal(previous.A.indices, matrix.A.indices) and \
            np.array_equal(previous.A.indptr, matrix.A.indptr)
        if not same_shape:
            self.h = _highs(matrix, None)
            self.rows_of = np.repeat(np.arange(matrix.A.shape[0], dtype=np.int32), np.diff(matrix.A.indptr))
        else:
            h = self.h
            changed = np.flatnonzero(previous.c != matrix.c)
            if changed.size:
                h.changeColsCost(changed.size, changed.astype(np.int32), matrix.c[changed])
            if previous.offset != matrix.offset:
                h.changeObjectiveOffset(matrix.offset)
            changed = np.flatnonzero((previous.row_lower != matrix.row_lower) | (previous.row_upper != matrix.row_upper))
            if changed.size:
                h.changeRowsBounds(changed.size, changed.astype(np.int32), matrix.row_lower[changed],
                                   matrix.row_upper[changed])
            changed = np.flatnonzero(previous.A.data != matrix.A.data)
            for row, column, value in zip(self.rows_of[changed].tolist(), matrix.A.indices[changed].tolist(),
                                          matrix.A.data[changed].tolist()):
                h.changeCoeff(row, column, value)
        self.model = matrix
        h = self.h
        for name, value in (matrix.highs_options or {}).items():
            h.setOptionValue(name, value)
        h.setOptionValue("time_limit", math.inf if time_limit is None else h.getRunTime() + float(time_limit))
        if matrix.basis is not None:
            h.setBasis(matrix.basis)  # a start only: an unusable basis is rejected and the LP runs cold
        elif same_shape:
            h.clearSolver()  # no start given: cold, not from the last LP's final basis (a different box)
        if not _run(h, time_limit):
            self.h, self.model = None, None  # still running: the next LP gets a fresh instance
            return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
        return _highs_outcome(h, matrix, started)


def replace_integer(matrix: MatrixModel) -> MatrixModel:
    """``matrix`` with every column continuous (its LP relaxation)."""
    return matrix if not matrix.integer.any() else replace(matrix, integer=np.zeros_like(matrix.integer))


def solve_cpsat(matrix: MatrixModel, time_limit: float | None, cutoff: float | None = None) -> Outcome:
    """With ``cutoff``, the search stops once CP-SAT's best bound proves that no solution beats it
    (a best-bound callback, no extra row: see below); the outcome is then ``optimal`` with that
    bound, which solve() raises to the cutoff.  Without the stop, a Dinkelbach step whose maximum
    is far below 0 went on closing its own gap long after its bound had fallen below 0
    (docs/explanation/solvers.md#cp-sat-stops-from-its-best-bound-callback)."""
    with interruptible_import():
        from ortools.sat.python import cp_model

    started = time.perf_counter()
    if not matrix.integer.all():
        raise MedoptError("CP-SAT needs integer variables; this model has continuous ones")
    if not (np.isfinite(matrix.lower).all() and np.isfinite(matrix.upper).all()):
        raise MedoptError("CP-SAT needs bounded variables")
    coefficients = matrix.A.data
    if not np.allclose(coefficients, np.round(coefficients), rtol=0, atol=1e-12):
        raise MedoptError("CP-SAT needs integral constraint coefficients; this model has others")
    deadline = None if time_limit is None else started + time_limit  # writing the model counts too

    def out_of_time():
        return deadline is not None and time.perf_counter() > deadline

    model = cp_model.CpModel()
    variables = [model.new_int_var(int(lo), int(hi), f"x{j}") for j, (lo, hi) in
                 enumerate(zip(matrix.lower, matrix.upper))]
    # the rows go into the model's proto directly, a linear constraint each (vars, integer coeffs,
    # domain [lo, hi]): through CpModel's expressions they were slow
    # (docs/explanation/solvers.md#cp-sat-rows-go-into-the-proto)
    A = matrix.A.copy()
    A.sum_duplicates()  # one term per variable and row, as the proto requires
    indptr, indices, data = A.indptr, A.indices.tolist(), np.round(A.data).astype(np.int64).tolist()
    lows = [-cp_model.INT_MAX if math.isinf(v) else math.ceil(v - 1e-9) for v in matrix.row_lower.tolist()]
    highs = [cp_model.INT_MAX if math.isinf(v) else math.floor(v + 1e-9) for v in matrix.row_upper.tolist()]
    constraints = model.proto.constraints
    for i in range(A.shape[0]):
        if not i % 4096 and out_of_time():  # millions of rows at depth 1000: seconds of Python
            return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
        start, end = indptr[i], indptr[i + 1]
        linear = constraints.add().linear
        linear.vars.extend(indices[start:end])
        linear.coeffs.extend(data[start:end])
        linear.domain.extend((lows[i], highs[i]))
    magnitude = np.maximum(np.abs(matrix.lower), np.abs(matrix.upper))
    reach = float(np.abs(matrix.c) @ magnitude) + 1.0
    scale = min(1e14, 2.0 ** 60 / reach)
    scaled = np.round(matrix.c * scale)
    rounding = float(np.abs(matrix.c * scale - scaled) @ magnitude)
    # No cutoff row here: with the row  scaled.x >= floor(S (cutoff - offset) - rounding)  CP-SAT
    # 9.15's presolve declared a feasible nDCG@100 case model infeasible (the optimum, fixed, was
    # accepted; without presolve it was found): tests/exact/test_exact.py::test_cpsat_cutoff_regression.
    # The cutoff is applied by stopping the search from the best-bound callback instead.
    used = np.flatnonzero(scaled)
    model.maximize(cp_model.LinearExpr.weighted_sum([variables[j] for j in used], scaled[used].astype(np.int64).tolist()))
    solver = cp_model.CpSolver()
    cut_at = []  # the best bound (scaled) that proved the cutoff, once it has
    if cutoff is not None:
        def stop_below_cutoff(best_bound):
            if not cut_at and (best_bound + rounding) / scale + matrix.offset <= cutoff:
                cut_at.append(best_bound)
                solver.stop_search()
        solver.best_bound_callback = stop_below_cutoff
    solver.parameters.num_workers = 1
    solver.parameters.catch_sigint_signal = False  # Ctrl-C stops the program, never ends a solve as if timed out
    solver.parameters.linearization_level = 2
    # the instance's memory limit holds for the search too: CP-SAT's clause and cut databases grew past
    # it on an AP instance at depth 1000 (docs/limits.md#memory); past it CP-SAT stops
    # with what it has, as at a time limit
    solver.parameters.max_memory_in_mb = max(256, memory_limit() // 2 ** 20)
    if deadline is not None:
        if out_of_time():
            return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
        time_limit = deadline - time.perf_counter()
        solver.parameters.max_time_in_seconds = time_limit
    try:  # Ctrl-C stops it, and so does its time limit where CP-SAT overruns it (stoppable.py)
        status = run_stoppable(lambda: solver.solve(model), solver.stop_search, time_limit)
    except SolverOverran:
        return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if status == cp_model.INFEASIBLE:
        return Outcome("infeasible", math.nan, -math.inf, None, seconds)
    values, objective, x = (_values(matrix, [solver.value(v) for v in variables])
                            if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else (None, math.nan, None))
    if cut_at and status != cp_model.OPTIMAL:  # stopped by the callback: nothing beats the cutoff
        return Outcome("optimal", objective, (cut_at[0] + rounding) / scale + matrix.offset, values, seconds, x)
    if status == cp_model.UNKNOWN:
        # No solution and no proof: a solve stopped inside presolve reports best_objective_bound
        # = 0 (the proto's default), which is no bound at all (a Q-measure box at k = 100 was
        # closed on it: tests/exact/test_backends.py::test_cpsat_unknown_reports_no_bound).
        return Outcome("timeout", math.nan, math.inf, None, seconds)
    bound = (solver.best_objective_bound + rounding) / scale + matrix.offset
    if status == cp_model.OPTIMAL:
        return Outcome("optimal", objective, max(bound, objective), values, seconds, x)
    return Outcome("timeout", objective, bound if math.isfinite(bound) else math.inf, values, seconds, x)


def solve_scip(matrix: MatrixModel, time_limit: float | None, cutoff: float | None = None) -> Outcome:
    """SCIP on the matrix: one variable per column (binary, integer or continuous), one linear row per
    matrix row, the objective without its constant (added back here).  With ``cutoff``, SCIP's
    objective limit: only solutions above it are sought, and a search that finds none ends
    ``infeasible`` (solve() turns that into the cutoff as the bound).  Its clock runs from its own
    start, so the limit it gets is what is left after writing the model."""
    with interruptible_import():
        import pyscipopt

    started = time.perf_counter()
    deadline = None if time_limit is None else started + time_limit

    def out_of_time():
        return deadline is not None and time.perf_counter() > deadline

    model = pyscipopt.Model()
    model.hideOutput()
    model.setParam("misc/catchctrlc", False)  # Ctrl-C stops the program, never ends a solve as if timed out
    model.setParam("numerics/feastol", 1e-9)  # as HiGHS's mip_feasibility_tolerance
    model.setParam("limits/gap", 0.0)
    model.setParam("limits/absgap", 1e-12)
    model.setParam("limits/memory", float(max(256, memory_limit() // 2 ** 20)))
    kinds = ["B" if integer and lo >= 0 and hi <= 1 else "I" if integer else "C"
             for integer, lo, hi in zip(matrix.integer.tolist(), matrix.lower.tolist(), matrix.upper.tolist())]
    variables = [model.addVar(f"x{j}", vtype=kind, lb=None if math.isinf(lo) else lo, ub=None if math.isinf(hi) else hi)
                 for j, (kind, lo, hi) in enumerate(zip(kinds, matrix.lower.tolist(), matrix.upper.tolist()))]
    A = matrix.A.tocsr()
    A.sum_duplicates()
    indptr, indices, data = A.indptr, A.indices.tolist(), A.data.tolist()
    quicksum, ExprCons = pyscipopt.quicksum, pyscipopt.scip.ExprCons
    for i, (lo, hi) in enumerate(zip(matrix.row_lower.tolist(), matrix.row_upper.tolist())):
        if not i % 4096 and out_of_time():
            return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
        start, end = indptr[i], indptr[i + 1]
        if start == end or (math.isinf(lo) and math.isinf(hi)):  # no column, or no bound: ExprCons refuses it
            if lo > 1e-9 or hi < -1e-9:  # a row of constants that fails
                return Outcome("infeasible", math.nan, -math.inf, None, time.perf_counter() - started)
            continue
        expression = quicksum(v * variables[j] for j, v in zip(indices[start:end], data[start:end]))
        model.addCons(ExprCons(expression, lhs=None if math.isinf(lo) else lo, rhs=None if math.isinf(hi) else hi))
    used = np.flatnonzero(matrix.c)
    model.setObjective(quicksum(float(matrix.c[j]) * variables[j] for j in used), "maximize")
    if cutoff is not None:
        model.setObjlimit(float(cutoff) - matrix.offset)
    if deadline is not None:
        if out_of_time():
            return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
        time_limit = deadline - time.perf_counter()
        model.setParam("limits/time", time_limit)

    def stop():
        try:
            model.interruptSolve()
        except Exception:  # not solving yet (or any more): nothing to stop  # noqa: BLE001
            pass

    try:  # Ctrl-C stops it, and so does its time limit where SCIP overruns it (stoppable.py)
        run_stoppable(model.optimizeNogil, stop, time_limit)
    except SolverOverran:
        return Outcome("timeout", math.nan, math.inf, None, time.perf_counter() - started)
    seconds = time.perf_counter() - started
    status = model.getStatus()
    if status == "infeasible":
        return Outcome("infeasible", math.nan, -math.inf, None, seconds)
    solution = model.getBestSol() if model.getNSols() else None
    values, objective, x = (_values(matrix, [model.getSolVal(solution, v) for v in variables])
                            if solution is not None else (None, math.nan, None))
    bound = model.getDualbound() + matrix.offset
    if status == "optimal":
        return Outcome("optimal", objective, max(bound, objective), values, seconds, x)
    return Outcome("timeout", objective, bound if math.isfinite(bound) else math.inf, values, seconds, x)
