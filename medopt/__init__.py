"""medopt: exact Maximized Effectiveness Difference between two rankings, with certificates."""

from .api import med, score
from .methods import REGISTRY as METHODS
from .errors import InputFormatError, MedoptError, MetricSyntaxError, TooLargeError
from .instance import Instance, RelevanceLimit, build_instance
from .metrics import Grading, parse_metric
from .result import MedResult

__all__ = ["med", "score", "parse_metric", "MedResult", "Instance", "RelevanceLimit", "build_instance",
           "Grading", "MedoptError", "MetricSyntaxError", "InputFormatError", "TooLargeError", "METHODS"]
__version__ = "0.1.0"
