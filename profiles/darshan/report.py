"""The Darshan profile's section of the run's report (Profile.report_sections): pydarshan's job summary and drishti's
report per log, as validate's analyses wrote them (tables/darshan-analyses.json, profiles/darshan/analyses.py). Reads
the run directory only, through the ReportView reports/ hands it."""
from __future__ import annotations

from common.blocks import Block, Bullets, Heading, Para, Table, slug
from common.rundir import SIDE_LABEL, SIDES
from profiles import ReportView


def _analysis_cells(run: ReportView, r: dict) -> list[str]:
    summ = run.link(r["summary"]) if r.get("summary") else (
        f"failed: {r['summary_error']}" if r.get("summary_error") else "not produced (see above)")
    dri = " ".join(run.link(p) for p in r.get("drishti") or []) or (
        f"failed: {r['drishti_error']}" if r.get("drishti_error") else "not produced (see above)")
    return [SIDE_LABEL.get(r["side"], r["side"]), r["log"], summ, dri, str(r.get("counts") or "-"),
            ", ".join(r.get("issues") or []) or "-"]


def analyses_section(run: ReportView) -> list[Block]:
    out: list[Block] = [Heading(2, "Darshan's own analyses", "darshan-analyses")]
    t = run.table("darshan-analyses.json")
    if t is None:
        has_logs = any(run.has_table(f"darshan-{s}.json") for s in SIDES)
        out.append(Para("No pydarshan job summary or drishti report: " + (
            "the run has Darshan logs but was validated before h5dlio analysed them; run `python -m validate "
            f"{run.path.name}` and render again" if has_logs else "no Darshan log (the Darshan profile: "
            + run.absent_reason("darshan") + ")") + "."))
        return out
    tools = ", ".join(f"{k} {v or 'not installed'}" for k, v in (t.get("tools") or {}).items())
    out.append(Para(f"Per Darshan log of the run ({tools}): pydarshan's job summary (`python -m darshan summary`, "
                    "HTML) and drishti's insights and recommendations (`drishti`: its console text, HTML, and the "
                    "CSV of the issue codes it triggered), written by `python -m validate` under "
                    "`<side>/<step>/analysis/`. Paths are relative to the run directory."))
    for why in (t.get("unavailable") or {}).values():
        out.append(Para(f"Not produced here: {why}."))
    if skipped := t.get("skipped"):
        whys = sorted({s["why"] for s in skipped})
        out.append(Para(f"Not analysed: {len(skipped)} log(s) (`DARSHAN_ANALYSES={t.get('mode')}`: "
                        + "; ".join(whys) + "; `DARSHAN_ANALYSES=all` analyses every log), listed in "
                        "tables/darshan-analyses.json (`skipped`)."))
    logs = t.get("logs") or []
    if not logs:
        out.append(Para("The Darshan launches left no log to analyse."))
        return out
    out.append(Table("tbl-darshan-analyses", ["side", "log", "job summary (pydarshan)", "drishti (text, HTML, CSV)",
                                              "drishti's count", "issue codes triggered"],
                     [_analysis_cells(run, r) for r in logs],
                     "Darshan's analyses per log (tables/darshan-analyses.json)"))
    for r in logs:
        if r.get("insights"):
            out.append(Heading(3, f"drishti: {SIDE_LABEL.get(r['side'], r['side'])}, `{r['log'].split('/')[-1]}`",
                               "drishti-" + slug(r["log"])))
            out.append(Bullets([f"{x['section'].capitalize()}: {x['text']}" + (
                " Recommendations: " + "; ".join(x["recommendations"]) + "." if x["recommendations"] else "")
                for x in r["insights"]]))
    return out
