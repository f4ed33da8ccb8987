"""medopt: exact Maximized Effectiveness Difference between two rankings, with certificates.

Every name is loaded when first used (NumPy, the solvers, pandas): ``import medopt`` and
``import medopt.cli`` are instant, so that the command installs its signal handlers before any heavy
import (an interrupt at any moment is one line, docs/limits.md#interrupts).
"""

_LAZY = {
    "med": "api", "score": "api", "difference_range": "api", "score_range": "api",
    "compare": "workflows.compare", "matrix": "workflows.matrix", "to_trec_eval": "workflows.outputs",
    "to_latex": "workflows.outputs",
    "MED": "workflows.measure", "MEDRange": "workflows.measure", "judge_next": "judging.next",
    "flip_distance": "flip", "FlipResult": "flip",  # SPEC 11
    "significance": "workflows.significance", "SignificanceResult": "workflows.significance",  # SPEC 12
    "difference_distribution": "relevance", "DistributionResult": "relevance",  # SPEC 13
    "InputFormatError": "errors", "InputFrameError": "errors", "MedoptError": "errors",
    "MetricSyntaxError": "errors", "TooLargeError": "errors",
    "Instance": "core.instance", "RelevanceLimit": "core.instance", "build_instance": "core.instance",
    "PassageRun": "io.passages", "read_passage_run": "io.passages", "read_spans": "io.passages",
    "read_passage_judgments": "io.passages",
    "PassageInstance": "core.passage_instance", "build_passage_instance": "core.passage_instance",
    "Grading": "metrics", "parse_metric": "metrics",
    "MedResult": "core.result", "RangeResult": "core.result",
}


def __getattr__(name):
    import importlib

    if name == "METHODS":
        value = importlib.import_module(f"{__name__}.methods").REGISTRY
    elif name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    else:
        try:  # a submodule not imported yet (medopt.errors, medopt.io, ...)
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    """The module's names, the lazy ones included (they load on first use)."""
    return sorted(set(globals()) | set(_LAZY) | set(__all__))


__all__ = ["med", "score", "difference_range", "score_range", "compare", "matrix", "to_trec_eval", "to_latex",
           "MED", "MEDRange", "judge_next", "RangeResult", "parse_metric", "MedResult", "Instance", "RelevanceLimit",
           "build_instance", "Grading", "MedoptError", "MetricSyntaxError", "InputFormatError", "InputFrameError",
           "TooLargeError", "METHODS", "PassageRun", "read_passage_run", "read_spans", "read_passage_judgments",
           "PassageInstance", "build_passage_instance", "flip_distance", "FlipResult", "significance",
           "SignificanceResult", "difference_distribution", "DistributionResult"]
__version__ = "0.1.0"
