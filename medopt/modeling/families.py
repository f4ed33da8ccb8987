"""Named variable, row, expression and objective families that read the same for both model builders.

A formulation written with these functions builds a Pyomo model (named components with their
docs: the catalogue and LP exports show them) or a ``LinearModel`` (rows straight into a matrix,
for the hot paths) from one piece of code, so no model is written twice, and no formulation
names the builder it writes to: the choice of builder is ``new_model`` or ``new_matrix``, and
every difference between the two is settled here.
"""

from __future__ import annotations

from pyomo.common.errors import InfeasibleConstraintException

from .pyomo_lazy import pyo, pyomo_loaded  # pyomo.environ, loaded on first use

from .linear import Linear, LinearModel, Row
from .pyomo_model import binary_and as pyomo_binary_and

# a constant row that fails (both builders raise it; Pyomo's own exception)
InfeasibleModel = InfeasibleConstraintException


def new_matrix(instance) -> LinearModel:
    """A model written straight into matrix rows (no Pyomo): the grade variables x[d, g] and the rows
    every model shares (one_grade, relevance limits, dominance), as ``new_model``'s."""
    return LinearModel(instance)


def is_matrix(m) -> bool:
    """Whether ``m`` is written straight into matrix rows (``new_matrix``) rather than with Pyomo."""
    return isinstance(m, LinearModel)


def index(m, name: str, members, doc: str, dimen: int | None = None):
    """A named, ordered index set ``name`` (a Pyomo Set; the members' list for a matrix model)."""
    members = list(members)
    if is_matrix(m):
        return members
    options = {} if dimen is None else {"dimen": dimen}
    m.add_component(name, pyo.Set(initialize=members, ordered=True, doc=doc, **options))
    return getattr(m, name)


def _index_of(keys):
    """A declared Pyomo set as it is (the model then names it), anything else as a list of keys."""
    if pyomo_loaded():  # before Pyomo is loaded no key set can be one of its sets
        from pyomo.core.base.set import SetData

        if isinstance(keys, SetData):
            return keys
    return list(keys)


def binaries(m, name: str, keys, doc: str) -> dict:
    """A family of binary variables ``name[key]`` over ``keys`` (a list, or a set from ``index``);
    key -> variable."""
    if is_matrix(m):
        return {key: m.column((name, key)) for key in keys}
    keys = _index_of(keys)
    m.add_component(name, pyo.Var(keys, domain=pyo.Binary, doc=doc))
    component = getattr(m, name)
    return {key: component[key] for key in keys}


def continuous(m, name: str, keys, bounds: tuple, doc: str):
    """A family of continuous variables ``name[key]`` within ``bounds`` (Pyomo models only: every
    column of a matrix model is binary); the variable component."""
    if is_matrix(m):
        raise TypeError("a matrix model's columns are binary: continuous variables need new_model")
    m.add_component(name, pyo.Var(_index_of(keys), bounds=bounds, doc=doc))
    return getattr(m, name)


def fix(variable, value) -> None:
    """Fix one variable of a Pyomo model to ``value`` (it stays a column of the model)."""
    variable.fix(value)


def rows(m, name: str, relations: dict, doc: str) -> None:
    """A family of constraints ``name[key]`` (relations built with <=, >=, :func:`equal` or :func:`between`)."""
    if is_matrix(m):
        for relation in relations.values():
            m.add(relation)
        return
    if relations:
        m.add_component(name, pyo.Constraint(list(relations), rule=lambda _, *key: relations[_key(key)], doc=doc))


def rows_over(m, name: str, keys, rule, doc: str) -> None:
    """A family of constraints ``name[key]`` for every key of ``keys`` (a list, or a set from ``index``),
    ``rule(key)`` its relation, or None for a key that has no row."""
    if is_matrix(m):
        for key in keys:
            relation = rule(key)
            if relation is not None:
                m.add(relation)
        return

    def pyomo_rule(_, *key):
        relation = rule(_key(key))
        return pyo.Constraint.Skip if relation is None else relation

    m.add_component(name, pyo.Constraint(_index_of(keys), rule=pyomo_rule, doc=doc))


def row(m, name: str, relation, doc: str) -> None:
    """A single named constraint."""
    if is_matrix(m):
        m.add(relation)
    else:
        m.add_component(name, pyo.Constraint(expr=relation, doc=doc))


def row_list(m, name: str, doc: str):
    """A family of constraints ``name[1..]`` added one by one (``.add(relation)``)."""
    if is_matrix(m):
        return m
    m.add_component(name, pyo.ConstraintList(doc=doc))
    return getattr(m, name)


def expression(m, name: str, expr, doc: str):
    """A named expression (a Pyomo Expression component; the expression itself for a matrix model)."""
    if is_matrix(m):
        return expr
    m.add_component(name, pyo.Expression(expr=expr, doc=doc))
    return getattr(m, name)


def expressions(m, name: str, keys, rule, doc: str):
    """A family of named expressions ``name[key] = rule(key)``; key -> expression."""
    if is_matrix(m):
        return {key: rule(key) for key in keys}
    m.add_component(name, pyo.Expression(_index_of(keys), rule=lambda _, *key: rule(_key(key)), doc=doc))
    return getattr(m, name)


def objective(m, expr, doc: str):
    """The model's objective, maximised: a Pyomo Objective ``objective``; for a matrix model the
    expression, which the caller sets as the matrix's objective (``m.vector``)."""
    if is_matrix(m):
        return expr
    m.objective = pyo.Objective(expr=expr, sense=pyo.maximize, doc=doc)
    return m.objective


def binary_and(m, name: str, pairs: dict, doc: str, signs: dict | None = None) -> None:
    """y[k] = u * v for binary expressions (u, v) = pairs[k], exactly (pyomo_model.binary_and:
    with ``signs`` only the side that binds in a maximised objective), as ``m.<name>``."""
    if is_matrix(m):
        if getattr(m, name, None) is None:
            setattr(m, name, {})
        m.binary_and(name, pairs, signs)
    else:
        pyomo_binary_and(m, name, pairs, doc=doc, signs=signs)


def summation(m):
    """The sum function for ``m``'s expressions: one node per sum for a matrix model (``Linear.total``,
    even over no term), Python's sum for Pyomo."""
    return Linear.total if is_matrix(m) else sum


def equal(left, right):
    """left == right as a relation either builder takes (Linear has no == of its own; two numbers
    make a constant row, which LinearModel checks)."""
    if isinstance(left, (Linear, int, float)) and isinstance(right, (Linear, int, float)):
        return Row(left - right, 0.0, 0.0)
    return left == right


def between(lower, expr, upper):
    """lower <= expr <= upper as one relation either builder takes."""
    if isinstance(expr, Linear):
        return Row(expr, lower, upper)
    return pyo.inequality(lower, expr, upper)


def total(items):
    """sum(items), as one node for Linear expressions."""
    items = list(items)
    if any(isinstance(item, Linear) for item in items):
        return Linear.total(items)
    return sum(items)


def _key(key: tuple):
    return key[0] if len(key) == 1 else key
