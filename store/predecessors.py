"""The earlier runs a run store holds of the same workload on the same storage as a run directory (the pipeline
writes them into the run as predecessors.json before its report: `make validate RUNS_DB=<file>`; the report links
them). Reads the store only; a store that does not exist yet holds none."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from store import db, ingest

LIMIT = 10   # the newest earlier runs shown
SHOWN = ("kernel.au_percent", "kernel.throughput_samples_per_s", "kernel.train_s")   # their means, per run


def find(db_path: Path, run_dir: Path, limit: int = LIMIT) -> dict:
    """{"store", "storage", "fs_type", "workload", "runs": [...]}: the runs of run_dir's workload on its storage (the
    store's identity: storage folder and file system type, store/ingest.py) added before it, newest first, each with
    its ID, name, date, DLIO, ranks, verdict, whether its configuration hashes the same, where it is (source) and the
    means of SHOWN. run_dir itself (its key) is never one of them."""
    me = ingest.from_rundir(run_dir)
    out = {"store": str(db_path), "storage": me["storage"], "fs_type": me["fs_type"], "workload": me["workload"],
           "runs": []}
    if not Path(db_path).exists():
        return out
    con = db.connect(Path(db_path), create=False)
    try:
        found = con.execute("SELECT * FROM runs WHERE storage IS ? AND fs_type IS ? AND workload IS ? AND key != ? "
                            "AND date <= ? ORDER BY date DESC, id DESC LIMIT ?",
                            (me["storage"], me["fs_type"], me["workload"], me["key"], me["date"], limit)).fetchall()
        for r in found:
            vals = db.metrics(con, r["id"])
            out["runs"].append({"id": r["id"], "name": r["name"], "date": r["date"], "kind": r["kind"],
                                "dlio": r["dlio"], "ranks": r["ranks"], "verdict": r["verdict"],
                                "same_config": r["config_hash"] == me["config_hash"], "source": r["source"],
                                "means": {k: sum(vals[k]) / len(vals[k]) for k in SHOWN if vals.get(k)}})
    except sqlite3.Error as e:
        raise OSError(f"{db_path}: {e}") from None
    finally:
        con.close()
    return out
