"""benchmarks/whole_track.py on a small generated track (the real one, DL 2020, takes hours): one record
per metric and mode with the instances the store holds, their certified share, and a projection that
scales the pairs' time by the full track's pairs."""

import json
import subprocess
import sys
from pathlib import Path

from medopt.io.trec import write_qrels, write_run
from medopt.synthetic.generate import generate_qrels, generate_runs

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "whole_track.py"


def test_whole_track_on_a_generated_track(tmp_path):
    runs = generate_runs(4, 5, 12, seed=3)
    (tmp_path / "track" / "runs").mkdir(parents=True)
    for name, rankings in runs.items():
        write_run(str(tmp_path / "track" / "runs" / f"{name}.run"), rankings, name)
    write_qrels(str(tmp_path / "track" / "qrels.txt"), generate_qrels(runs, seed=3, max_grade=2, judged_fraction=0.5))
    log = tmp_path / "log.jsonl"
    command = [sys.executable, str(SCRIPT), "--data", str(tmp_path / "track"), "--runs", "3", "-j", "1",
               "--metrics", "P.10", "recip_rank", "--log", str(log)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=SCRIPT.parents[1])
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["metric"], r["mode"]) for r in records] == [("P.10", "med"), ("P.10", "range"),
                                                            ("recip_rank", "med"), ("recip_rank", "range")]
    for record in records:
        assert record["pairs"] == 3 and record["full_pairs"] == 6 and len(record["runs"]) == 3
        assert record["instances"] == 3 * 5 and record["certified_share"] == 1.0
        assert record["peak_rss_mb"] > 0 and record["instances_per_second"] > 0
        compute = record["wall_seconds"] - record["read_seconds"]
        projected = record["read_seconds"] * 4 / 3 + compute * 6 / 3
        assert abs(record["projected_full_seconds"] - projected) < 1e-9
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=SCRIPT.parents[1])
    assert again.returncode == 0 and len(log.read_text().splitlines()) == 4  # resumed: nothing measured again
    assert "full track, med, 2 metric(s)" in again.stdout
