"""medopt plot: every kind writes a readable PNG and PDF; Tan & Clarke's Fig. 2 data behave as MED must."""

import numpy as np
import pytest
from click.testing import CliRunner

from medopt.batch import run_matrix
from medopt.cli import main
from medopt.generate import generate_qrels, generate_runs
from medopt.io.trec import write_qrels, write_run
from medopt.plots import judged_fraction_points, mean_matrix, load_values, subsample_qrels

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-"}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    directory = tmp_path_factory.mktemp("plots")
    runs = generate_runs(5, 10, 20, seed=9)
    paths = []
    for name, rankings in runs.items():
        paths.append(str(directory / f"{name}.run"))
        write_run(paths[-1], rankings, name)
    qrels = str(directory / "qrels.txt")
    write_qrels(qrels, generate_qrels(runs, seed=9, max_grade=2))
    store = directory / "store.sqlite"
    run_matrix(paths, ["SDCG@10", "RBP(p=0.8)", "P@5"], qrels=qrels, store=store, jobs=1, progress=False)
    return paths, qrels, store


def assert_images(*paths):
    for path in paths:
        data = path.read_bytes()
        assert data.startswith(MAGIC[path.suffix]) and len(data) > 2000, path


@pytest.mark.parametrize("kind,metrics", [("heatmap", []), ("heatmap", ["P@5"]), ("scatter", ["SDCG@10", "P@5"]),
                                          ("distribution", ["RBP(p=0.8)", "P@5"])])
def test_store_plots(job, tmp_path, kind, metrics):
    _, _, store = job
    outputs = [tmp_path / f"{kind}.png", tmp_path / f"{kind}.pdf"]
    args = ["plot", "--kind", kind, "--store", store, *[a for m in metrics for a in ("-m", m)]]
    result = CliRunner().invoke(main, [str(a) for a in args + [x for o in outputs for x in ("-o", o)]])
    assert result.exit_code == 0, result.output
    assert_images(*outputs)


def test_heatmap_matrix_is_the_pair_means(job):
    _, _, store = job
    rows = load_values(store)
    names, matrix = mean_matrix(rows, "P@5")
    assert names == ["run0", "run1", "run2", "run3", "run4"]
    assert np.allclose(matrix, matrix.T) and np.all(np.diag(matrix) == 0)
    values = [r[4] for r in rows if r[3] == "P@5" and (r[0], r[1]) == ("run1", "run3")]
    assert matrix[1, 3] == pytest.approx(np.mean(values))


def test_plot_errors(job, tmp_path):
    _, _, store = job
    runner = CliRunner()
    for args, message in [(["--kind", "scatter", "-m", "P@5"], "two metrics"),
                          (["-m", "nDCG@3"], "no results for nDCG@3"),
                          (["--kind", "judged-fraction"], "needs two or more RUNS")]:
        result = runner.invoke(main, ["plot", "--store", str(store), "-o", str(tmp_path / "x.png"), *args])
        assert result.exit_code == 2 and message in result.output
    result = runner.invoke(main, ["plot", "--store", str(store), "-o", str(tmp_path / "x.jpg")])
    assert result.exit_code == 2 and ".png or .pdf" in result.output


def test_subsamples_are_nested(job):
    _, qrels_path, _ = job
    from medopt.io.trec import read_qrels

    qrels = read_qrels(qrels_path)
    quarter, half = subsample_qrels(qrels, 0.25, 3), subsample_qrels(qrels, 0.5, 3)
    for topic in qrels:
        assert quarter[topic].items() <= half[topic].items() <= qrels[topic].items()
    total = sum(len(j) for j in qrels.values())
    assert 0.15 * total < sum(len(j) for j in quarter.values()) < 0.35 * total


def test_judged_fraction(job, tmp_path):
    paths, qrels, _ = job
    points = judged_fraction_points(paths, qrels, "SDCG@10", percents=[0, 25, 50, 75, 100], seed=1, jobs=1)
    assert list(points) == [0, 25, 50, 75, 100]
    previous = None
    for percent, (actual, med) in points.items():
        assert len(actual) == len(med) == 10
        assert np.all(med >= actual - 1e-12)  # MED bounds the actual difference, whatever is judged
        if previous is not None:
            assert np.all(med <= previous + 1e-12)  # more judgments never widen the bound
        previous = med
    outputs = [tmp_path / "fig2.png", tmp_path / "fig2.pdf"]
    result = CliRunner().invoke(main, ["plot", "--kind", "judged-fraction", *paths, "--qrels", qrels, "-m", "SDCG@10",
                                       "--fractions", "0,50,100", "-j", "1",
                                       *[x for o in outputs for x in ("-o", str(o))]])
    assert result.exit_code == 0, result.output
    assert_images(*outputs)
