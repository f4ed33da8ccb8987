"""The output formats of compare's and matrix's rows: csv, tsv, jsonl, parquet (io.results), trec_eval and
LaTeX (io.reports), with the mean difference range and its verdict from core.result.mean_range."""

from __future__ import annotations

from ..core.result import mean_range
from ..errors import MedoptError
from ..io.reports import latex_text, trec_eval_text
from ..io.results import FORMATS, format_rows, write_parquet, write_rows
from ..io.trec import write_atomic
from ..metrics import parse_metric
from ..metrics.companions import COMPANION_METHOD

OUTPUT_FORMATS = (*FORMATS, "parquet", "trec_eval", "latex")




def _records(rows):
    """Rows as dicts: a DataFrame (medopt.compare, medopt.matrix) or a list of dicts."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
        return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                for r in rows.to_dict("records")]
    return list(rows)


def _med_rows(rows) -> list:
    """The MED rows: the trec_eval and LaTeX reports hold MEDs, not a companion's (RBO) rows."""
    rows = [r for r in rows if r.get("method") != COMPANION_METHOD]
    if not rows:
        raise MedoptError("the trec_eval and latex formats report MED: give a MED metric besides RBO, "
                          "or choose csv, tsv, jsonl or parquet")
    return rows


def _mean_span(metric: str, rows):
    """The mean difference range of one pair's per-topic rows (compare's or a matrix store's), verdict
    included (result.mean_range)."""
    return mean_range([(r["low"], r["high"], r.get("low_bound"), r.get("high_bound")) for r in rows],
                      rational=getattr(parse_metric(metric), "rational", False))


def to_trec_eval(rows) -> str:
    """``trec_eval -q`` text of one pair's rows (``MED_<metric>`` measures; with ranges ``MEDlow_`` and
    ``MEDhigh_`` too): see :mod:`medopt.io.reports`."""
    return trec_eval_text(_med_rows(_records(rows)), _mean_span)


def to_latex(rows, *, digits: int = 4, caption: str | None = None, label: str = "tab:med") -> str:
    """A booktabs table (ranx's style) of the mean MED, and the mean difference range, per pair and metric."""
    return latex_text(_med_rows(_records(rows)), digits=digits, caption=caption, label=label, mean_span=_mean_span)


def format_output(rows, columns, fmt: str) -> str:
    """Rows as text: csv, tsv, jsonl, trec_eval or latex."""
    if fmt == "trec_eval":
        return trec_eval_text(_med_rows(rows), _mean_span)
    if fmt == "latex":
        return latex_text(_med_rows(rows), mean_span=_mean_span)
    if fmt == "parquet":
        raise MedoptError("parquet is binary: give an output file (-o out.parquet)")
    return format_rows(rows, columns, fmt)


def write_output(rows, columns, fmt: str, path, *, inputs=()) -> None:
    """Rows to ``path`` in ``fmt`` by the rules of :mod:`medopt.io.output` (never over one of ``inputs``)."""
    if fmt == "parquet":
        write_parquet(rows, columns, path, inputs=inputs)
    elif fmt in FORMATS:
        write_rows(rows, columns, fmt, path, inputs=inputs)
    else:
        write_atomic(path, iter([format_output(rows, columns, fmt)]), what="-o", inputs=inputs)


__all__ = ["to_trec_eval", "to_latex", "format_output", "write_output", "OUTPUT_FORMATS"]
