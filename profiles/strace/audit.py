"""The I/O contract of a results leaf's replay (python -m pipeline audit, docs/audit.md), judged from the strace
tables of the kernel's run (strace-kernel.json, strace-generate-kernel.json) and, when the leaf preloads a library that
defines one of the contract's calls, of the same replay without it (the baseline). Each row: check, status, detail."""
from __future__ import annotations

import subprocess
from pathlib import Path

PROFILE = "strace"  # the one profile a replay runs under (this package's)
# the calls of the contract a preloaded library can answer without the kernel (its dynamic symbols, nm -D)
CONTRACT_SYMBOLS = {"fsync": ("fsync", "fdatasync"), "fadvise": ("posix_fadvise", "posix_fadvise64"),
                    "O_DIRECT": ("open", "open64", "openat", "openat64", "__open_2", "__open64_2")}
def exported(lib: str) -> set[str]:
    """The functions a shared library defines (nm -D --defined-only); empty when nm cannot read it."""
    try:
        p = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {ln.split()[-1].split("@")[0] for ln in p.stdout.splitlines() if ln.split()[1:2] in (["T"], ["W"], ["i"])}


def culprits(libs: list[str], call: str) -> list[str]:
    """The preloaded libraries that define one of the call's functions (CONTRACT_SYMBOLS), by file name."""
    return [Path(x).name for x in libs if exported(x) & set(CONTRACT_SYMBOLS[call])]



def row(check: str, status: str, detail: str) -> dict:
    return {"check": check, "status": status, "detail": detail}


def _data_rows(table: dict) -> dict:
    """The data files of a strace table (train/, valid/), by name."""
    return {n: r for n, r in (table.get("files") or {}).items() if n.split("/")[0] in ("train", "valid")}


def check_odirect(wl: dict, table: dict, libs: list[str]) -> dict:
    """audit.odirect: reader.odirect true: every open of a data file the training launch made carries O_DIRECT."""
    opens = {}
    for r in _data_rows(table).values():
        for flags, n in (r.get("open_flags") or {}).items():
            opens["O_DIRECT" in flags.split("|")] = opens.get("O_DIRECT" in flags.split("|"), 0) + n
    want = bool((wl.get("reader") or {}).get("odirect"))
    if not want:
        return row("audit.odirect", "PASS", f"reader.odirect not set: {opens.get(False, 0)} buffered data opens")
    if not opens:
        return row("audit.odirect", "FAIL", "reader.odirect true, but the training launch opened no data file")
    if opens.get(False):
        who = culprits(libs, "O_DIRECT")
        return row("audit.odirect", "FAIL", f"reader.odirect true, but {opens[False]} of {sum(opens.values())} data "
                   f"opens reached the kernel without O_DIRECT; " + _named(who, libs))
    return row("audit.odirect", "PASS", f"reader.odirect true: all {opens[True]} data opens carry O_DIRECT (strace)")


def _named(who: list[str], libs: list[str]) -> str:
    if who:
        return f"preloaded library defining that call: {', '.join(who)}"
    return f"LD_PRELOAD: {', '.join(Path(x).name for x in libs)}" if libs else "no library preloaded"


def check_fsync(wl: dict, table: dict, libs: list[str]) -> dict:
    """audit.fsync: the leaf checkpoints: every checkpoint file written reached the kernel's fsync or fdatasync (both
    DLIO 3.x checkpoint streams fsync each file: bench/src/ckpt.c close_partial)."""
    if not (wl.get("workflow") or {}).get("checkpoint"):
        return row("audit.fsync", "SKIP", "workflow.checkpoint not set: the workload makes no fsync")
    rows = table.get("checkpoints") or {}
    if not rows:
        return row("audit.fsync", "FAIL", "workflow.checkpoint true, but the training launch wrote no checkpoint file")
    lost = sorted(n for n, r in rows.items() if not (r.get("fsyncs") or 0) + (r.get("fdatasyncs") or 0))
    if lost:
        return row("audit.fsync", "FAIL", f"{len(lost)} of {len(rows)} checkpoint files reached no fsync system call "
                   f"(first: {lost[0]}); " + _named(culprits(libs, "fsync"), libs))
    return row("audit.fsync", "PASS", f"all {len(rows)} checkpoint files fsynced (strace)")


def _calls(table: dict) -> dict:
    """Per file of a strace table: its fsync (+fdatasync) and posix_fadvise system calls, its O_DIRECT opens."""
    out = {}
    for sec in ("files", "checkpoints"):
        for n, r in (table.get(sec) or {}).items():
            out[f"{sec}/{n}"] = {"fsync": (r.get("fsyncs") or 0) + (r.get("fdatasyncs") or 0),
                                 "fadvise": sum((r.get("fadvise") or {}).values()),
                                 "O_DIRECT": sum(v for k, v in (r.get("open_flags") or {}).items()
                                                 if "O_DIRECT" in k.split("|"))}
    return out


def check_preload(table: dict, baseline: dict | None, libs: list[str]) -> dict:
    """audit.preload: with the leaf's LD_PRELOAD, each file's fsync, fadvise and O_DIRECT opens as the same replay
    without it (the baseline) makes them; a call the baseline makes and the preloaded run does not never reached the
    kernel: the library defining it is named."""
    if not libs:
        return row("audit.preload", "PASS", "the leaf records no LD_PRELOAD")
    if baseline is None:
        return row("audit.preload", "SKIP", f"LD_PRELOAD {', '.join(Path(x).name for x in libs)} defines none of "
                   f"{', '.join(s for v in CONTRACT_SYMBOLS.values() for s in v)}: no baseline replay needed")
    got, base = _calls(table), _calls(baseline)
    lost = [(f, c, n, (got.get(f) or {}).get(c, 0)) for f, r in sorted(base.items()) for c, n in r.items()
            if n > (got.get(f) or {}).get(c, 0)]
    if not lost:
        return row("audit.preload", "PASS", f"{sum(sum(r.values()) for r in base.values())} fsync, fadvise and "
                   f"O_DIRECT calls of the baseline on {len(base)} files all reached the kernel under the preload")
    calls = sorted({c for _, c, _, _ in lost})
    f, c, n, m = lost[0]
    who = sorted({w for c2 in calls for w in culprits(libs, c2)})
    return row("audit.preload", "FAIL", f"{len(lost)} (file, call) kept from the kernel by the preload "
               f"({', '.join(calls)}); first: {f} {c}: {n} without the preload, {m} with it; " + _named(who, libs))


def check_sizes(wl: dict, gen: dict | None, scale: dict) -> dict:
    """audit.file_sizes: the replay's generation wrote the configured count of data files, each of the configured
    size (record length x samples per file, within 6 standard deviations, plus the format's header: 64 KiB)."""
    if gen is None or "dataset" not in scale:
        return row("audit.file_sizes", "SKIP", "no data files: the workload reads no dataset")
    ds = scale["dataset"]
    files = _data_rows(gen)
    want = int(ds.get("num_files_train") or 0) + int(ds.get("num_files_eval") or 0) * bool(
        (wl.get("workflow") or {}).get("evaluation"))
    mean = ds.get("record_length_bytes", ds.get("record_length", 0)) or 0
    sd = ds.get("record_length_bytes_stdev", ds.get("record_length_stdev", 0)) or 0
    spf = int(ds.get("num_samples_per_file") or 1)
    lo, hi = max(0, (mean - 6 * sd)) * spf, (mean + 6 * sd) * spf + 65536
    bad = sorted(n for n, r in files.items() if not lo <= (r.get("write_bytes") or 0) <= hi)
    if len(files) != want or bad:
        return row("audit.file_sizes", "FAIL", f"{len(files)} data files written (config: {want}); {len(bad)} outside "
                   f"{int(lo)}-{int(hi)} B" + (f" (first: {bad[0]})" if bad else ""))
    return row("audit.file_sizes", "PASS", f"{want} data files, each {int(lo)}-{int(hi)} B as the config says "
               f"(at the replay's scale: {mean} B mean, stdev {sd}, {spf} per file)")


PAGE_CACHE = row("audit.page_cache", "SKIP", "not audited: the replay does not check MLPerf's cache rule (dataset "
                 "at least 5x the host's memory, or the cache dropped between runs)")


def judge(run, base, wl: dict, scale: dict, libs: list[str], side: str = "kernel") -> list[dict]:
    """The rows of one side of the replay run (a common.rundir.RunDir; base: the baseline's, or None) of the leaf's
    workload wl at the preset scale, with the preloaded libraries libs; the DLIO side's rows named audit.dlio.*."""
    table = run.table(f"strace-{side}.json") or {}
    rows = [check_odirect(wl, table, libs), check_fsync(wl, table, libs),
            check_preload(table, base.table(f"strace-{side}.json") if base else None, libs),
            check_sizes(wl, run.table(f"strace-generate-{side}.json"), scale)]
    if side == "kernel":
        return [*rows, PAGE_CACHE]
    return [{**r, "check": r["check"].replace("audit.", f"audit.{side}.", 1)} for r in rows]
