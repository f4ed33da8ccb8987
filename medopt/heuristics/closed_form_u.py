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

The arithmetic is the array kernel of kernels/closed_forms.py (character_weights, character_ends).
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
from ..kernels.closed_forms import character_ends, character_weights as kernel_weights
from .closed_form import med_of_ends, range_of_ends


def character_weights(instance: PassageInstance) -> tuple[np.ndarray, np.ndarray]:
    """(keys, net weights): each distinct character of the two trailtexts once, sorted by key, with
    W_A(x) - W_B(x) (integers; kernels.closed_forms.character_weights)."""
    return kernel_weights(*instance.characters(instance.a), *instance.characters(instance.b))


def closed_form_u_ends(instance: PassageInstance) -> dict[str, tuple[float, dict]]:
    """{"a": (max U(A) - U(B), assignment), "b": (max U(B) - U(A), assignment)}."""
    keys, net = character_weights(instance)
    known = instance.judged_mask[keys >> SHIFT] if len(keys) else np.zeros(0, dtype=bool)
    relevant = instance.relevant_keys(keys)
    scale = instance.gain / instance.metric.length
    return {direction: (scale * total, instance.runs_of(keys[helps]))
            for direction, (total, helps) in character_ends(net, known, relevant).items()}


def closed_form_u(instance: PassageInstance) -> MedResult:
    started = time.perf_counter()
    return med_of_ends(instance, closed_form_u_ends(instance), started)


def closed_form_u_range(instance: PassageInstance) -> RangeResult:
    started = time.perf_counter()
    return range_of_ends(instance, closed_form_u_ends(instance), started)
