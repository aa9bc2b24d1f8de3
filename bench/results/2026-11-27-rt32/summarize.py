"""Per launch of a run (its manifest's steps), the DLIO memory memsample.py saw while it ran: peak PSS of each
rank's process tree (the rank and its readers), the most DLIO processes at once, the largest process's RSS, the
least MemAvailable. Usage: summarize.py MANIFEST MEM_JSONL > JSON."""
import json
import sys


def main():
    steps = json.load(open(sys.argv[1]))["steps"]
    samples = [json.loads(line) for line in open(sys.argv[2])]
    out = {}
    for name, s in steps.items():
        if not name.startswith("dlio.") or "started" not in s:
            continue
        t0, t1 = s["started"], s["started"] + s["wall_s"]
        mine = [x for x in samples if t0 <= x["t"] <= t1 + 1 and x["procs"]]
        if not mine:
            out[name] = {"samples": 0}
            continue
        out[name] = {"wall_s": round(s["wall_s"], 1), "samples": len(mine),
                     "max_procs": max(x["procs"] for x in mine),
                     "peak_pss_GB": round(max(x["pss"] for x in mine) / 1e9, 2),
                     "peak_rank_tree_pss_GB": round(max(r["pss"] for x in mine for r in x["ranks"]) / 1e9, 2),
                     "peak_rank_tree_rss_GB": round(max(r["rss"] for x in mine for r in x["ranks"]) / 1e9, 2),
                     "max_process_rss_GB": round(max(x["max_rss"] for x in mine) / 1e9, 2),
                     "min_mem_available_GB": round(min(x["avail"] for x in mine) / 1e9, 1)}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
