"""Seeded random instances, with and without side constraints, for the exact-vs-oracle tests."""

import numpy as np

from medopt.instance import RelevanceLimit
from medopt.random_instances import random_instance


def oracle_cases(seed: int, count: int, **options):
    """Yield (case, limits): a third of the cases carry a random relevance limit."""
    rng = np.random.default_rng(seed)
    for index in range(count):
        case = random_instance(rng, **options)
        limits = ()
        if index % 3 == 2:
            grade = int(rng.integers(1, case.max_grade + 1))
            if rng.random() < 0.5:
                limits = (RelevanceLimit(grade=grade, high=int(rng.integers(0, 3))),)
            else:
                limits = (RelevanceLimit(grade=grade, low=int(rng.integers(1, 4))),)
        yield case, limits
