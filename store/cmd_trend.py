"""runs trend METRIC [--workload W] [--out FILE]: a PNG plot of one number over the kept runs' dates (each run's
mean, its repetitions' range as an error bar)."""
from __future__ import annotations

from pathlib import Path

from store import BadInput, cli, db, plot


def setup_parser(p) -> None:
    p.add_argument("metric", help="a metric name (runs show ID lists a run's)")
    p.add_argument("--workload", default=None, help="only this workload's runs")
    p.add_argument("--out", type=Path, default=None, help="the PNG (default: runs-trend-<metric>.png here)")
    cli.add_db(p)


def main(argv=None) -> int:
    a = cli.parse("trend", __doc__, setup_parser, argv)

    def body() -> int:
        con = db.connect(a.db, create=False)
        points = []
        for r in db.runs(con, a.workload):
            vals = db.metrics(con, r["id"]).get(a.metric)
            if vals:
                points.append({"date": r["date"], "values": vals, "config": r["config_hash"]})
        if not points:
            raise BadInput(f"metric {a.metric!r}: no kept run{' of workload ' + a.workload if a.workload else ''} "
                           "holds it")
        out = plot.trend(points, a.metric, a.out or Path(f"runs-trend-{a.metric}.png"))
        print(f"runs trend: {len(points)} runs -> {out}")
        return 0
    return cli.run("trend", body)
