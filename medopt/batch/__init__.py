"""Many runs at once: ``medopt matrix`` (``matrix``: planning, the job, resume; ``tasks``: what a task
computes; ``engines``: process pool, Dask), the array form of many runs (``runset``) and the array
kernels of the closed forms (``fastpath``)."""

from .engines import read_runs
from .matrix import (FAST_ROWS_PER_TASK, INSTANCE_ROWS_PER_TASK, MatrixReport, collect_rows, run_matrix,
                     unique_measures, unique_metrics)
from .tasks import Settings

__all__ = ["FAST_ROWS_PER_TASK", "INSTANCE_ROWS_PER_TASK", "MatrixReport", "Settings", "collect_rows", "read_runs",
           "run_matrix", "unique_measures", "unique_metrics"]
