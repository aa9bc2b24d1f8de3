"""The run store (docs/runs.md): every kernel run and every validate run kept in one SQLite file, listed, shown and
compared. One job: read a run (a harness run directory through common.rundir.RunDir, or a bare kernel run's
output.json) into a row of identity and numbers (ingest.py), keep it (db.py), compare two runs honestly (stats.py),
draw one number over time (plot.py); the CLI's subcommands (cmd_*.py) on top. It imports only common/ and never writes
into a run directory."""


class BadInput(Exception):
    """A path, ID or metric the store cannot use: the CLI prints it and exits 2."""
