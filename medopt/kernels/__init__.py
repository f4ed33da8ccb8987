"""Array arithmetic shared by the single and batch paths."""
