"""Darshan's own analyses of the logs a run's Darshan launches wrote, as a storage team reads them: pydarshan's job
summary (`python -m darshan summary LOG --output HTML`) and drishti-io's insights and recommendations (`drishti LOG`,
its text, HTML and CSV of issue codes), one of each per log, under <run>/<side>/<step>/analysis/. Both tools come
from the venv this runs in (pinned in requirements-test.txt) and run as child processes: a log they cannot read
(truncated, corrupt: pydarshan's C backend may crash on it) is a note in tables/darshan-analyses.json, never a crash
here. Run by validate (the `darshan.analyses` row, reported, not judged), so any run with Darshan logs can be
analysed again with `python -m validate RUN`.
Their cost grows with the logs and their records (pydarshan reads a log whole: ~17 s per log at 64 ranks, 271 s for
two logs of 74,000 files each), so by default (H5DLIO_DARSHAN_ANALYSES=auto, `make validate DARSHAN_ANALYSES=...`)
only the first and last log of each launch (name order) are analysed, each only up to AUTO_MAX_BYTES; every other
log is listed in the table's "skipped" with why, and the row's detail says how many. `all`: every log; `none`: no
log."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from profiles import FAIL, PASS, SIDES, SKIP, RunView, result

SUMMARY_NEEDS = ("darshan", "pandas", "matplotlib", "seaborn", "mako")  # what `darshan summary` imports
TIMEOUT_S = 600
MODE_ENV = "H5DLIO_DARSHAN_ANALYSES"   # auto (default) | all | none
MODES = ("auto", "all", "none")
# auto's limit per log: ~6,000 data files' records (a field-20k rank log of 10,000 files is 1.6 MB, and its two
# analyses took ~60 s at a load of 12, against a few seconds for every check: bench/results/2026-11-27-validation-scale)
AUTO_MAX_BYTES = 1 << 20
DRISHTI_WIDTH = "160"   # console columns of drishti's text and HTML: one insight per line


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def tools() -> dict:
    """{"versions": {dist: version}, "summary": why not | None, "drishti": why not | None} for this interpreter."""
    missing = [m for m in SUMMARY_NEEDS if importlib.util.find_spec(m) is None]
    drishti = Path(sys.executable).parent / "drishti"
    return {"versions": {d: _version(d) for d in ("darshan", "drishti-io")},
            "summary": (f"pydarshan's summary needs {', '.join(missing)}, not installed for {sys.executable} "
                        "(pinned in requirements-test.txt: make venv)") if missing else None,
            "drishti": None if drishti.exists() else f"drishti-io not installed for {sys.executable} (no {drishti}; "
                                                      "pinned in requirements-test.txt: make venv)"}


def _failure(p: subprocess.CompletedProcess | None, what: str) -> str:
    if p is None:
        return f"{what} did not finish within {TIMEOUT_S} s"
    tail = [ln.strip() for ln in (p.stderr or p.stdout or "").splitlines() if ln.strip()][-2:]
    how = f"killed by signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
    return f"{what} failed ({how}): {' / '.join(tail)[:400] or 'no message'}"


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, errors="replace")
    except subprocess.TimeoutExpired:
        return None


def summary(log: Path, out: Path) -> str | None:
    """pydarshan's job summary of log into out (HTML); None, or why it failed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    p = _run([sys.executable, "-m", "darshan", "summary", str(log), "--output", str(out)], out.parent)
    if p is not None and p.returncode == 0 and out.exists() and out.stat().st_size:
        return None
    out.unlink(missing_ok=True)  # what a crashed summary left: not a report
    return _failure(p, "pydarshan summary")


_BOX = "│╭╮╰╯─ "


def insights(text: str) -> dict:
    """drishti's text -> {"counts": its "N critical issues, M warnings, and K recommendations" line, "insights":
    [{"section", "text", "recommendations": [...]}]} (each ▶ line, its ↪ lines below it)."""
    out: list[dict] = []
    counts, section, cur, in_rec = "", "", None, False
    for raw in text.splitlines():
        if m := re.search(r"╭─ ([A-Z][A-Z -]+?) ─", raw):
            section, cur = m.group(1).strip(), None
            continue
        if m := re.search(r"╰─ (\d+ critical issues?.*?) ─", raw):
            counts = m.group(1).strip()
            continue
        line = raw.strip(_BOX).strip()
        if line.startswith("▶"):
            cur = {"section": section, "text": line[1:].strip(), "recommendations": []}
            out.append(cur)
            in_rec = False
        elif line.startswith("↪") and cur is not None:
            body = line[1:].strip()
            if body.rstrip(":") == "Recommendations":
                in_rec = True
            elif in_rec:
                cur["recommendations"].append(body)
            else:  # a detail of the insight (which file, how much)
                cur["text"] += "; " + body
        elif line and cur is not None:  # a wrapped line
            if in_rec and cur["recommendations"]:
                cur["recommendations"][-1] += " " + line
            else:
                cur["text"] += " " + line
        elif not line:
            cur = None if section in ("", "THRESHOLDS") else cur
    return {"counts": counts, "insights": [x for x in out if x["section"] != "THRESHOLDS"]}


def drishti(log: Path, outdir: Path) -> dict:
    """drishti's report of log into outdir: <stem>.txt (its console output), <stem>.html, <stem>.csv (the issue codes
    it triggered); {"files": [...], "insights": ..., "issues": [codes], "error": why it failed | None}."""
    outdir.mkdir(parents=True, exist_ok=True)
    stem = log.name.removesuffix(".darshan")
    exe = Path(sys.executable).parent / "drishti"
    p = _run([str(exe), "--html", "--csv", "--size", DRISHTI_WIDTH, "--export_dir", str(outdir), str(log)], outdir)
    if p is None or p.returncode != 0 or "╭─ DRISHTI" not in (p.stdout or ""):
        for ext in (".html", ".csv", ".svg"):  # what a crashed drishti left: not a report
            (outdir / f"{stem}{ext}").unlink(missing_ok=True)
        return {"files": [], "error": _failure(p, "drishti")}
    txt = outdir / f"{stem}.txt"
    txt.write_text(p.stdout)
    files = [f for f in (txt, outdir / f"{stem}.html", outdir / f"{stem}.csv") if f.exists()]
    issues: list[str] = []
    csv = outdir / f"{stem}.csv"
    if csv.exists():
        rows = [ln.split(",") for ln in csv.read_text().splitlines() if ln.strip()]
        if len(rows) >= 2:
            issues = [code for code, flag in zip(rows[0][1:], rows[1][1:], strict=False) if flag.strip() == "True"]
    return {"files": files, "issues": issues, **insights(p.stdout), "error": None}


def mode() -> str:
    """H5DLIO_DARSHAN_ANALYSES, checked (bad input: ValueError naming it and its values)."""
    m = os.environ.get(MODE_ENV, "").strip() or "auto"
    if m not in MODES:
        raise ValueError(f"{MODE_ENV}={m!r}: not one of {', '.join(MODES)}")
    return m


def choose(logs: list[Path], how: str) -> tuple[list[Path], list[dict]]:
    """(the logs of one launch to analyse, [{"log", "why"}] for the others) under mode `how`."""
    if how == "all":
        return logs, []
    if how == "none":
        return [], [{"log": lg, "why": f"{MODE_ENV}=none"} for lg in logs]
    picked, skipped = [], []
    ends = {logs[0], logs[-1]} if logs else set()
    for lg in logs:
        size = lg.stat().st_size
        if lg not in ends:
            skipped.append({"log": lg, "why": "only the first and the last log of a launch are analysed"})
        elif size > AUTO_MAX_BYTES:
            skipped.append({"log": lg, "why": f"{size} bytes, over {AUTO_MAX_BYTES} per log"})
        else:
            picked.append(lg)
    return picked, skipped


def darshan_steps(run: RunView) -> list[tuple[str, str]]:
    """(side, step) of every finished Darshan launch of the run."""
    out = []
    for name, rec in run.manifest.get("steps", {}).items():
        side, _, step = name.partition(".")
        if side in SIDES and (step == "darshan" or step.startswith("darshan-")) and rec.get("status") == "ok":
            out.append((side, step))
    return out


def _one(root: Path, side: str, step: str, log: Path, t: dict) -> dict:
    """The table row of one analysed log: its job summary and drishti report under <side>/<step>/analysis/."""
    an = root / side / step / "analysis"
    stem = log.name.removesuffix(".darshan")
    row: dict = {"side": side, "step": step, "log": str(log.relative_to(root))}
    if t["summary"] is None:
        html = an / "summary" / f"{stem}.html"
        row["summary_error"] = summary(log, html)
        row["summary"] = None if row["summary_error"] else str(html.relative_to(root))
    if t["drishti"] is None:
        d = drishti(log, an / "drishti")
        row["drishti"] = [str(f.relative_to(root)) for f in d.pop("files")]
        row["drishti_error"] = d.pop("error")
        row.update(d)
    return row


def _logs(run: RunView, side: str, step: str) -> tuple[list[Path], int]:
    """The launched program's logs of one launch (darshan-<side>.json "logs"), and how many child-process logs (the
    `uname` DLIO's Python spawns) were left out: listed with the comparison's differences, not analysed."""
    wd = Path(run.path) / side / step
    parsed = run.table(f"darshan-{side}.json", shared=True) if step == "darshan" else None
    mine = set(parsed["logs"]) if parsed and "children" in parsed else None
    logs = [lg for lg in sorted((wd / "logs").rglob("*.darshan")) if mine is None or lg.name in mine]
    return logs, len(parsed.get("children", [])) if parsed else 0


def _detail(table: dict, how: str) -> tuple[str, list[str], tuple[int, int]]:
    logs, skipped = table["logs"], table["skipped"]
    errors = [f"{r['log']}: {r[k]}" for r in logs for k in ("summary_error", "drishti_error") if r.get(k)]
    done = sum(bool(r.get("summary")) for r in logs), sum(bool(r.get("drishti")) for r in logs)
    detail = (f"{len(logs)} log(s): {done[0]} pydarshan job summaries, {done[1]} drishti reports, "
              f"{sum(len(r.get('insights', [])) for r in logs)} drishti insights (tables/darshan-analyses.json)"
              + "".join(f"; {v}" for v in table["unavailable"].values())
              + (f"; {len(errors)} failed, first: {errors[0]}" if errors else "")
              + (f"; {len(skipped)} log(s) not analysed ({MODE_ENV}={how}: {skipped[0]['why']}; "
                 f"{MODE_ENV}=all analyses every log)" if skipped else "")
              + (f"; {table['children']} child-process log(s) not analysed (darshan.explained lists them)"
                 if table["children"] else ""))
    return detail, errors, done


def analyse(run: RunView) -> list[dict]:
    """The `darshan.analyses` row: the logs of the run's Darshan launches chosen by H5DLIO_DARSHAN_ANALYSES (choose)
    get pydarshan's job summary and drishti's report under <side>/<step>/analysis/ (paths relative to the run
    directory in tables/darshan-analyses.json, which the report links; the others in its "skipped", with why);
    reported, not judged. No row without a Darshan launch."""
    steps = darshan_steps(run)
    if not steps:
        return []
    how, t, root = mode(), tools(), Path(run.path)
    table: dict = {"tools": t["versions"], "unavailable": {k: t[k] for k in ("summary", "drishti") if t[k]},
                   "mode": how, "logs": [], "skipped": [], "children": 0}
    for side, step in steps:
        an = root / side / step / "analysis"
        if an.exists():  # an earlier validation's analyses: made by this module, replaced whole
            shutil.rmtree(an)
        logs, children = _logs(run, side, step)
        table["children"] += children
        picked, skipped = choose(logs, how)
        table["skipped"] += [{"side": side, "step": step, "log": str(x["log"].relative_to(root)), "why": x["why"]}
                             for x in skipped]
        table["logs"] += [_one(root, side, step, log, t) for log in picked]
    run.put_table("darshan-analyses.json", table)
    logs = table["logs"]
    if not logs:
        why = f"all {len(table['skipped'])} not analysed ({MODE_ENV}={how}: {table['skipped'][0]['why']}; " \
              f"{MODE_ENV}=all analyses every log)" if table["skipped"] else "the Darshan launches left no log"
        return [result("darshan.analyses", SKIP, detail=why, required=False)]
    if len(table["unavailable"]) == 2:
        return [result("darshan.analyses", SKIP, detail="; ".join(table["unavailable"].values()), required=False)]
    detail, errors, done = _detail(table, how)
    return [result("darshan.analyses", FAIL if errors else PASS, len(logs), done, detail, required=False)]
