"""Checks over a run directory's tables and an analytic model of the workload -> verdict.json."""
