"""The exact maximum of a quadratic function of binary variables (with implications b_i <= b_j), by
branch and bound over the roof dual with persistency (roof_dual.py).

Problem.  max f(b) = c0 + sum_i c_i b_i + sum_k w_k b_{i_k} b_{j_k} over b in {0,1}^n with b_i <= b_j
for every implication (i, j).

The grid.  The search works on g = c0 + (sum_i C_i b_i + sum_k W_k b_i b_j) / S with C_i, W_k even
integers nearest c_i S and w_k S (S a power of 2 with (sum |c| + 2 sum |w|) S <= 2^61, so every
network below has integer capacities, all below 2^62, and no rounding).  f(b) - g(b) <= delta = (the
sum of c_i S - C_i and w_k S - W_k over the coefficients rounded down) / S for every b (each term
is b-weighted, b >= 0), so max f <= max g + delta.

A node fixes some variables (the rest are free); its function is g with the fixed values put in,
a quadratic function of the free variables with integer coefficients (``Form.restrict``).  Claim:
the search returns (U, b*) with b* feasible, g(b*) the best value of g found, and max f <= U; when it
ends within its node budget, U <= max(g(b*), floor) + delta (so b* maximises g when that beats the
floor, and f(b*) >= max f - 2 delta).

Proof.  Every feasible b lies in the root.  A node's maximum of g is its children's, by the two steps
below, so max g <= the largest bound of the nodes closed and of those still open when the budget
ends:
- Implications: fixing b_i = 1 forces b_j = 1 and fixing b_j = 0 forces b_i = 0 for an implication
  (i, j) (``propagate``); a node whose fixed values break an implication has no feasible point.
- Persistency: the roof dual's labels are weakly persistent (Hammer, Hansen & Simeone 1984: a
  variable integral in an optimal solution of the standard linearisation's LP relaxation takes that
  value in some maximiser; the minimum cut is such an optimum, its labels 0 and 1 the integral
  values, -1 the halves), so fixing the labelled variables keeps a maximiser of g on the node.  The
  network is g's exactly (the grid), so this holds with no slack.
- A node is closed when its roof dual bound is at most the best value of g found or ``floor`` (a
  value the caller already reaches, on f's scale less delta; its bound then counts in U); a node
  whose variables are all fixed is closed at its value.  Otherwise it is split on a free variable
  (the one with the largest total |weight| of its pairs), best bound first.

Tests: tests/exact/test_roof_search.py (against enumeration, with implications and floors)."""

from __future__ import annotations

import heapq
import math
from typing import Callable

import numpy as np

from .roof_dual import integer_roof_dual

# nodes (maximum flows) a search may take before it returns its bound as it stands
# (docs/explanation/precision-sums.md#ap-and-ssp-at-depth-the-exact-search-over-the-roof-dual)
MAX_NODES = 400


def maximise(n: int, constant: float, linear: np.ndarray, first: np.ndarray, second: np.ndarray,
             weights: np.ndarray, implications: tuple[np.ndarray, np.ndarray] | None = None,
             floor: float = -math.inf, budget: list | None = None,
             check: Callable[[], None] | None = None) -> tuple[float, np.ndarray]:
    """(U, labels): max f <= U, and ``labels`` (0/1, no -1) the best feasible point of g found (module
    docstring: a maximiser of g when the search ended within its node budget above the floor).
    ``budget``: [the nodes left], shared by the calls given the same list and spent here (default:
    MAX_NODES for this call).  ``check`` is called before each node (limits.check_time: it may raise
    OutOfTime)."""
    budget = [MAX_NODES] if budget is None else budget
    form = Form(n, linear, first, second, weights, implications)
    # g's values are integers (on the grid, without c0); the floor on that scale, rounded down
    target = math.floor((floor - constant - form.delta) * form.scale) if math.isfinite(floor) else -math.inf
    best_value, best = -math.inf, np.zeros(n, dtype=np.int8)
    closed = -math.inf  # the largest bound of a closed node
    root = form.propagate(np.full(n, -1, dtype=np.int8))
    heap, order = ([(-math.inf, 0, root)] if root is not None else []), 0  # (-bound, order, fixed values)
    while heap:
        key, position, fixed = heapq.heappop(heap)
        if -key <= max(best_value, target):
            closed = max(closed, -key)
            continue
        if budget[0] <= 0:
            heapq.heappush(heap, (key, position, fixed))
            break
        if check is not None:
            check()
        budget[0] -= 1
        free = np.flatnonzero(fixed < 0)
        if not len(free):
            value = form.value(fixed)
            if value > best_value:
                best_value, best = value, fixed
            closed = max(closed, value)
            continue
        shift, *restricted = form.restrict(fixed, free)
        bound, labels = integer_roof_dual(len(free), *restricted)
        bound += shift
        if bound <= max(best_value, target):
            closed = max(closed, bound)
            continue
        persisted = fixed.copy()
        persisted[free] = labels
        persisted = form.propagate(persisted) if math.isfinite(bound) else None
        if persisted is None:  # no flow, or (never: the labels keep a maximiser) labels that break an implication
            persisted = fixed
        for fill in (0, 1):
            candidate = form.propagate(np.where(persisted < 0, fill, persisted).astype(np.int8))
            value = form.value(candidate) if candidate is not None else -math.inf
            if value > best_value:
                best_value, best = value, candidate
        left = np.flatnonzero(persisted < 0)
        if not len(left):
            closed = max(closed, form.value(persisted))
            continue
        pivot = left[np.argmax(form.strength[left])]
        for value in (1, 0):
            child = persisted.copy()
            child[pivot] = value
            child = form.propagate(child)
            if child is not None:
                order += 1
                heapq.heappush(heap, (-bound, order, child))
    top = max(best_value, closed, max((-key for key, *_ in heap), default=-math.inf))
    # back to f's scale: the grid's distance delta, and a margin for the float conversion
    return float(constant + top / form.scale + form.delta * (1 + 1e-9) + 1e-15 * (abs(constant) + abs(top) / form.scale)), best


class Form:
    """g as int64 arrays on the grid (module docstring): its value at a point, its restriction to the
    free variables of a node, and the implications' propagation."""

    def __init__(self, n, linear, first, second, weights, implications):
        self.n = n
        linear, weights = np.asarray(linear, dtype=float), np.asarray(weights, dtype=float)
        size = float(np.abs(linear).sum() + 2 * np.abs(weights).sum())
        self.scale = 2.0 ** math.floor(math.log2(2.0 ** 61 / size)) if size > 0 else 1.0
        self.linear = 2 * np.rint(linear * self.scale / 2).astype(np.int64)
        self.weights = 2 * np.rint(weights * self.scale / 2).astype(np.int64)
        # f - g <= the terms rounded down, at most 1 each (a float sum, so with a margin)
        lost = (np.maximum(linear * self.scale - self.linear, 0).sum()
                + np.maximum(weights * self.scale - self.weights, 0).sum())
        self.delta = (float(lost) + 2.0 ** -30 * (len(linear) + len(weights))) / self.scale
        self.first = np.asarray(first, dtype=np.int64)
        self.second = np.asarray(second, dtype=np.int64)
        if implications is None:
            implications = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.low, self.high = (np.asarray(side, dtype=np.int64) for side in implications)  # b_low <= b_high
        self.strength = np.zeros(n)
        np.add.at(self.strength, self.first, np.abs(weights))
        np.add.at(self.strength, self.second, np.abs(weights))

    def value(self, b: np.ndarray) -> int:
        """g(b) - c0 on the grid (an integer)."""
        b = b.astype(np.int64)
        return int(self.linear @ b) + int(self.weights @ (b[self.first] * b[self.second]))

    def propagate(self, fixed: np.ndarray) -> np.ndarray | None:
        """``fixed`` (-1 free) with the values the implications force, or None when they break one."""
        fixed = fixed.copy()
        while True:
            up = (fixed[self.low] == 1) & (fixed[self.high] < 0)
            down = (fixed[self.high] == 0) & (fixed[self.low] < 0)
            if not up.any() and not down.any():
                break
            fixed[self.high[up]] = 1
            fixed[self.low[down]] = 0
        if np.any((fixed[self.low] == 1) & (fixed[self.high] == 0)):
            return None
        return fixed

    def restrict(self, fixed: np.ndarray, free: np.ndarray):
        """g - c0 on the free variables (numbered as in ``free``) with the fixed values put in: (its
        constant, linear, first, second, weights, implications), integers, as integer_roof_dual takes
        them after the constant."""
        one = (fixed == 1).astype(np.int64)
        index = np.full(self.n, -1, dtype=np.int64)
        index[free] = np.arange(len(free))
        fa, fb = fixed[self.first], fixed[self.second]
        constant = int(self.linear @ one) + int(self.weights[(fa == 1) & (fb == 1)].sum())
        linear = self.linear[free].copy()
        lone = (fa < 0) & (fb == 1)   # w b_i with b_j = 1
        np.add.at(linear, index[self.first[lone]], self.weights[lone])
        lone = (fb < 0) & (fa == 1)
        np.add.at(linear, index[self.second[lone]], self.weights[lone])
        pair = (fa < 0) & (fb < 0)
        keep = (fixed[self.low] < 0) & (fixed[self.high] < 0)
        return (constant, linear, index[self.first[pair]], index[self.second[pair]], self.weights[pair],
                (index[self.low[keep]], index[self.high[keep]]))
