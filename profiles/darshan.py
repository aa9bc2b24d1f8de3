"""Darshan profile (POSIX, MPI-IO, H5F/H5D counters, DXT segments). Darshan's runtime is not in any registry
reachable from here: an installed one is detected (an explicit prefix, DARSHAN_PREFIX, or darshan-config on PATH),
as HPC sites provide it; without one the profile is skipped with that reason. Logs are parsed with pydarshan."""
from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

NO_RUNTIME = "no Darshan runtime found (set DARSHAN_PREFIX or put darshan-config on PATH)"


def detect(prefix: str | None = None) -> dict:
    """{"available", "reason", "prefix", "lib", "hdf5_mod", "dxt_mod"} of the first install found."""
    cands = [prefix, os.environ.get("DARSHAN_PREFIX")]
    cfg = shutil.which("darshan-config")
    if cfg:
        try:
            cands.append(subprocess.run([cfg, "--prefix"], capture_output=True, text=True, timeout=10).stdout.strip())
        except (OSError, subprocess.TimeoutExpired):
            pass
    for p in filter(None, cands):
        lib = next((x for x in (Path(p) / "lib" / "libdarshan.so", Path(p) / "lib64" / "libdarshan.so") if x.exists()),
                   None)
        if lib is None:
            continue
        conf = Path(p) / "bin" / "darshan-config"

        def flag(opt: str, conf: Path = conf) -> bool:
            try:
                out = subprocess.run([str(conf), opt], capture_output=True, text=True, timeout=10)
                return out.returncode == 0 and out.stdout.strip() not in ("", "0", "no")
            except OSError:
                return False
        return {"available": True, "reason": "", "prefix": str(p), "lib": str(lib),
                "hdf5_mod": flag("--hdf5-mod"), "dxt_mod": flag("--dxt-mod")}
    return {"available": False, "reason": NO_RUNTIME}


def mpi_h5py(dlio_venv: Path) -> bool:
    """Is the reference venv's h5py built against a parallel libhdf5 (from source), rather than a wheel?"""
    try:
        out = subprocess.run([str(dlio_venv / "bin" / "python"), "-c", "import h5py; print(h5py.get_config().mpi)"],
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.stdout.strip() == "True"


def wrap(argv: list[str], env: dict, outdir: Path, side: str, *, info: dict) -> tuple[list, dict]:
    """Preload for the ranks only; logs into the step folder; DXT on; reader processes (no MPI) logged too."""
    (outdir / "logs").mkdir(parents=True, exist_ok=True)
    env = dict(env)
    env.update({"LD_PRELOAD": info["lib"], "DARSHAN_LOG_DIR_PATH": str(outdir / "logs"),
                "DARSHAN_MOD_ENABLE": "DXT_POSIX,DXT_MPIIO", "DARSHAN_ENABLE_NONMPI": "1"})
    return argv, env


def _rows(df) -> list[dict]:
    """Rows with each column's own type (iterrows would turn uint64 record ids into lossy floats)."""
    cols = {k: df[k].tolist() for k in df.columns}
    return [{k: cols[k][i] for k in cols} for i in range(len(df))]


def parse_log(path: Path, data_dir: Path) -> dict:
    import darshan  # pydarshan, imported only when there is a log to read

    rep = darshan.DarshanReport(str(path), read_all=True)
    names = rep.name_records
    root = str(data_dir).rstrip("/") + "/"
    files: dict[str, dict] = defaultdict(lambda: {"opens": 0, "reads": 0, "bytes": 0, "accesses": Counter(),
                                                  "h5f_opens": 0, "h5d": {}})
    other: Counter = Counter()

    def rel(rid: int) -> str | None:
        n = names.get(rid % 2**64, "")  # record ids are uint64; pandas may hand them over as int64
        n = n.split(":/")[0]  # H5D records are "<file>:/<dataset>"
        return n[len(root):] if n.startswith(root) else None

    mods = set(rep.modules)
    if "POSIX" in mods:
        c = rep.records["POSIX"].to_df()["counters"]
        for row in _rows(c):
            r = rel(int(row["id"]))
            if r is None:
                other[names.get(int(row["id"]) % 2**64, "?")] += int(row["POSIX_OPENS"])
                continue
            files[r]["opens"] += int(row["POSIX_OPENS"])
            files[r]["reads"] += int(row["POSIX_READS"])
            files[r]["bytes"] += int(row["POSIX_BYTES_READ"])
    if "DXT_POSIX" in mods:
        for rec in rep.records["DXT_POSIX"].to_df():
            r = rel(int(rec["id"]))
            if r is not None and len(rec["read_segments"]):
                for _, s in rec["read_segments"].iterrows():
                    files[r]["accesses"][f"{int(s['offset'])}+{int(s['length'])}"] += 1
    if "H5F" in mods:
        for row in _rows(rep.records["H5F"].to_df()["counters"]):
            r = rel(int(row["id"]))
            if r is not None:
                files[r]["h5f_opens"] += int(row["H5F_OPENS"])
    if "H5D" in mods:  # one record per dataset: "<file>:/<dataset>"
        for row in _rows(rep.records["H5D"].to_df()["counters"]):
            r = rel(int(row["id"]))
            if r is not None:
                ds = names.get(int(row["id"]) % 2**64, "").split(":/", 1)[-1]
                d = files[r]["h5d"].setdefault(ds, {"opens": 0, "reads": 0, "bytes": 0})
                d["opens"] += int(row["H5D_OPENS"])
                d["reads"] += int(row["H5D_READS"])
                d["bytes"] += int(row["H5D_BYTES_READ"])
    return {"log": path.name, "modules": sorted(mods), "nprocs": rep.metadata["job"]["nprocs"],
            "files": {k: {**v, "accesses": dict(v["accesses"])} for k, v in sorted(files.items())},
            "other": [{"file": f, "opens": n} for f, n in sorted(other.items())]}


def parse(outdir: Path, side: str, data_dir: Path) -> dict:
    logs = sorted((outdir / "logs").rglob("*.darshan"))
    merged: dict[str, dict] = {}
    parsed = [parse_log(p, data_dir) for p in logs]
    for t in parsed:
        for f, row in t["files"].items():
            m = merged.setdefault(f, {"opens": 0, "reads": 0, "bytes": 0, "accesses": Counter(), "h5f_opens": 0,
                                      "h5d": {}})
            for k in ("opens", "reads", "bytes", "h5f_opens"):
                m[k] += row[k]
            m["accesses"] += Counter(row["accesses"])
            for ds, d in row["h5d"].items():
                acc = m["h5d"].setdefault(ds, {"opens": 0, "reads": 0, "bytes": 0})
                for k in acc:
                    acc[k] += d[k]
    return {"side": side, "logs": [t["log"] for t in parsed],
            "modules": sorted({m for t in parsed for m in t["modules"]}),
            "files": {f: {**r, "accesses": dict(r["accesses"])} for f, r in sorted(merged.items())},
            "other": [o for t in parsed for o in t["other"]]}
