"""python -m fidelity.mutants: the mutation matrix (issue 24). Attacks the validator with one injected divergence at a
time: for each workload family, one side-by-side run (the baseline, which must PASS) gives the DLIO side; then for
every mutant that applies to the family, the kernel side is run again with the mutant injected (H5DLIO_MUTATE, read
by the kernel only: bench/src/mutate.h holds the one table of mutants, printed by `h5dlio --mutants`), the DLIO side
reused (--reuse-dlio), and validated. A mutant is killed when the verdict FAILs, validation exits non-zero and a
check meant to catch it (its table row) is among the failures. Results: fidelity/mutants.{json,md}.

Exit status: 0 every mutant run was killed by its intended check, 1 one survived (or a run or a baseline failed),
2 bad options."""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from common.fileio import write_json_atomic, write_text_atomic
from common.rundir import RunDir
from pipeline import named_run

REPO = Path(__file__).resolve().parent.parent
KERNEL = REPO / "build" / "h5dlio"

# family -> (workload, what it stands for); a family without a workload cannot run here (the reason)
FAMILIES = {
    "pytorch": ("unet3d", "DLIO 2.0.0, PyTorch loader (4 reader processes; the Log VFD's rt0 launch in order)"),
    "tf": ("bert", "DLIO 2.0.0, TensorFlow loader (1 reader thread, file and sample shuffle)"),
    "checkpoint": ("unet3d_checkpoint", "DLIO 2.0.0, PyTorch loader with a checkpoint after each epoch"),
    "tf-eval": ("cosmoflow_eval", "DLIO 2.0.0, TensorFlow loader with evaluation (none of the others evaluates)"),
    # one-sample files all of one size: the Log VFD's records name no file and every file reads alike, so which file
    # a rank read, and in which order, is seen by dftracer.order alone
    "fixed-size": ("imagenet_files", "DLIO 2.0.0, PyTorch loader, one-sample files of one size (8 reader processes)"),
    # the 3.x workload whose DLIO side is quickest here (1 read thread; 3.x's unet3d spawns 4 readers per epoch and
    # pre-warm): npz files read whole, the loader pre-warm before and after the epoch
    "dlio3": ("unet3d_b200", "MLCommons DLIO 3.x (its own venv: --dlio3-venv), npz read whole with O_DIRECT as "
                             "MLPerf's submitted runs read (SCALE=tiny: tiny_odirect), loader pre-warm"),
    # jpeg files read whole as MLPerf's retinanet reads them (no decode), 1 read thread at tiny
    "dlio3-jpeg": ("retinanet_b200", "MLCommons DLIO 3.x (--dlio3-venv), jpeg files read whole (retinanet_b200), "
                                     "loader pre-warm"),
    # 3.x's checkpoint-only workload in the 3.x venv, where mlpstorage_py does not import: SimpleStreamingCheckpointing
    # (fsync per file); the same workload where it imports (MLPerf v3.0's own environment): mlpstorage's
    # StreamingCheckpointing (fsync per file, posix_fadvise DONTNEED per chunk written and read;
    # docs/fidelity-checkpoints.md)
    "dlio3-checkpoint": ("llama3_8b_v3", "MLCommons DLIO 3.x (--dlio3-venv), checkpoints through its "
                                         "SimpleStreamingCheckpointing"),
    "dlio3-mlps": ("llama3_8b_v3", "MLCommons DLIO 3.x with mlpstorage_py importable (--dlio3-mlps-venv), checkpoints "
                                   "through mlpstorage's StreamingCheckpointing"),
    # the kernel side of both the baseline and its mutants under vol-async (make validate VOL=async-prefetch): the
    # read_threads=0 launches (the Log VFD's logvfd-rt0) read the next batch with H5Dread_async, reader processes
    # stay native (docs/vol.md); the baseline's DLIO side (DLIO on native, unchanged) is reused by the mutants
    "async": ("unet3d", "DLIO 2.0.0, PyTorch loader; the kernel side under vol-async with explicit async reads "
                        "(VOL=async-prefetch, the kernel built against the thread-safe HDF5: --vol-kernel)"),
}
# family -> the harness's --vol (its baseline and mutants); every other family runs the kernel on native
FAMILY_VOL = {"async": "async-prefetch"}
# family -> {asked SCALE: the preset the family runs at}: dlio3 reads with O_DIRECT (reader.odirect), as MLPerf's
# submitted unet3d_b200 runs do, where the workload has that preset
FAMILY_SCALE = {"dlio3": {"tiny": "tiny_odirect"}}
# family -> the option naming its reference venv (every other family: --dlio-venv, DLIO 2.0.0)
FAMILY_VENV = {"dlio3": "dlio3_venv", "dlio3-jpeg": "dlio3_venv", "dlio3-checkpoint": "dlio3_venv",
               "dlio3-mlps": "dlio3_mlps_venv"}
NOT_HERE = {
    "dlio3": "needs an MLCommons DLIO 3.x checkout (`make mutants DLIO=<checkout>`: --dlio3-venv), not given",
    "dlio3-jpeg": "needs an MLCommons DLIO 3.x checkout (`make mutants DLIO=<checkout>`: --dlio3-venv), not given",
    "dlio3-checkpoint": "needs an MLCommons DLIO 3.x checkout (`make mutants DLIO=<checkout>`: --dlio3-venv), not "
                        "given",
    "dlio3-mlps": "needs a DLIO 3.x venv where mlpstorage_py imports (MLPerf Storage v3.0's environment: "
                  "DLIO3_MLPS_VENV=, --dlio3-mlps-venv), not given",
    "async": "needs vol-async and the kernel built against the thread-safe HDF5 (`make vol-kernel`: "
             "build/.vol-kernel, --vol-kernel), not built here",
}


def mutant_table(kernel: Path = KERNEL) -> list[dict]:
    """The kernel's table of mutants (the one place they are listed): name, what, checks, families."""
    p = subprocess.run([str(kernel), "--mutants"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"{kernel} --mutants: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    rows = json.loads(p.stdout)
    for r in rows:
        r["checks"], r["families"] = r["checks"].split(), r["families"].split()
    return rows


def killed_by(failed: list[str], patterns: list[str]) -> list[str]:
    """The failed checks a mutant's intended patterns name."""
    return [f for f in failed if any(fnmatch.fnmatchcase(f, p) for p in patterns)]


def outcome(injected: bool, verdict: str, vrc: int, hits: list[str]) -> str:
    """A mutant run's cell: killed only when the verdict FAILs, validation exits non-zero and an intended check is
    among the failures; a verdict "pass" (printed PASS WITH MUTANT, exit 1: validate names the mutant) survived."""
    if not injected:
        return "error"
    if verdict == "fail" and vrc != 0:
        return "killed" if hits else "killed-elsewhere"  # elsewhere: caught, not by its check: a finding too
    return "survived"


def _pipeline(workload: str, scale: str, ranks: int, runs: Path, venv: Path, log: Path, env: dict,
              extra: list[str]) -> dict:
    """One pass of the pipeline (`python -m pipeline --no-report`: run both sides, validate the run it made) in a
    process of its own (its environment: the mutant and its kernel), its output in `log`. Its outcome (pipeline
    --outcome): "run" (None: none named), "harness" and "validate" (each step's status; validate None: not run),
    "harness_s" and "validate_s" (each step's wall time as the pipeline timed it), "verdict" (verdict.json; None:
    none). A pipeline that stopped before writing its outcome (interrupted, crashed): its exit status as the
    harness's, the run its log named (pipeline.named_run), validate not run."""
    res = log.with_suffix(".outcome.json")
    res.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "pipeline", "--no-report", "--outcome", str(res), "--workload", workload,
            "--scale", scale, "--ranks", str(ranks), "--runs-dir", str(runs), "--dlio-venv", str(venv), *extra]
    t0 = time.time()
    with open(log, "w") as out:
        rc = subprocess.run(argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    try:
        o = json.loads(res.read_text())
    except (OSError, ValueError):
        o = {"run": (lambda r: str(r) if r else None)(named_run(log.read_text(errors="replace"))), "harness": rc,
             "validate": None, "harness_s": round(time.time() - t0, 1), "validate_s": None}
    try:
        o["verdict"] = RunDir(o["run"]).verdict if o["validate"] is not None else None
    except (OSError, ValueError):
        o["verdict"] = None
    return o


def _failed(v: dict | None) -> list[str]:
    return [c["name"] for c in (v or {}).get("checks", []) if c["status"] == "fail" and c.get("required", True)]


def _dlio_wall(run: Path) -> float:
    m = RunDir(run).manifest
    return sum(r.get("wall_s", 0.0) for n, r in m["steps"].items() if n.startswith("dlio."))


def _injected(run: Path, name: str) -> bool:
    """Every kernel launch that wrote an output.json names the mutant (it was injected, not silently ignored)."""
    outs = [p for p in (run / "kernel").glob("*/out/output.json") if p.parent.parent.name != "generate"]
    return bool(outs) and all(json.loads(p.read_text()).get("mutant") == name for p in outs)


def venv_for(fam: str, a) -> Path:
    """The reference venv a family's DLIO side runs in: a 3.x family's (FAMILY_VENV), else DLIO 2.0.0's."""
    return getattr(a, FAMILY_VENV[fam], None) if fam in FAMILY_VENV else a.dlio_venv


def scale_for(fam: str, a) -> str:
    """The preset a family runs at for the asked SCALE (FAMILY_SCALE; else SCALE itself)."""
    return FAMILY_SCALE.get(fam, {}).get(a.scale, a.scale)


def family_launch(fam: str, a) -> tuple[list[str], dict]:
    """The harness's options and environment a family's runs add: for async, --vol async-prefetch and the vol kernel
    (H5DLIO_KERNEL_BIN, as `make validate VOL=async-prefetch` gives it); the harness finds the plugin folder."""
    if fam not in FAMILY_VOL:
        return [], {}
    return ["--vol", FAMILY_VOL[fam]], {"H5DLIO_KERNEL_BIN": str(a.vol_kernel)}


def _given_vol(fam: str, m: dict) -> str:
    """Why a given baseline's manifest does not fit the family's connector stack ("" when it does)."""
    want, got = FAMILY_VOL.get(fam, "native"), (m.get("vol") or {}).get("requested", "native")
    return "" if want == got else f"its kernel side ran with VOL={got}, the {fam} family needs VOL={want}"


def _revalidate(run: Path, log: Path) -> dict:
    """A given baseline (nothing to run: it was made before) validated again, `python -m validate RUN` in a process of
    its own, its output added to `log`: its status, wall time and verdict as _pipeline gives them."""
    t0 = time.time()
    with open(log, "a") as out:
        rc = subprocess.run([sys.executable, "-m", "validate", str(run)], cwd=REPO, stdout=out,
                            stderr=subprocess.STDOUT).returncode
    try:
        v = RunDir(run).verdict
    except (OSError, ValueError):
        v = None
    return {"validate": rc, "validate_s": round(time.time() - t0, 1), "verdict": v}


def _given(fam: str, given: Path, a) -> tuple[dict, str]:
    """A given baseline's outcome as far as its manifest says it (its launches' wall time as the run's), and why it is
    not the family's baseline ("" when it is)."""
    wl = FAMILIES[fam][0]
    m = RunDir(given).manifest
    o = {"run": str(given), "harness": 0 if m.get("status") == "complete" else 1, "validate": None,
         "harness_s": round(sum(r.get("wall_s", 0.0) for r in m["steps"].values()), 1)}
    why = f"a run of {m['workload']['name']}, not {wl}" if m["workload"]["name"] != wl else \
        f"a run at SCALE={m['workload'].get('scale')}, the {fam} family runs at {scale_for(fam, a)}" \
        if m["workload"].get("scale") != scale_for(fam, a) else _given_vol(fam, m)
    return o, why


def baseline(fam: str, a, say) -> dict:
    wl = FAMILIES[fam][0]
    runs = a.runs_dir / fam
    runs.mkdir(parents=True, exist_ok=True)
    log = runs / "baseline.log"
    given = a.baselines.get(fam)
    if given:
        say(f"mutants: {fam}: baseline {given} (given)")
        o, why = _given(fam, given, a)
        if why:
            return {"family": fam, "workload": wl, "run": str(given), "verdict": "error",
                    "detail": f"--baseline {fam}={given}: {why}"}
    else:
        extra, fenv = family_launch(fam, a)
        env = {**{k: v for k, v in os.environ.items() if k != "H5DLIO_MUTATE"}, **fenv}
        say(f"mutants: {fam}: baseline {wl} (both sides{', kernel VOL=' + FAMILY_VOL[fam] if extra else ''}) ...")
        o = _pipeline(wl, scale_for(fam, a), a.ranks, runs, venv_for(fam, a), log, env, extra)
    rc = o["harness"]
    row = {"family": fam, "workload": wl, "scale": scale_for(fam, a), "vol": FAMILY_VOL.get(fam, "native"),
           "harness_rc": rc, "run": o["run"], "harness_s": o["harness_s"], "given": bool(given)}
    if o["run"] is None or rc != 0:
        return {**row, "verdict": "error", "detail": f"the harness exited {rc}: see {log}"}
    if given:
        o.update(_revalidate(given, log))
    if o["validate"] is None:
        return {**row, "verdict": "error", "detail": f"the run was not validated (the pipeline stopped): see {log}"}
    v, run = o["verdict"], Path(o["run"])
    man = RunDir(run).manifest
    row.update(validate_rc=o["validate"], validate_s=o["validate_s"], verdict=(v or {}).get("verdict", "error"),
               failed=_failed(v), dlio_side_s=round(_dlio_wall(run), 1), summary=(v or {}).get("summary"),
               dlio=(man.get("dlio") or {}).get("version") or man.get("versions", {}).get("dlio", "unknown"),
               profiles=man.get("profiles", []),
               skipped_profiles=man.get("skipped_profiles") or {})
    say(f"mutants: {fam}: baseline verdict {row['verdict']} (DLIO side {row['dlio_side_s']} s, "
        f"run {row['harness_s']} s)")
    return row


def one(fam: str, base: Path, mut: dict, a, say) -> dict:
    wl = FAMILIES[fam][0]
    runs = a.runs_dir / fam
    log = runs / f"{mut['name']}.log"
    extra, fenv = family_launch(fam, a)
    env = {**os.environ, **fenv, "H5DLIO_MUTATE": mut["name"]}
    t0 = time.time()
    o = _pipeline(wl, scale_for(fam, a), a.ranks, runs, venv_for(fam, a), log, env,
                  ["--reuse-dlio", str(base), *extra])
    rc, run = o["harness"], o["run"]
    row = {"mutant": mut["name"], "family": fam, "workload": wl, "intended": mut["checks"], "harness_rc": rc,
           "run": run, "kernel_s": o["harness_s"]}
    if run is None:
        return {**row, "status": "error", "detail": f"no run directory (harness exit {rc}): see {log}"}
    if o["validate"] is None:  # the pipeline validates a run whose harness exited 0 or 1 (it was not stopped)
        return {**row, "status": "error", "detail": f"not validated (harness exit {rc}): see {log}"}
    vrc, v = o["validate"], o["verdict"]
    failed = _failed(v)
    hits = killed_by(failed, mut["checks"])
    verdict = (v or {}).get("verdict", "error")
    injected = _injected(Path(run), mut["name"])
    status = outcome(injected, verdict, vrc, hits)
    row.update(status=status, validate_rc=vrc, verdict=verdict, failed=failed, killed_by=hits,
               injected=injected, validate_s=o["validate_s"], total_s=round(time.time() - t0, 1),
               failed_steps=[n for n, r in RunDir(run).manifest["steps"].items()
                             if r.get("status") != "ok"])
    say(f"mutants: {fam}: {mut['name']}: {status} (verdict {verdict}, validate exit {vrc}; "
        f"intended {' '.join(mut['checks'])}; failed {', '.join(failed) or 'none'}) in {row['total_s']} s")
    return row


def merged(old: dict, new: dict, table: list[dict]) -> dict:
    """new's cells (mutant x family), baselines and not-run rows replace old's; the rest of old is kept; the table is
    the kernel's whole table; each invocation is listed."""
    cells = {(r["mutant"], r["family"]) for r in new["results"] + new["not_run"]}
    fams = {b["family"] for b in new["baselines"]}
    order = {t["name"]: i for i, t in enumerate(table)}
    fam_order = {f: i for i, f in enumerate(FAMILIES)}

    def key(r: dict) -> tuple:
        return fam_order.get(r["family"], 99), order.get(r["mutant"], 99)
    out = {**old, "table": table,
           "results": sorted([r for r in old["results"] if (r["mutant"], r["family"]) not in cells] + new["results"],
                             key=key),
           "not_run": sorted([r for r in old["not_run"] if (r["mutant"], r["family"]) not in cells] + new["not_run"],
                             key=key),
           "baselines": sorted([b for b in old["baselines"] if b["family"] not in fams] + new["baselines"],
                               key=lambda b: fam_order.get(b["family"], 99)),
           "invocations": old.get("invocations", [{k: old[k] for k in ("kernel_revision", "started", "finished",
                                                                       "wall_s")}]) + new["invocations"]}
    if new["findings"]:
        out["findings"] = new["findings"]
    return out


STATUS = {"killed": "**killed**", "killed-elsewhere": "caught, not by its check", "survived": "**SURVIVED**",
          "error": "error", "not-run": "not run"}


def _num(x) -> str:
    """A time of the table: '' when not measured (a run recovered after its driver was stopped)."""
    return "" if x is None else str(x)


def render_md(m: dict) -> str:
    L = ["# The mutation matrix (issue 24)", "",
         "Generated by `make mutants` (`python -m fidelity.mutants`); do not edit by hand. Each mutant is one "
         "divergence injected into the kernel (`H5DLIO_MUTATE=<name>`; the table is `bench/src/mutate.c`, printed by "
         "`h5dlio --mutants`; docs/mutants.md). Per workload family one side-by-side run (the baseline, which must "
         "PASS) gives the DLIO side, reused by every mutant (`--reuse-dlio`); the kernel side is run with the mutant "
         "under every profile here, then validated (`python -m validate`). **killed**: the verdict FAILs, validation "
         "exits non-zero and a check meant to catch the mutant is among the failures.", "",
         f"DLIO {m['dlio']}, scale {m['scale']}, {m['ranks']} ranks, profiles {', '.join(m['profiles'])} "
         f"({m['profiles_note']}).", ""]
    for i in m.get("invocations") or [m]:
        what = (f": families {', '.join(i['families'])}; mutants {', '.join(i['mutants'])}"
                + (f" (baselines given: {', '.join(i['baselines_given'])})" if i.get("baselines_given") else "")
                if "families" in i else "")
        L.append(f"- kernel {i['kernel_revision']}, {i['started']} - {i['finished']}, {i['wall_s']:.0f} s{what}")
    L += ["",
         "## Baselines", "",
         "| family | workload | DLIO | profiles | verdict | DLIO side (s) | run (s) | validate (s) |",
         "|---|---|---|---|---|---:|---:|---:|"]
    for b in m["baselines"]:
        prof = ", ".join(b.get("profiles", [])) + "".join(f" ({k} skipped)" for k in b.get("skipped_profiles", {}))
        vol = (f" (kernel VOL={b['vol']})" if b.get("vol", "native") != "native" else "") + \
            (f" (SCALE={b['scale']})" if b.get("scale", m["scale"]) != m["scale"] else "")
        L.append(f"| {b['family']} | {b['workload']}{vol} | {b.get('dlio', '')} | {prof} | {b.get('verdict')} | "
                 f"{b.get('dlio_side_s', '')} | {b.get('harness_s', '')} | {_num(b.get('validate_s', ''))} |")
    fams = [b["family"] for b in m["baselines"]]
    L += ["", "## Mutant x family", "",
          "| mutant | what | meant to be caught by | " + " | ".join(fams) + " |",
          "|---|---|---|" + "---|" * len(fams)]
    by = {(r["mutant"], r["family"]): r for r in m["results"]}
    skipped = {(n["mutant"], n["family"]) for n in m["not_run"]}
    for t in m["table"]:
        cells = []
        for f in fams:
            r = by.get((t["name"], f))
            if r is None:
                cells.append("not run (below)" if (t["name"], f) in skipped else "n/a")
            elif r["status"] in ("killed", "killed-elsewhere"):
                cells.append(f"{STATUS[r['status']]} by {', '.join(r['killed_by'] or r['failed'][:4])}"
                             + (f" (+{len(r['failed']) - len(r['killed_by'])} more)"
                                if r["status"] == "killed" and len(r["failed"]) > len(r["killed_by"]) else ""))
            else:
                cells.append(f"{STATUS[r['status']]}" + (f": {r.get('detail', '')}" if r.get("detail") else ""))
        L.append(f"| `{t['name']}` | {t['what']} | {' '.join(t['checks'])} | " + " | ".join(cells) + " |")
    if m["not_run"]:
        L += ["", "## Not run here", ""]
        L += [f"- `{n['mutant']}` ({n['family']}): {n['reason']}" for n in m["not_run"]]
    L += ["", "## Every run", "", "| mutant | family | status | verdict | validate exit | kernel side (s) | "
          "validate (s) | failed checks |", "|---|---|---|---|---:|---:|---:|---|"]
    for r in m["results"]:
        L.append(f"| `{r['mutant']}` | {r['family']} | {r['status']} | {r.get('verdict')} | {r.get('validate_rc')} | "
                 f"{_num(r.get('kernel_s'))} | {_num(r.get('validate_s'))} | {', '.join(r.get('failed', []))} |")
    if m.get("findings"):
        L += ["", "## Findings (survivors and misses)", ""] + [f"- {x}" for x in m["findings"]]
    return "\n".join(L) + "\n"


def _revision() -> str:
    p = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    d = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                       text=True)
    return p.stdout.strip() + (" (uncommitted changes)" if d.stdout.strip() else "")


def _int(var: str, opt: str):
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{var}={text} ({opt}): not a whole number") from None
    return parse


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--families", default="", help=f"comma-separated subset of {','.join(FAMILIES)} (default: every "
                   "family, dlio3 only with --dlio3-venv)")
    p.add_argument("--mutants", default="", help="comma-separated subset of the kernel's mutants (default: all)")
    p.add_argument("--scale", default="tiny")
    p.add_argument("--ranks", type=_int("RANKS", "--ranks"), default=2)
    p.add_argument("--dlio-venv", type=Path, default=None, help="the reference DLIO 2.0.0 venv (required unless "
                   "--render); with Darshan, one whose h5py is built against the kernel's HDF5 (DLIO_H5PY=mpi)")
    p.add_argument("--dlio3-venv", type=Path, default=None, help="the reference venv of an MLCommons DLIO 3.x "
                   "checkout (`make mutants DLIO=<checkout>`): runs the dlio3 and dlio3-checkpoint families")
    p.add_argument("--dlio3-mlps-venv", type=Path, default=None, help="a DLIO 3.x venv where mlpstorage_py imports "
                   "(MLPerf Storage v3.0's environment; `make mutants DLIO3_MLPS_VENV=`): runs the dlio3-mlps family")
    p.add_argument("--vol-kernel", type=Path, default=None, help="the kernel built against the thread-safe HDF5 "
                   "(`make vol-kernel`; default: build/.vol-kernel's): runs the async family")
    p.add_argument("--runs-dir", type=Path, default=REPO / "build" / "mutants")
    p.add_argument("--out", type=Path, default=REPO / "fidelity", help="where mutants.json/.md go")
    p.add_argument("--baseline", action="append", default=[], metavar="FAMILY=RUN",
                   help="take this earlier side-by-side run of the family's workload as its baseline (validated "
                        "again, it must PASS) instead of running one")
    p.add_argument("--findings", type=Path, default=None,
                   help="a JSON list of notes on survivors (written by hand after reading the runs), kept in the md")
    p.add_argument("--merge", action="store_true",
                   help="replace only this invocation's cells (mutant x family) in <out>/mutants.json, keep the rest")
    p.add_argument("--render", action="store_true",
                   help="run nothing: re-render <out>/mutants.md from <out>/mutants.json (with --findings: set them)")


class Refused(ValueError):
    """A bad option (exit status 2); the message names it."""


def _render_only(a: argparse.Namespace) -> int:
    """--render: re-render <out>/mutants.md from <out>/mutants.json (with --findings: set them first)."""
    m = json.loads((a.out / "mutants.json").read_text())
    if a.findings:
        m["findings"] = json.loads(a.findings.read_text())
        write_json_atomic(a.out / "mutants.json", m)
    write_text_atomic(a.out / "mutants.md", render_md(m))
    return 0


def _check_dlio3(venv: Path | None, fam: str = "dlio3") -> None:
    """A 3.x family needs a DLIO 3.x venv (its .h5dlio-dlio.json, scripts/deps-dlio.sh). Raises Refused."""
    opt = "--" + FAMILY_VENV[fam].replace("_", "-")
    if venv is None:
        raise Refused(f"MUTANT_FAMILIES={fam}: " + NOT_HERE[fam])
    try:
        ver = json.loads((venv / ".h5dlio-dlio.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        raise Refused(f"{opt} {venv}: no .h5dlio-dlio.json naming its DLIO version (make dlio-venv-spec "
                      "DLIO=<checkout>)") from None
    if not str(ver).startswith("3."):
        raise Refused(f"DLIO={ver} ({opt} {venv}): the {fam} family needs an MLCommons DLIO 3.x checkout")


def vol_kernel(a: argparse.Namespace) -> str:
    """Sets a.vol_kernel (--vol-kernel, else build/.vol-kernel's) when that kernel and vol-async's plugin folder are
    there; else why the async family cannot run ("" when it can)."""
    from harness.vol import STACKS, plugin_path
    from harness.workload import WorkloadError
    stamp = REPO / "build" / ".vol-kernel"
    k = getattr(a, "vol_kernel", None) or (Path(stamp.read_text().strip()) if stamp.exists() else None)
    if k is None or not k.exists():
        return (f"--vol-kernel {k}: no such file" if k else NOT_HERE["async"]) + " (make vol-kernel builds it)"
    try:
        plugin_path(STACKS[FAMILY_VOL["async"]])
    except WorkloadError as e:
        return str(e)
    a.vol_kernel = k.resolve()
    return ""


def _chosen(a: argparse.Namespace) -> tuple[list[str], list[dict], list[dict]]:
    """(families, the kernel's table of mutants, the mutants chosen) once every option is accepted; sets
    a.baselines (family -> the run given as its baseline). Raises Refused."""
    if a.ranks < 1:
        raise Refused(f"RANKS={a.ranks} (--ranks): must be at least 1")
    no_vol = vol_kernel(a)
    fams = [f for f in a.families.split(",") if f] or [f for f in FAMILIES if (f not in FAMILY_VENV or venv_for(f, a))
                                                        and (f != "async" or not no_vol)]
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        raise Refused(f"MUTANT_FAMILIES={a.families}: unknown {bad} (known: {', '.join(FAMILIES)})")
    if "async" in fams and no_vol:
        raise Refused(f"MUTANT_FAMILIES=async: {no_vol}")
    if set(fams) - set(FAMILY_VENV) and (a.dlio_venv is None or not (a.dlio_venv / "bin" / "dlio_benchmark").exists()):
        raise Refused(f"--dlio-venv {a.dlio_venv}: no bin/dlio_benchmark")
    for fam in sorted(set(fams) & set(FAMILY_VENV)):
        _check_dlio3(venv_for(fam, a), fam)
    try:
        table = mutant_table()
    except (OSError, RuntimeError, ValueError) as e:
        raise Refused(f"{e} (run `make build`)") from None
    names = [x for x in a.mutants.split(",") if x]
    unknown = [x for x in names if x not in {t["name"] for t in table}]
    if unknown:
        raise Refused(f"MUTANTS={a.mutants}: unknown {unknown} (known: {', '.join(t['name'] for t in table)})")
    a.baselines = {}
    for x in a.baseline:
        fam, _, run = x.partition("=")
        if fam not in FAMILIES or not RunDir(run).manifest_path.exists():
            raise Refused(f"MUTANT_BASELINES: {x} (--baseline): expected FAMILY=RUN_DIR with FAMILY in "
                          f"{', '.join(FAMILIES)} and a run directory (manifest.json)")
        a.baselines[fam] = Path(run).resolve()
    return fams, table, [t for t in table if not names or t["name"] in names]


def _matrix(fams: list[str], chosen: list[dict], a: argparse.Namespace, say) -> tuple[list, list, list]:
    """Per family: its baseline, then each of its mutants on that baseline's DLIO side. (baselines, results, the
    cells not run and why)."""
    baselines, results = [], []
    # the families that cannot run here, when every family was asked (MUTANT_FAMILIES unset): a family left out of
    # an explicit list was not asked, and listing its cells as not run would replace them under --merge
    not_run = [{"mutant": t["name"], "family": f, "reason": NOT_HERE[f]} for t in chosen for f in t["families"]
               if f in NOT_HERE and f not in fams and not a.families]
    for fam in fams:
        muts = [t for t in chosen if fam in t["families"]]
        if not muts:
            continue
        b = baseline(fam, a, say)
        baselines.append(b)
        if b["verdict"] != "pass":
            not_run += [{"mutant": t["name"], "family": fam, "reason": f"the baseline did not pass ({b['verdict']}: "
                         f"{', '.join(b.get('failed', [])) or b.get('detail', '')})"} for t in muts]
            continue
        for t in muts:
            results.append(one(fam, Path(b["run"]), t, a, say))
    return baselines, results, not_run


def _describe_sides(m: dict) -> None:
    """m's "dlio", "profiles" and "profiles_note" from its baselines (each family's DLIO and its profiles, read from
    its manifest when the baseline row predates those fields)."""
    for b in m["baselines"]:
        man = RunDir(b["run"]) if b.get("run") else None
        if "dlio" not in b and man and man.manifest_path.exists():
            mm = man.manifest
            b.update(dlio=mm.get("versions", {}).get("dlio", "unknown"), profiles=mm.get("profiles", []),
                     skipped_profiles=mm.get("skipped_profiles") or {})
        elif "dlio" not in b and b.get("verdict") == "pass" and m.get("profiles_note"):
            # a row of an earlier invocation whose run is gone: what that invocation's header said
            note = (x.partition(" skipped: ") for x in m["profiles_note"].split("; "))
            b.update(dlio=m.get("dlio", "unknown"), profiles=m.get("profiles", []),
                     skipped_profiles={k: v for k, sep, v in note if sep})
    ran = [b for b in m["baselines"] if "dlio" in b]
    if not ran:  # the profiles are what the baselines' manifests name: none ran, none named
        m["profiles"], m["profiles_note"] = [], "no baseline ran"
        return
    by: dict[str, list[str]] = {}
    for b in ran:
        by.setdefault(b["dlio"], []).append(b["family"])
    m["dlio"] = "; ".join(f"{v} ({', '.join(f)})" for v, f in by.items())
    m["profiles"] = sorted({p for b in ran for p in b["profiles"]}, key=[p for b in ran for p in b["profiles"]].index)
    m["profiles_note"] = "; ".join(f"{b['family']}: {k} skipped: {v}" for b in ran
                                   for k, v in b["skipped_profiles"].items()) or "every profile in every family"


def _document(a: argparse.Namespace, table: list[dict], chosen: list[dict], matrix: tuple[list, list, list],
              started: str, t0: float) -> dict:
    """mutants.json's content: this invocation, its cells (merged into the existing file with --merge) and what the
    baselines' manifests say of DLIO and the profiles."""
    baselines, results, not_run = matrix
    inv = {"kernel_revision": _revision(), "started": started,
           "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "wall_s": round(time.time() - t0, 1),
           "families": [b["family"] for b in baselines], "mutants": [t["name"] for t in chosen],
           "baselines_given": sorted(a.baselines)}
    m = {"kernel_revision": inv["kernel_revision"], "dlio": "2.0.0", "scale": a.scale, "ranks": a.ranks,
         "profiles": [], "started": started, "finished": inv["finished"],
         "wall_s": inv["wall_s"], "invocations": [inv], "table": chosen, "baselines": baselines, "results": results,
         "not_run": not_run, "findings": json.loads(a.findings.read_text()) if a.findings else []}
    if a.merge and (a.out / "mutants.json").exists():
        m = merged(json.loads((a.out / "mutants.json").read_text()), m, table)
    _describe_sides(m)
    return m


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fidelity.mutants", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    setup_parser(p)
    a = p.parse_args(argv)
    if a.render:
        return _render_only(a)
    try:
        fams, table, chosen = _chosen(a)
    except Refused as e:
        print(f"mutants: error: {e}", file=sys.stderr)
        return 2
    a.runs_dir = a.runs_dir.resolve()
    t0, started = time.time(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    say = lambda s: print(s, flush=True)  # noqa: E731
    baselines, results, not_run = matrix = _matrix(fams, chosen, a, say)
    m = _document(a, table, chosen, matrix, started, t0)
    a.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(a.out / "mutants.json", m)
    write_text_atomic(a.out / "mutants.md", render_md(m))
    n_kill = sum(r["status"] == "killed" for r in results)
    say(f"mutants: {n_kill} of {len(results)} mutant runs killed by their intended check; {len(not_run)} not run; "
        f"{m['invocations'][-1]['wall_s']:.0f} s; {a.out / 'mutants.md'}")  # this invocation's, merged or not
    ok = all(b["verdict"] == "pass" for b in baselines) and all(r["status"] == "killed" for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
