"""Fast methods: closed forms, the nDCG profile search and published heuristics (each returns a MedResult)."""
