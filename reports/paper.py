"""The paper report: one report over a paper directory made by `make paper`.

    runs/paper-<time>/
      paper.json          what was asked: scale, ranks, repetitions, scaling rank counts
      runs/<workload>-.../  kernel vs DLIO run directories of configurations A-C (python -m harness run + validate)
      scaling/sweep.json  kernel-only strong scaling of configurations D-H, and
      scaling/<config>/   workload.yaml, launches.json, np<N>/rep<k>/out/output.json (per-rank lists: output-ranks-data)
      report/             report.md, report.html, figures/ (python -m reports runs/paper-<time>)

The harness makes the directory (`python -m harness sweep init|scaling`, `python -m harness run`); everything the
report shows is read back from it (reports.rundir.load_paper), so it can be re-rendered any time with
`python -m reports runs/paper-<time>`. Here: the paper's sections, PaperData -> blocks (each run's own report is
rendered by reports.__main__ beside it)."""
from __future__ import annotations

import os
from pathlib import Path

from common.rundir import REPORT
from profiles import registry
from reports import figures, sections
from reports.doc import Block, Bullets, Heading, Para, Table
from reports.rundir import PaperData, RunData, ScalingConfig, Sweep
from reports.tables import f1, f3, ms, plain, ratio, runtime_rows, scaling_rows

# The thesis' measured runtimes (../shared/reference/thesis-configs.md, "Results to compare with"), min:s averages
# of 10 runs: (configuration, file system, phase, kernel, DLIO).
THESIS_RUNTIME = [
    ("A, read threads 0", "Lustre", "whole run", "2:56", "6:27"),
    ("A, read threads 4", "Lustre", "whole run", "3:20", "13:17"),
    ("A, read threads 0", "BeeOND", "whole run", "1:54", "3:17"),
    ("A, read threads 4", "BeeOND", "whole run", "1:47", "5:43"),
    ("B (UNet3D)", "Lustre", "generation", "5:54", "7:48"),
    ("B (UNet3D)", "Lustre", "training", "1:22", "2:40"),
]
THESIS_SCALING = ("independent mode on BeeOND, total raw read rate (GB/s): 2.41 (1 rank), 4.22, 8.68, 14.79, 16.68, "
                  "17.02, 17.70 (64 ranks); collective mode peaks near 16 ranks (~12-16 GB/s); chunking on Lustre "
                  "reached 45 GB/s raw / 25 GB/s observed at 64 ranks; gzip-4 on random data compresses < 1% and "
                  "performs like chunking; subfiling with default settings scaled poorly (< 1 GB/s observed at 64 "
                  "ranks)")


def _mmss(s: str) -> int:
    m, sec = s.split(":")
    return int(m) * 60 + int(sec)


# ================================================================ labels

def describe(cfg: dict) -> str:
    ds, k = cfg.get("dataset", {}), cfg.get("h5dlio", {}) or {}
    parts = []
    if k.get("collective-meta") or k.get("collective-data"):
        parts.append("collective " + "+".join(x for x, on in (("meta", k.get("collective-meta")),
                                                              ("data", k.get("collective-data"))) if on))
    if ds.get("enable_chunking"):
        parts.append(f"chunking ({ds.get('chunk_size', 1024)} B chunks)")
    if ds.get("compression") not in (None, "none", False):
        parts.append(f"{ds.get('compression')} {ds.get('compression_level', 4)}")
    if k.get("subfiling"):
        parts.append("subfiling")
    return ", ".join(parts) or "independent"


def config_letter(name: str) -> str:
    """thesis-a-rt0 -> A; other workload names stay as they are"""
    p = name.split("-")
    return p[1].upper() if p[0] == "thesis" and len(p) > 1 else name


# ================================================================ the paper report


def run_label(run: RunData) -> str:
    name = run.manifest["workload"]["name"]
    rt = run.config.get("reader", {}).get("read_threads", 1)
    return f"{config_letter(name)} rt{rt}" if name.startswith("thesis-") else f"{name} rt{rt}"


def comparison_section(runs: list[RunData], out_dir: Path) -> list[Block]:
    out: list[Block] = [Heading(2, "Kernel vs DLIO: configurations A-C", "comparison")]
    if not runs:
        out.append(Para("No kernel-vs-DLIO runs under `runs/`: the harness runs did not start (see the `make paper` "
                        "output)."))
        return out
    out.append(Para("Each configuration ran through the harness (`python -m harness run --workload thesis-...`): "
                    "both sides generate, then train under the timing profile (repeated), and configuration A with 4 "
                    "read threads also under the Log VFD. Each run has its own full report (linked)."))
    rows = []
    for r in runs:
        v = r.verdict or {}
        s = v.get("summary", {})
        link = os.path.relpath(r.path / REPORT / "report.html", out_dir)
        rows.append([run_label(r), r.manifest["workload"]["name"], str(r.manifest.get("ranks")),
                     str(r.config.get("reader", {}).get("read_threads", 1)),
                     (v.get("verdict") or "not validated").upper() if v else "not validated",
                     str(s.get("pass", 0)), str(s.get("fail", 0)), str(s.get("skip", 0)),
                     f"[{r.path.name}]({link})"])
    out.append(Table("tbl-paper-runs", ["config", "workload", "ranks", "read threads", "verdict", "pass", "fail",
                                        "skip", "run report"], rows, "The runs and their verdicts",
                     [False, False, True, True, False, True, True, True, False]))
    mrows = []
    phases = ("generation (launch wall)", "training (launch wall)", "training, all epochs (in program)",
              "evaluation, all (in program)")
    per_phase: dict[str, list[dict]] = {p: [] for p in phases}
    for r in runs:
        for row in runtime_rows(r):
            if row["label"] in per_phase:
                per_phase[row["label"]].append({**row, "label": run_label(r)})
                d_, k_ = row["dlio"] or {}, row["kernel"] or {}
                mrows.append([run_label(r), row["label"], f3(d_.get("mean")), f3(d_.get("stdev")),
                              f3(k_.get("mean")), f3(k_.get("stdev")), ratio(d_.get("mean"), k_.get("mean"))])
    out.append(Table("tbl-paper-runtime", ["config", "phase", "DLIO mean s", "DLIO stdev", "kernel mean s",
                                           "kernel stdev", "DLIO/kernel"], mrows,
                     "Runtime means per configuration and phase (full min/max tables below)",
                     [False, False, True, True, True, True, True]))
    shown = [p for p in phases[:3] if any(x["dlio"] or x["kernel"] for x in per_phase[p])]
    if shown:
        out.append(figures.FigureSpec(
            "paper-runtime", "Runtime per configuration, DLIO vs kernel: mean over the repetitions, error bars one "
            "standard deviation, DLIO/kernel ratio above each pair; one panel per phase (log scale)",
            lambda: figures.two_panels([lambda ax, p=p: figures.runtime_bars(per_phase[p], ax=ax, title=p)
                                        for p in shown], width=5.0 * len(shown))).render())
    out.append(Table("tbl-thesis-runtime", ["configuration", "file system", "phase", "kernel", "DLIO",
                                            "DLIO/kernel"],
                     [[c, fs, ph, k, dl, ratio(_mmss(dl), _mmss(k))] for c, fs, ph, k, dl in THESIS_RUNTIME],
                     "For comparison, the thesis' runtimes (min:s, averages of 10 runs on CLAIX-2023; "
                     "32 processes)", [False, False, False, True, True, True]))
    for r in runs:
        out.append(Heading(3, f"{run_label(r)}: runtime (thesis Tables C.1-C.4 form)", f"runtime-{r.path.name}"))
        out.append(sections.stat_table(f"tbl-runtime-{r.path.name}", runtime_rows(r),
                                       f"{r.manifest['workload']['name']}: seconds per phase, min/max/mean/stdev "
                                       f"over repetitions (n per side)"))
    return out


def _scaling_config(c: ScalingConfig) -> tuple[list[Block], dict | None]:
    """One configuration of the sweep: its launches that failed, its workload, a table per phase, the training
    figure; and its totals for the figure of all configurations (None: no training row)."""
    label = f"{config_letter(c.name)}: {describe(c.cfg)}"
    out: list[Block] = [Heading(3, label, f"scaling-{c.name}")]
    bad = {k: v for k, v in c.launches.items() if v.get("status") != "ok"}
    if bad:
        out.append(Bullets([f"`{k}` {v.get('status')}: {v.get('detail', '')}" for k, v in sorted(bad.items())]))
    ds, rd = c.cfg.get("dataset", {}), c.cfg.get("reader", {})
    out.append(Para(f"`reference-configs/{c.name}.yaml`: {ds.get('num_files_train')} + {ds.get('num_files_eval')} "
                    f"files of {ds.get('num_samples_per_file')} samples of {ds.get('record_length')} bytes, batch "
                    f"{rd.get('batch_size')} / eval {rd.get('batch_size_eval')}, "
                    f"compute {c.cfg.get('train', {}).get('computation_time')} s per batch."))
    per_phase = {}
    for phase in ("train", "eval"):
        rows = scaling_rows(c.rates, phase)
        if not any(r["n"] for r in rows):
            continue
        per_phase[phase] = rows
        body = [[str(r["ranks"]), str(r["n"]), f1(r["raw_per_rank"]), f1(r["raw_total"]), f1(r["obs_per_rank"]),
                 f1(r["obs_total"]), ms(r["meta_s"]), ms(r["raw_s"])] for r in rows]
        out.append(Table(f"tbl-scaling-{c.name}-{phase}",
                         ["ranks", "runs", "raw MiB/s per rank", "raw MiB/s total", "observed MiB/s per rank",
                          "observed MiB/s total", "metadata ms per rank", "raw read ms per rank"], body,
                         f"{config_letter(c.name)} {phase} (thesis Tables C.5-C.9 form)", [True] * 8))
    if "train" not in per_phase:
        return out, None
    rows = per_phase["train"]
    xs = [r["ranks"] for r in rows]
    series = [{"label": "raw, total", "x": xs, "y": [r["raw_total"] for r in rows], "color": "#2b5797"},
              {"label": "observed, total", "x": xs, "y": [r["obs_total"] for r in rows], "color": "#d9822b"},
              {"label": "raw, per rank", "x": xs, "y": [r["raw_per_rank"] for r in rows], "dashed": True,
               "color": "#2b5797"},
              {"label": "observed, per rank", "x": xs, "y": [r["obs_per_rank"] for r in rows],
               "dashed": True, "color": "#d9822b"}]
    out.append(figures.FigureSpec(
        f"scaling-{c.name}", f"{label}: training read rates against ranks (thesis Figures 6.8-6.12 form)",
        lambda s=series, t=label: figures.scaling_lines(s, title=t, ylabel="MiB/s (training)")).render())
    return out, {"label": label, "x": xs, "raw": [r["raw_total"] for r in rows], "obs": [r["obs_total"] for r in rows]}


def scaling_section(sweep: Sweep | None) -> list[Block]:
    out: list[Block] = [Heading(2, "Strong scaling: configurations D-H (kernel only)", "scaling")]
    if sweep is None:
        out.append(Para("The strong-scaling sweep did not finish (no `scaling/sweep.json`): run `python -m "
                        "harness sweep scaling` on this directory (see `make paper`)."))
        return out
    sw = sweep.meta
    ranks, repeat = sw["ranks"], sw["repeat"]
    cpus = sw.get("cpus") or 1
    over = f"oversubscribed above {cpus} ranks" if max(ranks) > cpus else "not oversubscribed"
    out.append(Para(f"The kernel alone, read threads 0, over {', '.join(map(str, ranks))} ranks on {cpus} "
                    f"cores ({over}), "
                    f"{repeat} repetition(s) per point, scale `{sw['scale']}`, page cache {sw.get('page_cache')}. "
                    "Rates in MiB/s over the phase's epochs: raw = bytes / time inside H5Dread, observed = bytes / "
                    "(epoch wall time - emulated compute); per rank = mean over ranks, total = sum over ranks (which "
                    "assumes the ranks read at the same time: with more ranks than cores it overstates); "
                    "each the mean over the repetitions. "
                    f"Thesis, for comparison: {THESIS_SCALING}."))
    all_series: list[dict] = []
    for c in sweep.configs:
        blocks, series = _scaling_config(c)
        out += blocks
        if series:
            all_series.append(series)
    if all_series:
        out.insert(2, figures.FigureSpec(
            "scaling-all", "All configurations: total raw (left) and total observed (right) training read rate "
            "against ranks",
            lambda: figures.two_panels([
                lambda ax: figures.scaling_lines([{"label": s["label"], "x": s["x"], "y": s["raw"]}
                                                  for s in all_series], ax=ax, title="raw read rate, total",
                                                 ylabel="MiB/s (log scale)", logy=True),
                lambda ax: figures.scaling_lines([{"label": s["label"], "x": s["x"], "y": s["obs"]}
                                                  for s in all_series], ax=ax, title="observed read rate, total",
                                                 ylabel="MiB/s (log scale)", logy=True)])).render())
    return out


def environment_section(paper: PaperData) -> list[Block]:
    out: list[Block] = [Heading(2, "Environment", "environment")]
    rows = []
    if paper.runs:
        rows += [[f"{k} (harness runs)", plain(v)] for k, v in paper.runs[0].manifest.get("versions", {}).items()]
    if paper.sweep is not None:
        sw = paper.sweep.meta
        rows += [[f"{k} (scaling)", plain(sw.get(k))] for k in ("kernel_version", "mpi", "host", "cpus", "platform")]
        rows.append(["scaling sweep wall s", f3(sw.get("wall_s"))])
    out.append(Table("tbl-paper-env", ["item", "value"], rows, "Versions and host"))
    out.append(Bullets([
        "Scale: the thesis ran 32 processes on 4 nodes (A, B) and 1 node with 8 (C) and up to 64 ranks (D-H) on "
        "Lustre and BeeOND; this machine has the cores listed above, a local file system and a warm page cache, so "
        "absolute rates are not comparable, only the shapes and the DLIO/kernel ratios.",
        "Configurations A-C read independently on both sides (DLIO's h5py has no collective mode); the thesis' "
        "kernel used collective metadata and data for them.",
        "Configuration B uses the thesis' fixed sample size (record_length_stdev 0), not DLIO's UNet3D size "
        "distribution.",
    ]))
    return out


def build(paper: PaperData, out_dir: Path) -> tuple[str, list[Block]]:
    """The paper report's title and blocks (out_dir: where it is written, for the links to each run's report)."""
    d, meta = paper.path, paper.meta
    blocks: list[Block] = [Para(
        f"The thesis' experiment set (kernel vs DLIO for configurations A-C, kernel strong scaling for D-H) at "
        f"scale `{meta.get('scale')}`, created {meta.get('created')}. Rendered from this directory alone; render "
        f"again with `python -m reports {d.name}`.")]
    blocks.append(Heading(2, "Overview", "overview"))
    blocks.append(Table("tbl-paper", ["item", "value"], [[k, plain(v)] for k, v in meta.items()],
                        "What `make paper` was asked to run (paper.json)"))
    blocks += comparison_section(paper.runs, out_dir)
    for prof in registry().values():   # each profile's own part (Profile.paper_sections), in the profiles' order
        for part in prof.paper_sections:
            blocks += part(paper.runs, run_label)
    blocks += scaling_section(paper.sweep)
    blocks += environment_section(paper)
    return f"h5dlio paper report: {d.name}", blocks
