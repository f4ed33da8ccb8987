"""The flip columns (SPEC 11) of the summary rows of ``compare --flip`` and ``matrix --summary --flip``."""

from __future__ import annotations

import warnings

from ..errors import MedoptError, MedoptWarning
from ..io.store import FLIP_COLUMNS
from .distance import flip_distance


def _warn(message: str) -> None:
    warnings.warn(message, MedoptWarning, stacklevel=3)


__all__ = ["FLIP_COLUMNS", "flip_columns", "pair_flips"]


def flip_columns(metric: str, run_a, run_b, qrels, *, warn=_warn, **options) -> dict:
    """The flip columns of one pair's summary row: ``flip_distance`` (F; empty when no completion
    flips, ``flip_certified`` then saying it is proven), ``flip_documents`` (N), ``flip_certified``.
    Its warnings (labels of judged documents ignored) go to ``warn``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MedoptWarning)
        result = flip_distance(metric, run_a, run_b, qrels, **options)
    for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, MedoptWarning)):
        warn(message)
    return {"flip_distance": result.distance, "flip_documents": result.documents,
            "flip_certified": result.certified}


def pair_flips(pairs, runs: dict, qrels, *, warn=_warn, **options) -> list[dict]:
    """The per-pair summary rows ``pairs`` (batch.summary's, or a store's ``pairs`` table) with the flip
    columns added: each (pair, metric) computed once by flips.flip_distance over the pair's SPEC 10
    topics.  ``runs``: run name -> run in any form; ``options`` as for flip_distance."""
    said, done, out = set(), {}, []
    once = lambda message: message in said or said.add(message) or warn(message)
    for row in pairs:
        key = (row["run_a"], row["run_b"], row["metric"])
        if key not in done:
            missing = [name for name in key[:2] if name not in runs]
            if missing:
                raise MedoptError(f"--flip: no run named {missing[0]} among {', '.join(runs)}")
            done[key] = flip_columns(row["metric"], runs[key[0]], runs[key[1]], qrels, warn=once, **options)
        out.append({**row, **done[key]})
    return out
