"""The instance, its results and certificates, reductions, trivial bounds and deadlines."""
