"""Compiled samplers (numba) for AP and nDCG, the deep metrics the sampler meets most: from the same
uniforms as distribution.draw_grades (a document's grade is the number of its CDF's values 0..G-1 at or
below its uniform), each draw's M(A) - M(B) in one pass over the lists.  tests/metrics/test_relevance.py
checks them against the evaluator."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _grades(uniform_row, cdf, grades):
    top = cdf.shape[1] - 1
    for j in range(uniform_row.shape[0]):
        u, g = uniform_row[j], 0
        while g < top and u >= cdf[j, g]:
            g += 1
        grades[j] = g


@numba.njit(cache=True)
def _sum_of_precisions(columns, fixed, grades, relevant):
    found, total = 0, 0.0
    for i in range(columns.shape[0]):
        g = grades[columns[i]] if columns[i] >= 0 else fixed[i]
        if relevant[g]:
            found += 1
            total += found / (i + 1.0)
    return total


@numba.njit(cache=True)
def ap_draws(uniform, cdf, columns_a, fixed_a, columns_b, fixed_b, relevant, judged_relevant, cap):
    """AP(A) - AP(B) per row of ``uniform``; R = judged relevant + drawn relevant (``cap`` > 0: min(cap, R))."""
    draws, docs = uniform.shape
    out = np.empty(draws)
    grades = np.empty(docs, np.int64)
    for i in range(draws):
        _grades(uniform[i], cdf, grades)
        count = judged_relevant
        for j in range(docs):
            if relevant[grades[j]]:
                count += 1
        if cap > 0 and count > cap:
            count = cap
        if count == 0:
            out[i] = 0.0
        else:
            out[i] = (_sum_of_precisions(columns_a, fixed_a, grades, relevant)
                      - _sum_of_precisions(columns_b, fixed_b, grades, relevant)) / count
    return out


@numba.njit(cache=True)
def _dcg(columns, fixed, grades, gains, discount):
    total = 0.0
    for i in range(columns.shape[0]):
        g = grades[columns[i]] if columns[i] >= 0 else fixed[i]
        total += gains[g] * discount[i]
    return total


@numba.njit(cache=True)
def ndcg_draws(uniform, cdf, columns_a, fixed_a, columns_b, fixed_b, gains, discount, judged_counts, depth):
    """nDCG(A) - nDCG(B) per row; the ideal DCG from the collection's grade counts (judged + drawn),
    highest grade first, over ``depth`` ranks (-1: every positive-gain document)."""
    draws, docs = uniform.shape
    top = gains.shape[0] - 1
    out = np.empty(draws)
    grades = np.empty(docs, np.int64)
    counts = np.empty(top + 1, np.int64)
    for i in range(draws):
        _grades(uniform[i], cdf, grades)
        for g in range(top + 1):
            counts[g] = judged_counts[g]
        for j in range(docs):
            counts[grades[j]] += 1
        ideal, position = 0.0, 0
        for g in range(top, 0, -1):
            if gains[g] <= 0:
                continue
            for _ in range(counts[g]):
                if depth >= 0 and position >= depth:
                    break
                ideal += gains[g] / np.log2(position + 2.0)
                position += 1
        if ideal <= 0:
            out[i] = 0.0
        else:
            out[i] = (_dcg(columns_a, fixed_a, grades, gains, discount)
                      - _dcg(columns_b, fixed_b, grades, gains, discount)) / ideal
    return out


@numba.njit(cache=True)
def linear_draws(uniform, cdf, values, constant):
    """constant + sum over documents of values[j, grade_j] per row (a linear metric's difference)."""
    draws, docs = uniform.shape
    top = cdf.shape[1] - 1
    out = np.empty(draws)
    for i in range(draws):
        total = constant
        for j in range(docs):
            u, g = uniform[i, j], 0
            while g < top and u >= cdf[j, g]:
                g += 1
            total += values[j, g]
        out[i] = total
    return out
