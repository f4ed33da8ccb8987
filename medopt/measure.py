"""MED as an ir_measures measure: ``medopt.MED(other_run, "AP@100")`` and ``medopt.MEDRange(...)``.

Built on ir_measures' own extension point, :func:`ir_measures.define` (its runtime provider), as
pyterrier-alpha's RBO is, so that ``ir_measures.calc_aggregate``, ``iter_calc``, ``evaluator`` and
PyTerrier's ``pt.Experiment`` compute, for each query, the MED of the evaluated run against
``other_run`` under the qrels (SPEC 4)::

    ir_measures.calc_aggregate([medopt.MED(other, "AP@10")], qrels, run)

- The queries are those of the qrels, as ir_measures and trec_eval evaluate them. A query one of the
  two runs did not retrieve counts as an empty ranking there (it scores 0 under every grading); a
  query neither run retrieved gets ir_measures' default, 0.
- Rankings are ordered as trec_eval orders them (score descending, ties by doc id descending).
- ir_measures' per-query results hold a value only: the direction, the proven bound and the
  certificate of each MED are in :func:`medopt.compare`'s rows.
- ``MEDRange`` gives two measures, ``MEDlow`` and ``MEDhigh``: the ends of the difference range of
  M(run) - M(other) (SPEC 7). Their aggregates, the means of the ends, are the mean difference range.

The measure is named ``MED(<metric>,vs=<other>)`` (``MEDlow``, ``MEDhigh``), ``<other>`` the other
run's name (its run id, a ranx name, or a digest of its rankings; ``name=`` sets it).
"""

from __future__ import annotations

import hashlib
import json

from . import api
from .errors import MedoptError
from .io.frames import as_qrels, as_run
from .metrics import parse_metric


def _define(impl, name: str):
    try:
        import ir_measures
    except ImportError:
        raise MedoptError("medopt.MED is an ir_measures measure: pip install ir_measures") from None
    return ir_measures.define(impl, name=name, support_cutoff=False)


def _other(other, name):
    run = as_run(other, "other_run")
    if name is None:
        name = run.name if run.name != "other_run" else hashlib.sha256(
            json.dumps(sorted(run.rankings.items())).encode()).hexdigest()[:8]
    return run, "_".join(str(name).split())


class _Calculator:
    """Computes each query's MED (or difference range) of a run against the other run, once."""

    def __init__(self, other, metric, ranges: bool, options: dict):
        self.other, self.metric, self.ranges, self.options = other, metric, ranges, options
        self.cache: dict = {}

    def results(self, qrels_frame, run_frame):
        """(query_id, result) for each query of the qrels that either run retrieved."""
        judgments = as_qrels(qrels_frame, "qrels")
        run = as_run(run_frame, "run") if len(run_frame) else None
        rankings = run.rankings if run else {}
        ask = api.difference_range if self.ranges else api.med
        for topic in judgments:
            mine, theirs = rankings.get(topic, ()), self.other.rankings.get(topic, ())
            if not mine and not theirs:
                continue
            key = (topic, mine, theirs, tuple(sorted(judgments[topic].items())))
            if key not in self.cache:
                if len(self.cache) > 100_000:
                    self.cache.clear()
                try:
                    self.cache[key] = ask(self.metric, mine, theirs, judgments[topic], **self.options)
                except MedoptError as error:
                    raise MedoptError(f"query {topic}, {self.metric}: {error}") from None
            yield topic, self.cache[key]


def _options(method, solver, time_limit, max_grade, pad, residual, options) -> dict:
    return dict(options, method=method, solver=solver, time_limit=time_limit, max_grade=max_grade, pad=pad,
                residual=residual)


def MED(other_run, metric, *, name: str | None = None, method: str = "auto", solver=None, time_limit=None,
        max_grade=None, pad: str = "none", residual: bool = False, **options):
    """An ir_measures measure: per query, the MED under ``metric`` of the evaluated run against ``other_run``
    (a run in any form medopt takes).  Keywords as for :func:`medopt.med`."""
    metric = parse_metric(metric)
    other, other_name = _other(other_run, name)
    calculator = _Calculator(other, metric, False, _options(method, solver, time_limit, max_grade, pad, residual,
                                                             options))

    def impl(qrels, run):
        for topic, result in calculator.results(qrels, run):
            yield topic, result.value

    return _define(impl, f"MED({metric},vs={other_name})")


def MEDRange(other_run, metric, *, name: str | None = None, method: str = "auto", solver=None, time_limit=None,
             max_grade=None, pad: str = "none", residual: bool = False, **options) -> tuple:
    """Two ir_measures measures ``(MEDlow, MEDhigh)``: per query, the low and high ends of the difference
    range of M(run) - M(other_run) (SPEC 7); each query's range is computed once for both."""
    metric = parse_metric(metric)
    other, other_name = _other(other_run, name)
    calculator = _Calculator(other, metric, True, _options(method, solver, time_limit, max_grade, pad, residual,
                                                            options))

    def end(which: str):
        def impl(qrels, run):
            for topic, result in calculator.results(qrels, run):
                yield topic, getattr(result, which)
        return impl

    return (_define(end("low"), f"MEDlow({metric},vs={other_name})"),
            _define(end("high"), f"MEDhigh({metric},vs={other_name})"))
