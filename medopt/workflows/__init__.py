"""Whole-run workflows: compare's rows, bounds, the ir_measures measure, the model catalogue."""
