"""Which documents to judge next: the policies, the simulated campaigns and the proven floor."""
