"""Companion measures: rank similarities reported *beside* MED, not MEDs themselves (SPEC 9).

A companion compares two rankings and needs no judgments; it has no optimisation, no method and
no certificate, so it is not a metric family of :mod:`medopt.metrics` (which are effectiveness
measures with a MED).  ``medopt compare``, ``medopt matrix``, ``medopt.compare`` and
``medopt.matrix`` recognise a companion's name among their ``-m`` strings
(:func:`parse_companion`) and report it in companion columns of its own rows.

The one companion today is rank-biased overlap, ``RBO(p=0.9)`` (optionally ``@k``):
Webber, Moffat & Zobel, *A similarity measure for indefinite rankings*, ACM TOIS 28(4), 2010.
With persistence ``p`` and ``X_d`` the overlap of the two lists' top ``d``:

* RBO_min, eq. (11): ``(1-p)/p * (sum_{d<=k} (X_d - X_k) p^d / d - X_k ln(1-p))``, the value if
  nothing below depth k ever agrees;
* the residual, eq. (12) (eq. (30)'s form for uneven lists): RBO_max - RBO_min, the weight still
  undecided at depth k;
* RBO_ext, eq. (32) (eq. (30) for lists of one length): the point estimate that assumes the
  agreement seen at depth k goes on.

Uneven lists (lengths s < l) follow section 4.3: below depth s, ``X_d`` counts the short list
whole against the long list's top d.  medopt reports RBO *to the depth both rankings share*
(SPEC 9): both rankings cut to the shorter one's length (and to ``k`` with ``@k``), where the
uneven formulas reduce to the even ones.

No maintained library computes all three (docs/architecture.md, *Which library does what*):
PyPI ``rbo`` 0.1.3 gives RBO_ext (eq. 32) but no RBO_min or residual and pins numpy < 2, which
medopt's dependencies cannot share; ``ranked-overlap`` 0.1.0 gives one extrapolated value, equal
to eq. (30) on lists of one length but not eq. (32) on uneven ones; ir_measures' ``Compat`` is
another measure (a run against the qrels).  So the formulas are written here, and
tests/metrics/test_rbo.py checks them against Webber's own rbo_ext values, a reference RBO_min/residual
implementation's values, a brute-force computation from the definition, and both libraries.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import NamedTuple, Sequence

from ..errors import MetricSyntaxError

RBO_COLUMNS = ("rbo_min", "rbo_residual", "rbo_ext")
COMPANION_METHOD = "rbo"  # the method column of a companion row (it has no MED method)
_FORM = re.compile(r"^(?P<name>RBO)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[^@()]+))?$", re.IGNORECASE)


class RBOValue(NamedTuple):
    """RBO_min, the residual (RBO_max = min + residual) and RBO_ext, at the depth evaluated."""

    min: float
    residual: float
    ext: float


@dataclass(frozen=True)
class RBO:
    """The companion ``RBO(p=...)@k``: rank-biased overlap with persistence ``p`` (default 0.9, Tan &
    Clarke's choice), to the depth both rankings share, or to ``k`` where both are that long."""

    p: float = 0.9
    cutoff: int | None = None

    def __str__(self) -> str:
        text = f"RBO(p={self.p:g})"
        return text + (f"@{self.cutoff}" if self.cutoff else "")

    def evaluate(self, a: Sequence, b: Sequence) -> RBOValue:
        depth = min(len(a), len(b), self.cutoff or math.inf)
        return rbo(list(a)[:depth], list(b)[:depth], self.p)


def parse_companion(text) -> RBO | None:
    """The companion named by ``text`` (``RBO``, ``RBO(p=0.95)``, ``RBO(p=0.9)@20``), or None when
    ``text`` names no companion (then it is a metric string for :func:`medopt.metrics.parse_metric`)."""
    if isinstance(text, RBO):
        return text
    if not isinstance(text, str):
        return None
    match = _FORM.match(text.strip())
    if not match:
        return None
    p, cutoff = 0.9, None
    for item in filter(str.strip, (match["params"] or "").split(",")):
        key, sep, value = (part.strip() for part in item.partition("="))
        if key != "p" or not sep:
            raise MetricSyntaxError(f"{text!r}: RBO takes one parameter, p=persistence (e.g. RBO(p=0.9))")
        try:
            p = float(value)
        except ValueError:
            p = math.nan
        if not 0 < p < 1:
            raise MetricSyntaxError(f"{text!r}: RBO's persistence p must be between 0 and 1, got {value!r}")
    if match["cutoff"] is not None:
        if not match["cutoff"].isdigit() or int(match["cutoff"]) < 1:
            raise MetricSyntaxError(f"{text!r}: cutoff must be a positive integer, got {match['cutoff']!r}")
        cutoff = int(match["cutoff"])
    return RBO(p, cutoff)


def rbo(a: Sequence, b: Sequence, p: float) -> RBOValue:
    """RBO_min, residual and RBO_ext of two rankings (no item twice in one), to their full depths
    (uneven lists by Webber et al.'s section 4.3)."""
    if not 0 < p < 1:
        raise ValueError(f"RBO's persistence p must be between 0 and 1, got {p!r}")
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(short), len(long_)
    if s == 0:  # nothing seen: anything is possible
        return RBOValue(0.0, 1.0, 1.0 if l == 0 else 0.0)
    overlap, seen_short, seen_long, x = 0, set(), set(), [0] * (l + 1)
    for d in range(1, l + 1):  # x[d] = X_d (past s: the short list whole against the long list's top d)
        item = long_[d - 1]
        if d <= s:
            other = short[d - 1]
            if other == item:
                overlap += 1
            else:
                overlap += (other in seen_long) + (item in seen_short)
            seen_short.add(other)
        else:
            overlap += item in seen_short
        seen_long.add(item)
        x[d] = overlap
    x_s, x_l = x[s], x[l]
    scale = (1 - p) / p
    log_tail = math.log(1 / (1 - p))
    harmonic = [0.0] * (l + s + 1)  # harmonic[d] = sum_{i<=d} p^i / i
    for d in range(1, l + s + 1):
        harmonic[d] = harmonic[d - 1] + p ** d / d
    weighted = math.fsum(x[d] * p ** d / d for d in range(1, l + 1))
    minimum = scale * (weighted - x_l * harmonic[l] + x_l * log_tail)
    f = l + s - x_l
    residual = p ** s + p ** l - p ** f - scale * (
        s * (harmonic[f] - harmonic[s]) + l * (harmonic[f] - harmonic[l]) + x_l * (log_tail - harmonic[f]))
    beyond = math.fsum(x_s * (d - s) / (s * d) * p ** d for d in range(s + 1, l + 1))
    ext = scale * (weighted + beyond) + ((x_l - x_s) / l + x_s / s) * p ** l
    return RBOValue(_unit(minimum), _unit(residual), _unit(ext))


def _unit(value: float) -> float:
    """Rounding's excursions outside [0, 1] (a residual of -1e-17) clipped."""
    return min(1.0, max(0.0, value))


__all__ = ["RBO", "RBOValue", "RBO_COLUMNS", "COMPANION_METHOD", "parse_companion", "rbo"]
