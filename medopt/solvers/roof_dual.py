"""An upper bound on the maximum of a quadratic function of binary variables by one maximum flow: the
roof dual (Hammer, Hansen & Simeone 1984), computed on the doubled graph of QPBO (Boros & Hammer
2002; Kolmogorov & Rother 2007), with implications b_i <= b_j as constraints.

Problem.  max f(b) = c0 + sum_i c_i b_i + sum_k w_k b_{i_k} b_{j_k} over b in {0,1}^n with b_i <= b_j
for every implication (i, j).

Claim.  f(b) <= c0' - F / S for every such b, where F is the maximum flow of the integer network
below and S its scale; c0' collects the constants of the normal form.

Proof.  Minimise E = -f instead.  Normal form (every term non-negative, a constant apart):
- a pair with w > 0: -w b_i b_j = -w b_i + w [b_i = 1, b_j = 0] (a unary term and a "submodular"
  term paid when b_i = 1 and b_j = 0);
- a pair with w < 0: |w| [b_i = 1, b_j = 1] (a "non-submodular" term);
- an implication: an unbounded term paid when b_i = 1 and b_j = 0 (submodular);
- a unary a b_i: a [b_i = 1] when a >= 0, else a + |a| [b_i = 0] (the constant a joins E_0).
So E(b) = E_0 + sum of non-negative terms.  The graph has a source s, a sink t, and nodes p_i and
q_i (for not b_i) per variable; a labelling b is the cut whose source side holds p_i when b_i = 0 and
q_i when b_i = 1.  Each term gets two arcs of half its cost, each cut exactly when the term is paid:
[b_i = 1]: s->p_i, q_i->t;  [b_i = 0]: p_i->t, s->q_i;  [b_i = 1, b_j = 0]: p_j->p_i, q_i->q_j;
[b_i = 1, b_j = 1]: q_i->p_j, q_j->p_i.  (An arc u->v is cut when u is on the source side and v is
not.)  So the cut of labelling b costs E(b) - E_0, the minimum cut costs at most min E - E_0, and by
max-flow min-cut every flow is at most the minimum cut: E_0 + F_true <= min E, i.e. max f <=
-E_0 - F_true.  Capacities are the half costs times S rounded down to integers (a maximum flow
solver on int64): a flow of the rounded network is a flow of the true one (each capacity only
shrank), so F / S <= F_true and the claim holds with the rounded F.  An implication's arcs get more
capacity than all the finite arcs together, so no minimum cut uses them, and S keeps the total below
2^61 (no overflow).  The bound equals the optimum of the standard linearisation's LP relaxation
(the roof dual; docs/explanation/index.md measures it against HiGHS), up to the rounding: at most one unit of
1/S per arc of the cut.

Labels.  The minimum cut found (its source side) reads as a labelling where it is consistent: b_i = 0
when p_i is on the source side and q_i is not, b_i = 1 when q_i is and p_i is not, undetermined (-1)
otherwise (the LP's half-integral values).  They are a candidate, not a claim: the driver re-scores
them with the evaluator, and when the LP is tight they reach the bound.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from ..errors import interruptible_import
from ..core.deadlines import remaining


def roof_dual_bound(n: int, constant: float, linear: np.ndarray, first: np.ndarray, second: np.ndarray,
                    weights: np.ndarray, implications: tuple[np.ndarray, np.ndarray] | None = None,
                    floor: float = -math.inf) -> tuple[float, np.ndarray]:
    """(An upper bound on max f, the labels of the minimum cut) (module docstring): ``linear`` (n,),
    the pairs ``first``/``second`` with ``weights``, and ``implications`` (i, j): b_i <= b_j.
    (``floor``, a value the caller reaches, is for roof_search.maximise; a bound does not need it.)"""
    network = Network(n, -np.asarray(linear, dtype=float), first, second, np.asarray(weights, dtype=float))
    halves = [cost / 2 for cost in network.costs]
    total = float(sum(h.sum() for h in halves))
    scale = 2.0 ** math.floor(math.log2(2.0 ** 61 / max(total, 1e-300))) if total > 0 else 1.0
    flow, labels = network.cut([np.floor(h * scale).astype(np.int64) for h in halves], implications)
    return float(constant) - float(network.constant) - flow / scale, labels


def integer_roof_dual(n: int, linear: np.ndarray, first: np.ndarray, second: np.ndarray, weights: np.ndarray,
                      implications: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[int | float, np.ndarray]:
    """The roof dual of f(b) = sum_i c_i b_i + sum_k w_k b_i b_j with even int64 coefficients, with no
    rounding (every half cost is an integer): (the bound, an int, or inf when the flow fails; the
    labels).  The capacities (about sum |c| + 2 sum |w|) must stay below 2^62."""
    network = Network(n, -np.asarray(linear, dtype=np.int64), first, second, np.asarray(weights, dtype=np.int64))
    flow, labels = network.cut([cost // 2 for cost in network.costs], implications)
    return -int(network.constant) - flow, labels


class Network:
    """The doubled graph of E = -f in normal form (module docstring), for ``unary`` = E's linear
    coefficients: ``constant`` (E_0 without f's constant) and ``costs``, the terms' costs in the
    order of their arcs."""

    def __init__(self, n, unary, first, second, weights):
        self.n = n
        self.first, self.second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
        self.weights = weights
        self.positive = weights > 0
        np.add.at(unary, self.first[self.positive], -weights[self.positive])  # -w b_i b_j = -w b_i + w [b_i=1, b_j=0]
        self.constant = unary[unary < 0].sum()
        self.costs = [np.where(unary > 0, unary, 0), np.where(unary < 0, -unary, 0),   # [b_i = 1], [b_i = 0]
                      weights[self.positive], -weights[~self.positive]]           # [b_i=1, b_j=0], [b_i=1, b_j=1]

    def cut(self, halves: list, implications) -> tuple[int | float, np.ndarray]:
        """(The maximum flow, the labels of the minimum cut) with ``halves`` (int64) as each term's two
        arcs' capacities; (inf, no labels) when the solver fails."""
        n = self.n
        source, sink = 2 * n, 2 * n + 1
        ones, zeros, plus, minus = halves
        capacities = [ones, ones, zeros, zeros, plus, plus, minus, minus]
        implied = implications is not None and len(implications[0])
        if implied:
            unbounded = np.full(len(implications[0]), int(sum(int(c.sum()) for c in capacities)) + 1, dtype=np.int64)
            capacities += [unbounded, unbounded]
        flow = graph_for(self, implications if implied else None, np.concatenate(capacities).astype(np.int64))
        if flow.solve(source, sink) != flow.OPTIMAL:
            return math.inf, np.full(n, -1, dtype=np.int8)  # no claim
        on_source = np.zeros(2 * n + 2, dtype=bool)
        on_source[np.asarray(flow.get_source_side_min_cut(), dtype=np.int64)] = True
        p, q = on_source[:n], on_source[n:2 * n]
        labels = np.where(p & ~q, 0, np.where(~p & q, 1, -1))
        return int(flow.optimal_flow()), labels.astype(np.int8)


# Inside ``reusing()``: the last network's arcs, kept for the next call with the same pairs and
# implications (the same arrays: the Dinkelbach steps, the parametric bound and the Q-measure's
# multipliers change only the unary costs, or the pairs' weights but not their signs, so only the
# capacities change), as [the arrays it was built from (the pairs' signs by value), its
# SimpleMaxFlow]; None outside.
_LAST: list | None = None


@contextmanager
def reusing():
    """Within the block, a roof dual of the same pairs and implications as the one before (the same
    arrays) resets the capacities of its network instead of building it again; the network is
    dropped at the end (a depth-1000 network holds about a million arcs)."""
    global _LAST
    outer, _LAST = _LAST, _LAST if _LAST is not None else [None, None]
    try:
        yield
    finally:
        _LAST = outer


def graph_for(network: Network, implications, capacities: np.ndarray):
    """A SimpleMaxFlow holding ``network``'s arcs (Network.cut's order) with ``capacities``: within
    ``reusing()`` the last one's, its capacities reset, when it was built for the same arrays; else a
    new one."""
    with interruptible_import():
        from ortools.graph.python import max_flow

    built_from = (network.first, network.second, network.positive,
                  *(implications if implications is not None else (None, None)))
    last, flow = _LAST if _LAST is not None else (None, None)
    if last is not None and flow.num_nodes() == 2 * network.n + 2 and all(
            x is y for i, (x, y) in enumerate(zip(last, built_from)) if i != 2) and \
            np.array_equal(last[2], network.positive):  # the same arcs: pairs, signs and implications
        flow.set_arcs_capacity(np.arange(len(capacities), dtype=np.int64), capacities)
        return flow
    n, first, second, positive = network.n, network.first, network.second, network.positive
    source, sink = 2 * n, 2 * n + 1
    p = np.arange(n)
    q = p + n
    tails = [np.full(n, source), q, p, np.full(n, source),
             second[positive], q[first[positive]],                        # [b_i = 1, b_j = 0]
             q[first[~positive]], q[second[~positive]]]                   # [b_i = 1, b_j = 1]
    heads = [p, np.full(n, sink), np.full(n, sink), q,
             first[positive], q[second[positive]],
             second[~positive], first[~positive]]
    if implications is not None:
        i, j = (np.asarray(side, dtype=np.int64) for side in implications)
        tails += [j, q[i]]
        heads += [i, q[j]]
    flow = max_flow.SimpleMaxFlow()
    flow.add_arcs_with_capacity(np.concatenate(tails).astype(np.int64), np.concatenate(heads).astype(np.int64),
                                capacities)
    if _LAST is not None:
        _LAST[:] = [built_from, flow]
    return flow


# DescentNetwork's capacities in units of 1/S: S is chosen so that the finite capacities first sum to
# at most 2^HEADROOM_BITS, leaving room for the unary costs to grow and the resets' shifts
# (kernels/max_flow.CEILING) before the network is built again.
HEADROOM_BITS = 56
IMPLIED = 2 ** 61  # an implication's arcs (no minimum cut of finite capacity below it uses them)


_COMPILED = []  # kernels/max_flow, once imported


def compiled_flow():
    """kernels/max_flow, imported on the first call (the import is checked once, not per network)."""
    if not _COMPILED:
        with interruptible_import():
            from ..kernels import max_flow  # here: Numba (docs/limits.md#memory) only where a descent runs
        _COMPILED.append(max_flow)
    return _COMPILED[0]


class DescentNetwork:
    """Roof duals (module docstring) of f(b) = c0 + c . b + sum_k w_k b_i b_j with the same pairs, weights
    and implications and changing constants and linear terms c (a Lagrangian descent on sums of the
    b: exact/lagrangian.lagrangian_bound): one network, built once, whose terminal arcs alone change
    from one bound to the next, and each maximum flow goes on from the one before
    (kernels/max_flow.py, proof of the reset there).

    Each bound is the module docstring's: the same normal form, with the half costs times S rounded
    down (S a power of two fixed while the network lives), and the flow value of the network under
    those capacities (the maximum flow after a reset, less its shift).  The implications' arcs have a
    finite capacity (IMPLIED): a labelling that meets the implications cuts none of them, so every
    flow is still at most the cut of the best labelling, and the bound still holds."""

    def __init__(self, n: int, first, second, weights, implications=None):
        self.kernel = compiled_flow()
        self.n = n
        self.first, self.second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
        self.weights = np.asarray(weights, dtype=float)
        # -w b_i b_j = -w b_i + w [b_i=1, b_j=0]; both arcs of every pair term
        self.pair_unary, self.pair_total = self.kernel.pair_terms(n, self.first, self.weights)
        none = np.zeros(0, dtype=np.int64)
        self.implications = none, none
        if implications is not None and len(implications[0]):
            self.implications = tuple(np.asarray(side, dtype=np.int64) for side in implications)
        self.arcs = None  # (start, head, rev, cap, res, from_source, to_sink) once built
        self.scale = 0.0

    @classmethod
    def when_ready(cls, n: int, first, second, weights, implications=None):
        """The network, or None when its compiled loops are not loaded and the time left (limits.remaining)
        is too short to load them (kernels/max_flow.ready): the caller then uses roof_dual_bound."""
        return cls(n, first, second, weights, implications) if compiled_flow().ready(remaining()) else None

    def build(self, total: float) -> None:
        """The network with no flow, its scale S fitted to ``total`` (the finite capacities' sum)."""
        self.scale = 2.0 ** math.floor(HEADROOM_BITS - math.log2(total)) if total > 0 else 1.0
        self.arcs = self.kernel.roof_network(self.n, self.first, self.second, self.weights, *self.implications,
                                             self.scale, IMPLIED)

    def bound(self, constant: float, linear) -> tuple[float, np.ndarray]:
        """(An upper bound on max f with this ``constant`` and ``linear``, the labels of the minimum cut),
        as roof_dual_bound (its normal form's constant: the negative unary costs of E)."""
        unary = self.pair_unary - np.asarray(linear, dtype=float)
        if self.arcs is None:
            self.build(float(np.abs(unary).sum()) + self.pair_total)
        status, flow, negative, total, labels = self.cut(unary)
        if status:  # costs grown past the scale, or shifts too large: a network with no flow, of a new scale,
            self.build(total + self.pair_total)  # whose reset cannot exceed the limits
            status, flow, negative, total, labels = self.cut(unary)
        return float(constant) - negative - flow / self.scale, labels

    def cut(self, unary) -> tuple:
        """kernels/max_flow.roof_cut on this network, costs grown past 2^(HEADROOM_BITS + 2) refused."""
        start, head, rev, cap, res, from_source, to_sink = self.arcs
        return self.kernel.roof_cut(unary, self.scale, 2.0 ** (HEADROOM_BITS + 2), cap, res, start, head, rev,
                                    from_source, to_sink)
