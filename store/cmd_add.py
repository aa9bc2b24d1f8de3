"""runs add PATH...: add runs to the store (a harness run directory, a kernel output folder or its output.json).
Adding the same run again replaces its row: one row per run."""
from __future__ import annotations

from pathlib import Path

from store import cli, db, ingest


def setup_parser(p) -> None:
    p.add_argument("paths", nargs="+", type=Path, help="run directories (manifest.json) or kernel output folders")
    p.add_argument("--workload", default=None, help="a bare kernel run's workload name (default: its config file's)")
    cli.add_db(p)


def main(argv=None) -> int:
    a = cli.parse("add", __doc__, setup_parser, argv)

    def body() -> int:
        recs = [ingest.load(p, a.workload) for p in a.paths]  # every path read before the store changes
        con = db.connect(a.db)
        for rec in recs:
            rid, new = db.put(con, rec)
            print(f"{rid}\t{rec['name']}\t{'added' if new else 'already kept: updated'}\t{len(rec['metrics'])} "
                  f"metrics")
        return 0
    return cli.run("add", body)
