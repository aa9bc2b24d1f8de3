"""What one side did, whichever profiler saw it (DFTracer events or Darshan records): the DLIO paper's I/O features
over the data-file reads (I/O time, bytes, transfer size min/max/mean/median, bandwidth per operation, % sequential
and % consecutive per process and file in time order, number of files), and the metadata rate of the files
under the data folder (opens per second of training time, metadata time per epoch)."""
from __future__ import annotations

import statistics


def io_features(reads: list[dict]) -> dict:
    """reads: {"proc", "file", "offset", "size", "start", "dur"} per read call; {} when there is none."""
    if not reads:
        return {}
    reads = sorted(reads, key=lambda r: (str(r["proc"]), r["start"]))
    sizes = [r["size"] for r in reads]
    seq = consec = 0
    last: dict[tuple, int] = {}
    for r in reads:
        key = (r["proc"], r["file"])
        if key in last:
            seq += r["offset"] >= last[key]
            consec += r["offset"] == last[key]
        last[key] = r["offset"] + r["size"]
    bw = [r["size"] / r["dur"] for r in reads if r["dur"] > 0]
    n_follow = max(len(reads) - len(last), 1)
    return {"io_time_s": sum(r["dur"] for r in reads), "bytes": sum(sizes), "xfer_min": min(sizes),
            "xfer_max": max(sizes), "xfer_mean": statistics.fmean(sizes), "xfer_median": statistics.median(sizes),
            "bandwidth_per_op": statistics.fmean(bw) if bw else 0.0,
            "pct_sequential": 100.0 * seq / n_follow, "pct_consecutive": 100.0 * consec / n_follow,
            "files": len({r["file"] for r in reads})}


def metadata_rate(opens: int, metadata_s: float, epoch_s: float | None, epochs: int | None) -> dict:
    """The metadata rate of one side over `epochs` training epochs lasting `epoch_s` seconds in all (wall time):
    opens of the files under the data folder per second of that time, and metadata time (the summed duration of the
    calls on those files that move no data: open, close, stat, seek, ...; all processes) per epoch. The one
    definition both profiles use; a rate whose time is unknown is None."""
    return {"epochs": epochs, "opens": int(opens), "metadata_s": float(metadata_s), "epoch_s": epoch_s,
            "opens_per_s": opens / epoch_s if epoch_s else None,
            "metadata_s_per_epoch": metadata_s / epochs if epochs else None}
