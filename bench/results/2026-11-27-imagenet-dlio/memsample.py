"""Sample every PERIOD s the RSS, PSS and private bytes (smaps_rollup) of each DLIO rank below ROOT_PID and of its
reader processes, one JSON line per sample, until ROOT_PID ends (how results.md's DLIO memory was measured).
Usage: memsample.py ROOT_PID PERIOD OUT.jsonl"""
from __future__ import annotations

import json
import os
import sys
import time


def proc(pid: str) -> tuple[int, str, int, int, int]:
    """(ppid, command line, RSS, PSS, private bytes) of one process; OSError if it is gone."""
    ppid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")[:200]
    v = {"Rss": 0, "Pss": 0, "Private": 0}
    for line in open(f"/proc/{pid}/smaps_rollup"):
        key = line.split(":")[0]
        if key in ("Rss", "Pss"):
            v[key] = int(line.split()[1]) * 1024
        elif key.startswith("Private_"):
            v["Private"] += int(line.split()[1]) * 1024
    return ppid, cmd, v["Rss"], v["Pss"], v["Private"]


def procs() -> dict[int, tuple]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                out[int(d)] = proc(d)
            except (OSError, IndexError, ValueError):
                pass
    return out


def below(pid: int, kids: dict[int, list[int]]) -> list[int]:
    tree, stack = [], [pid]
    while stack:
        p = stack.pop()
        tree.append(p)
        stack += kids.get(p, [])
    return tree


def sample(root: int) -> list[dict]:
    """One row per DLIO rank below root: a process running dlio_benchmark whose parent does not (readers are forks)."""
    ps = procs()
    kids: dict[int, list[int]] = {}
    for pid, v in ps.items():
        kids.setdefault(v[0], []).append(pid)
    mine = set(below(root, kids))
    ranks = [p for p, v in ps.items() if p in mine and "dlio_benchmark" in v[1]
             and "dlio_benchmark" not in ps.get(v[0], (0, ""))[1]]
    rows = []
    for r in ranks:
        tree = [p for p in below(r, kids) if p in ps]
        rows.append({"rank_pid": r, "procs": len(tree), "rss": sum(ps[p][2] for p in tree),
                     "pss": sum(ps[p][3] for p in tree), "rank_rss": ps[r][2],
                     "max_proc_rss": max(ps[p][2] for p in tree),
                     "readers_private": sorted(ps[p][4] for p in tree if p != r), "rank_private": ps[r][4]})
    return rows


def main() -> None:
    root, period, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    with open(out, "a") as f:
        while os.path.exists(f"/proc/{root}"):
            rows = sample(root)
            if rows:
                f.write(json.dumps({"t": time.time(), "ranks": rows}) + "\n")
                f.flush()
            time.sleep(period)


if __name__ == "__main__":
    main()
