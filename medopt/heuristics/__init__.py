"""Fast methods: closed forms and published heuristics (each returns a MedResult)."""
