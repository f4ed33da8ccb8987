"""Many runs at once: ``medopt matrix`` (``matrix``: planning, engines, resume), the array form of
many runs (``runset``) and the array kernels of the closed forms (``fastpath``)."""

from .matrix import (FAST_ROWS_PER_TASK, INSTANCE_ROWS_PER_TASK, MatrixReport, Settings, collect_rows, read_runs,
                     run_matrix)

__all__ = ["FAST_ROWS_PER_TASK", "INSTANCE_ROWS_PER_TASK", "MatrixReport", "Settings", "collect_rows", "read_runs",
           "run_matrix"]
