"""The models/ catalogue: regenerated files match the committed ones; LP exports solve to the MED."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import pytest
from click.testing import CliRunner

from medopt.workflows.catalogue import EXAMPLES, export_model, slug, write_catalogue
from medopt.cli import main
from medopt.core.instance import build_instance

MODELS = Path(__file__).resolve().parents[2] / "models"


def brute_force(metric, example, direction):
    """The direction's largest difference over every 0/1 assignment (the examples are binary)."""
    instance = build_instance(metric, *EXAMPLES[example])
    docs = instance.unjudged
    return max(instance.difference(dict(zip(docs, bits)), direction) for bits in product((0, 1), repeat=len(docs)))


def solve_lp(path) -> float:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 1e-12)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getLp().sense_ == highspy.ObjSense.kMaximize
    return h.getInfo().objective_function_value


def test_committed_catalogue_is_up_to_date(tmp_path):
    written = write_catalogue(tmp_path)
    generated = {p.name for p in tmp_path.iterdir()}
    assert set(written) == generated
    committed = {p.name for p in MODELS.iterdir()} if MODELS.is_dir() else set()
    drifted = sorted(generated ^ committed)
    drifted += sorted(n for n in generated & committed if (tmp_path / n).read_bytes() != (MODELS / n).read_bytes())
    assert not drifted, f"models/ is out of date ({', '.join(drifted)}): run `python -m medopt.workflows.catalogue models`"


def test_catalogue_has_a_page_per_family_and_the_example_values():
    pages = {p.stem for p in MODELS.glob("*.md")}
    assert {"README", "dot_product", "ndcg", "precision_sums"} <= pages
    readme = (MODELS / "README.md").read_text()
    for page in pages - {"README"}:
        assert f"[{page}.md]({page}.md)" in readme
        text = (MODELS / f"{page}.md").read_text()
        assert "## Model for Moffat's X3/X4 at k = 10" in text and "**Objective** `objective`, maximize" in text
        assert "| NO |" not in text  # every MED in the tables certified by both solvers
    assert "| SDCG@10 | direct | 0.128185 | 0.128185 | A | yes |" in (MODELS / "dot_product.md").read_text()
    assert "| nDCG@10 | dinkelbach | 0.235242 | 0.235242 | B | yes |" in (MODELS / "ndcg.md").read_text()


def test_slugs():
    assert slug("SDCG@10") == "sdcg_at_10"
    assert slug("RBP(p=0.95)") == "rbp_p0.95"
    assert slug("AP(norm=min)@10", "enumerate") == "ap_normmin_at_10_enumerate"


def test_export_command_writes_lp(tmp_path):
    out = tmp_path / "sdcg.lp"
    result = CliRunner().invoke(main, ["export", "-m", "SDCG@10", "--example", "moffat-x3x4", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.splitlines()[1:3] == ["", "max "]  # Pyomo writes the CPLEX LP keyword "max" (= maximize)
    assert "x(B_1)" in text and "x(L_1)" in text and "binary" in text
    again = tmp_path / "again.lp"
    CliRunner().invoke(main, ["export", "-m", "SDCG@10", "--example", "moffat-x3x4", "-o", str(again)])
    assert again.read_bytes() == out.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


@pytest.mark.parametrize("metric", ["SDCG@10", "P@10", "DCG@10", "RBP(p=0.95)", "SSP@10", "SP@10", "ERR@10", "RR@10",
                                    "Success@10"])
@pytest.mark.parametrize("direction", ["a", "b"])
def test_direct_lp_optimum_is_the_direction_med(tmp_path, metric, direction):
    path = tmp_path / "model.lp"
    export_model(metric, "moffat-x3x4", direction=direction, path=path)
    assert solve_lp(path) == pytest.approx(brute_force(metric, "moffat-x3x4", direction), abs=1e-9)


def test_sdcg_lp_matches_med():
    import medopt

    a, b, judgments = EXAMPLES["moffat-x3x4"]
    result = medopt.med("SDCG@10", a, b, judgments, method="exact")
    assert result.direction == "a" and result.certified
    path = MODELS / "sdcg_at_10.lp"
    assert solve_lp(path) == pytest.approx(result.value, abs=1e-9)


@pytest.mark.parametrize("metric", ["nDCG@10", "AP@10", "AP(norm=min)@10", "R@10"])
@pytest.mark.parametrize("direction", ["a", "b"])
def test_dinkelbach_export_is_the_last_step(tmp_path, metric, direction):
    path = tmp_path / "model.lp"
    exported = export_model(metric, "moffat-x3x4", direction=direction, strategy="dinkelbach", path=path)
    assert exported.strategy == "dinkelbach"
    assert exported.lam == pytest.approx(brute_force(metric, "moffat-x3x4", direction), abs=1e-12)
    assert solve_lp(path) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("metric", ["nDCG@10", "AP@10", "Q@10", "R@10", "Rprec@10", "Rprec"])
@pytest.mark.parametrize("direction", ["a", "b"])
def test_enumerate_export_is_the_optimal_case(tmp_path, metric, direction):
    path = tmp_path / "model.lp"
    exported = export_model(metric, "moffat-x3x4", direction=direction, strategy="enumerate", path=path)
    assert exported.case
    assert solve_lp(path) == pytest.approx(brute_force(metric, "moffat-x3x4", direction), abs=1e-9)


@pytest.mark.parametrize("metric, direction, med", [("RR", "b", 0.5), ("P@5", "a", 0.2)])
def test_tan_clarke_example(tmp_path, metric, direction, med):
    """Tan & Clarke's values (SPEC 4): MED(RR) = 0.5 (X2 ahead), MED(P@5) = 0.2 (X1 ahead)."""
    path = tmp_path / "model.lp"
    export_model(metric, "tan-clarke-x1x2", direction=direction, path=path)
    assert solve_lp(path) == pytest.approx(med, abs=1e-9)
    assert max(brute_force(metric, "tan-clarke-x1x2", d) for d in "ab") == pytest.approx(med, abs=1e-12)


@pytest.mark.parametrize("args, message", [
    (["-m", "NOPE@10", "--example", "moffat-x3x4"], "unknown metric"),
    (["-m", "SDCG@10", "--example", "nope"], "moffat-x3x4, tan-clarke-x1x2"),
    (["-m", "SDCG@10", "--example", "moffat-x3x4", "--strategy", "dinkelbach"], "not available"),
    (["-m", "SDCG@10", "--example", "moffat-x3x4", "--lam", "0.1"], "lam applies"),
    (["-m", "AP@10", "--example", "moffat-x3x4", "--strategy", "enumerate", "--case", "R = 99"], "no case"),
    (["-m", "SDCG@10", "--example", "moffat-x3x4", "--direction", "c"], "direction"),
])
def test_export_errors_exit_2(tmp_path, args, message):
    result = CliRunner().invoke(main, ["export", *args, "-o", str(tmp_path / "x.lp")])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "x.lp").exists()
