"""The measures of one side's DFTracer events, fed one normalized event at a time: the DLIO paper's I/O features
(Features), the training epochs, the metadata rate per epoch (Metadata), the report's timeline (Timeline).
"""
from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from profiles.dftracer.tables import MAX_BYTES, Names
from profiles.dftracer.traces import READS, _num
from profiles.features import metadata_rate


class Features:
    """The DLIO paper's I/O features over the data-file reads of one side: profiles.features.ReadStats's numbers, the
    same floats bit for bit (tests/test_dftracer.py compares them), from leaner arrays: per read its start, duration,
    offset, size (8 bytes each) and file index (4), per process; its rank (the order's major key) only once it
    differs from the process's first. The order and the per-file offsets are computed with numpy, one process at a
    time, each process's arrays dropped once done; the sums are Python's over the same sequences."""

    def __init__(self, data_dir: Path, names: Names | None = None) -> None:
        self.root = str(data_dir).rstrip("/") + "/"
        self.names = names or Names()
        self.procs: dict[str, list] = {}  # str(pid) -> [first major, majors|None, start, dur, offset, size, file]
        self.read = bytearray()  # per name index: 1 once read
        self.files = 0

    def add(self, e: dict) -> None:
        if e["cat"] == "POSIX" and e["name"] in READS and (e["fname"] or "").startswith(self.root):
            self.add_read(e["pid"], self.names.get(e["fname"][len(self.root):]), e["offset"], max(e["ret"], 0),
                          e["rank"], e["ts"], e["dur"])

    def add_read(self, proc, i: int, offset: int, size: int, major: int, start: float, dur: float) -> None:
        p = self.procs.get(str(proc))
        if p is None:
            p = self.procs[str(proc)] = [major, None, array("d"), array("d"), array("q"), array("q"), array("i")]
        if p[1] is None and major != p[0]:
            p[1] = array("q", [p[0]]) * len(p[2])
        if p[1] is not None:
            p[1].append(major)
        p[2].append(start)
        p[3].append(dur)
        p[4].append(offset)
        p[5].append(size)
        p[6].append(i)
        if i >= len(self.read):
            self.read.extend(bytes(i + 1 - len(self.read)))
        if not self.read[i]:
            self.read[i] = 1
            self.files += 1

    def _proc(self, p: list) -> tuple:
        """One process's reads in ReadStats's order (stable by major, start): sizes, durations, sequential and
        consecutive follow-ups, and the (process, file) pairs."""
        start = np.frombuffer(p[2], np.float64)
        order = np.lexsort((start, np.frombuffer(p[1], np.int64))) if p[1] is not None else \
            np.argsort(start, kind="stable")
        del start
        off, size, f = np.frombuffer(p[4], np.int64)[order], np.frombuffer(p[5], np.int64)[order], \
            np.frombuffer(p[6], np.int32)[order]
        dur = np.frombuffer(p[3], np.float64)[order]
        del order
        p.clear()  # the process's arrays: what is left is in order
        if len(off) and int(off.max()) + int(size.max()) > MAX_BYTES:  # past int64: Python's integers
            off, size = off.astype(object), size.astype(object)
        byf = np.argsort(f, kind="stable")  # each file's reads together, in that order
        ff, oo, ee = f[byf], off[byf], (off + size)[byf]
        del byf, f, off
        same = ff[1:] == ff[:-1]
        follow, prev = oo[1:][same], ee[:-1][same]
        return size, dur, int((follow >= prev).sum()), int((follow == prev).sum()), len(ff) - int(same.sum())

    def result(self) -> dict:
        if not self.procs:
            return {}
        sizes, durs = [], []
        seq = consec = pairs = 0
        for proc in sorted(self.procs):
            sz, du, s, c, pr = self._proc(self.procs.pop(proc))
            sizes.append(sz)
            durs.append(du)
            seq, consec, pairs = seq + s, consec + c, pairs + pr
        n = sum(len(x) for x in sizes)
        allsz = np.sort(np.concatenate(sizes))
        m = n // 2
        median = int(allsz[m]) if n % 2 else (int(allsz[m - 1]) + int(allsz[m])) / 2  # statistics.median
        del allsz
        bw = [(sz[du > 0].astype(np.float64) / du[du > 0]) for sz, du in zip(sizes, durs, strict=True)]
        nbw = sum(len(x) for x in bw)
        n_follow = max(n - pairs, 1)
        return {"io_time_s": sum(_chunked(durs)), "bytes": sum(_chunked(sizes)), "xfer_min": min(_chunked(sizes)),
                "xfer_max": max(_chunked(sizes)), "xfer_mean": math.fsum(_chunked(sizes)) / n,  # statistics.fmean
                "xfer_median": median, "bandwidth_per_op": math.fsum(_chunked(bw)) / nbw if nbw else 0.0,
                "pct_sequential": 100.0 * seq / n_follow, "pct_consecutive": 100.0 * consec / n_follow,
                "files": self.files}


def _chunked(parts: list, step: int = 1 << 16) -> Iterator:
    """The Python numbers of a list of numpy arrays, in order, a slice at a time (never a whole list)."""
    for a in parts:
        for k in range(0, len(a), step):
            yield from a[k:k + step].tolist()


def features(events: list[dict], data_dir: Path) -> dict:
    """The DLIO paper's I/O features over the data-file reads of one side."""
    t = Features(data_dir)
    for e in events:
        t.add(e)
    return t.result()


# a training epoch as each side marks it: DLIO 2.0.0's DLIOBenchmark._train (one call per epoch and rank), the kernel's
# train_epoch region
EPOCH_REGIONS = ("DLIOBenchmark._train", "train_epoch")
DATA_CALLS = READS | {"write", "pwrite"}


def epochs(events: Iterable[dict]) -> list[tuple[float, float]]:
    """Epoch k = the k-th epoch region of every process that marks epochs (the ranks): [earliest start, latest end]
    (seconds)."""
    per_proc: dict[str, list] = defaultdict(list)
    for e in events:
        if e["name"] in EPOCH_REGIONS:
            per_proc[e["pid"]].append((e["ts"], e["ts"] + e["dur"]))
    spans = [sorted(v) for v in per_proc.values()]
    return [(min(s[k][0] for s in spans if len(s) > k), max(s[k][1] for s in spans if len(s) > k))
            for k in range(max((len(s) for s in spans), default=0))]


class Metadata:
    """The metadata rate (profiles.features.metadata_rate) per training epoch and over all of them, from the POSIX
    calls on the files under the data folder that move no data (every call but read/pread/write/pwrite: open, close,
    the stat family, lseek, ...; all processes), each counted in the epoch its start falls in; calls outside every
    epoch (dataset discovery before training) are counted apart. The epochs are known before the events are fed
    (the first pass over the traces)."""

    def __init__(self, data_dir: Path, spans: list[tuple[float, float]]) -> None:
        self.root = str(data_dir).rstrip("/") + "/"
        self.spans = spans
        self.opens = [0] * len(spans)
        self.meta = [0.0] * len(spans)
        self.outside = {"opens": 0, "metadata_s": 0.0}
        self.calls: Counter = Counter()

    def add(self, e: dict) -> None:
        if e["cat"] != "POSIX" or e["name"] in DATA_CALLS or not (e["fname"] or "").startswith(self.root):
            return
        self.add_call(e["name"], e["ts"], e["dur"])

    def add_call(self, name: str, ts: float, dur: float) -> None:
        """A call on a data file that moves no data."""
        self.calls[name] += 1
        k = None
        for i, (a, b) in enumerate(self.spans):
            if a <= ts < b:
                k = i
                break
        is_open = name in ("open", "openat")
        if k is None:
            self.outside["opens"] += is_open
            self.outside["metadata_s"] += dur
        else:
            self.opens[k] += is_open
            self.meta[k] += dur

    def result(self) -> dict:
        spans, opens, meta = self.spans, self.opens, self.meta
        return {"source": "DFTracer POSIX events on the files under the data folder; epochs from "
                          f"{' / '.join(EPOCH_REGIONS)} regions",
                "per_epoch": [metadata_rate(opens[k], meta[k], b - a, 1) for k, (a, b) in enumerate(spans)],
                "all": metadata_rate(sum(opens), sum(meta), sum(b - a for a, b in spans) or None,
                                     len(spans) or None),
                "outside_epochs": self.outside, "calls": dict(sorted(self.calls.items()))}


def metadata(events: list[dict], data_dir: Path) -> dict:
    """Metadata over a list of normalized events (its epochs from the same list)."""
    t = Metadata(data_dir, epochs(events))
    for e in events:
        t.add(e)
    return t.result()


KIND = {"pread": "read", "read": "read", "open": "open", "openat": "open", "close": "close",
        "compute": "compute", "TorchFramework.compute": "compute", "TFFramework.compute": "compute"}
# a lane of the timeline keeps at most this many events: beyond it, every s-th in trace order (s a power of two, so
# the kept events are spread evenly over the lane), with the lane's exact count and seconds per kind beside them
LANE_EVENTS = 20000


class Timeline:
    """Lanes per rank and process for the reports (times relative to the first event). A lane of more than
    LANE_EVENTS events is sampled (every s-th event in trace order) and says so: "sampled": {"every", "events",
    "counts", "seconds"} (the lane's whole event count, and its count and total duration per kind)."""

    def __init__(self) -> None:
        self.t0 = float("inf")
        self.lanes: dict[tuple, list] = {}  # (rank, pid) -> [kept (ts, d, kind), stride, n, counts, seconds]

    def add(self, e: dict) -> None:
        self.add_one(e["rank"], e["pid"], e["name"], e["ts"], e["dur"])

    def add_one(self, rank: int, pid: str, name: str, ts: float, dur: float) -> None:
        if ts < self.t0 or self.t0 != self.t0:  # min(t0, ts), NaN included
            self.t0 = min(self.t0, ts)
        kind = KIND.get(name)
        if kind is None:
            return
        lane = self.lanes.get((rank, pid))
        if lane is None:
            lane = self.lanes[(rank, pid)] = [[], 1, 0, Counter(), Counter()]
        d = round(dur, 6)
        if lane[2] % lane[1] == 0:
            lane[0].append((ts, d, kind))
            if len(lane[0]) > LANE_EVENTS:
                lane[0] = lane[0][::2]
                lane[1] *= 2
        lane[2] += 1
        lane[3][kind] += 1
        lane[4][kind] += d

    def result(self) -> dict:
        out = []
        for (r, p), (kept, every, n, counts, secs) in sorted(self.lanes.items()):
            lane = {"rank": r, "pid": _num(p, -1), "label": f"rank {r} pid {p}",
                    "events": [{"t": round(t - self.t0, 6), "d": d, "kind": k} for t, d, k in kept]}
            if every > 1:
                lane["sampled"] = {"every": every, "events": n, "counts": dict(sorted(counts.items())),
                                   "seconds": {k: round(v, 6) for k, v in sorted(secs.items())}}
            out.append(lane)
        return {"lanes": out}


def timeline(events: list[dict]) -> dict:
    """Timeline over a list of normalized events."""
    t = Timeline()
    for e in events:
        t.add(e)
    return t.result()
