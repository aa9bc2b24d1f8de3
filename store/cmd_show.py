"""runs show ID: one run's identity (config and its hash, DLIO and kernel, hosts, ranks, storage and its file
system, date, verdict) and every number it holds (mean and each repetition)."""
from __future__ import annotations

import json

from store import cli, db

FIELDS = ("name", "kind", "workload", "scale", "date", "config_hash", "dlio", "kernel_version", "kernel_git", "hosts",
          "ranks", "storage", "data_folder", "fs_type", "fs_mount", "source", "verdict", "checks_pass", "checks_fail",
          "checks_skip", "added")


def setup_parser(p) -> None:
    p.add_argument("id", help="a run's ID (runs list) or name")
    p.add_argument("--config", action="store_true", help="also print the resolved config (JSON)")
    cli.add_db(p)


def main(argv=None) -> int:
    a = cli.parse("show", __doc__, setup_parser, argv)

    def body() -> int:
        con = db.connect(a.db, create=False)
        r = db.run(con, a.id)
        print(f"run {r['id']}")
        for f in FIELDS:
            value = ", ".join(json.loads(r[f])) if f == "hosts" else r[f]
            print(f"  {f:<15} {'-' if value is None else value}")
        reps = db.repeats_of(con, r)
        print(f"  {'repeats':<15} {', '.join(str(x['id']) for x in reps)} (same config hash, storage and ranks)")
        print("metric\tn\tmean\tvalues")
        for name, vals in db.metrics(con, r["id"]).items():
            print(f"{name}\t{len(vals)}\t{cli.fmt(sum(vals) / len(vals))}\t{' '.join(cli.fmt(v) for v in vals)}")
        if a.config:
            print(json.dumps(json.loads(r["config_json"]), indent=1, sort_keys=True))
        return 0
    return cli.run("show", body)
