"""runs list [--workload W] [--storage PATH]: the kept runs, oldest first, one line each (ID, name, kind, date,
workload, ranks, config hash, storage and its file system, verdict)."""
from __future__ import annotations

from store import cli, db


def setup_parser(p) -> None:
    p.add_argument("--workload", default=None, help="only this workload's runs")
    p.add_argument("--storage", default=None, help="only runs whose storage is this folder or under it")
    cli.add_db(p)


def line(r) -> str:
    verdict = r["verdict"] or "not validated"
    if r["verdict"]:
        verdict += f" ({r['checks_pass']} pass, {r['checks_fail']} fail)"
    return "\t".join(str(x) for x in (r["id"], r["name"], r["kind"], r["date"], r["workload"], r["ranks"],
                                      (r["config_hash"] or "")[:12], r["storage"],
                                      f"{r['fs_type'] or '?'} at {r['fs_mount'] or '?'}", verdict))


def main(argv=None) -> int:
    a = cli.parse("list", __doc__, setup_parser, argv)

    def body() -> int:
        con = db.connect(a.db, create=False)
        print("\t".join(("ID", "name", "kind", "date", "workload", "ranks", "config", "storage", "file system",
                         "verdict")))
        for r in db.runs(con, a.workload, a.storage):
            print(line(r))
        return 0
    return cli.run("list", body)
