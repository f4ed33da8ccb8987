"""Reports of MED rows for other tools: ``trec_eval -q`` text and a LaTeX (booktabs) table.

Both take the rows of ``medopt compare`` (or of a matrix job: ``value`` is read as ``med``, and the
mean rows are made when the rows hold none) as dicts.

trec_eval: ``measure<TAB>topic<TAB>value`` lines as ``trec_eval -q`` prints them (the measure name
left-aligned in 22 characters), one pair of runs per report.  The measure of metric M is ``MED_M``
(``MED_AP@100``); with ranges also ``MEDlow_M`` and ``MEDhigh_M``, the ends of the difference range
of M(A) - M(B).  The topics' lines come first, then ``runid all RUN_A_vs_RUN_B``, ``num_q all N``
and each measure's mean over the topics (topic ``all``).  Values are written as the CSV writes them
(10 significant digits), so a parser gets the CSV's values back.

LaTeX: a booktabs table in the style of ranx's ``Report.to_latex()``: one row per pair of runs, one
column per metric holding the mean MED (a dagger: some topic's value is not certified) and, with
ranges, the mean difference range in brackets (bold: its verdict is decided, SPEC 7).
"""

from __future__ import annotations

from ..errors import MedoptError
from .results import _text, mean

_MEASURE_WIDTH = 22  # trec_eval's "%-22s"


def _med(row: dict) -> float:
    return row["med"] if "med" in row else row["value"]


def summarise(rows, mean_span=None) -> dict:
    """(run_a, run_b) -> metric -> the mean row: med, low, high, verdict (None without ranges), certified,
    topics.  Where the rows hold no mean row, ``mean_span(metric, rows)`` makes the mean range and its
    verdict (the caller's: result.mean_range, the one place a verdict is made)."""
    pairs: dict = {}
    given: dict = {}
    for row in rows:
        key, metric = (row["run_a"], row["run_b"]), row["metric"]
        if row["topic"] == "all":
            given.setdefault(key, {})[metric] = row
            continue
        pairs.setdefault(key, {}).setdefault(metric, []).append(row)
    table: dict = {}
    for key in list(dict.fromkeys([*pairs, *given])):
        for metric in dict.fromkeys([*pairs.get(key, {}), *given.get(key, {})]):
            topics = pairs.get(key, {}).get(metric, [])
            mean_row = given.get(key, {}).get(metric)
            ranged = any(r.get("low") is not None for r in [*topics, *([mean_row] if mean_row else [])])
            summary = {"topics": len(topics)}
            if mean_row is not None:
                summary.update(med=_med(mean_row), certified=bool(mean_row["certified"]),
                               low=mean_row.get("low") if ranged else None,
                               high=mean_row.get("high") if ranged else None,
                               verdict=mean_row.get("verdict") if ranged else None,
                               topics=mean_row.get("topics") or len(topics))
            else:
                if ranged and mean_span is None:
                    raise MedoptError("ranges without their mean rows: give the rows of medopt.compare")
                span = mean_span(metric, topics) if ranged else None
                summary.update(med=mean(_med(r) for r in topics), certified=all(r["certified"] for r in topics),
                               low=span.low if ranged else None, high=span.high if ranged else None,
                               verdict=span.verdict if ranged else None)
            table.setdefault(key, {})[metric] = summary
    return table


def trec_eval_text(rows, mean_span=None) -> str:
    """The rows as ``trec_eval -q`` prints its measures (see the module docstring); ``mean_span`` as for
    summarise."""
    rows = list(rows)
    table = summarise(rows, mean_span)
    if len(table) != 1:
        raise MedoptError(f"the trec_eval format holds one pair of runs; these rows hold {len(table)} "
                          "(select one pair's rows)")
    (run_a, run_b), metrics = next(iter(table.items()))
    lines = []

    def line(measure: str, topic: str, value) -> None:
        lines.append(f"{measure:<{_MEASURE_WIDTH}}\t{topic}\t{_text(value)}\n")

    def measures(metric: str, topic: str, med, low, high) -> None:
        name = "".join(metric.split())
        line(f"MED_{name}", topic, med)
        if low is not None:
            line(f"MEDlow_{name}", topic, low)
            line(f"MEDhigh_{name}", topic, high)

    for row in rows:
        if row["topic"] != "all":
            ranged = metrics[row["metric"]]["low"] is not None
            measures(row["metric"], row["topic"], _med(row), row.get("low") if ranged else None, row.get("high"))
    run_id = "_vs_".join("_".join(str(name).split()) for name in (run_a, run_b))
    line("runid", "all", run_id)
    line("num_q", "all", max((s["topics"] for s in metrics.values()), default=0))
    for metric, summary in metrics.items():
        measures(metric, "all", summary["med"], summary["low"], summary["high"])
    return "".join(lines)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _label(index: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return letters[index] if index < len(letters) else letters[index // len(letters) - 1] + letters[index % 26]


def latex_text(rows, *, digits: int = 4, caption: str | None = None, label: str = "tab:med",
               mean_span=None) -> str:
    """A booktabs table of the mean MED (and the mean difference range) per pair of runs and metric;
    ``mean_span`` as for summarise."""
    table = summarise(list(rows), mean_span)
    if not table:
        raise MedoptError("no rows to put in a table")
    metrics = list(dict.fromkeys(m for per_pair in table.values() for m in per_pair))
    ranged = any(s["low"] is not None for per_pair in table.values() for s in per_pair.values())

    def number(value) -> str:
        return "--" if value is None or value != value else f"{value:.{digits}f}"

    def cell(summary) -> str:
        if summary is None:
            return "--"
        text = number(summary["med"]) + ("" if summary["certified"] else r"$^\dagger$")
        if ranged and summary["low"] is not None:
            span = f"$[{number(summary['low'])}, {number(summary['high'])}]$"
            decided = summary["verdict"] == "decided"
            text += r" {\scriptsize " + (r"\textbf{" + span + "}" if decided else span) + "}"
        return text

    caption = caption or ("Mean MED between the runs over the topics they share"
                          + (", and in brackets the mean difference range of M(A) $-$ M(B); a range in bold "
                             "excludes 0: the comparison is decided" if ranged else "")
                          + r". $^\dagger$: some topic's value is not certified.")
    out = ["% Add in preamble\n% \\usepackage{graphicx}\n% \\usepackage{booktabs}\n",
           "% To change the table size, act on the resizebox argument `0.8`.\n",
           "\\begin{table*}[ht]\n\\centering\n\\caption{\n" + caption + "\n}\n",
           "\\resizebox{0.8\\textwidth}{!}{\n",
           "\\begin{tabular}{c|ll|" + "|".join("c" for _ in metrics) + "}\n", "\\toprule\n",
           "\\textbf{\\#}\n& \\textbf{Run A}\n& \\textbf{Run B}\n"
           + "".join(f"& \\textbf{{{latex_escape(m)}}}\n" for m in metrics) + "\\\\\n", "\\midrule\n"]
    for index, ((run_a, run_b), per_pair) in enumerate(table.items()):
        cells = [_label(index), latex_escape(run_a), latex_escape(run_b),
                 *(cell(per_pair.get(m)) for m in metrics)]
        out.append(" &\n".join(cells) + " \\\\\n")
    out += ["\\bottomrule\n\\end{tabular}\n}\n", f"\\label{{{label}}}\n", "\\end{table*}\n"]
    return "".join(out)
