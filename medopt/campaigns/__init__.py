"""Campaigns over many instances: heuristics certified against the exact MED, peer checks."""
