"""The Log VFD profile's checks (run by validate): the per-open blocks side by side (logvfd.sequence.* in order,
logvfd.multiset.* as multisets) and each side's opens and raw reads against the analytic model (counts.*)."""
from __future__ import annotations

from collections import Counter

from common.mapping import dotted_get
from profiles import FAIL, PASS, SKIP, RunView, checkpoint_only, result
from profiles.shared.rules import raw_reader


def _first_diff(a: list, b: list) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _distinct(blocks: list) -> tuple[dict[int, list], Counter]:
    """The distinct block objects in order of first use (a compact table's equal blocks are one shared list) and how
    many opens each stands for: the work of a check is then per distinct block, not per open."""
    first: dict[int, list] = {}
    for b in blocks:
        first.setdefault(id(b), b)
    return first, Counter(map(id, blocks))


def _records(blocks: list) -> Counter:
    """Every record of the blocks (superblock probes aside) with its count, in order of first appearance."""
    first, n = _distinct(blocks)
    c: Counter = Counter()
    for i, b in first.items():
        for x in b:
            if not x.startswith("SUPER-PROBE"):
                c[x] += n[i]
    c["opens"] = len(blocks)
    return c


def _draw_sizes(blocks: list) -> list[int]:
    """The raw reads' sizes, open by open, in order (each distinct block's computed once)."""
    first, _ = _distinct(blocks)
    sizes = {i: [int(x.split()[0].split("-")[1]) - int(x.split()[0].split("-")[0]) + 1
                 for x in b if x.endswith("DRAW Read")] for i, b in first.items()}
    return [v for b in blocks for v in sizes[id(b)]]


def _tensorflow(cfg: dict) -> bool:
    return str(dotted_get(cfg, "framework", "")).lower() == "tensorflow" and \
        str(dotted_get(cfg, "reader.data_loader", "")).lower() == "tensorflow"


def _ordered(cfg: dict) -> bool:
    """Is DLIO's per-rank order deterministic with the workload's read threads? PyTorch: only without worker
    processes. TensorFlow: with one tf.data reader thread (0 counts as 1, tf_data_loader.py:70-74), whose generator
    reads its list in order; several threads read in parallel (interleave, num_parallel_calls, :84-91)."""
    rt = int(dotted_get(cfg, "reader.read_threads", 1))
    return rt <= 1 if _tensorflow(cfg) else rt == 0


NO_DATA = "a checkpoint-only workload (workflow.train false) opens no HDF5 file: no Log VFD launch"


def check_logvfd(run: RunView) -> list[dict]:
    out = []
    why = raw_reader(run) or NO_DATA * checkpoint_only(run.cfg)
    if why:
        return [result("logvfd", SKIP, detail=why)]
    rt = int(dotted_get(run.cfg, "reader.read_threads", 1))
    variants = [("logvfd", "sequence" if _ordered(run.cfg) else "multiset")]
    if _tensorflow(run.cfg) and rt > 1:
        out += [result(f"logvfd.sequence.rank{r}", SKIP, detail=f"DLIO's tf.data runs {rt} reader threads in parallel "
                       "(tf_data_loader.py:84-91 interleave, num_parallel_calls): its order across threads is not "
                       "deterministic; the multiset, counts and the read_threads=0 sequence are checked")
                for r in range(run.ranks)]
    if run.table("logvfd-rt0-dlio.json") is not None or rt > 0:
        variants.append(("logvfd-rt0", "sequence"))
    for prof, kind in variants:
        d, k = run.table(f"{prof}-dlio.json"), run.table(f"{prof}-kernel.json")
        if d is None or k is None:
            out.append(result(f"logvfd.{prof}", SKIP, detail=f"no {prof} tables (profile not run or a launch failed)"))
            continue
        for r in range(run.ranks):
            name = f"logvfd.{kind}.{'rt0.' if prof == 'logvfd-rt0' else ''}rank{r}"
            db = d["ranks"].get(str(r), {}).get("blocks")
            kb = k["ranks"].get(str(r), {}).get("blocks")
            if db is None or kb is None:
                out.append(result(name, FAIL, detail=f"rank {r}: no Log VFD records on one side"))
                continue
            if kind == "sequence":
                i = _first_diff(db, kb)
                ok = db == kb
                detail = f"{len(db)} blocks identical in order" if ok else (
                    f"first difference at open #{i}: DLIO {db[i] if i < len(db) else 'none'} | kernel "
                    f"{kb[i] if i < len(kb) else 'none'}")
            else:
                # reader processes share the rank's stderr: their records interleave, so blocks are not reliable;
                # compare the multiset of records (superblock probes aside) and the number of opens
                cd, ck = _records(db), _records(kb)
                ok = cd == ck
                only_d, only_k = cd - ck, ck - cd
                detail = f"{len(db)} opens, {sum(cd.values())} records, same multiset" if ok else (
                    f"only DLIO ({sum(only_d.values())}): {list(only_d)[:3]} | only kernel ({sum(only_k.values())}): "
                    f"{list(only_k)[:3]}")
            out.append(result(name, PASS if ok else FAIL, len(db), len(kb), detail))
    return out


def check_counts(run: RunView) -> list[dict]:
    """Opens, raw reads and raw bytes per rank (and per phase/epoch where the order is deterministic) against the
    analytic model computed from the workload alone."""
    out = []
    why = raw_reader(run) or NO_DATA * checkpoint_only(run.cfg)
    if why:
        return [result("counts.logvfd", SKIP, detail=why)]
    for prof in ("logvfd", "logvfd-rt0"):
        cfg = run.cfg if prof == "logvfd" else {**run.cfg, "reader": {**run.cfg.get("reader", {}), "read_threads": 0}}
        exp = run.model_reads(cfg)
        for side in ("dlio", "kernel"):
            t = run.table(f"{prof}-{side}.json")
            if t is None:
                continue
            for r in range(run.ranks):
                segs = exp[r]
                e_bytes = [b for s in segs for b in s["bytes"]]
                tr = t["ranks"].get(str(r), {})
                blocks = tr.get("blocks", [])
                got = _draw_sizes(blocks)
                e = {"opens": sum(s["opens"] for s in segs), "raw_reads": len(e_bytes), "raw_bytes": sum(e_bytes)}
                o = {"opens": tr.get("opens"), "raw_reads": tr.get("raw_reads"), "raw_bytes": tr.get("raw_read_bytes")}
                name = f"counts.{side}.{prof}.rank{r}"
                out.append(result(name, PASS if e == o else FAIL, e, o,
                                  f"model of DLIO {run.release}: sampler + steps + prefetch + per-file dims (seed 10)"))
                if prof == "logvfd-rt0" or _ordered(cfg):
                    pos, bad = 0, []
                    for s in segs:
                        n = len(s["bytes"])
                        if got[pos:pos + n] != s["bytes"]:
                            bad.append(f"{s['phase']} epoch {s['epoch']}")
                        pos += n
                    out.append(result(f"{name}.per_phase", PASS if not bad and pos == len(got) else FAIL,
                                      len(segs), len(segs) - len(bad),
                                      "each phase/epoch segment reads the modelled sample sizes in order" if not bad
                                      else f"differs in {', '.join(bad[:4])}"))
    return out
