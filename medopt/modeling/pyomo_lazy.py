"""``pyo``: ``pyomo.environ`` loaded on its first use, not when a formulation module is imported.

Importing Pyomo (``pyomo.environ`` loads every plugin package) is the larger part of a fresh
interpreter's first exact call, and a time limit counts it (docs/limits.md#time-limits).  Many
calls never write a Pyomo model: the bounds without a model settle them, the heuristics' answer is
returned when the time is up, or the model is written as a ``LinearModel``.  So the formulations
and the model builders name Pyomo through ``pyo``, which imports ``pyomo.environ`` (after
``pyomo_setup``) on the first attribute asked for; each attribute is then kept on ``pyo`` itself,
so later uses cost a plain attribute lookup.  ``pyomo_loaded`` says whether that has happened.
"""

from __future__ import annotations

import sys

from ..errors import interruptible_import


class _Pyomo:
    """Stands for the ``pyomo.environ`` module: ``pyo.ConcreteModel``, ``pyo.Var``, ``pyo.value``, ..."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)  # copy, pickle and introspection probes: not Pyomo's names
        from . import pyomo_setup  # noqa: F401  (it must run before Pyomo is imported)

        with interruptible_import():
            import pyomo.environ as environ
        value = getattr(environ, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"<pyomo.environ, {'loaded' if pyomo_loaded() else 'loaded on first use'}>"


def pyomo_loaded() -> bool:
    return "pyomo.environ" in sys.modules


pyo = _Pyomo()
