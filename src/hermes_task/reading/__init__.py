"""Loops over the dashboard API: one read cycle, older batches, follow, the task tree."""
