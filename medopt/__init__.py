"""medopt: exact Maximized Effectiveness Difference between two rankings, with certificates."""

from .api import difference_range, med, score, score_range
from .methods import REGISTRY as METHODS
from .errors import InputFormatError, MedoptError, MetricSyntaxError, TooLargeError
from .instance import Instance, RelevanceLimit, build_instance
from .metrics import Grading, parse_metric
from .result import MedResult, RangeResult

__all__ = ["med", "score", "difference_range", "score_range", "RangeResult", "parse_metric", "MedResult", "Instance", "RelevanceLimit", "build_instance",
           "Grading", "MedoptError", "MetricSyntaxError", "InputFormatError", "TooLargeError", "METHODS"]
__version__ = "0.1.0"
