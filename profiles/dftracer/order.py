"""The checks of the order of reads (run in validate): each reading process's data-file opens side by side
(dftracer.order), against the model's workers (DLIO 3.x), the opens per data file against the analytic model
(counts.dftracer) and the batches in the model's order (dftracer.batches).
"""
from __future__ import annotations

from collections import Counter

from profiles import FAIL, PASS, SKIP, RunView, result
from profiles.shared.files import train_file_index
from profiles.shared.paths import GEN_RECORD


def _reading(t: dict, r: int) -> list[dict]:
    """A side's threads of rank r that opened a data file (a name the side read from: the data folder's directories,
    opened to list them, are left out), each with its opens in time order."""
    files = t["files"]["files"]
    rows = [{**x, "opens": [n for n in x["opens"] if (files.get(n) or {}).get("reads")]}
            for x in (t.get("process_order") or {}).get(str(r), [])]
    return [x for x in rows if x["opens"]]


def _common(x: list[str], y: list[str]) -> int:
    """The length of two lists' common prefix."""
    return next((p for p in range(min(len(x), len(y))) if x[p] != y[p]), min(len(x), len(y)))


def _first_difference(a: list[list[str]], b: list[list[str]]) -> tuple[int, int, int, str, str]:
    """The first differing open of two sides' per-process lists, once the lists equal on both sides are set aside:
    each remaining DLIO list beside the kernel list that opens the same file at the most positions (then: the longest
    common prefix). (i, j, position, DLIO's name, the kernel's name): the lists' indices, "-" for an open one side
    does not make."""
    left = list(range(len(b)))
    for i, x in enumerate(a):
        if x in (b[j] for j in left):
            left.remove(next(j for j in left if b[j] == x))
            continue
        if not left:
            return i, -1, 0, x[0], "-"
        j = max(left, key=lambda j, x=x: (sum(p == q for p, q in zip(x, b[j], strict=False)), _common(x, b[j])))
        p, y = _common(x, b[j]), b[j]
        return i, j, p, x[p] if p < len(x) else "-", y[p] if p < len(y) else "-"
    j = left[0]
    return -1, j, 0, "-", b[j][0]


def _order_rule(run: RunView) -> tuple[str | None, str]:
    """Why dftracer.order cannot compare this run (None: it can), and how DLIO's order is fixed: which process reads
    which batch, and in which order it opens its files. DLIO 2.0.0 data_loader/torch_data_loader.py:87-110: the rank's
    slice of the sampler, shuffled after np.random.seed(seed) at every __iter__; :137-162: a DataLoader of
    read_threads workers, drop_last, persistent_workers with workers (so one process per worker for the whole run).
    torch (the venv's) utils/data/dataloader.py:1260: each epoch's iterator restarts its worker cycle at worker 0;
    :1533-1546: batch after batch to the next worker of the cycle (in_order); _utils/worker.py:335: a worker takes its
    indices from its own queue, first in, first out; _utils/fetch.py:54: a batch's samples read in the sampler's
    order. So worker w opens batches w, w + W, ... in order; which OS process is worker w is not recorded."""
    reader = run.cfg.get("reader") or {}
    if (reader.get("data_loader") or run.cfg.get("framework")) != "pytorch":
        return ("DLIO's TensorFlow readers run on tf.data's thread pool: which thread opens a file is not fixed "
                "(the per-file counts and the Log VFD compare them)"), ""
    if int(reader.get("read_threads", 1)) == 0:
        return None, "read_threads 0: the rank opens every file itself, in its sampler's order"
    return None, ("reader processes: torch hands batch k of an epoch to worker k mod W, and each worker opens its "
                  "batches' files in order (the workers' interleaving is racy; each worker's list is not)")


def check_order(run: RunView, d: dict, k: dict) -> list[dict]:
    """dftracer.order.rank<r>: per rank, each reading process's data-file opens by name (relative to the side's data
    folder), in time order, side by side: as many processes, and the same lists, matched as a multiset (which OS
    process is worker w is not recorded; the sequence of each is fixed: _order_rule). The detail names the first
    differing open (rank, position in its process's list, both names)."""
    why, rule = _order_rule(run)
    if why:
        return [result("dftracer.order", SKIP, detail=why)]
    if "process_order" not in d or "process_order" not in k:
        return [result("dftracer.order", SKIP, detail="the DFTracer tables were collected before process_order "
                       "(re-collect the run to compare the order of opens)")]
    out = []
    for r in range(run.ranks):
        a, b = ([x["opens"] for x in _reading(t, r)] for t in (d, k))
        n = sum(map(len, a))
        if sorted(a) == sorted(b) and a:
            out.append(result(f"dftracer.order.rank{r}", PASS, n, n,
                              f"{len(a)} reading processes on each side, {n} data-file opens, each process's in "
                              f"the same order ({rule})"))
            continue
        i, j, p, x, y = _first_difference(a, b) if a or b else (-1, -1, 0, "-", "-")
        out.append(result(f"dftracer.order.rank{r}", FAIL, n, sum(map(len, b)),
                          f"reading processes: DLIO {len(a)}, the kernel {len(b)}; " +
                          (f"first differing open: rank {r}, position {p} of a reading process's opens "
                           f"(DLIO's list {i}, the kernel's {j}, in order of first open): DLIO {x}, the kernel {y}"
                           if a or b else "no data-file open traced on either side") + f" ({rule})"))
    return out


# a data file's read calls DFTracer records besides read/pread: the O_DIRECT path (reader.odirect) reads with readv,
# which the file table counts under "calls", not "reads"
READV_CALLS = ("readv", "preadv", "preadv2")


def _read_from(row: dict | None) -> bool:
    """Whether a data file's row records a read: read/pread, or readv (O_DIRECT's npz reads: no "reads" counted)."""
    return bool(row) and bool(row.get("reads") or any((row.get("calls") or {}).get(c) for c in READV_CALLS))


def _process_files(t: dict, r: int, cfg: dict) -> list[list[int]]:
    """A side's processes of rank r that opened a data file it read from (_read_from), each with its training-file
    opens (by DLIO's index; -1 for a name that is no training file of the workload) in time order."""
    files = t["files"]["files"]
    rows = [[train_file_index(n, cfg) for n in x if _read_from(files.get(n))]
            for x in (t.get("process_opens") or {}).get(str(r), [])]
    return [x for x in rows if x]


def _match_iterators(lists: list[list[int]], segs: list[dict]) -> tuple[list[list[int]], list[str]]:
    """DLIO 3.x's processes (spawned per iterator) matched to the model's workers: a training iterator's worker reads
    its list exactly; a pre-warm's reads at least its sure batches and a prefix of the batches it may read (the
    iterator is deleted when its first batch arrives). (the processes no worker explains, the workers no process
    read: "<phase> <epoch> worker <w>")."""
    left = list(lists)
    missing = []
    # the training iterators' exact lists first: a pre-warm's worker may read what the next epoch's worker reads
    for s in sorted(segs, key=lambda s: s["phase"] == "prewarm"):
        for w, (sure, most) in enumerate(zip(s["workers"], s["workers_max"], strict=True)):
            fit = [x for x in left if (x == sure if s["phase"] != "prewarm" else
                                       len(sure) <= len(x) <= len(most) and x == most[:len(x)])]
            if fit:
                left.remove(max(fit, key=len))
            elif sure:
                missing.append(f"{s['phase']} {s['epoch']} worker {w} ({len(sure)} opens)")
    return left, missing


def check_workers(run: RunView, d: dict | None, k: dict) -> list[dict]:
    """dftracer.order.rank<r> of MLCommons DLIO 3.x (the model's segments carry "workers", validate/model.py
    _dlio3_workers): per rank, each reading process's data-file opens by name, in order, against the model's
    workers at read_threads W as DLIO 3.x sizes it (a 1 by the machine: model.dlio3_sized, from the inputs the
    kernel recorded), so the number of reading processes is judged too. DLIO spawns W
    workers per iterator (each pre-warm and each epoch: torch_data_loader.py, spawn context), so its processes match
    the iterators' workers one by one (_match_iterators); the kernel's W reader processes live the whole run, each
    reading its worker's lists of every iterator in turn (read_threads 0: the rank itself, on both sides)."""
    segs = run.model_reads(run.cfg)
    if d is None or not all("workers" in s for ss in segs.values() for s in ss):
        return []
    asked = rt = int((run.cfg.get("reader") or {}).get("read_threads", 1))
    if rt > 0 and segs.get(0):  # the model's workers: DLIO 3.x sizes read_threads 1 by the machine (model.dlio3_sized)
        rt = len(segs[0][0]["workers"])
    sized = f"read_threads {asked} sized to {rt} by the machine (DLIO 3.x; both sides): " if rt != asked else ""
    out = []
    for r in range(run.ranks):
        want = [x for x in ([f for s in segs[r] for f in s["workers"][w]] for w in range(max(rt, 1))) if x]
        k_lists, d_lists = _process_files(k, r, run.cfg), _process_files(d, r, run.cfg)
        bad = []
        if sorted(k_lists) != sorted(want):
            i, j, p, x, y = _first_difference(want, k_lists)
            bad.append(f"the kernel: {len(k_lists)} reading processes, the model {len(want)}; first differing "
                       f"open: position {p}: the model's file {x}, the kernel's {y}")
        left, missing = _match_iterators(d_lists, segs[r]) if rt > 0 else \
            (([] if d_lists == want else d_lists), ([] if d_lists == want else ["the rank's own list"]))
        if left or missing:
            bad.append(f"DLIO: {len(d_lists)} reading processes, {len(left)} of them reading no modelled worker's "
                       f"files in order (first opens {left[0][:4] if left else []}), modelled workers not found: "
                       f"{', '.join(missing[:3]) or 'none'}" +
                       (f" (DLIO read with more processes than read_threads {rt}: DLIO 3.x sizes its readers by the "
                        "machine, utils/config.py derive_configurations; the kernel reads with read_threads as given)"
                        if not sized and len(d_lists) > sum(bool(s['workers_max'][w]) for s in segs[r]
                                              for w in range(max(rt, 1))) else ""))
        n = sum(map(len, want))
        what = (sized or f"read_threads {rt}: ") + ("the rank reads every batch itself" if rt == 0 else
                                         f"{rt} worker{'s' * (rt > 1)} per iterator on DLIO's side, {rt} for the "
                                         "whole run on the kernel's; worker w reads batches w, w + W, ... in order")
        out.append(result(f"dftracer.order.rank{r}", FAIL if bad else PASS, n, sum(map(len, k_lists)),
                          "; ".join(bad) + f" ({what})" if bad else
                          f"{len(d_lists)} reading processes on DLIO's side, {len(k_lists)} on the kernel's, each "
                          f"process's data-file opens in the model's order ({what})"))
    return out


def check_model_opens(run: RunView, d: dict | None, k: dict, model_reads: dict | None) -> list[dict]:
    """A DLIO reading whole files (no Log VFD count to check): each rank's data-file opens against the analytic model,
    per file. The kernel exactly; DLIO exactly without pre-warm prefetch, else at least the model's opens and at most
    the prefetch bound, the extra opens among the files of the pre-warm batches after the first (the model's
    prefetch_samples). Files map to their index by DLIO's name (img_<i>_of_<N>). d None (a kernel-only run): the
    kernel's rows alone."""
    segs = model_reads if model_reads is not None else run.model_reads(run.cfg)
    spf = int((run.cfg.get("dataset") or {}).get("num_samples_per_file", 1))
    out = []
    for r in range(run.ranks):
        # a segment's "bytes" names, per whole-file read, the file read: one open each (an HDF5 model of one sample
        # per file: its read_files)
        want = Counter(f for seg in segs[r] for f in seg.get("read_files", seg["bytes"]))
        may = Counter(s // spf for seg in segs[r] for s in seg.get("prefetch_samples", []) if model_reads)
        for side, t in (("kernel", k), ("dlio", d)) if d is not None else (("kernel", k),):
            got = Counter(train_file_index(f, run.cfg) for files in (t.get("process_opens") or {}).get(str(r), [])
                          for f in files
                          if side == "dlio" or f != GEN_RECORD)  # the kernel's read of its record: no data file
            unnamed = got.pop(-1, 0)
            more, fewer = got - want, want - got
            if side == "kernel" or not may:
                ok = not more and not fewer and not unnamed
                detail = f"{sum(got.values())} opens of {len(got)} files, as modelled" if ok else \
                    f"{sum(fewer.values())} modelled opens missing (first files {sorted(fewer)[:4]}), " \
                    f"{sum(more.values())} not modelled (first files {sorted(more)[:4]}), {unnamed} unnamed"
            else:
                beyond = more - may
                ok = not fewer and not beyond and not unnamed
                detail = (f"{sum(want.values())} modelled opens and {sum(more.values())} of at most "
                          f"{sum(may.values())} pre-warm prefetch opens, all of the prefetched batches' files") if ok \
                    else (f"{sum(fewer.values())} modelled opens missing (files {sorted(fewer)[:4]}), "
                          f"{sum(beyond.values())} beyond the pre-warm prefetch bound (files {sorted(beyond)[:4]}), "
                          f"{unnamed} unnamed")
            out.append(result(f"counts.dftracer.{side}.rank{r}", PASS if ok else FAIL, sum(want.values()),
                              sum(got.values()), f"model of DLIO {run.release}, opens per data file: {detail}"))
        if d is not None:  # (a kernel-only run: no DLIO batches to set beside the kernel's)
            out.append(_batches(run, r, segs[r], d, k, model_reads is not None))
    return out


def _batches(run: RunView, r: int, segs: list[dict], d: dict, k: dict, prefetch: bool) -> dict:
    """dftracer.batches.rank<r>: the order of reads within each batch. Every process's data-file opens, in time
    order, cut into batches of batch_size opens (one whole-file open per sample): the kernel's batches must be the
    model's (each segment's reads cut alike), as a multiset of ordered file tuples; DLIO's the model's plus pre-warm
    batches after the first (prefetch_samples cut alike), its reader's last batch possibly cut short by the
    iterator's deletion (a prefix of one of those)."""
    bs = int((run.cfg.get("reader") or {}).get("batch_size", 1))

    def cut(files: list[int]) -> list[tuple]:
        return [tuple(files[i:i + bs]) for i in range(0, len(files), bs)]

    want = Counter(b for seg in segs for b in cut(list(seg["bytes"])))
    spf = int((run.cfg.get("dataset") or {}).get("num_samples_per_file", 1))
    may = Counter(b for seg in segs for b in cut([s // spf for s in seg.get("prefetch_samples", [])])) \
        if prefetch else Counter()
    verdicts = []
    for side, t in (("kernel", k), ("dlio", d)):
        got: Counter = Counter()
        partial = []
        for files in (t.get("process_opens") or {}).get(str(r), []):
            chunks = cut([train_file_index(f, run.cfg) for f in files])
            if chunks and len(chunks[-1]) < bs:
                partial.append(chunks.pop())
            got.update(chunks)
        more, fewer = got - want, want - got
        if side == "kernel" or not may:
            bad = more or fewer or partial
        else:
            spare = may - more
            bad = fewer or (more - may) or any(not any(b[:len(p)] == p for b in spare) for p in partial)
        verdicts.append((side, not bad, sum(got.values()), len(partial), more, fewer))
    ok = all(v[1] for v in verdicts)
    (ks, _, kn, _, _, _), (ds, _, dn, dp, dmore, _) = verdicts
    detail = (f"{sum(want.values())} modelled batches of {bs} reads, each in the modelled order: the kernel {kn}, "
              f"DLIO {dn}" + (f" ({sum(dmore.values())} of them and {dp} cut short from its pre-warm prefetch)"
                              if dmore or dp else "")) if ok else \
        "; ".join(f"{s}: {sum(f.values())} modelled batches missing or out of order (first {sorted(f)[:1]}), "
                  f"{sum(m.values())} not modelled (first {sorted(m)[:1]})"
                  for s, good, _, _, m, f in verdicts if not good)
    return result(f"dftracer.batches.rank{r}", PASS if ok else FAIL, sum(want.values()), dn, detail)
