"""Seeded synthetic data: TREC-like runs and qrels, random instances for oracles."""
