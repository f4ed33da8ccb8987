"""Solver backends: a MatrixModel in, a solver-neutral Outcome out (HiGHS, CP-SAT)."""

from .backends import CUTOFF_SLACK, SOLVERS, HighsSession, Outcome, Solver, replace_integer, solve

__all__ = ["CUTOFF_SLACK", "SOLVERS", "HighsSession", "Outcome", "Solver", "replace_integer", "solve"]
