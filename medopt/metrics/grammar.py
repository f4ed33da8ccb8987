"""The metric-string grammar: ir_measures' ``Name(param=value,...)@k`` and trec_eval names.

Names, aliases and trec_eval names come from the families' declarations (base.REGISTRY).

>>> str(parse_metric("ndcg_cut.10"))
'nDCG@10'
>>> str(parse_metric("RBP(p=0.95)"))
'RBP(p=0.95)'
"""

from __future__ import annotations

import difflib
import re

from ..errors import MetricSyntaxError
from .base import REGISTRY, Metric
from .u import CHARACTER_REGISTRY

_GRAMMAR = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_]*)"
    r"(?:\((?P<params>[^()]*)\))?"
    r"(?:@(?P<cutoff>[^@()]+))?$"
)
_TREC_EVAL_NAME = re.compile(r"^(?P<name>[A-Za-z_]+?)(?:[._](?P<cutoff>\d+))?$")


def metric_names() -> list[str]:
    return sorted(REGISTRY)


def trec_eval_names() -> dict[str, tuple[str, bool]]:
    """trec_eval measure name -> (family, whether it needs a cutoff), from the declarations."""
    return {name: (family.family, needs) for family in REGISTRY.values() for name, needs in family.trec_eval.items()}


def find_family(name: str):
    """The family named ``name`` or one of its aliases (exact spelling first, then any case); the
    character-level families (U, metrics/u.py) are found too."""
    names = {n: f for f in (*REGISTRY.values(), *CHARACTER_REGISTRY.values()) for n in (f.family, *f.aliases)}
    return names.get(name) or {k.lower(): v for k, v in names.items()}.get(name.lower())


def did_you_mean(name: str, tail: str = "", *, trec_eval: bool = False) -> str:
    """' (did you mean 'nDCG@10'?)' for a name close to a family's name or alias (ir_measures'
    spellings) or a trec_eval name (difflib, any case; with ``trec_eval`` the trec_eval spelling first
    where both read alike), ``tail`` (the rest of the text: a cutoff, the parameters) kept; else ''."""
    families = {n.lower(): n for f in (*REGISTRY.values(), *CHARACTER_REGISTRY.values()) for n in (f.family, *f.aliases)}
    measures = {n.lower(): n for n in trec_eval_names()}
    known = {**families, **measures} if trec_eval else {**measures, **families}
    close = difflib.get_close_matches(name.lower(), list(known), n=1, cutoff=0.6)
    return f" (did you mean {known[close[0]] + tail!r}?)" if close else ""


def parse_metric(text: str | Metric) -> Metric:
    """Parse ``Name(param=value,...)@k`` (or a trec_eval name) into a Metric."""
    if isinstance(text, Metric):
        return text
    if not isinstance(text, str):
        raise MetricSyntaxError(f"a metric must be a string like 'nDCG@10', got {type(text).__name__}")
    source = text
    text = text.strip()
    alias = _TREC_EVAL_NAME.match(text)
    trec_eval = trec_eval_names()
    if alias and alias["name"] in trec_eval and not (alias["cutoff"] is None and alias["name"] in REGISTRY):
        family, needs_cutoff = trec_eval[alias["name"]]
        if needs_cutoff and alias["cutoff"] is None:
            raise MetricSyntaxError(f"{source!r}: trec_eval's {alias['name']} needs a cutoff, e.g. {alias['name']}.10")
        return _build(source, family, {}, alias["cutoff"])
    match = _GRAMMAR.match(text)
    if not match:
        guess = did_you_mean(alias["name"], text[len(alias["name"]):], trec_eval=True) if alias else ""
        raise MetricSyntaxError(
            f"{source!r} is not a metric string{guess}; expected Name(param=value,...)@k, e.g. nDCG@10, "
            "RBP(p=0.95), AP(norm=min)@100, or a trec_eval name (ndcg_cut.10)"
        )
    params = {}
    if match["params"] is not None and match["params"].strip():
        for item in _split_params(match["params"]):
            key, sep, value = item.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise MetricSyntaxError(f"{source!r}: parameter {item.strip()!r} is not of the form name=value")
            if key.strip() in params:
                raise MetricSyntaxError(f"{source!r}: parameter {key.strip()!r} given twice")
            params[key.strip()] = value.strip()
    return _build(source, match["name"], params, match["cutoff"])


def _split_params(text: str) -> list[str]:
    """The items of a parameter list, split at the commas outside braces (a gain map
    ``gains={0:0,1:1,2:3}`` holds commas of its own)."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    return items + [text[start:]]


MAX_CUTOFF = 2 ** 31 - 1  # deeper than any ranking; beyond, a cutoff is refused, not overflowed


def _build(source: str, name: str, raw_params: dict[str, str], raw_cutoff: str | None) -> Metric:
    family = find_family(name)
    if family is None:
        text = source.strip()
        guess = did_you_mean(name, text[len(name):] if text.startswith(name) else "")
        raise MetricSyntaxError(f"{source!r}: unknown metric {name!r}{guess}; known: {', '.join(metric_names())}")
    cutoff = None
    if raw_cutoff is not None:
        if not raw_cutoff.isdigit() or int(raw_cutoff) < 1:
            raise MetricSyntaxError(f"{source!r}: cutoff must be a positive integer, got {raw_cutoff!r}")
        if int(raw_cutoff) > MAX_CUTOFF:  # (array kernels index ranks with 32- and 64-bit integers)
            raise MetricSyntaxError(f"{source!r}: cutoff {raw_cutoff} is too large (at most {MAX_CUTOFF})")
        cutoff = int(raw_cutoff)
    params = []
    for key, raw in raw_params.items():
        spec = family.PARAMS.get(key)
        if spec is None:
            known = ", ".join(family.PARAMS) or "none"
            raise MetricSyntaxError(f"{source!r}: {family.family} has no parameter {key!r} (parameters: {known})")
        value = _convert(source, key, raw, spec)
        params.append((key, value))
    params.sort()
    return family(params=tuple(params), cutoff=cutoff)


def _convert(source, key, raw, spec):
    """A parameter's text as its kind: int, float, bool (True / False, as ir_measures writes them), a
    kind with its own ``parse`` (a gain map), else a string, which may be quoted as in ir_measures
    (``dcg='exp-log2'`` is ``dcg=exp-log2``)."""
    try:
        if spec.kind is int:
            if not re.fullmatch(r"[+-]?\d+", raw):
                raise ValueError
            value = int(raw)
        elif spec.kind is float:
            value = float(raw)
        elif spec.kind is bool:
            value = {"true": True, "false": False}[raw.lower()]
        elif hasattr(spec.kind, "parse"):
            value = spec.kind.parse(raw)
        else:
            value = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" else raw
    except (ValueError, KeyError) as error:
        reason = f": {error}" if hasattr(spec.kind, "parse") and str(error) else ""
        kind = {"GainMap": "a gain map {grade:gain,...}"}.get(spec.kind.__name__, spec.kind.__name__)
        raise MetricSyntaxError(f"{source!r}: parameter {key} must be {kind}, got {raw!r}{reason}") from None
    if not spec.check(value):
        raise MetricSyntaxError(f"{source!r}: bad value {raw!r} for {key} ({spec.doc})")
    return value
