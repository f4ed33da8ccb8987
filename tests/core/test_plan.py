"""methods.plan: every choice of one request made once (the method, its batch kernel, the solver and
the strategy, the options and time limit checked), and the checks the entry points share."""

from __future__ import annotations

import pytest

import medopt
from medopt import methods
from medopt.batch import Settings, run_matrix
from medopt.batch.blocks import KERNEL_METHODS, RANGE_KERNELS
from medopt.batch.matrix import resolve_method
from medopt.core.instance import RelevanceLimit, build_instance
from medopt.core.result import range_direction
from medopt.errors import MedoptError
from medopt.metrics import is_character_metric, parse_metric


def probe(metric, max_grade=1, **kwargs):
    return build_instance(metric, ["a", "b", "c"], ["c", "d"], {"a": 1}, max_grade=max_grade, **kwargs)


def test_each_declared_batch_kernel_is_a_kernel_of_the_batch_path():
    declared = {m.name: m.kernel for m in methods.REGISTRY.values() if m.kernel is not None}
    assert declared and {k.name for k in declared.values()} <= set(KERNEL_METHODS)
    assert {k.name for k in declared.values() if k.ranges} == set(RANGE_KERNELS) & {k.name for k in declared.values()}
    for name, kernel in declared.items():
        assert methods.REGISTRY[name].ranges is not None or not kernel.ranges


@pytest.mark.parametrize("metric,grade,method,kernel", [
    ("P@10", 2, "closed-form", "closed-form"), ("RBP(p=0.8)", 1, "closed-form", "closed-form"),
    ("Success@5", 1, "closed-form", None),  # its own closed form: no batch kernel
    ("nDCG@10", 1, "alg1", "alg1"), ("nDCG", 1, "alg1", None),  # Alg. 1's kernel needs a cutoff
    ("nDCG@10", 3, "ndcg-profiles", "ndcg-profiles"),
    ("nDCG@10", methods.FAST_PROFILE_GRADES + 1, "ndcg-profiles", None),
    ("AP@10", 1, "exact", None)])
def test_plan_picks_the_method_and_its_kernel(metric, grade, method, kernel):
    chosen = methods.plan(probe(metric, grade), {"solver": None, "time_limit": 5})
    assert (chosen.method.name, chosen.kernel, chosen.time_limit) == (method, kernel, 5.0)
    with pytest.raises(AttributeError):
        chosen.kernel = None  # frozen


def test_a_plan_has_no_kernel_on_instances_the_kernels_do_not_read():
    assert methods.plan(probe("P@3", pad="free")).kernel is None
    assert methods.plan(probe("RBP(p=0.8)", residual=True)).kernel is None
    limited = probe("nDCG@3", limits=[RelevanceLimit(grade=1, high=1)])
    assert methods.plan(limited).method.name == "exact" and methods.plan(limited).kernel is None
    assert methods.plan(probe("nDCG@10", 1), ranges=True).method.name == "ndcg-profiles"  # alg1 gives no ends
    assert methods.plan(probe("nDCG@10", 1)).kernel == "alg1"


def test_plan_checks_the_request_once():
    instance = probe("AP@10")
    chosen = methods.plan(instance, {"solver": "highs", "strategy": "auto", "time_limit": None})
    assert (chosen.solver, chosen.strategy, chosen.options) == ("highs", None, (("solver", "highs"),))
    assert methods.plan(instance, {"strategy": "direct"}, method="exact").strategy == "direct"
    for bad in (0, -1, float("nan"), "10", True):
        with pytest.raises(MedoptError, match="must be a positive number of seconds"):
            methods.plan(instance, {"time_limit": bad})
    assert methods.plan(instance, {"time_limit": float("inf")}).time_limit is None
    with pytest.raises(MedoptError, match="method 'greedy' does not take solver"):
        methods.plan(instance, {"solver": "highs"}, method="greedy")
    assert methods.plan(probe("P@3"), {"solver": "highs", "strategy": "direct"}).options == ()  # auto: dropped
    with pytest.raises(MedoptError, match="gives no exact range ends"):
        methods.plan(instance, method="greedy", ranges=True)
    with pytest.raises(MedoptError, match="does not compute MED for"):
        methods.plan(instance, method="alg1")
    with pytest.raises(MedoptError, match="unknown method"):
        methods.plan(instance, method="simplex")


def test_batch_settings_and_the_api_share_the_checks():
    assert Settings(strategy="auto").strategy is None and Settings(time_limit=float("inf")).time_limit is None
    for bad in (0, -2):
        with pytest.raises(MedoptError, match="must be a positive number of seconds"):
            Settings(time_limit=bad)
        with pytest.raises(MedoptError, match="must be a positive number of seconds"):
            medopt.med("P@3", ["a"], ["b"], {}, time_limit=bad)
    with pytest.raises(MedoptError, match="gives no exact range ends"):
        Settings(method="tabu", ranges=True)
    # batch asks the plan: the method and whether its kernel runs
    assert resolve_method(parse_metric("P@5"), 2, Settings(), {}) == ("closed-form", True)
    assert resolve_method(parse_metric("P@5"), 2, Settings(pad="free"), {}) == ("closed-form", False)
    assert resolve_method(parse_metric("RBP(p=0.8)"), 2, Settings(residual=True), {}) == ("closed-form", False)
    assert resolve_method(parse_metric("P@5"), 2, Settings(fast=False), {}) == ("closed-form", False)
    with pytest.raises(MedoptError, match="P@5: residual applies to RBP only"):
        resolve_method(parse_metric("P@5"), 2, Settings(residual=True), {})


def test_strategy_auto_is_not_an_option_given():
    a, b, judged = ["a", "b", "c"], ["c", "a", "d"], {"a": 1}
    assert medopt.med("P@3", a, b, judged, method="closed-form", strategy="auto").certified
    assert medopt.difference_range("RR@3", a, b, judged, method="exact", strategy="auto").certified


def test_a_range_rows_direction_is_one_rule():
    assert range_direction(-0.2, 0.2) == "a" and range_direction(-0.3, 0.2) == "b"
    result = medopt.difference_range("P@3", ["a", "b", "c"], ["d", "e", "f"], {"a": 1})
    assert result.direction == range_direction(result.low, result.high) == "a"


def test_character_metrics_are_told_apart_in_one_place():
    assert is_character_metric(parse_metric("U(L=100)")) and not is_character_metric(parse_metric("P@5"))
    with pytest.raises(MedoptError, match="method 'exact' does not compute U"):
        methods.character_method("exact", "U(L=..)")
    assert methods.character_method("auto", "U(L=..)") == "closed-form"


def test_medopt_matrix_and_the_matrix_job_refuse_alike(tmp_path):
    runs = {"x": {"1": ["a", "b"]}, "y": {"2": ["a", "c"]}}
    with pytest.raises(MedoptError) as rows_error:
        medopt.matrix(runs, {"1": {"a": 1}, "2": {"a": 1}}, ["P@2"], jobs=1)
    paths = []
    for name, rankings in runs.items():
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"{t} Q0 {d} {i + 1} {10 - i} {name}\n" for t, docs in rankings.items()
                                for i, d in enumerate(docs)))
        paths.append(str(path))
    qrels = tmp_path / "q.qrels"
    qrels.write_text("1 0 a 1\n2 0 a 1\n")
    with pytest.raises(MedoptError) as job_error:
        run_matrix(paths, ["P@2"], qrels=str(qrels), store=tmp_path / "s.sqlite", jobs=1, progress=False)
    assert str(rows_error.value) == str(job_error.value) == "no two of the 2 runs share a topic: nothing to compare"
    assert not (tmp_path / "s.sqlite").exists()


def test_the_exact_methods_default_strategy_gives_way_where_an_asked_one_is_refused():
    """methods.exact_settings picks AP(norm=min)'s last strategy (capped, which needs a difference >= 0);
    a range end below 0 then takes another strategy, while the same strategy asked for is refused."""
    a = ["d9", "d6", "d0", "d5", "d7", "d10", "d8", "d2"]
    b = ["d6", "d11", "d7", "d0", "d3", "d1", "d4", "d2"]
    judged = {"d11": 0, "d9": 1, "d1": 0, "d6": 0}
    assert methods.exact_settings(build_instance("AP(norm=min)@8", a, b, judged)) == ("highs", "capped")
    with pytest.raises(MedoptError, match="needs a difference >= 0"):
        medopt.difference_range("AP(norm=min)@8", a, b, judged, method="exact", strategy="capped")
    default = medopt.difference_range("AP(norm=min)@8", a, b, judged, method="exact")
    brute = medopt.difference_range("AP(norm=min)@8", a, b, judged, method="enumerate")
    assert default.certified and default.low == pytest.approx(brute.low, abs=1e-9) and brute.low > 0
    assert default.high == pytest.approx(brute.high, abs=1e-9)
