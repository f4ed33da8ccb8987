"""A maximum flow that goes on from the flow before it when only the arcs from the source and into the
sink change (dynamic graph cuts, Kohli & Torr 2005), on integer capacities: Dinic's algorithm,
its loops compiled by Numba.

Network.  Arcs in compressed rows (``roof_network``: the roof dual's doubled graph): each arc a has a
reverse arc rev[a] of capacity 0; res[a] is a's residual capacity (its capacity minus its flow, plus
the flow of its reverse).

Claim (``augment``).  From any feasible flow held in ``res``, ``augment`` returns the value it adds,
and the flow it leaves is a maximum flow.  Proof: Dinic's algorithm (Dinic 1970) only pushes along
paths of positive residual capacity, so the flow stays feasible and each push adds its amount to the
value; it stops when the breadth-first search finds no path from the source to the sink, and a
flow whose residual graph has no such path is maximum (Ford & Fulkerson).  Each phase saturates at
least one arc of every shortest path, so the distance to the sink grows each phase and the phases
number at most the nodes.

Claim (``reset_terminals``).  Let every node v other than the source s and the sink t have exactly
the arcs s->v and v->t to the terminals (capacity 0 allowed), and let the new capacities be c_s(v),
c_t(v).  ``reset_terminals`` keeps every other arc's flow, lowers the flows s->v->t by their common
part (the flow stays feasible and conserved at v), then sets the capacities to c_s(v) + delta_v and
c_t(v) + delta_v with delta_v the least amount >= 0 under which v's terminal flows fit.  Every s-t
cut cuts exactly one of s->v and v->t, so every cut's capacity (the minimum cut's included) is the
one under c_s, c_t plus sum_v delta_v = ``shift``: a maximum flow of the new network, less the
shift, is a maximum flow value of the network under c_s, c_t, and the two have the same minimum cuts.
The flow kept is feasible for the new capacities, so ``augment`` can go on from it.
"""

from __future__ import annotations

import numba
import numpy as np

# The largest sum of the capacities out of the source a reset may leave: above it the caller builds
# the network again (each reset may raise capacities by the flows kept; a flow is at most that sum,
# and int64 holds residual capacities up to 2^63).
CEILING = 2 ** 60
# Seconds the first call in a process may take: Numba compiles the loops where no compiled copy
# is cached yet, or loads them from the cache: docs/limits.md#time-limits
FIRST_CALL = 6.0


def ready(time_left: float | None) -> bool:
    """Whether the loops can be called with ``time_left`` seconds left (None: no limit): compiled or
    loaded in this process already, or the time left covers FIRST_CALL (a compile cannot be
    interrupted at a deadline)."""
    loops = (pair_terms, roof_network, roof_cut)  # (roof_cut's calls of the others are compiled into it)
    return time_left is None or all(loop.signatures for loop in loops) or time_left >= FIRST_CALL


@numba.njit(cache=True)
def augment(start, head, rev, res, source, sink, reached):  # pragma: no cover - compiled
    """The flow value added by pushing along residual paths until none is left (Dinic's phases: a
    breadth-first search for the levels, then a blocking flow by depth-first search).  ``reached``
    receives the nodes the last search reached: those reachable from the source along arcs of positive
    residual capacity, the source side of the minimum cut with the fewest nodes."""
    nodes = start.shape[0] - 1
    level = np.empty(nodes, np.int64)
    queue = np.empty(nodes, np.int64)
    cursor = np.empty(nodes, np.int64)
    path = np.empty(nodes, np.int64)
    total = 0
    while True:
        level[:] = -1
        level[source] = 0
        queue[0] = source
        first, last = 0, 1
        while first < last and level[sink] < 0:
            u = queue[first]
            first += 1
            for a in range(start[u], start[u + 1]):
                v = head[a]
                if res[a] > 0 and level[v] < 0:
                    level[v] = level[u] + 1
                    queue[last] = v
                    last += 1
        if level[sink] < 0:  # the search ran to its end: ``level`` marks what it reached
            for v in range(nodes):
                reached[v] = level[v] >= 0
            return total
        cursor[:] = start[:-1]
        depth, u = 0, source
        while True:
            if u == sink:
                amount = res[path[0]]
                for i in range(1, depth):
                    amount = min(amount, res[path[i]])
                back = depth
                for i in range(depth):
                    a = path[i]
                    res[a] -= amount
                    res[rev[a]] += amount
                    if res[a] == 0 and back == depth:
                        back = i
                total += amount
                depth = back
                u = source if back == 0 else head[path[back - 1]]
                continue
            moved = False
            while cursor[u] < start[u + 1]:
                a = cursor[u]
                v = head[a]
                if res[a] > 0 and level[v] == level[u] + 1 and (level[v] < level[sink] or v == sink):
                    path[depth] = a
                    depth += 1
                    u = v
                    moved = True
                    break
                cursor[u] += 1
            if not moved:
                if u == source:
                    break
                level[u] = -1  # a dead end for the rest of the phase
                depth -= 1
                u = head[rev[path[depth]]]
                cursor[u] += 1


@numba.njit(cache=True)
def short_paths(start, head, rev, res, from_source, to_sink):  # pragma: no cover - compiled
    """The flow value added by pushing along the paths s->v->t and s->v->w->t met in one pass over the
    nodes v other than the terminals and their arcs (each push as much as the path's residual capacities
    allow): a feasible flow stays feasible and each push adds its amount to the value (``augment``'s
    claim), so ``augment`` goes on from it.  It finds at once most of the short paths Dinic's first
    phases would, without their breadth-first searches (measured: docs/explanation/q-measure.md)."""
    total = 0
    nodes = from_source.shape[0]
    for v in range(nodes):
        a = from_source[v]
        if res[a] == 0:
            continue
        b = to_sink[v]
        amount = min(res[a], res[b])
        if amount > 0:
            for arc in (a, b):
                res[arc] -= amount
                res[rev[arc]] += amount
            total += amount
        for c in range(start[v], start[v + 1]):
            if res[a] == 0:
                break
            w = head[c]
            if res[c] == 0 or w >= nodes:  # (w a terminal)
                continue
            d = to_sink[w]
            amount = min(res[a], res[c], res[d])
            if amount > 0:
                for arc in (a, c, d):
                    res[arc] -= amount
                    res[rev[arc]] += amount
                total += amount
    return total


@numba.njit(cache=True)
def reset_terminals(cap, res, rev, from_source, to_sink, source_capacity, sink_capacity):  # pragma: no cover
    """(shift, the value of the flow kept, the sum of the capacities set on the arcs out of the source):
    the module docstring's reset, node v's arcs s->v at ``from_source[v]`` and v->t at ``to_sink[v]``."""
    shift, value, out_of_source = 0, 0, 0
    for v in range(from_source.shape[0]):
        a, b = from_source[v], to_sink[v]
        into, out = cap[a] - res[a], cap[b] - res[b]
        common = min(into, out)
        into -= common
        out -= common
        delta = max(0, into - source_capacity[v], out - sink_capacity[v])
        cap[a] = source_capacity[v] + delta
        cap[b] = sink_capacity[v] + delta
        res[a], res[rev[a]] = cap[a] - into, into
        res[b], res[rev[b]] = cap[b] - out, out
        shift += delta
        value += into
        out_of_source += cap[a]
    return shift, value, out_of_source


@numba.njit(cache=True)
def roof_cut(unary, scale, limit, cap, res, start, head, rev, from_source, to_sink):  # pragma: no cover
    """One roof dual on a network of the doubled graph (solvers/roof_dual.DescentNetwork) whose pairs
    and implications are in place: (status, the maximum flow less the reset's shift, the sum of the
    negative ``unary`` costs, the finite costs' sum, the labels of the minimum cut).  The unary cost
    u_i of b_i = 1 gives node p_i the arcs s->p_i of floor(max(u_i, 0) / 2 S) and p_i->t of
    floor(max(-u_i, 0) / 2 S), and node q_i the same two the other way round; the flow goes on from
    the network's (reset_terminals, then short_paths and augment).  Status 1: those costs times S
    exceed ``limit`` (the network unchanged), or the reset left more than CEILING out of the source (no
    flow run); the caller builds the network again.  Labels: 0 where p_i is on the source side and q_i
    is not, 1 the other way round, -1 otherwise."""
    n = unary.shape[0]
    negative, total = 0.0, 0.0
    for i in range(n):
        total += abs(unary[i])
        if unary[i] < 0:
            negative += unary[i]
    labels = np.full(n, -1, np.int8)
    if total * scale > limit:
        return 1, 0, negative, total, labels
    source_capacity = np.empty(2 * n, np.int64)
    sink_capacity = np.empty(2 * n, np.int64)
    for i in range(n):
        ones = np.int64(np.floor(max(unary[i], 0.0) / 2 * scale))
        zeros = np.int64(np.floor(max(-unary[i], 0.0) / 2 * scale))
        source_capacity[i], sink_capacity[i] = ones, zeros
        source_capacity[n + i], sink_capacity[n + i] = zeros, ones
    shift, kept, out_of_source = reset_terminals(cap, res, rev, from_source, to_sink, source_capacity,
                                                 sink_capacity)
    if out_of_source > CEILING:
        return 1, 0, negative, total, labels
    source, sink = 2 * n, 2 * n + 1
    seen = np.empty(2 * n + 2, np.bool_)
    kept += short_paths(start, head, rev, res, from_source, to_sink)
    flow = kept + augment(start, head, rev, res, source, sink, seen) - shift
    for i in range(n):
        if seen[i] and not seen[n + i]:
            labels[i] = 0
        elif seen[n + i] and not seen[i]:
            labels[i] = 1
    return 0, flow, negative, total, labels


@numba.njit(cache=True)
def pair_terms(n, first, weights):  # pragma: no cover - compiled
    """(-sum of the positive weights of each variable's pairs as their first, sum of |w|): a pair of w > 0
    moves -w onto its first variable's unary cost (solvers/roof_dual.py's normal form), and the
    network's finite arcs of pairs cost sum |w| in all."""
    unary = np.zeros(n)
    total = 0.0
    for k in range(first.shape[0]):
        if weights[k] > 0:
            unary[first[k]] -= weights[k]
        total += abs(weights[k])
    return unary, total


@numba.njit(cache=True)
def _arc(u, v, capacity, fill, head, rev, cap):  # pragma: no cover - compiled
    """Arc u -> v of ``capacity`` and its reverse in the compressed rows (``fill``: each node's next slot);
    the arc's position."""
    a, b = fill[u], fill[v]
    fill[u] += 1
    fill[v] += 1
    head[a], head[b] = v, u
    rev[a], rev[b] = b, a
    cap[a] = capacity
    return a


@numba.njit(cache=True)
def roof_network(n, first, second, weights, implied_first, implied_second, scale, implied):  # pragma: no cover
    """(start, head, rev, cap, res, from_source, to_sink): the doubled graph of solvers/roof_dual.py's
    module docstring with no flow, nodes p_i = i, q_i = n + i, s = 2n, t = 2n + 1: node v's arcs s->v
    (at ``from_source[v]``) and v->t (``to_sink[v]``) of capacity 0 (roof_cut sets them); a pair of
    weight w > 0 the arcs p_j->p_i and q_i->q_j, one of w <= 0 the arcs q_i->p_j and q_j->p_i, each of
    floor(|w| / 2 S); an implication b_i <= b_j the arcs p_j->p_i and q_i->q_j of ``implied``."""
    nodes, source, sink = 2 * n + 2, 2 * n, 2 * n + 1
    degree = np.zeros(nodes + 1, np.int64)
    for v in range(2 * n):
        degree[v + 1] += 2
    degree[source + 1] += 2 * n
    degree[sink + 1] += 2 * n
    for ends in ((first, second), (implied_first, implied_second)):
        for k in range(ends[0].shape[0]):  # a pair, whatever its sign, or an implication: one arc at each
            for v in (ends[0][k], ends[1][k], n + ends[0][k], n + ends[1][k]):  # of p_i, p_j, q_i, q_j
                degree[v + 1] += 1
    start = np.cumsum(degree)
    fill = start[:-1].copy()
    arcs = start[-1]
    head = np.empty(arcs, np.int64)
    rev = np.empty(arcs, np.int64)
    cap = np.zeros(arcs, np.int64)
    from_source = np.empty(2 * n, np.int64)
    to_sink = np.empty(2 * n, np.int64)
    for v in range(2 * n):
        from_source[v] = _arc(source, v, 0, fill, head, rev, cap)
        to_sink[v] = _arc(v, sink, 0, fill, head, rev, cap)
    for k in range(first.shape[0]):
        i, j, w = first[k], second[k], weights[k]
        capacity = np.int64(np.floor(abs(w) / 2 * scale))
        if w > 0:
            _arc(j, i, capacity, fill, head, rev, cap)
            _arc(n + i, n + j, capacity, fill, head, rev, cap)
        else:
            _arc(n + i, j, capacity, fill, head, rev, cap)
            _arc(n + j, i, capacity, fill, head, rev, cap)
    for k in range(implied_first.shape[0]):
        i, j = implied_first[k], implied_second[k]
        _arc(j, i, implied, fill, head, rev, cap)
        _arc(n + i, n + j, implied, fill, head, rev, cap)
    return start, head, rev, cap, cap.copy(), from_source, to_sink
