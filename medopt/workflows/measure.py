"""MED as an ir_measures measure: ``medopt.MED(other_run, "AP@100")`` and ``medopt.MEDRange(...)``.

Built on ir_measures' own extension point, :func:`ir_measures.define` (its runtime provider), as
pyterrier-alpha's RBO is, so that ``ir_measures.calc_aggregate``, ``iter_calc``, ``evaluator`` and
PyTerrier's ``pt.Experiment`` compute, for each query, the MED of the evaluated run against
``other_run`` under the qrels (SPEC 4)::

    ir_measures.calc_aggregate([medopt.MED(other, "AP@10")], qrels, run)

- The queries are those of SPEC 10, as ``medopt compare`` averages over them: judged in the qrels and
  retrieved by both runs.  A qrels query outside them has no value (NaN) and the measure's mean leaves
  it out, so the mean equals compare's (ir_measures' own measures would count it as 0).  With
  ``complete=True`` (trec_eval's -c) every judged query counts, a run that did not retrieve it ranking
  nothing there.  G is the largest grade of the whole qrels (SPEC 1) unless ``max_grade`` is given.
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
import math

from .. import api
from ..errors import MedoptError
from ..io.frames import as_qrels, as_run
from ..metrics import PER_TOPIC, parse_metric, resolve_max_grade


def _define(impl, name: str):
    """The ir_measures measure of ``impl``, whose queries without a value (outside SPEC 10's topics) are
    NaN and left out of its mean."""
    try:
        import ir_measures
        from ir_measures.measures.base import MeanAgg
    except ImportError:
        raise MedoptError("medopt.MED is an ir_measures measure: pip install ir_measures") from None

    class _MeanOfCompared(MeanAgg):
        def add(self, value):
            if value == value:
                super().add(value)

    measure = ir_measures.define(impl, name=name, support_cutoff=False)
    measure.DEFAULT = math.nan
    measure.aggregator = _MeanOfCompared
    return measure


def _other(other, name):
    run = as_run(other, "other_run")
    if name is None:
        name = run.name if run.name != "other_run" else hashlib.sha256(
            json.dumps(sorted(run.rankings.items())).encode()).hexdigest()[:8]
    return run, "_".join(str(name).split())


class _Calculator:
    """Computes each query's MED (or difference range) of a run against the other run, once."""

    def __init__(self, other, metric, ranges: bool, options: dict, complete: bool = False):
        self.other, self.metric, self.ranges, self.options = other, metric, ranges, options
        self.complete = complete
        self.cache: dict = {}

    def results(self, qrels_frame, run_frame):
        """(query_id, result) for each query of SPEC 10: judged and retrieved by both runs (``complete``:
        every judged query)."""
        judgments = as_qrels(qrels_frame, "qrels")
        run = as_run(run_frame, "run") if len(run_frame) else None
        rankings = run.rankings if run else {}
        ask = api.difference_range if self.ranges else api.med
        options = dict(self.options, max_grade=resolve_max_grade(self.options.get("max_grade"), judgments) or
                       PER_TOPIC)
        for topic in judgments:
            mine, theirs = rankings.get(topic, ()), self.other.rankings.get(topic, ())
            if not judgments[topic] or not self.complete and (topic not in rankings or
                                                                 topic not in self.other.rankings):
                continue
            key = (topic, mine, theirs, tuple(sorted(judgments[topic].items())))
            if key not in self.cache:
                if len(self.cache) > 100_000:
                    self.cache.clear()
                try:
                    self.cache[key] = ask(self.metric, mine, theirs, judgments[topic], **options)
                except MedoptError as error:
                    raise MedoptError(f"query {topic}, {self.metric}: {error}") from None
            yield topic, self.cache[key]


def _options(method, solver, time_limit, max_grade, pad, residual, options) -> dict:
    return dict(options, method=method, solver=solver, time_limit=time_limit, max_grade=max_grade, pad=pad,
                residual=residual)


def MED(other_run, metric, *, name: str | None = None, method: str = "auto", solver=None, time_limit=None,
        max_grade=None, pad: str = "none", residual: bool = False, complete: bool = False, **options):
    """An ir_measures measure: per query, the MED under ``metric`` of the evaluated run against ``other_run``
    (a run in any form medopt takes).  Keywords as for :func:`medopt.med`; ``complete`` as trec_eval's -c."""
    metric = parse_metric(metric)
    other, other_name = _other(other_run, name)
    calculator = _Calculator(other, metric, False, _options(method, solver, time_limit, max_grade, pad, residual,
                                                             options), complete)

    def impl(qrels, run):
        for topic, result in calculator.results(qrels, run):
            yield topic, result.value

    return _define(impl, f"MED({metric},vs={other_name})")


def MEDRange(other_run, metric, *, name: str | None = None, method: str = "auto", solver=None, time_limit=None,
             max_grade=None, pad: str = "none", residual: bool = False, complete: bool = False,
             **options) -> tuple:
    """Two ir_measures measures ``(MEDlow, MEDhigh)``: per query, the low and high ends of the difference
    range of M(run) - M(other_run) (SPEC 7); each query's range is computed once for both."""
    metric = parse_metric(metric)
    other, other_name = _other(other_run, name)
    calculator = _Calculator(other, metric, True, _options(method, solver, time_limit, max_grade, pad, residual,
                                                            options), complete)

    def end(which: str):
        def impl(qrels, run):
            for topic, result in calculator.results(qrels, run):
                yield topic, getattr(result, which)
        return impl

    return (_define(end("low"), f"MEDlow({metric},vs={other_name})"),
            _define(end("high"), f"MEDhigh({metric},vs={other_name})"))
