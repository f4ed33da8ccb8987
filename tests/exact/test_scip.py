"""SCIP (PySCIPOpt) as the third exact solver: the same answers as the enumeration oracle on random
instances of every family, its cutoff and time limit honoured with a proven bound, and the three
solver libraries importable into one process in any order."""

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import medopt
from medopt.modeling.matrix import MatrixModel
from medopt.solvers import CUTOFF_SLACK, SOLVERS, solve
from medopt.synthetic.random_instances import random_instances

IMPORTS = {"highspy": "import highspy", "ortools": "from ortools.sat.python import cp_model",
           "pyscipopt": "import pyscipopt"}
USE = """
import highspy, pyscipopt
from ortools.sat.python import cp_model
h = highspy.Highs(); h.setOptionValue("output_flag", False)
m = pyscipopt.Model(); m.hideOutput(); x = m.addVar(vtype="B"); m.setObjective(x, "maximize"); m.optimize()
c = cp_model.CpModel(); y = c.new_bool_var("y"); c.maximize(y); s = cp_model.CpSolver(); s.solve(c)
print(m.getObjVal(), s.objective_value)
"""


@pytest.mark.parametrize("order", list(itertools.permutations(IMPORTS)))
def test_the_three_solvers_share_a_process_in_any_import_order(order):
    code = "\n".join(IMPORTS[name] for name in order) + USE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["1.0", "1.0"]


def test_scip_declares_what_it_can_do():
    scip = SOLVERS["scip"]
    assert not scip.integer_only          # continuous columns: the HiGHS-only strategies run on it too
    assert not scip.lp_relaxation and not scip.warm_basis  # no HighsSession, no simplex basis taken
    assert "objective limit" in scip.cutoff


METRICS = ["AP@6", "AP(norm=min)@6", "SSP@6", "nDCG@6", "ERR@6", "Q(beta=1)@6", "RBP(p=0.8)", "RR@6", "P@6"]


@pytest.mark.parametrize("metric", METRICS)
def test_scip_agrees_with_enumeration(metric):
    for case in random_instances(57, 6, k=6, max_grade=2):
        exact = medopt.med(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, method="exact",
                           solver="scip")
        oracle = medopt.med(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, method="enumerate")
        assert exact.solver == "scip" and exact.certified, (metric, case)
        assert exact.value == pytest.approx(oracle.value, abs=1e-9), (metric, case)


def test_scip_runs_the_strategies_with_continuous_variables():
    """Q-measure and AP strategies whose models have continuous columns (CP-SAT refuses them)."""
    from medopt.exact.driver import available_strategies
    from medopt.core.instance import build_instance
    from medopt.formulations import REGISTRY

    for case in random_instances(3, 3, k=5, max_grade=2):
        for metric in ("AP@5", "Q(beta=1)@5"):
            instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade)
            formulation = REGISTRY[instance.metric.family]
            strategies = available_strategies(formulation, instance, "scip")
            assert set(strategies) == set(available_strategies(formulation, instance, "highs"))
            oracle = medopt.med(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, method="enumerate")
            for strategy in strategies:
                result = medopt.med(metric, case.a, case.b, case.judgments, max_grade=case.max_grade,
                                    method="exact", solver="scip", strategy=strategy)
                assert result.certified and result.value == pytest.approx(oracle.value, abs=1e-9), (metric, strategy)


def knapsack(n: int = 12, seed: int = 0) -> tuple[MatrixModel, float]:
    """max c.x subject to w.x <= W, x binary, and its maximum by brute force."""
    rng = np.random.default_rng(seed)
    c, w = rng.random(n), rng.integers(1, 10, n).astype(float)
    capacity = float(w.sum() // 2)
    best = max(float(c @ x) for x in itertools.product((0, 1), repeat=n) if np.dot(w, x) <= capacity)
    matrix = MatrixModel(c, 0.25, sp.csr_matrix(w.reshape(1, -1)), np.array([-np.inf]), np.array([capacity]),
                         np.zeros(n), np.ones(n), np.ones(n, bool), list(range(n)))
    return matrix, best + 0.25


def test_scip_cutoff_and_offset():
    matrix, best = knapsack()
    found = solve(matrix, "scip")
    assert found.status == "optimal" and found.objective == pytest.approx(best, abs=1e-9)
    assert found.bound >= best - 1e-9 and found.bound == pytest.approx(best, abs=1e-7)
    below = solve(matrix, "scip", cutoff=best - 0.01)   # a better solution exists: found
    assert below.status == "optimal" and below.objective == pytest.approx(best, abs=1e-9)
    above = solve(matrix, "scip", cutoff=best + 0.01)   # none beats the cutoff: proved, no solution
    assert above.status == "optimal" and above.values is None
    assert above.bound == pytest.approx(best + 0.01 + CUTOFF_SLACK)


def test_scip_time_limit_keeps_a_proven_bound():
    from test_limits import deep_pair  # two 1000-deep runs

    a, b = deep_pair(200, similarity=0.6)
    result = medopt.med("AP@200", a, b, {}, method="exact", solver="scip", time_limit=1.0)
    assert result.status in ("timeout", "optimal")
    assert result.upper_bound >= result.value - 1e-12 and result.upper_bound <= 1.0
    if result.status == "timeout":
        assert not result.certified
    assert not math.isnan(result.value)


SCIP_CHILD = """
import sys
import medopt
import medopt.solvers.backends as backends
from medopt.formulations.precision.sums import PrecisionSums
from medopt.synthetic.generate import generate_runs

PrecisionSums.relaxation_bound = None  # the roof dual and its search settle it with no model: build it
solve_scip = backends.solve_scip


def announced(*args, **kwargs):
    print("SOLVING", flush=True)
    return solve_scip(*args, **kwargs)


backends.solve_scip = announced
runs = generate_runs(2, 1, 200, seed=1, similarity=0.6)
a, b = [list(next(iter(run.values()))) for run in runs.values()]
try:
    result = medopt.med("AP@200", a, b, {}, solver="scip")
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
    sys.exit(130)
print("FINISHED", result, flush=True)
"""


def test_ctrl_c_stops_a_scip_solve():
    """SCIP runs in run_stoppable's worker (optimizeNogil) with its own Ctrl-C handling off: an
    interrupt ends the call as an interrupt, promptly, and the process exits cleanly."""
    from test_interrupts import LATENCY, interrupt

    latency, status, out, err = interrupt([sys.executable, "-c", SCIP_CHILD], 1.0)
    assert "INTERRUPTED" in out and "FINISHED" not in out, (out, err)
    assert status == 130, (status, err[-2000:])
    assert "Traceback" not in err and "terminate called" not in err, err[-2000:]
    assert latency < LATENCY, latency


def test_scip_takes_empty_and_free_rows():
    """A row with no column left (0 within its bounds) or with no bound at all: kept out of SCIP's
    model (its ExprCons refuses both); an empty row whose bounds exclude 0 makes the model infeasible."""
    matrix, best = knapsack()
    n = len(matrix.columns)
    A = sp.vstack([matrix.A, sp.csr_matrix((1, n)), sp.csr_matrix(np.ones((1, n)))]).tocsr()
    wider = MatrixModel(matrix.c, matrix.offset, A, np.append(matrix.row_lower, [-1.0, -np.inf]),
                        np.append(matrix.row_upper, [1.0, np.inf]), matrix.lower, matrix.upper, matrix.integer,
                        matrix.columns)
    found = solve(wider, "scip")
    assert found.status == "optimal" and found.objective == pytest.approx(best, abs=1e-9)
    failing = MatrixModel(matrix.c, matrix.offset, A, np.append(matrix.row_lower, [1.0, -np.inf]),
                          np.append(matrix.row_upper, [2.0, np.inf]), matrix.lower, matrix.upper, matrix.integer,
                          matrix.columns)
    assert solve(failing, "scip").status == "infeasible"
