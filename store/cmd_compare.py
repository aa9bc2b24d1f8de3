"""runs compare A B [--metric M]...: per metric both runs' means, B - A, and over repeats a bootstrap 95% interval of
the difference of means with Cohen's d and a verdict ("within noise" when the interval holds 0, else "differs").
The repeats are each run's own repetitions (REPEAT); with --pool, every kept run repeating it (the same config hash,
storage and ranks). One value per side: no noise estimate is made up."""
from __future__ import annotations

import json

from store import BadInput, cli, db, stats

FEW = 5  # values a side below which the printed comparison warns that its bootstrap interval is too narrow


def setup_parser(p) -> None:
    p.add_argument("a", help="run A's ID or name (the baseline)")
    p.add_argument("b", help="run B's ID or name")
    p.add_argument("--metric", action="append", default=None, help="a metric to compare (repeatable; default: all "
                   "both runs hold)")
    p.add_argument("--pool", action="store_true", help="pool each run's repeats (same config hash, storage, ranks)")
    p.add_argument("--resamples", type=int, default=stats.RESAMPLES, help="bootstrap resamples (default %(default)s)")
    p.add_argument("--json", action="store_true", help="the rows as JSON")
    cli.add_db(p)


def samples(con, row, pool: bool) -> tuple[dict[str, list[float]], list[int]]:
    """{metric: values} of a run, or of every run repeating it (pool), and the runs they come from."""
    rows = db.repeats_of(con, row) if pool else [row]
    out: dict[str, list[float]] = {}
    for r in rows:
        for k, v in db.metrics(con, r["id"]).items():
            out.setdefault(k, []).extend(v)
    return out, [r["id"] for r in rows]


def rows(con, a: str, b: str, metrics: list[str] | None, pool: bool, resamples: int) -> tuple[list[dict], dict]:
    ra, rb = db.run(con, a), db.run(con, b)
    if resamples < 100:
        raise BadInput(f"--resamples {resamples}: at least 100")
    sa, ids_a = samples(con, ra, pool)
    sb, ids_b = samples(con, rb, pool)
    if pool and set(ids_a) & set(ids_b):
        raise BadInput(f"runs {a} and {b} repeat each other (same config hash, storage, ranks): compare them "
                       "without --pool")
    common = sorted(set(sa) & set(sb))
    for m in metrics or []:
        if m not in common:
            raise BadInput(f"metric {m!r}: not held by both runs (both hold: {', '.join(common) or 'none'})")
    out = [{"metric": m, **stats.compare(sa[m], sb[m], resamples)} for m in (metrics or common)]
    return out, {"a": ra["id"], "b": rb["id"], "runs_a": ids_a, "runs_b": ids_b, "seed": stats.SEED}


def text(r: dict) -> str:
    iv = "-" if r["interval"] is None else f"[{cli.fmt(r['interval'][0])}, {cli.fmt(r['interval'][1])}]"
    rel = "-" if r["rel"] is None else f"{100 * r['rel']:+.2f}%"
    return "\t".join((r["metric"], f"{cli.fmt(r['mean_a'])} (n={r['n_a']})", f"{cli.fmt(r['mean_b'])} (n={r['n_b']})",
                      cli.fmt(r["diff"]), rel, iv, cli.fmt(r["cohens_d"]), r["verdict"]))


def main(argv=None) -> int:
    a = cli.parse("compare", __doc__, setup_parser, argv)

    def body() -> int:
        con = db.connect(a.db, create=False)
        out, who = rows(con, a.a, a.b, a.metric, a.pool, a.resamples)
        if a.json:
            print(json.dumps({**who, "rows": out}, indent=1))
            return 0
        print(f"A = run {who['a']} (values of runs {who['runs_a']}), B = run {who['b']} (values of runs "
              f"{who['runs_b']}); interval: percentile bootstrap, {a.resamples} resamples, seed {stats.SEED}")
        print("metric\tA mean\tB mean\tB - A\tB - A (% of A)\t95% interval of B - A\tCohen's d\tverdict")
        for r in out:
            print(text(r))
        if any(r["interval"] and min(r["n_a"], r["n_b"]) < FEW for r in out):
            print(f"note: fewer than {FEW} values a side: the bootstrap interval is narrower than the truth "
                  "(docs/runs.md)")
        return 0
    return cli.run("compare", body)
