"""Seeded random MED instances for oracle tests and heuristic certification.

Each instance draws two rankings from a small shared pool (so lists share some
documents, at different ranks, and hold some of their own), of possibly
different lengths, judges a random fraction of the pool with grades 0..G, adds
judged documents that appear in neither list, and keeps the number of unjudged
documents small enough for brute-force enumeration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RandomInstance:
    a: list[str]
    b: list[str]
    judgments: dict[str, int]
    max_grade: int
    k: int

    def as_kwargs(self) -> dict:
        return {"a": self.a, "b": self.b, "judgments": self.judgments, "max_grade": self.max_grade}


def random_instance(rng: np.random.Generator, *, k: int | None = None, max_grade: int | None = None,
                    judged_fraction: float | None = None, max_unjudged: int | None = None) -> RandomInstance:
    k = int(rng.integers(3, 9)) if k is None else k
    max_grade = int(rng.integers(1, 3)) if max_grade is None else max_grade
    judged_fraction = float(rng.choice([0.0, 0.2, 0.4, 0.6, 0.8])) if judged_fraction is None else judged_fraction
    if max_unjudged is None:
        max_unjudged = 11 if max_grade == 1 else (7 if max_grade == 2 else 5)
    pool = [f"d{i}" for i in range(int(rng.integers(k, 2 * k + 2)))]
    length_a = int(rng.integers(max(1, k - 2), k + 3))
    length_b = int(rng.integers(max(1, k - 2), k + 3))
    a = list(rng.choice(pool, size=min(length_a, len(pool)), replace=False))
    b = list(rng.choice(pool, size=min(length_b, len(pool)), replace=False))
    judgments = {}
    for doc in pool:
        if rng.random() < judged_fraction:
            judgments[doc] = int(rng.integers(0, max_grade + 1))
    for extra in range(int(rng.integers(0, 3))):  # judged documents retrieved by neither list
        judgments[f"x{extra}"] = int(rng.integers(0, max_grade + 1))
    if rng.random() < 0.1:
        judgments["neg"] = -1
    top = dict.fromkeys(a[:k] + b[:k])
    unjudged = [d for d in top if d not in judgments]
    for doc in unjudged[max_unjudged:]:  # keep enumeration small: judge the rest
        judgments[doc] = int(rng.integers(0, max_grade + 1))
    return RandomInstance([str(d) for d in a], [str(d) for d in b], judgments, max_grade, k)


def random_instances(seed: int, count: int, **options):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield random_instance(rng, **options)
