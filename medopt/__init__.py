"""medopt: exact Maximized Effectiveness Difference between two rankings, with certificates."""

from .api import difference_range, med, score, score_range
from .methods import REGISTRY as METHODS
from .errors import InputFormatError, InputFrameError, MedoptError, MetricSyntaxError, TooLargeError
from .instance import Instance, RelevanceLimit, build_instance
from .io.passages import PassageRun, read_passage_judgments, read_passage_run, read_spans
from .passages import PassageInstance, build_passage_instance
from .metrics import Grading, parse_metric
from .result import MedResult, RangeResult

# Loaded when first used (pandas, the batch engine, ir_measures): ``import medopt`` stays light.
_LAZY = {"compare": "runs", "matrix": "runs", "to_trec_eval": "runs", "to_latex": "runs", "MED": "measure",
         "MEDRange": "measure", "judge_next": "judging"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    """The module's names, the lazy ones included (they load on first use)."""
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["med", "score", "difference_range", "score_range", "compare", "matrix", "to_trec_eval", "to_latex",
           "MED", "MEDRange", "judge_next", "RangeResult", "parse_metric", "MedResult", "Instance", "RelevanceLimit",
           "build_instance", "Grading", "MedoptError", "MetricSyntaxError", "InputFormatError", "InputFrameError",
           "TooLargeError", "METHODS", "PassageRun", "read_passage_run", "read_spans", "read_passage_judgments",
           "PassageInstance", "build_passage_instance"]
__version__ = "0.1.0"
