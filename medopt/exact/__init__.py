"""Exact MED: the driver (``driver.exact``: both directions, reductions, warm starts, certificate),
the generic strategies it runs on a formulation's models (direct, cases, dinkelbach, boxes), and
the enumeration oracle (``enumeration``).  Modules are imported where used: the driver pulls in
Pyomo and the solvers, the oracle does not."""
