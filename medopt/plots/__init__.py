"""Figures: a matrix store's plots, the ranges and verdicts, RBO and depths."""
