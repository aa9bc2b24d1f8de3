"""What one side did, whichever profiler saw it (DFTracer events or Darshan records): the DLIO paper's I/O features
over the data-file reads (I/O time, bytes, transfer size min/max/mean/median, bandwidth per operation, % sequential
and % consecutive per process and file in time order, number of files), and the metadata rate of the files
under the data folder (opens per second of training time, metadata time per epoch)."""
from __future__ import annotations

import statistics
from array import array


def io_features(reads: list[dict]) -> dict:
    """reads: {"proc", "file", "offset", "size", "start", "dur"} per read call; {} when there is none. "start" is a
    number or a (rank, seconds) pair (the order within a process)."""
    acc = ReadStats()
    for r in reads:
        st = r["start"]
        major, minor = st if isinstance(st, tuple) else (0, st)
        acc.add(r["proc"], r["file"], r["offset"], r["size"], major, minor, r["dur"])
    return acc.result()


class ReadStats:
    """io_features streamed: one read at a time into compact per-process arrays (5 numbers and a file index per
    read: ~40 bytes, against ~1 KB for an event dict), the features computed at the end in the same order, so with
    the same floating-point sums, as over a list of every read sorted by (process, start)."""

    def __init__(self) -> None:
        self._procs: dict[str, tuple] = {}
        self._files: dict[str, int] = {}

    def add(self, proc, file: str, offset: int, size: int, start_major: int, start: float, dur: float) -> None:
        a = self._procs.get(str(proc))
        if a is None:
            a = self._procs[str(proc)] = (array("q"), array("d"), array("q"), array("q"), array("d"), array("q"))
        a[0].append(start_major)
        a[1].append(start)
        a[2].append(offset)
        a[3].append(size)
        a[4].append(dur)
        a[5].append(self._files.setdefault(file, len(self._files)))

    def result(self) -> dict:
        if not self._procs:
            return {}
        sizes: list[int] = []
        durs: list[float] = []
        seq = consec = n = pairs = 0
        for proc in sorted(self._procs):
            major, start, off, size, dur, fidx = self._procs[proc]
            order = sorted(range(len(start)), key=lambda i: (major[i], start[i]))  # stable, as sorted(reads)
            last: dict[int, int] = {}
            for i in order:
                f = fidx[i]
                if f in last:
                    seq += off[i] >= last[f]
                    consec += off[i] == last[f]
                last[f] = off[i] + size[i]
                sizes.append(size[i])
                durs.append(dur[i])
            n += len(order)
            pairs += len(last)
        bw = [s / d for s, d in zip(sizes, durs, strict=True) if d > 0]
        n_follow = max(n - pairs, 1)
        return {"io_time_s": sum(durs), "bytes": sum(sizes), "xfer_min": min(sizes),
                "xfer_max": max(sizes), "xfer_mean": statistics.fmean(sizes), "xfer_median": statistics.median(sizes),
                "bandwidth_per_op": statistics.fmean(bw) if bw else 0.0,
                "pct_sequential": 100.0 * seq / n_follow, "pct_consecutive": 100.0 * consec / n_follow,
                "files": len(self._files)}


def access_sizes(accesses: dict[str, int]) -> dict[int, int]:
    """{"offset+size": n} -> {size: n}, sizes in the order first seen (as Counter over every access, without
    expanding each access n times)."""
    out: dict[int, int] = {}
    for x, n in accesses.items():
        if n > 0:
            size = _SIZES.get(x)
            if size is None:
                size = int(x.split("+")[1])
                if len(_SIZES) < 1 << 16:
                    _SIZES[x] = size
            out[size] = out.get(size, 0) + n
    return out


_SIZES: dict[str, int] = {}  # "offset+size" -> size (the same few keys in every file's row; at most 65,536 kept)


def metadata_rate(opens: int, metadata_s: float, epoch_s: float | None, epochs: int | None) -> dict:
    """The metadata rate of one side over `epochs` training epochs lasting `epoch_s` seconds in all (wall time):
    opens of the files under the data folder per second of that time, and metadata time (the summed duration of the
    calls on those files that move no data: open, close, stat, seek, ...; all processes) per epoch. The one
    definition both profiles use; a rate whose time is unknown is None."""
    return {"epochs": epochs, "opens": int(opens), "metadata_s": float(metadata_s), "epoch_s": epoch_s,
            "opens_per_s": opens / epoch_s if epoch_s else None,
            "metadata_s_per_epoch": metadata_s / epochs if epochs else None}
