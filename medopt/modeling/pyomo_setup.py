"""Set-up that must run before Pyomo is imported (``medopt.modeling`` imports this module first)."""

import sys


def finalize_scipy(module, available: bool) -> None:
    """Pyomo's own ``_finalize_scipy`` imports ``scipy.stats``, ``integrate``, ``sparse`` and ``spatial``
    once SciPy is available; its matrix writer (LinearStandardFormCompiler, modeling/matrix.py) needs
    ``scipy.sparse`` only, and SciPy loads any other submodule on its first use."""
    if available:
        import scipy.sparse  # noqa: F401


def defer_pyomos_scipy_stats() -> None:
    """Keep Pyomo from importing ``scipy.stats``, a large part of a cold start, which a solve's time
    limit counts (measured: docs/limits.md#time-limits).  Pyomo resolves its deferred ``scipy``
    (``pyomo.common.dependencies.scipy_available``) on its first model written as a matrix, or, in
    recent releases, through an import hook on SciPy's first import, and then runs its callback,
    ``_finalize_scipy``, which imports ``scipy.stats``; no model here uses it.  The callback is
    replaced by ``finalize_scipy``.  The indicator is private to Pyomo, so anything unexpected leaves
    it as it is."""
    if "scipy" in sys.modules:
        return  # Pyomo's callback has run, or runs as soon as Pyomo is imported
    try:
        from pyomo.common import dependencies
    except ImportError:
        return
    indicator = getattr(dependencies, "scipy_available", None)
    if getattr(indicator, "_callback", None) is not None and getattr(indicator, "_module", True) is None:
        indicator._callback = finalize_scipy


defer_pyomos_scipy_stats()
