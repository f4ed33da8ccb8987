"""Reductions: the instance of one direction with the facts its metric declares applied.

A family states which reductions hold for it, each with its proof, in its own class body
(``Metric.reductions``; see metrics/base.Reduction); a family that states none gets none.  This
module applies them, under the side-constraint conditions each proof needs:

* ``WORSE_ONLY_ZERO`` -- no "at least" limit (zeroing a document keeps every "at most" limit met);
* ``NET_WEIGHT_ZERO`` -- no "at least" limit; the metric gives ``net_weights(depth)``;
* ``BETTER_ONLY_TOP`` and ``SHARED_ENDS_ZERO`` -- no limits at all;
* ``RANK_DOMINANCE`` -- any limits (the swap in its proof keeps the multiset of grades).

Every claim is about a maximiser of M(X) - M(Y).  A proof not marked ``any_sign`` needs that
maximum to be >= 0: for MED that costs nothing (a direction whose maximum is negative does not
hold the MED, and the bound max(bound_a, bound_b) stays valid), but one end of a range is a
direction's maximum in its own right, so ``reaches_positive=False`` (no assignment known to give
the direction a difference > 0) applies only the facts proved for any sign.  (Strictly positive:
the cascade's shared prefix can lose a maximum of exactly 0, a stopping document in the prefix.)  Fixed documents
join the judgments (``Instance.fixed`` records them); dominance pairs become model rows.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .instance import Instance
from .deadlines import check_time
from ..metrics.base import Reduction, declared_reductions


def reduce(instance: Instance, direction: str, *, reaches_positive: bool = True) -> Instance:
    """``instance`` with the reductions its metric declares applied for ``direction``; with
    ``reaches_positive=False`` only those whose proof holds whatever the sign of the maximum."""
    facts = {fact: proof for fact, proof in declared_reductions(instance.metric).items()
             if reaches_positive or proof.any_sign}
    if not facts:
        return instance
    better, worse = (instance.a, instance.b) if direction == "a" else (instance.b, instance.a)
    in_better, in_worse = set(better), set(worse)
    unjudged = set(instance.unjudged)
    no_lower_limit = all(limit.low == 0 for limit in instance.limits)
    fixed, dominance, keys = {}, (), {}
    if Reduction.WORSE_ONLY_ZERO in facts and no_lower_limit:
        fixed.update({d: 0 for d in worse if d in unjudged and d not in in_better})
    if Reduction.BETTER_ONLY_TOP in facts and not instance.limits:
        fixed.update({d: instance.max_grade for d in better if d in unjudged and d not in in_worse})
    if Reduction.NET_WEIGHT_ZERO in facts and no_lower_limit:
        weights = instance.metric.net_weights(max(len(better), len(worse)))
        at_better, at_worse = {d: i for i, d in enumerate(better)}, {d: i for i, d in enumerate(worse)}
        weight = lambda at, d: weights[at[d]] if d in at else 0.0
        fixed.update({d: 0 for d in instance.unjudged
                      if d not in fixed and weight(at_better, d) <= weight(at_worse, d)})
    if Reduction.SHARED_ENDS_ZERO in facts and not instance.limits:
        fixed.update({d: 0 for d in shared_ends(better, worse) if d in unjudged and d not in fixed})
    if Reduction.RANK_DOMINANCE in facts:
        free = [d for d in instance.unjudged if d not in fixed]
        keys = dominance_keys(free, better, worse)
        dominance = rank_dominance(free, keys)
    if not fixed and not dominance:
        return instance
    judgments = dict(instance.judgments)
    judgments.update(fixed)
    return replace(instance, judgments=judgments, fixed=fixed, dominance=dominance,
                   dominance_keys=keys if dominance else {})


def shared_ends(x: tuple, y: tuple) -> tuple:
    """Documents of the common prefix of two lists (the same document at each of the first ranks)
    and of the common suffix below a top part both hold as a set (SHARED_ENDS_ZERO)."""
    prefix = 0
    while prefix < min(len(x), len(y)) and x[prefix] == y[prefix]:
        prefix += 1
    top = len(x)
    if len(x) == len(y):
        while top > prefix and x[top - 1] == y[top - 1]:
            top -= 1
        if set(x[:top]) != set(y[:top]):
            top = len(x)
    return x[:prefix] + x[top:]


def dominance_keys(docs, better, worse) -> dict:
    """doc -> (rank in the better list, rank in the worse list), absent = deeper than both."""
    deep = len(better) + len(worse) + 1
    rank_better, rank_worse = {d: i for i, d in enumerate(better)}, {d: i for i, d in enumerate(worse)}
    return {d: (rank_better.get(d, deep), rank_worse.get(d, deep)) for d in docs}


def rank_dominance(docs, key: dict) -> tuple:
    """Covering pairs (d, e) of the order: d above or level with e in the better list and
    below or level with e in the worse one.  The rest follows by transitivity.  O(n^2), one
    array pass per document (and a deadline check: limits.check_time)."""
    docs = list(docs)
    if not docs:
        return ()
    better = np.array([key[d][0] for d in docs], dtype=np.int64)
    worse = np.array([key[d][1] for d in docs], dtype=np.int64)
    # nearest to e in the better list first: by better rank descending, then worse rank ascending
    # (no two documents share both ranks, and the order within docs breaks no tie)
    order = np.lexsort((worse, -better))
    better_sorted, worse_sorted = better[order], worse[order]
    ascending = better_sorted[::-1]
    pairs = []
    for position, e in enumerate(docs):
        check_time()
        better_e, worse_e = better[position], worse[position]
        # the dominators' candidates: better rank <= e's, a suffix of the order
        first = len(docs) - int(np.searchsorted(ascending, better_e, side="right"))
        candidates = order[first:]
        below = worse_sorted[first:]
        keep = (below >= worse_e) & (candidates != position)
        candidates, below = candidates[keep], below[keep]
        if candidates.size == 0:
            continue
        # a dominator covers e when nothing found before it lies between it and e: a new lowest worse rank
        lowest = np.minimum.accumulate(below)
        covering = np.concatenate(([True], below[1:] < lowest[:-1]))
        pairs.extend((docs[d], e) for d in candidates[covering].tolist())
    return tuple(pairs)
