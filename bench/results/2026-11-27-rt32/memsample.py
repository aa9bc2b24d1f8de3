"""Sample the memory of DLIO's process trees under one process (a run.sh) every INTERVAL seconds, as JSON lines.
A DLIO process is one whose command line starts with the DLIO venv (its ranks, and their PyTorch reader processes, which
are forked and keep it). Per sample: the DLIO processes' count, summed RSS and PSS (smaps_rollup: a forked reader's
pages shared with its rank count once in PSS, in every process in RSS), the largest process's RSS, per rank (the
topmost DLIO process of a tree) its tree's RSS, PSS and process count, and MemAvailable.
Usage: memsample.py ROOT_PID DLIO_VENV OUT [INTERVAL]; ends when ROOT_PID is gone."""
import json
import os
import sys
import time


def procs():
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        out[int(d)] = (ppid, cmd)
    return out


def mem(pid):
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, pss


def sample(root, venv):
    ps = procs()
    under = {root}
    changed = True
    while changed:
        new = {p for p, (pp, _) in ps.items() if pp in under and p not in under}
        under |= new
        changed = bool(new)
    dlio = {p for p in under if ps[p][1].startswith(venv)}  # not mpirun, whose arguments name it too
    ranks = {}
    for p in dlio:
        top = p
        while ps[top][0] in dlio:
            top = ps[top][0]
        r = ranks.setdefault(top, [0, 0, 0])
        rss, pss = mem(p)
        r[0] += rss
        r[1] += pss
        r[2] += 1
    sizes = [mem(p)[0] for p in dlio]
    with open("/proc/meminfo") as f:
        avail = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    return {"t": round(time.time()), "procs": len(dlio), "rss": sum(r[0] for r in ranks.values()),
            "pss": sum(r[1] for r in ranks.values()), "max_rss": max(sizes, default=0),
            "ranks": [{"rss": r[0], "pss": r[1], "procs": r[2]} for r in ranks.values()], "avail": avail}


def main():
    root, venv, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    interval = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
    with open(out, "a") as f:
        while os.path.exists(f"/proc/{root}"):
            f.write(json.dumps(sample(root, venv)) + "\n")
            f.flush()
            time.sleep(interval)


if __name__ == "__main__":
    main()
