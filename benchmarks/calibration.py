"""Is the ``rank`` relevance model calibrated?  (SPEC 13, issue 54's study.)

On TREC DL 2020 (passage runs, 54 judged topics) and DL-HARD (document runs): hide a seeded share
(50%, 75%) of every topic's judgments, predict for seeded run pairs P(A better on the mean) under the
partial qrels, and score the predictions against the outcome under the full qrels (trec_eval's mean
difference > 0): Brier score, log loss, the binned calibration error (10 equal-width bins, weighted by
their share of pairs) and a reliability diagram.  Predictors:

- ``rank``: the rank model fitted on the two runs and the partial qrels (SPEC 13);
- ``rank_known``: the same fitted curve drawn for the hidden documents only, those the full qrels never
  judged held at 0 (they are 0 in the outcome, trec_eval's convention): not a predictor a user has (it
  knows which documents the full qrels judge), but it separates the curve's calibration from that
  convention;
- ``trec_eval``: the verdict on the partial qrels as a 0/1 probability (1/2 on a tie);
- ``uniform``: ``uniform(p)`` at the judged prevalence (relevant share of the partial judgments of the
  two runs' counted ranks);
- ``assessor``: a simulated automatic assessor: every unjudged document's grade under the full qrels (0
  where the full qrels do not judge it, trec_eval's convention) passed through a seeded confusion matrix
  (CONFUSION), and the assessor's label turned into calibrated probabilities P(grade | label) by Bayes
  with the partial qrels' grade frequencies as the prior: a probabilities-file model.

Also reported: pairs with P(flip) <= 5% whose worst case can flip (the mean difference range over the
partial qrels contains 0; P.10 only, where the range has a closed form).

    flock /work/heavy.lock python benchmarks/calibration.py --pairs 20 --plot benchmarks/results/calibration.png
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import harness
from medopt.errors import MedoptWarning
from medopt.io.frames import as_run
from medopt.io.trec import read_qrels
from medopt.metrics import parse_metric
from medopt.relevance import FileModel, Model, Uniform, fit_rank_model, pair_distribution, pair_terms


class KnownModel(Model):
    """``model``'s rows for the documents the full qrels judge, grade 0 for the others."""

    name = "rank_known"

    def __init__(self, model, full):
        self.model, self.full = model, full

    def probabilities(self, topic, docs, ranks, max_grade):
        rows = np.array(self.model.probabilities(topic, docs, ranks, max_grade), dtype=float)
        judged = self.full.get(topic, {})
        for i, doc in enumerate(docs):
            if doc not in judged:
                rows[i] = 0.0
                rows[i, 0] = 1.0
        return rows

METRICS = ["P.10", "ndcg_cut.10", "map"]
HIDDEN = [0.5, 0.75]
CONFUSION = np.array([[0.85, 0.10, 0.04, 0.01],   # row: true grade, column: the assessor's label
                      [0.25, 0.50, 0.20, 0.05],
                      [0.10, 0.20, 0.55, 0.15],
                      [0.05, 0.10, 0.25, 0.60]])
BINS = 10
RANGED = ("P.10",)  # the metrics whose mean difference range is computed (closed form: quick)


def collections(data: Path) -> dict:
    dl2020 = data / "trec-dl-2020"
    hard = data / "dl-hard"
    out = {}
    if (dl2020 / "qrels.dl20-passage.txt").exists():
        out["dl2020"] = (sorted((dl2020 / "runs").glob("*.run*")), dl2020 / "qrels.dl20-passage.txt")
    if (hard / "dl_hard-doc.qrels").exists():
        out["dl-hard"] = (sorted(p for p in (hard / "baselines" / "doc").glob("*.run")), hard / "dl_hard-doc.qrels")
    return out


def hide(qrels: dict, share: float, seed: int) -> dict:
    """Every topic keeps a seeded (1 - share) of its judgments (at least one)."""
    rng = np.random.default_rng(seed)
    partial = {}
    for topic in sorted(qrels):
        docs = sorted(qrels[topic])
        keep = max(1, int(round(len(docs) * (1 - share))))
        chosen = rng.permutation(len(docs))[:keep]
        partial[topic] = {docs[i]: qrels[topic][docs[i]] for i in chosen}
    return partial


def mean_difference(metric, run_a, run_b, qrels) -> float:
    terms, _ = pair_terms(metric, run_a, run_b, qrels, model=Uniform(0.0))
    return math.fsum(t.reference for t in terms) / len(terms)


def prevalence(metric, run_a, run_b, partial) -> float:
    metric = parse_metric(metric)
    relevant = judged = 0
    for run in (run_a, run_b):
        for topic, ranking in run.rankings.items():
            grades = partial.get(topic)
            if not grades:
                continue
            for doc in ranking[: metric.depth(len(ranking))]:
                if doc in grades:
                    judged += 1
                    relevant += grades[doc] >= 1
    return relevant / judged if judged else 0.0


def assessor_model(run_a, run_b, full, partial, seed: int, top: int) -> FileModel:
    rng = np.random.default_rng(seed)
    confusion = CONFUSION[: top + 1, : top + 1]
    confusion = confusion / confusion.sum(axis=1, keepdims=True)
    counts = np.ones(top + 1)
    for grades in partial.values():
        for grade in grades.values():
            counts[min(max(grade, 0), top)] += 1
    prior = counts / counts.sum()
    posterior = prior[:, None] * confusion  # [true, label]
    posterior = posterior / posterior.sum(axis=0, keepdims=True)
    rows = {}
    for topic in sorted(set(run_a.rankings) | set(run_b.rankings)):
        docs = dict.fromkeys(list(run_a.rankings.get(topic, ())) + list(run_b.rankings.get(topic, ())))
        judged = partial.get(topic, {})
        truth = full.get(topic, {})
        out = {}
        for doc in docs:
            if doc in judged:
                continue
            true = min(max(truth.get(doc, 0), 0), top)
            label = rng.choice(top + 1, p=confusion[true])
            out[doc] = posterior[:, label].copy()
        rows[topic] = out
    return FileModel(rows, "assessor")


def scores(predictions, outcomes) -> dict:
    p, y = np.asarray(predictions, dtype=float), np.asarray(outcomes, dtype=float)
    clipped = np.clip(p, 1e-6, 1 - 1e-6)
    bins = np.minimum((p * BINS).astype(int), BINS - 1)
    error = 0.0
    for b in range(BINS):
        mask = bins == b
        if mask.any():
            error += mask.mean() * abs(p[mask].mean() - y[mask].mean())
    return {"brier": float(np.mean((p - y) ** 2)),
            "log_loss": float(-np.mean(y * np.log(clipped) + (1 - y) * np.log(1 - clipped))),
            "calibration_error": float(error), "pairs": int(len(p))}


def main(argv=None) -> int:
    parser = harness.parser(__doc__, data=harness.shared_data(), log="benchmarks/results/calibration.jsonl", fresh=True,
                            seed=54)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--metrics", nargs="+", default=METRICS)
    parser.add_argument("--hidden", nargs="+", type=float, default=HIDDEN)
    parser.add_argument("--collections", nargs="+", default=["dl2020", "dl-hard"])
    parser.add_argument("--draws", type=int, default=2000, help="draws of a sampled distribution (map)")
    parser.add_argument("--plot", default=None, help="the reliability diagram (.png)")
    parser.add_argument("--report-only", action="store_true", help="the table (and plot) of the log's records")
    args = parser.parse_args(argv)
    if args.report_only:
        report(list(harness.read_log(args.log, lambda r: (r["collection"], r["metric"], r["hidden"], r["a"],
                                                          r["b"])).values()), args.plot)
        return 0
    warnings.simplefilter("ignore", MedoptWarning)
    found = collections(args.data)
    log = harness.Log(args.log, key=lambda r: (r["collection"], r["metric"], r["hidden"], r["a"], r["b"]),
                      fresh=args.fresh)
    records = list(log.done.values())
    loaded = {}
    for name in args.collections:
        if name not in found:
            print(f"{name}: no data under {args.data}", file=sys.stderr)
            continue
        paths, qrels_path = found[name]
        full = read_qrels(qrels_path)
        top = max(max(g.values(), default=1) for g in full.values())
        chosen = harness.select_pairs(paths, args.pairs, args.seed)
        loaded[name] = (full, top, chosen, {p: as_run(str(p)) for pair in chosen for p in pair})
    # hidden share, then metric, then collection: a run stopped early has both collections' first rows
    for hidden in args.hidden:
        for metric in args.metrics:
            for name, (full, top, chosen, runs) in loaded.items():
                partial = hide(full, hidden, args.seed)
                for a, b in chosen:
                    key = (name, metric, hidden, a.name, b.name)
                    if key in log:
                        continue
                    started = time.perf_counter()
                    run_a, run_b = runs[a], runs[b]
                    outcome = mean_difference(metric, run_a, run_b, full)
                    observed = mean_difference(metric, run_a, run_b, partial)
                    rank = pair_distribution(metric, run_a, run_b, partial, model="rank", draws=args.draws,
                                             seed=args.seed)
                    depth = parse_metric(metric).cutoff or 1000
                    curve = fit_rank_model([{t: r for t, r in run_a.rankings.items() if t in partial},
                                            {t: r for t, r in run_b.rankings.items() if t in partial}],
                                           partial, top, depth=depth)
                    known = pair_distribution(metric, run_a, run_b, partial, model=KnownModel(curve, full),
                                              draws=args.draws, seed=args.seed)
                    uniform = pair_distribution(metric, run_a, run_b, partial,
                                                model=Uniform(prevalence(metric, run_a, run_b, partial)),
                                                draws=args.draws, seed=args.seed)
                    assessor = pair_distribution(metric, run_a, run_b, partial,
                                                 model=assessor_model(run_a, run_b, full, partial, args.seed, top),
                                                 draws=args.draws, seed=args.seed)
                    record = {"collection": name, "metric": metric, "hidden": hidden, "a": a.name, "b": b.name,
                              "outcome": int(outcome > 1e-9), "outcome_difference": outcome,
                              "observed": observed, "trec_eval": 1.0 if observed > 1e-9 else 0.0 if observed < -1e-9
                              else 0.5, "rank": rank.p_positive, "rank_interval": list(rank.p_positive_interval),
                              "rank_method": rank.method, "rank_flip": rank.p_flip, "rank_known": known.p_positive,
                              "uniform": uniform.p_positive,
                              "assessor": assessor.p_positive, "seconds": time.perf_counter() - started}
                    if metric in RANGED:
                        import medopt

                        frame = medopt.compare(run_a, run_b, partial, metric, ranges=True, per_topic=False,
                                               time_limit=5)
                        record["verdict"] = str(frame["verdict"].iloc[0])
                    records.append(log.write(record))
                    print(f"{name} {metric} hidden {hidden:.0%} {a.name} | {b.name}: outcome {record['outcome']} "
                          f"rank {record['rank']:.3f} ({rank.method}) uniform {record['uniform']:.3f} "
                          f"assessor {record['assessor']:.3f} trec_eval {record['trec_eval']:.1f} "
                          f"{record['seconds']:.1f}s", flush=True)
    log.close()
    report(records, args.plot)
    return 0


def report(records, plot=None) -> None:
    groups = {}
    for r in records:
        groups.setdefault((r["collection"], r["hidden"]), []).append(r)
    print("| collection | hidden | pairs x metrics | predictor | Brier | log loss | calibration error |")
    print("|---|---|---|---|---|---|---|")
    for (name, hidden), rows in sorted(groups.items()):
        outcomes = [r["outcome"] for r in rows]
        for predictor in ("rank", "rank_known", "uniform", "assessor", "trec_eval"):
            s = scores([r[predictor] for r in rows], outcomes)
            print(f"| {name} | {hidden:.0%} | {s['pairs']} | {predictor} | {s['brier']:.4f} | {s['log_loss']:.4f} | "
                  f"{s['calibration_error']:.4f} |")
        ranged = [r for r in rows if "verdict" in r]
        safe = [r for r in ranged if r["rank_flip"] <= 0.05 and r["verdict"] == "can flip"]
        print(f"| {name} | {hidden:.0%} | P(flip) <= 5% but the worst case can flip: {len(safe)} of {len(ranged)} "
              "(P.10) | | | | |")
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 4.0), squeeze=False)
        for axis, ((name, hidden), rows) in zip(axes[0], sorted(groups.items())):
            y = np.array([r["outcome"] for r in rows], dtype=float)
            for predictor in ("rank", "rank_known", "uniform", "assessor"):
                p = np.array([r[predictor] for r in rows])
                bins = np.minimum((p * BINS).astype(int), BINS - 1)
                xs, ys = [], []
                for b in range(BINS):
                    mask = bins == b
                    if mask.any():
                        xs.append(p[mask].mean())
                        ys.append(y[mask].mean())
                axis.plot(xs, ys, marker="o", label=predictor)
            axis.plot([0, 1], [0, 1], color="0.6", linestyle=":")
            axis.set_title(f"{name}, {hidden:.0%} hidden ({len(rows)})", fontsize=9)
            axis.set_xlabel("predicted P(A better)")
            axis.set_ylabel("share with A better (full qrels)")
            axis.legend(fontsize=7)
        figure.tight_layout()
        figure.savefig(plot, dpi=120)
        print(f"wrote {plot}")


if __name__ == "__main__":
    sys.exit(main())
