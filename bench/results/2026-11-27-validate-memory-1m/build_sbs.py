"""A synthetic side-by-side run directory from a kernel-only one, for measuring `python -m validate` and
`python -m reports` at a file count whose DLIO side cannot be run here (issue 26: 1,281,024 files).

Usage: python build_sbs.py KERNEL_ONLY_RUN OUT [TINY_SBS_RUN]

Read-only on KERNEL_ONLY_RUN: its manifest.json, workload.yaml, dlio-config/ and tables/*.json are copied into OUT
(verdict and derived tables left out), and a DLIO side is made from the kernel's tables the way a real side-by-side
run's tables differ (a real tiny run of the same workload shows it: TINY_SBS_RUN, made by `make validate
WORKLOAD=imagenet_files DLIO_H5PY=mpi`):
- every `<profile>-kernel.json` copied as `<profile>-dlio.json`, "side" and every path under the run's kernel/ folder
  named under dlio/ (data files are named relative to the data folder: the same keys on both sides);
- DFTracer: DLIO's side lists the dataset's folders (opendir of train/, valid/ and each class folder: a row each, as
  the tiny run's) and stats each data file twice (two calls per data file, as the field runs at 10^5 files
  recorded: 205,803 non-data differences at 102,400 files; the call names here are stand-ins of the stat family);
- Darshan: DLIO's side gets the tiny run's `other` files (its Python imports: ~4,000 rows) and child process;
- timing.json: DLIO's repetition a copy of the kernel's; the manifest: sides both, a dlio.<step> per kernel.<step>.
Which rows are equal, which differ and how is then as in a real run that passes; what differs from a real DLIO side
(read times, process_opens order across DLIO's reader processes) changes no row count or structure."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

STATS = ', "__xstat": 1, "__lxstat": 1'


def side_text(text: str, run: str) -> str:
    """a kernel table's text as DLIO's: its side and every path under <run>/kernel/ under <run>/dlio/"""
    text = text.replace(f"{run}/kernel/", f"{run}/dlio/").replace(f"{run}/kernel\"", f"{run}/dlio\"")
    return re.sub(r'^\{"side": "kernel"', '{"side": "dlio"', text, count=1)


def dftracer_dlio(text: str, run: str, folders: int) -> str:
    """DFTracer's DLIO table: the dataset's folders listed, each data file stat'ed twice"""
    text = side_text(text, run)
    head, sep, rest = text.partition('"files": {"files": {')
    body, sep2, tail = rest.partition(', "process_opens": ')
    body = re.sub(r'("calls": \{[^}]*)\}', lambda m: m.group(1) + STATS + "}", body)
    dirs = ["train", "valid"] + [f"train/{i:04d}" for i in range(folders)]
    rows = "".join(f'"{d}": {{"opens": 0, "closes": 0, "reads": 0, "bytes": 0, "calls": {{"opendir": 2}}, '
                   f'"accesses": {{}}, "read_time_s": 0.0}}, ' for d in dirs)
    return head + sep + rows + body + sep2 + tail


def darshan_dlio(text: str, run: str, tiny: Path | None, venv: str) -> str:
    """Darshan's DLIO table: the tiny run's imports (`other`, its venv and run folder named as this run's) and child
    process"""
    text = side_text(text, run)
    if tiny is None:
        return text
    t = json.loads((tiny / "tables" / "darshan-dlio.json").read_text())
    tiny_venv = next(o["file"] for o in t["other"] if o["file"].endswith("/bin/dlio_benchmark")).rsplit("/bin/", 1)[0]
    tiny_run = json.loads((tiny / "manifest.json").read_text())["steps"]["dlio.timing"]["workdir"].rsplit("/", 2)[0]
    other = json.dumps(t["other"])[1:-1].replace(tiny_venv, venv).replace(tiny_run, run)
    text = text.replace('"children": []', '"children": ' + json.dumps(t["children"]), 1)
    return text.replace('"other": [', '"other": [' + other + ", ", 1)


def manifest(m: dict, run: str) -> dict:
    steps = {}
    for name, rec in m["steps"].items():
        steps[name] = rec
        if rec.get("side") == "kernel":
            d = json.loads(json.dumps(rec).replace(f"{run}/kernel/", f"{run}/dlio/"))
            steps["dlio." + name.split(".", 1)[1]] = {**d, "name": "dlio." + name.split(".", 1)[1], "side": "dlio"}
    sk = {k: v for k, v in m.get("skipped_profiles", {}).items() if k != "darshan.dlio"}
    return {**m, "run_id": m["run_id"] + "-synthetic-sbs", "sides": ["dlio", "kernel"], "steps": steps,
            "skipped_profiles": sk}


def main() -> int:
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    tiny = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    m = json.loads((src / "manifest.json").read_text())
    run = str(Path(m["steps"]["kernel.timing"]["workdir"]).parent.parent)  # the run's folder as its tables name it
    folders = int(m["workload"]["config"]["dataset"].get("num_subfolders_train", 0))
    venv = (m.get("roots") or {}).get("python", [""])[0]
    (out / "tables").mkdir(parents=True)
    shutil.copy(src / "workload.yaml", out)
    shutil.copytree(src / "dlio-config", out / "dlio-config")
    (out / "manifest.json").write_text(json.dumps(manifest(m, run), indent=1))
    for p in sorted((src / "tables").glob("*.json")):
        if p.name.startswith("files-"):
            continue
        shutil.copy(p, out / "tables" / p.name)
        if not p.name.endswith("-kernel.json"):
            continue
        text = p.read_text()
        dst = out / "tables" / p.name.replace("-kernel.json", "-dlio.json")
        if p.name == "dftracer-kernel.json":
            dst.write_text(dftracer_dlio(text, run, folders))
        elif p.name == "darshan-kernel.json":
            dst.write_text(darshan_dlio(text, run, tiny, venv))
        else:
            dst.write_text(side_text(text, run))
        del text
    t = json.loads((src / "tables" / "timing.json").read_text())
    t["dlio"] = [{**r, "step": "dlio.timing"} for r in t["kernel"]]
    (out / "tables" / "timing.json").write_text(json.dumps(t))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
