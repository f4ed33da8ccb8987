"""Exact backends: brute-force enumeration (the oracle), HiGHS and CP-SAT."""
