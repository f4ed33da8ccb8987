"""MED-U in closed form: Tan & Clarke's dot-product method (their section III) over characters
(their section VIII; SPEC 8).

U(A) - U(B) = (c / L) sum_x (W_A(x) - W_B(x)) r_x over the distinct characters x = (docid, offset)
of both trailtexts, where W_X(x) = sum of (L - i) over the positions i at which x appears in X's
trailtext (0 if it does not; a character twice in one trailtext, through overlapping passages,
adds both positions) and r_x in {0, 1} is its relevance.  Judged characters have their r_x fixed
(passages.py); every unknown character is its own variable, independent of the others, so each
term is maximised alone: for max U(A) - U(B), r_x = 1 exactly when W_A(x) - W_B(x) > 0; for
max U(B) - U(A), when it is < 0.  A bound character (in both trailtexts) thus takes one value,
chosen by its net weight.  Each direction's maximum is exact on its own, so the two are the ends
of the difference range (SPEC 7) and the larger is MED-U; the score range of one trailtext is the
difference range against an empty one.

The whole computation is a few NumPy passes over the characters (one ``np.unique`` joins the
occurrences of a character): a topic pair at L = 12,000 in milliseconds (docs/explanation/index.md).  The
weights are integers and the value is c * (an integer) / L, so both ends are exact to rounding.
Every answer is re-scored by the U evaluator of ``metrics/u.py`` (interval arithmetic, no code
shared with this module) before it may be called certified (``result.certify``).
"""

from __future__ import annotations

import time

import numpy as np

from ..core.passage_instance import SHIFT, PassageInstance
from ..core.result import MedResult, RangeResult
from .closed_form import med_of_ends, range_of_ends


def character_weights(instance: PassageInstance) -> tuple[np.ndarray, np.ndarray]:
    """(keys, net weights): each distinct character of the two trailtexts once, sorted by key, with
    W_A(x) - W_B(x) (integers)."""
    keys_a, weights_a = instance.characters(instance.a)
    keys_b, weights_b = instance.characters(instance.b)
    keys, where = np.unique(np.concatenate((keys_a, keys_b)), return_inverse=True)
    where = where.reshape(-1)
    count = len(keys_a)  # integer weights below 2^53 add exactly as floats
    net = (np.bincount(where[:count], weights=weights_a, minlength=len(keys))
           - np.bincount(where[count:], weights=weights_b, minlength=len(keys)))
    return keys, net.astype(np.int64)


def closed_form_u_ends(instance: PassageInstance) -> dict[str, tuple[float, dict]]:
    """{"a": (max U(A) - U(B), assignment), "b": (max U(B) - U(A), assignment)}."""
    keys, net = character_weights(instance)
    known = instance.judged_mask[keys >> SHIFT] if len(keys) else np.zeros(0, dtype=bool)
    fixed = int(net[known & instance.relevant_keys(keys)].sum())        # judged relevant characters
    free = net[~known]
    scale = instance.gain / instance.metric.length
    ends = {}
    for direction, sign in (("a", 1), ("b", -1)):
        helps = ~known & (sign * net > 0)
        total = sign * fixed + int((sign * free).clip(min=0).sum())
        ends[direction] = (scale * total, instance.runs_of(keys[helps]))
    return ends


def closed_form_u(instance: PassageInstance) -> MedResult:
    started = time.perf_counter()
    return med_of_ends(instance, closed_form_u_ends(instance), started)


def closed_form_u_range(instance: PassageInstance) -> RangeResult:
    started = time.perf_counter()
    return range_of_ends(instance, closed_form_u_ends(instance), started)
