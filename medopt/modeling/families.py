"""Named variable, row and expression families that read the same for both model builders.

A formulation written with these functions builds a Pyomo model (named components with their
docs: the catalogue and LP exports show them) or a ``LinearModel`` (rows straight into a matrix,
for the hot paths) from one piece of code, so no model is written twice.
"""

from __future__ import annotations

from .pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from .linear import Linear, LinearModel, Row


def binaries(m, name: str, keys, doc: str) -> dict:
    """A family of binary variables ``name[key]``; key -> variable."""
    keys = list(keys)
    if isinstance(m, LinearModel):
        return {key: m.column((name, key)) for key in keys}
    m.add_component(name, pyo.Var(keys, domain=pyo.Binary, doc=doc))
    component = getattr(m, name)
    return {key: component[key] for key in keys}


def rows(m, name: str, relations: dict, doc: str) -> None:
    """A family of constraints ``name[key]`` (relations built with <=, >= or :func:`equal`)."""
    if isinstance(m, LinearModel):
        for relation in relations.values():
            m.add(relation)
        return
    if relations:
        m.add_component(name, pyo.Constraint(list(relations), rule=lambda _, *key: relations[_key(key)], doc=doc))


def row(m, name: str, relation, doc: str) -> None:
    """A single named constraint."""
    if isinstance(m, LinearModel):
        m.add(relation)
    else:
        m.add_component(name, pyo.Constraint(expr=relation, doc=doc))


def expression(m, name: str, expr, doc: str):
    """A named expression (a Pyomo Expression component; the expression itself for LinearModel)."""
    if isinstance(m, LinearModel):
        return expr
    m.add_component(name, pyo.Expression(expr=expr, doc=doc))
    return getattr(m, name)


def equal(left, right):
    """left == right as a relation either builder takes (Linear has no == of its own; two numbers
    make a constant row, which LinearModel checks)."""
    if isinstance(left, (Linear, int, float)) and isinstance(right, (Linear, int, float)):
        return Row(left - right, 0.0, 0.0)
    return left == right


def total(items):
    """sum(items), as one node for Linear expressions."""
    items = list(items)
    if any(isinstance(item, Linear) for item in items):
        return Linear.total(items)
    return sum(items)


def _key(key: tuple):
    return key[0] if len(key) == 1 else key
