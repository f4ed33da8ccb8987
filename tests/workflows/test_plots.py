"""medopt plot: every kind writes a readable PNG and PDF; Tan & Clarke's Fig. 2 data behave as MED must."""

import re
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

import medopt
from medopt.plots import matrix as plots
from medopt.plots import ranges as range_plots
from medopt.batch import Settings, run_matrix
from medopt.cli import main
from medopt.synthetic.generate import generate_qrels, generate_runs
from medopt.io.trec import write_qrels, write_run
from medopt.plots.matrix import cluster_order, judged_fraction_points, mean_matrix, load_values, subsample_qrels
from medopt.plots.ranges import observed_differences, plot_ranges
from medopt.plots.verdicts import plot_verdicts
from medopt.core.result import verdict
from medopt.io.store import ResultStore, open_existing

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


# ---------------------------------------------------------------------------
# issue 49: verdicts, shared heatmap order, labels, the ranges plot beyond one page


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def range_job(tmp_path_factory):
    """Four runs over 60 topics, one of them ordered by the qrels (so that some pairs are decided), in a
    store made with --range."""
    directory = tmp_path_factory.mktemp("verdicts")
    runs = generate_runs(4, 60, 10, seed=5)
    qrels = generate_qrels(runs, seed=5, max_grade=2, judged_fraction=0.9)
    runs["run3"] = {t: sorted(r, key=lambda d: -qrels[t].get(d, 0)) for t, r in runs["run3"].items()}
    paths = []
    for name, rankings in runs.items():
        paths.append(str(directory / f"{name}.run"))
        write_run(paths[-1], rankings, name)
    qrels_path = str(directory / "qrels.txt")
    write_qrels(qrels_path, qrels)
    store = directory / "range.sqlite"
    run_matrix(paths, ["P@5", "SDCG@10"], qrels=qrels_path, store=store, settings=Settings(ranges=True), jobs=1,
               progress=False)
    return runs, qrels, paths, qrels_path, store


def observed_mean(runs, qrels, run, metric):
    return np.mean([medopt.score(metric, runs[run][t], qrels[t], max_grade=2) for t in sorted(runs[run])])


def test_verdicts_plot_colours_each_pair_by_its_verdict(range_job, tmp_path):
    runs, qrels, _, _, store = range_job
    outputs = [tmp_path / "verdicts.png", tmp_path / "verdicts.pdf"]
    result = invoke("plot", "--kind", "verdicts", "--store", store, *[x for o in outputs for x in ("-o", o)])
    assert result.exit_code == 0, result.output
    assert_images(*outputs)
    drawn = plot_verdicts(store, [tmp_path / "v.png"])
    with open_existing(store) as results:
        pairs = results.pairs()
    assert set(drawn) == {"P@5", "SDCG@10"}
    for metric, (order, cells) in drawn.items():
        scores = {run: observed_mean(runs, qrels, run, metric) for run in runs}
        # best first by the observed score (ties, as run0's and run1's P@5, by name)
        assert order == sorted(runs, key=lambda r: (-round(scores[r], 12), r))
        rows = [r for r in pairs if r["metric"] == metric]
        assert len(rows) == 6 and len(cells) == 12
        for row in rows:
            a, b = row["run_a"], row["run_b"]
            if row["verdict"] == "decided":  # the run ahead: the side of 0 the reached (certified) ends lie on
                assert row["certified"] and (row["low"] > 0 or row["high"] < 0)
                assert cells[a, b] == ("row" if row["low"] > 0 else "column")
                assert cells[b, a] == ("column" if row["low"] > 0 else "row")
            else:
                assert cells[a, b] == cells[b, a] == row["verdict"]
    kinds = {kind for _, cells in drawn.values() for kind in cells.values()}
    assert {"row", "column", "can flip"} <= kinds  # the fixture has decided pairs and pairs that can flip


def test_verdicts_refused_without_range(job, tmp_path):
    _, _, store = job
    result = invoke("plot", "--kind", "verdicts", "--store", store, "-o", tmp_path / "v.png")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"medopt: error: {store} made without --range: no verdicts; rerun matrix with --range"]
    assert not (tmp_path / "v.png").exists()


def test_verdicts_never_mix_methods_and_show_open(range_job, tmp_path):
    *_, store = range_job
    copy = tmp_path / "copy.sqlite"
    shutil.copy(store, copy)
    with ResultStore(copy) as results:
        rows = results.pairs()
        first = dict(rows[0])
        # the same pair under another method, its high end reached but not proven: open (result.verdict)
        other = dict(first, method="greedy", low=0.01, high=0.2, low_bound=-0.1, high_bound=0.3)
        other["verdict"] = verdict(other["low"], other["high"], other["low_bound"], other["high_bound"])
        assert other["verdict"] == "open"
        results.replace_pairs(rows + [other], {r["run_a"] for r in rows} | {r["run_b"] for r in rows})
    result = invoke("plot", "--kind", "verdicts", "--store", copy, "-m", first["metric"], "-o", tmp_path / "v.png")
    assert result.exit_code == 2 and "--method" in result.output and "greedy" in result.output
    result = invoke("plot", "--kind", "verdicts", "--store", copy, "-m", first["metric"], "--method", "greedy",
                    "-o", tmp_path / "v.png")
    assert result.exit_code == 0, result.output
    _, cells = plot_verdicts(copy, [tmp_path / "w.png"], [first["metric"]], method="greedy")[first["metric"]]
    assert cells == {(first["run_a"], first["run_b"]): "open", (first["run_b"], first["run_a"]): "open"}
    result = invoke("plot", "--kind", "verdicts", "--store", copy, "--method", "tabu", "-o", tmp_path / "v.png")
    assert result.exit_code == 2 and "no results of method tabu" in result.output


def count_pdf_pages(path) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", path.read_bytes()))


def test_ranges_plot_beyond_one_page(range_job, tmp_path, monkeypatch):
    runs, qrels, paths, qrels_path, store = range_job
    png, pdf = tmp_path / "ranges.png", tmp_path / "ranges.pdf"
    result = invoke("plot", "--kind", "ranges", "--store", store, "-m", "SDCG@10", "--pair", "run3", "run0",
                    *paths, "--qrels", qrels_path, "-o", png, "-o", pdf)
    assert result.exit_code == 0, result.output
    assert_images(png, pdf)
    assert count_pdf_pages(pdf) == 2  # 60 topics, 50 to a page
    drawn = plot_ranges(store, [tmp_path / "again.pdf"], "SDCG@10", ("run3", "run0"), runs=paths, qrels=qrels_path)
    assert drawn["pages"] == 2
    with open_existing(store) as results:
        (row,) = [r for r in results.pairs() if r["metric"] == "SDCG@10" and {r["run_a"], r["run_b"]} == {"run0", "run3"}]
    sign = 1 if row["run_a"] == "run3" else -1
    assert drawn["verdict"] == row["verdict"]  # the title's verdict is the matrix summary's: one function
    assert drawn["low"] == pytest.approx(row["low"] if sign == 1 else -row["high"])
    expected = np.mean([medopt.score("SDCG@10", runs["run3"][t], qrels[t], max_grade=2)
                        - medopt.score("SDCG@10", runs["run0"][t], qrels[t], max_grade=2) for t in runs["run3"]])
    assert drawn["observed"] == pytest.approx(expected) == pytest.approx(sign * row["diff"])
    observed = observed_differences(store, paths, qrels_path, "SDCG@10", ("run3", "run0"))
    assert len(observed) == 60 and observed["407"] == pytest.approx(
        medopt.score("SDCG@10", runs["run3"]["407"], qrels["407"], max_grade=2)
        - medopt.score("SDCG@10", runs["run0"]["407"], qrels["407"], max_grade=2))
    # the PNG: the 50 widest ranges, a summary row of the other 10, the mean
    figures = capture(monkeypatch, range_plots)
    plot_ranges(store, [tmp_path / "one.png"], "SDCG@10", ("run3", "run0"))
    monkeypatch.undo()
    labels = [t.get_text() for t in figures[0].axes[0].get_yticklabels()]
    assert labels[0] == "mean" and "10 others" in labels and len(labels) == 52
    other = tmp_path / "other.txt"
    write_qrels(other, {"1": {"D1": 1}})
    result = invoke("plot", "--kind", "ranges", "--store", store, "-m", "SDCG@10", "--pair", "run3", "run0",
                    *paths, "--qrels", other, "-o", png)
    assert result.exit_code == 2 and "not the qrels" in result.output
    result = invoke("plot", "--kind", "ranges", "--store", store, "-m", "SDCG@10", "--pair", "run3", "run0",
                    *paths, "-o", png)
    assert result.exit_code == 2 and "give both or neither" in result.output


def capture(monkeypatch, module) -> list:
    """The figures a plot function would save (saved nowhere)."""
    figures = []
    monkeypatch.setattr(module, "_save", lambda figure, outputs, **_: figures.append(figure))
    return figures


def test_heatmap_panels_share_one_run_order_and_start_at_zero(job, monkeypatch):
    _, _, store = job
    rows = load_values(store)
    metrics = ["SDCG@10", "P@5"]
    alone = []
    for metric in metrics:
        names, matrix = mean_matrix(rows, metric)
        alone.append([names[i] for i in cluster_order(matrix)[0]])
    assert alone[0] != alone[1]  # clustered apart, the two metrics would order the runs differently
    figures = capture(monkeypatch, plots)
    plots.plot_heatmap(store, ["unused.png"], metrics=metrics)
    heats = [axis for axis in figures[0].axes if axis.images]
    assert len(heats) == 2
    orders = [[t.get_text() for t in axis.get_yticklabels()] for axis in heats]
    assert orders[0] == orders[1] == [t.get_text() for t in heats[0].get_xticklabels()]
    assert sorted(orders[0]) == ["run0", "run1", "run2", "run3", "run4"]
    for axis in heats:
        assert axis.images[0].norm.vmin == 0.0


def test_scatter_points_are_named(job, monkeypatch):
    _, _, store = job
    figures = capture(monkeypatch, plots)
    plots.plot_scatter(store, ["unused.png"], metrics=["SDCG@10", "P@5"])
    texts = {t.get_text() for t in figures[0].axes[0].texts}
    assert texts == {f"run{i} | run{j}" for i in range(5) for j in range(i + 1, 5)}


def test_many_points_are_numbered_with_a_key(monkeypatch):
    figure, axes, key = plots.labelled_figure(45)
    assert key is not None
    rng = np.random.default_rng(0)
    x, y = rng.random(45), rng.random(45)
    labels = [f"a{i} | b{i}" for i in range(45)]
    plots.label_panels(axes, key, [(x, y)], labels)
    numbers = [int(t.get_text()) for t in axes[0].texts]
    assert sorted(numbers) == list(range(1, 46))
    assert numbers[int(np.argmax(x + y))] == 1  # numbered from the upper right
    lines = key.texts[0].get_text().splitlines()
    assert len(lines) == 45 and lines[0].split() == ["1", *labels[int(np.argmax(x + y))].split()]
    plots._pyplot().close(figure)


def test_depths_with_its_default_metric_names_its_points(job, tmp_path, monkeypatch):
    paths, qrels, _ = job
    result = invoke("plot", "--kind", "depths", *paths, "--qrels", qrels, "-o", tmp_path / "d.png")
    assert result.exit_code == 0, result.output  # SDCG, the default, without a cutoff (issue 49)
    assert_images(tmp_path / "d.png")
    from medopt.plots import rbo as rbo_plots

    figures = capture(monkeypatch, rbo_plots)
    rbo_plots.plot_depths(paths, qrels, ["unused.png"], metric="P", depths=(5, 20))
    (axis,) = figures[0].axes
    assert {t.get_text() for t in axis.texts} == {f"run{i} | run{j}" for i in range(5) for j in range(i + 1, 5)}
    assert axis.get_xlabel() == "mean MED-P@20" and axis.get_ylabel() == "mean MED-P@5"
