"""The DLIO version matrix: one row per DLIO version validated (version, date, kernel revision, each check's status),
built from run directories (manifest.json + verdict.json), and for a failing version a divergence report: the first
differing Log VFD block per rank with both sides, the differing dataset layout, the differing config keys."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from common.rundir import RunDir
from profiles import registry

REPO = Path(__file__).resolve().parent.parent


def _read(run: Path, what: str, table: str = ""):
    """RunDir(run)'s manifest, verdict or table `table` (a compact Log VFD table expanded: common.rundir), None when
    absent or unreadable (not JSON, a manifest of a newer schema): the matrix leaves such a run out."""
    rd = RunDir(run)
    try:
        return rd.table(table) if what == "table" else getattr(rd, what)
    except (OSError, ValueError):
        return None


def dlio_of(manifest: dict) -> dict:
    """The reference DLIO of a run (runs from before manifest["dlio"]: PyPI, version from the package)."""
    d = manifest.get("dlio") or {}
    ver = d.get("version") or manifest.get("versions", {}).get("dlio", "unknown")
    if str(d.get("h5py") or "").startswith("wheel=="):  # DLIO_H5PY=wheel==X.Y.Z: another h5py, a row of its own
        ver += f"+h5py{d['h5py'][len('wheel=='):]}"
    return {"version": ver, "revision": d.get("revision", "pypi"), "source": d.get("source", "pypi"),
            "entry": d.get("entry") or ("2.0.0" if not d else None), "nearest": bool(d.get("nearest"))}


def row_of(run: Path) -> dict | None:
    """A matrix row from one run directory, or None if it has no verdict."""
    m, v = _read(run, "manifest"), _read(run, "verdict")
    if not isinstance(m, dict) or not isinstance(v, dict):
        return None
    d = dlio_of(m)
    ver = m.get("versions", {})
    return {
        "version": d["version"], "dlio_revision": d["revision"], "dlio_source": d["source"], "entry": d["entry"],
        "nearest": d["nearest"], "date": m.get("created", "")[:10], "created": m.get("created", ""),
        "kernel_revision": (ver.get("git_revision") or "unknown")[:12] + ("+dirty" if ver.get("git_dirty") else ""),
        "workload": f"{m.get('workload', {}).get('name')}-{m.get('workload', {}).get('scale')}",
        "ranks": m.get("ranks"), "run": run.name, "verdict": v.get("verdict"), "summary": v.get("summary", {}),
        "checks": {c["name"]: c["status"] for c in v.get("checks", [])},
        "failed": v.get("failed", []),
    }


def find_runs(paths: list[Path]) -> list[Path]:
    """Run directories among paths (each a run directory or a folder of them, searched one level deep)."""
    out = []
    for p in paths:
        if RunDir(p).verdict_path.exists():
            out.append(p)
        elif p.is_dir():
            out.extend(sorted(q for q in p.iterdir() if RunDir(q).verdict_path.exists()))
    return out


# the workload the version matrix compares DLIO versions on (other workloads: the workload matrix, make workloads)
MATRIX_WORKLOAD = "unet3d"


def update(matrix: dict, rows: list[dict]) -> dict:
    """Rows keyed by DLIO version; a newer run of a version on the matrix workload (unet3d, any scale) replaces its
    row, other versions' rows are kept; runs of other workloads are not version-matrix rows."""
    by = {r["version"]: r for r in matrix.get("rows", [])}
    for r in rows:
        if str(r.get("workload", "")).rsplit("-", 1)[0] != MATRIX_WORKLOAD:
            continue
        old = by.get(r["version"])
        if old is None or r["created"] >= old.get("created", ""):
            by[r["version"]] = r
    # display order: digit runs compare as numbers ("2.0.1" < "2.0.1-17" < "2.0.10"), names ("main") last
    order = sorted(by, key=lambda v: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", v)])
    return {"rows": [by[k] for k in order]}


# validate's own check families shown as matrix columns, before and after the profiles' (each cell: pass/fail/skip
# counts of that family)
LEADING, TRAILING = ("dlio.version", "steps", "dataset"), ("runtime",)


def family(name: str) -> str:
    return "dlio.version" if name == "dlio.version" else name.split(".", 1)[0]


def families(rows: list[dict]) -> list[str]:
    """The matrix's columns: validate's leading families, each profile's (in the registry's order: its name, then the
    families its claims and kernel-only rows name) that some row holds, then validate's runtime."""
    held = {family(n) for r in rows for n in r.get("checks", {})}
    named = [f for p in registry().values() for f in (p.name, *(family(c) for c, _ in p.claims),
                                                      *(family(k) for k in p.kernel_only))]
    return [*LEADING, *dict.fromkeys(f for f in named if f in held), *TRAILING]


def family_counts(checks: dict[str, str], fam: str) -> dict[str, int]:
    """{status: number of checks} of one check family ({} when the run has none of it)."""
    st = [s for n, s in checks.items() if family(n) == fam]
    return {k: st.count(k) for k in ("pass", "fail", "skip") if st.count(k)}


def cell(row: dict, fam: str) -> str:
    c = family_counts(row["checks"], fam)
    if not c:
        return "-"
    n = sum(c.values())
    return f"FAIL {c['fail']}/{n}" if c.get("fail") else (f"pass {c['pass']}" if c.get("pass") else f"skip {n}")


def render_md(matrix: dict, reports: dict[str, str]) -> str:
    fams = families(matrix["rows"])
    lines = ["# DLIO version matrix", "",
             "Written by `make fidelity` from run directories (`runs/*/verdict.json`); one row per DLIO version, the "
             "newest run of each. Columns: pass/fail counts per check family (docs/validation.md, the verdict).", "",
             "| DLIO | source | kernel entry | date | kernel rev | workload | verdict | "
             + " | ".join(fams) + " |",
             "|" + "---|" * (7 + len(fams))]
    for r in matrix["rows"]:
        src = r["dlio_source"] if r["dlio_source"] == "pypi" else f"git {r['dlio_revision'][:7]}"
        entry = (r["entry"] or "none") + (" (nearest)" if r["nearest"] else "")
        verdict = r["verdict"].upper() + (f" ([report]({reports[r['version']]}))" if r["version"] in reports else "")
        lines.append(f"| {r['version']} | {src} | {entry} | {r['date']} | {r['kernel_revision']} | {r['workload']} "
                     f"x{r['ranks']} | {verdict} | " + " | ".join(cell(r, f) for f in fams) + " |")
    lines += ["", "Failed checks:", ""]
    for r in matrix["rows"]:
        lines.append(f"- {r['version']}: " + (", ".join(r["failed"]) if r["failed"] else "none"))
    return "\n".join(lines) + "\n"


# ---------- divergence report of a failing version ----------

def _flat(d, prefix=""):
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = d
    return out


def config_diff(cfg: dict, ref: dict | None) -> list[tuple[str, object, object]]:
    """(key, reference value, this value) for every workload key that differs from the reference run's."""
    if ref is None:
        return []
    a, b = _flat(ref), _flat(cfg)
    return [(k, a.get(k, "(absent)"), b.get(k, "(absent)")) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def first_block_diffs(run: Path) -> list[dict]:
    """Per rank of the deterministic Log VFD variant: the first differing per-open block, both sides (the steps
    whose tables hold per-open blocks: Profile.first_difference, the ordered one first)."""
    out = []
    for prof in (s for p in registry().values() for s in p.first_difference):
        d, k = _read(run, "table", f"{prof}-dlio.json"), _read(run, "table", f"{prof}-kernel.json")
        if not d or not k:
            continue
        for r in sorted(set(d.get("ranks", {})) | set(k.get("ranks", {})), key=int):
            db = d["ranks"].get(r, {}).get("blocks", [])
            kb = k["ranks"].get(r, {}).get("blocks", [])
            i = next((j for j, (x, y) in enumerate(zip(db, kb, strict=False)) if x != y), min(len(db), len(kb)))
            if db != kb:
                out.append({"variant": prof, "rank": int(r), "open": i, "opens": [len(db), len(kb)],
                            "dlio": db[i] if i < len(db) else None, "kernel": kb[i] if i < len(kb) else None})
        return out  # the first variant present: rt0 is the ordered one
    return out


def _h5dump(path: Path) -> str:
    prefix = (REPO / "build" / ".hdf5-prefix")
    tool = None
    if prefix.exists():
        cand = Path(prefix.read_text().strip()) / "bin" / "h5dump"
        tool = str(cand) if cand.exists() else None
    tool = tool or shutil.which("h5dump")
    if not tool or not path.exists():
        return "(h5dump or the file is not available)"
    p = subprocess.run([tool, "-H", "-p", "-B", str(path)], capture_output=True, text=True, timeout=60)
    return "\n".join(ln for ln in p.stdout.splitlines()[1:])  # without the file name line


def layout_diff(run: Path) -> dict | None:
    """The first file whose datasets differ between the sides: both h5py descriptions and h5dump -H -p -B."""
    d, k = _read(run, "table", "dataset-dlio.json"), _read(run, "table", "dataset-kernel.json")
    if not d or not k:
        return None
    names = sorted(set(d["files"]) | set(k["files"]))
    for f in names:
        if d["files"].get(f) != k["files"].get(f):
            return {"file": f, "dlio": d["files"].get(f), "kernel": k["files"].get(f),
                    "h5dump_dlio": _h5dump(run / "dlio" / "data" / f),
                    "h5dump_kernel": _h5dump(run / "kernel" / "data" / f)}
    # same h5py description: the headers may still differ (libver, track times): compare h5dump of the first file
    if names:
        f = names[0]
        a, b = _h5dump(run / "dlio" / "data" / f), _h5dump(run / "kernel" / "data" / f)
        if a != b:
            return {"file": f, "dlio": d["files"].get(f), "kernel": k["files"].get(f), "h5dump_dlio": a,
                    "h5dump_kernel": b}
    return None


def divergence_report(run: Path, row: dict, ref_cfg: dict | None, ref_version: str | None) -> str:
    m = _read(run, "manifest") or {}
    v = _read(run, "verdict") or {}
    cfg = m.get("workload", {}).get("config", {})
    L = [f"# Divergence report: DLIO {row['version']}", "",
         f"Run `{run}` ({row['created']}), kernel {row['kernel_revision']}, DLIO {row['dlio_source']} "
         f"@ {row['dlio_revision']}, kernel entry {row['entry']}{' (nearest)' if row['nearest'] else ''}.", "",
         "## Failed checks", ""]
    for c in v.get("checks", []):
        if c["status"] == "fail":
            L.append(f"- `{c['name']}`: {str(c.get('detail', ''))[:400]}")
    L += ["", "## First differing Log VFD block per rank", ""]
    blocks = first_block_diffs(run)
    if not blocks:
        L.append("No difference in the Log VFD blocks (or no Log VFD tables).")
    for b in blocks:
        L += [f"### rank {b['rank']} ({b['variant']}): open #{b['open']} of {b['opens'][0]} (DLIO) / "
              f"{b['opens'][1]} (kernel)", "", "| DLIO | kernel |", "|---|---|"]
        da, ka = b["dlio"] or [], b["kernel"] or []
        for i in range(max(len(da), len(ka))):
            x = da[i] if i < len(da) else ""
            y = ka[i] if i < len(ka) else ""
            mark = "" if x == y else " **≠**"
            L.append(f"| `{x}` | `{y}`{mark} |")
        L.append("")
    L += ["## Dataset layout", ""]
    ld = layout_diff(run)
    if ld is None:
        L += ["Both sides' files have the same datasets, shapes, dtypes, layout, chunks, filters and headers.", ""]
    else:
        L += [f"First differing file: `{ld['file']}`", "", f"- DLIO (h5py): `{json.dumps(ld['dlio'])}`",
              f"- kernel (h5py): `{json.dumps(ld['kernel'])}`", "", "h5dump -H -p -B, DLIO:", "", "```",
              ld["h5dump_dlio"], "```", "", "kernel:", "", "```", ld["h5dump_kernel"], "```", ""]
    L += ["## Config keys", ""]
    diffs = config_diff(cfg, ref_cfg)
    if ref_cfg is None:
        L.append("No reference run to compare the workload with.")
    elif not diffs:
        L.append(f"The merged workload is the same as the {ref_version} row's.")
    else:
        L += [f"Workload keys that differ from the {ref_version} row's run (DLIO's bundled config and renamed keys):",
              "", f"| key | {ref_version} | {row['version']} |", "|---|---|---|"]
        L += [f"| `{k}` | `{a}` | `{b}` |" for k, a, b in diffs]
    return "\n".join(L) + "\n"


def write(out: Path, runs: list[Path], reference: str = "2.0.0") -> dict:
    """Update out/matrix.json and out/matrix.md from runs; write out/divergence-<version>.md for failing versions."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        old = json.loads((out / "matrix.json").read_text()) or {"rows": []}
    except (OSError, ValueError):
        old = {"rows": []}
    rows = [r for r in (row_of(p) for p in runs) if r]
    matrix = update(old, rows)
    run_of = {r["version"]: p for p, r in ((p, row_of(p)) for p in runs) if r}
    ref_run = next((run_of[r["version"]] for r in matrix["rows"] if r["version"] == reference
                    and r["version"] in run_of and r["run"] == run_of[r["version"]].name), None)
    ref_cfg = (_read(ref_run, "manifest") or {}).get("workload", {}).get("config") if ref_run else None
    reports = {}
    for r in matrix["rows"]:
        name = f"divergence-{r['version']}.md"
        p = run_of.get(r["version"])
        if r["verdict"] != "fail":
            (out / name).unlink(missing_ok=True)
            continue
        if p is not None and p.name == r["run"]:  # the row's own run is here: (re)write its report
            (out / name).write_text(divergence_report(p, r, ref_cfg, reference if ref_cfg else None))
        if (out / name).exists():
            reports[r["version"]] = name
    (out / "matrix.json").write_text(json.dumps(matrix, indent=1) + "\n")
    (out / "matrix.md").write_text(render_md(matrix, reports))
    return matrix
