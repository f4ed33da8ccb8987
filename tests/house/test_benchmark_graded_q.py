"""benchmarks/graded_q.py's G = 4 set: the raised qrels (the benchmark itself needs the DL-HARD data)."""

import pytest
from conftest import load_script


@pytest.fixture(scope="module")
def bench():
    return load_script("benchmarks/graded_q.py", "graded_q")


def test_half_of_each_topics_threes_become_fours_and_nothing_else_moves(bench):
    qrels = {"7": {f"d{i}": i % 4 for i in range(23)}, "8": {"x": 3}, "9": {"y": 1, "z": 2}}
    raised = bench.raised_qrels(qrels)
    for topic, judged in qrels.items():
        threes = [d for d, g in judged.items() if g == 3]
        fours = [d for d, g in raised[topic].items() if g == 4]
        assert len(fours) == len(threes) // 2 and set(fours) <= set(threes)
        assert all(raised[topic][d] == g for d, g in judged.items() if d not in fours)
    assert raised == bench.raised_qrels(qrels)  # seeded: the same set every time
    assert any(bench.raised_qrels(qrels, seed=seed)["7"] != raised["7"] for seed in range(5))  # the seed draws them
