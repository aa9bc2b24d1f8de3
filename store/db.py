"""The store's one file: SQLite (Python's sqlite3; no server). Table `runs`: one row per run, its identity and verdict;
table `metrics`: one row per (run, metric, repetition). A run's `key` makes adding idempotent: the same run added
again replaces its own row's numbers, never adds a row."""
from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from store import BadInput

SCHEMA_VERSION = 1
IDENTITY = ("key", "name", "kind", "workload", "scale", "date", "config_json", "config_hash", "dlio", "kernel_version",
            "kernel_git", "hosts", "ranks", "storage", "data_folder", "fs_type", "fs_mount", "source", "verdict",
            "checks_pass", "checks_fail", "checks_skip")
INTEGERS = ("ranks", "checks_pass", "checks_fail", "checks_skip")
COLUMNS = ", ".join(f"{c} {'INTEGER' if c in INTEGERS else 'TEXT'}" for c in IDENTITY)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, {COLUMNS}, added TEXT NOT NULL, UNIQUE (key));
CREATE TABLE IF NOT EXISTS metrics (run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, name TEXT NOT NULL,
    rep INTEGER NOT NULL, value REAL NOT NULL, PRIMARY KEY (run, name, rep));
"""


def default_path() -> Path:
    """$H5DLIO_RUNS_DB, else ~/.local/share/h5dlio/runs.sqlite."""
    env = os.environ.get("H5DLIO_RUNS_DB")
    return Path(env) if env else Path.home() / ".local" / "share" / "h5dlio" / "runs.sqlite"


def connect(path: Path, create: bool = True) -> sqlite3.Connection:
    """The store at path (created with its folder when create; else a missing store is bad input)."""
    path = Path(path)
    if not path.exists() and not create:
        raise BadInput(f"{path}: no run store there (`runs add` or `runs import` creates it)")
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(path)
        con.execute("PRAGMA foreign_keys = ON")
        con.executescript(SCHEMA)
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except (OSError, sqlite3.Error) as e:
        raise BadInput(f"{path}: not a run store here ({e})") from e
    con.row_factory = sqlite3.Row
    return con


def put(con: sqlite3.Connection, rec: dict) -> tuple[int, bool]:
    """Insert or replace one run (rec: the IDENTITY fields and "metrics": {name: [values per repetition]}); returns
    (its id, whether it is new)."""
    old = con.execute("SELECT id FROM runs WHERE key = ?", (rec["key"],)).fetchone()
    vals = [rec.get(c) for c in IDENTITY]
    vals[IDENTITY.index("hosts")] = json.dumps(rec.get("hosts") or [])
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with con:
        if old:
            rid = old["id"]
            con.execute(f"UPDATE runs SET {', '.join(f'{c} = ?' for c in IDENTITY)} WHERE id = ?", (*vals, rid))
            con.execute("DELETE FROM metrics WHERE run = ?", (rid,))
        else:
            cur = con.execute(f"INSERT INTO runs ({', '.join(IDENTITY)}, added) VALUES "
                              f"({', '.join('?' * (len(IDENTITY) + 1))})", (*vals, now))
            rid = cur.lastrowid
        con.executemany("INSERT INTO metrics (run, name, rep, value) VALUES (?, ?, ?, ?)",
                        [(rid, n, i + 1, float(v)) for n, vs in rec["metrics"].items() for i, v in enumerate(vs)])
    return rid, not old


def run(con: sqlite3.Connection, ident: str) -> sqlite3.Row:
    """A run by its number (`runs list`'s ID) or its name; a bad one is bad input naming it."""
    row = con.execute("SELECT * FROM runs WHERE id = ?", (int(ident),)).fetchone() if ident.isdigit() else \
        con.execute("SELECT * FROM runs WHERE name = ?", (ident,)).fetchone()
    if row is None:
        raise BadInput(f"run {ident!r}: no such run in the store (`runs list` shows the IDs)")
    return row


def metrics(con: sqlite3.Connection, rid: int) -> dict[str, list[float]]:
    """{metric: [value per repetition, in order]} of one run."""
    out: dict[str, list[float]] = {}
    for r in con.execute("SELECT name, value FROM metrics WHERE run = ? ORDER BY name, rep", (rid,)):
        out.setdefault(r["name"], []).append(r["value"])
    return out


def repeats_of(con: sqlite3.Connection, row: sqlite3.Row) -> list[sqlite3.Row]:
    """Every run repeating this one: the same config_hash, storage and ranks (itself included), oldest first."""
    return con.execute("SELECT * FROM runs WHERE config_hash = ? AND storage IS ? AND ranks IS ? ORDER BY date, id",
                       (row["config_hash"], row["storage"], row["ranks"])).fetchall()


def runs(con: sqlite3.Connection, workload: str | None = None, storage: str | None = None) -> list[sqlite3.Row]:
    """Runs oldest first, of one workload and/or with their storage at or under a path."""
    rows = con.execute("SELECT * FROM runs ORDER BY date, id").fetchall()
    if workload:
        rows = [r for r in rows if r["workload"] == workload]
    if storage:
        base = os.path.abspath(storage).rstrip("/")
        rows = [r for r in rows if r["storage"] and (r["storage"] == base or r["storage"].startswith(base + "/"))]
    return rows
