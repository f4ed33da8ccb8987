"""The maximum flow that goes on from the one before (kernels/max_flow.py) and the roof duals of a
Lagrangian descent on it (solvers/roof_dual.DescentNetwork): flow values and minimum cuts equal OR-Tools'
on random networks after every reset of the terminal arcs, and every bound equals a fresh roof dual's,
holds against brute force and equals the LP relaxation, through resets that shift the capacities and
networks built again."""

from __future__ import annotations

import numpy as np
import pytest

from medopt.kernels import max_flow
from medopt.solvers.roof_dual import DescentNetwork, roof_dual_bound

from test_roof_dual import brute_force, linearised_lp, random_quadratic


def ortools_flow(nodes, tails, heads, capacities, source, sink):
    from ortools.graph.python import max_flow as reference

    flow = reference.SimpleMaxFlow()
    flow.add_arcs_with_capacity(tails, heads, capacities)
    assert flow.solve(source, sink) == flow.OPTIMAL
    side = np.zeros(nodes, dtype=bool)
    side[np.asarray(flow.get_source_side_min_cut(), dtype=np.int64)] = True
    return flow.optimal_flow(), side


def test_flows_after_terminal_resets_are_maximum_flows():
    """Random doubled graphs (roof_network: random pairs of either sign, implications, capacities from
    0 to 10^9): after each reset of the terminal arcs to random capacities, the flow kept plus what
    augment adds (after short_paths' pushes, every other reset), less the shift, is OR-Tools' maximum
    flow of the network with the new capacities, and the nodes reached from the source are its minimum
    cut's source side."""
    rng = np.random.default_rng(20261129)
    shifted = pushed = 0
    for _ in range(80):
        n = int(rng.integers(1, 15))
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < rng.uniform(0.1, 0.8)]
        implied = [(i, j) for i in range(n) for j in range(n) if i != j and rng.random() < 0.05]
        first, second = (np.array([p[s] for p in pairs], dtype=np.int64) for s in (0, 1))
        weights = rng.normal(size=len(pairs)) * rng.choice([1.0, 1e3])
        start, head, rev, cap, res, from_source, to_sink = max_flow.roof_network(
            n, first, second, weights, np.array([i for i, _ in implied], dtype=np.int64),
            np.array([j for _, j in implied], dtype=np.int64), 2.0 ** 10, 10 ** 9)
        tails = np.repeat(np.arange(2 * n + 2), np.diff(start))
        source, sink = 2 * n, 2 * n + 1
        for reset in range(6):
            to_source = (rng.integers(0, 3000, size=2 * n) * (rng.random(2 * n) < 0.8)).astype(np.int64)
            into_sink = (rng.integers(0, 3000, size=2 * n) * (rng.random(2 * n) < 0.8)).astype(np.int64)
            shift, kept, out = max_flow.reset_terminals(cap, res, rev, from_source, to_sink, to_source, into_sink)
            assert out == int(cap[from_source].sum())
            reached = np.empty(2 * n + 2, dtype=bool)
            if reset % 2:
                short = max_flow.short_paths(start, head, rev, res, from_source, to_sink)
                pushed += short > 0
                kept += short
            value = kept + max_flow.augment(start, head, rev, res, source, sink, reached) - shift
            shifted += shift > 0
            capacities = cap.copy()
            capacities[from_source], capacities[to_sink] = to_source, into_sink  # the network without the shift
            expected, side = ortools_flow(2 * n + 2, tails, head, capacities, source, sink)
            assert value == expected
            assert (reached == side).all()
            assert (res >= 0).all()
    assert shifted >= 50  # the resets' shifts were exercised
    assert pushed >= 50  # and short_paths' pushes


def test_a_descent_network_gives_the_bounds_of_fresh_roof_duals():
    """One DescentNetwork per random quadratic form, its linear terms changed six times at scales from
    0.01 to 1000 (so capacities are shifted and the network is built again): every bound equals a fresh
    roof_dual_bound's and the LP relaxation's and holds against brute force, and the labels are a
    fresh network's."""
    rng = np.random.default_rng(20261130)
    resets = rebuilt = 0
    for _ in range(150):
        n, constant, _, first, second, weights, implications = random_quadratic(rng)
        implies = (np.array([i for i, _ in implications], dtype=np.int64), np.array([j for _, j in implications], dtype=np.int64))
        network = DescentNetwork(n, first, second, weights, implies)
        for _ in range(6):
            linear = rng.normal(size=n) * rng.choice([0.01, 1, 1000])
            scale = network.scale
            bound, labels = network.bound(constant, linear)
            resets += scale == network.scale
            rebuilt += scale not in (0.0, network.scale)
            fresh_bound, fresh_labels = roof_dual_bound(n, constant, linear, first, second, weights, implies)
            assert bound == pytest.approx(fresh_bound, abs=1e-9 * max(1.0, abs(fresh_bound)))
            assert (labels == fresh_labels).all()
            assert bound >= brute_force(n, constant, linear, first, second, weights, implications) - 1e-9
            lp = linearised_lp(n, constant, linear, first, second, weights, implications)
            assert bound == pytest.approx(lp, abs=1e-8 * max(1.0, abs(lp)))
    assert resets >= 300 and rebuilt >= 30, (resets, rebuilt)


FIRST_CALL = """
from medopt.kernels.max_flow import FIRST_CALL, ready
from medopt.solvers.roof_dual import DescentNetwork
import numpy as np
before = (ready(None), ready(FIRST_CALL - 0.5), ready(FIRST_CALL))
DescentNetwork(2, np.array([0]), np.array([1]), np.array([1.0])).bound(0.0, np.array([1.0, -2.0]))
print(*before, ready(0.0))
"""


def test_the_flow_is_not_first_called_without_time_for_its_compile():
    """In a fresh interpreter the compiled loops are not loaded: ready() refuses a time left below
    FIRST_CALL (a compile no deadline can interrupt; lagrangian_bound then uses OR-Tools' flow) and
    accepts no limit or enough time; once called, any time left will do."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "False", "True", "True"]


def test_lagrangian_bound_without_the_compiled_flow_is_the_same(monkeypatch):
    """Where the compiled loops may not be loaded (too little time left: max_flow.ready false),
    lagrangian_bound takes its roof duals from OR-Tools: on random forms and intervals, the same bound
    (within the capacities' rounding), the same labels and the same place where the descent stopped."""
    from medopt.exact.lagrangian import lagrangian_bound

    rng = np.random.default_rng(20261131)
    checked = 0
    for _ in range(60):
        n, constant, linear, first, second, weights, implications = random_quadratic(rng)
        implies = (np.array([i for i, _ in implications], dtype=np.int64), np.array([j for _, j in implications], dtype=np.int64))
        form = (n, constant, linear, first, second, weights, implies)
        members = rng.permutation(n)[:int(rng.integers(1, n + 1))].astype(np.int64)
        lo = int(rng.integers(0, len(members) + 1))
        constraints = [(members, lo, int(rng.integers(lo, len(members) + 1)))]
        compiled = lagrangian_bound(form, constraints)
        monkeypatch.setattr(max_flow, "ready", lambda time_left: False)
        fallback = lagrangian_bound(form, constraints)
        monkeypatch.undo()
        assert compiled[0] == pytest.approx(fallback[0], abs=1e-9 * max(1.0, abs(fallback[0])))
        assert (compiled[1] == fallback[1]).all()
        assert np.allclose(compiled[2].nu, fallback[2].nu) and compiled[2].step == pytest.approx(fallback[2].step)
        checked += 1
    assert checked == 60
