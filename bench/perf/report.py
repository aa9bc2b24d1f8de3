"""results.json -> plots (PNG) and results.md: one table per measurement, every cell a median with the min..max
of its repetitions, ratios first."""
from __future__ import annotations

from pathlib import Path

from bench.perf import density, plots, scale, validation
from bench.perf.common import table

MIB = 1024 * 1024


def fmt(s: dict | None, scale: float = 1.0, digits: int = 1, pct: bool = False) -> str:
    if not s or s.get("median") is None:
        return "-"
    f = f"{{:.{digits}f}}"
    m, lo, hi = s["median"] * scale, s["min"] * scale, s["max"] * scale
    txt = f.format(m) if s.get("n", 1) == 1 else f"{f.format(m)} [{f.format(lo)}–{f.format(hi)}]"
    return txt + ("%" if pct else "")


def fratio(r: dict | None, digits: int = 2, pct: bool = False) -> str:
    if not r or r.get("median_ratio") is None:
        return "-"
    p = r.get("paired", {})
    k = 100.0 if pct else 1.0
    unit = "%" if pct else "x"
    f = f"{{:.{digits if not pct else 1}f}}"
    txt = f.format(r["median_ratio"] * k) + unit
    if p.get("n", 0) > 1:
        txt += f" [{f.format(p['min'] * k)}–{f.format(p['max'] * k)}]"
    return txt


def _load(sec: dict) -> str:
    ld = sec.get("load") or {}
    b, a = ld.get("before") or {}, ld.get("after") or {}
    if not b:
        return ""
    return f"load (1-min) {b.get('load1', 0):.2f} before, {a.get('load1', 0):.2f} after" if a else \
        f"load (1-min) {b.get('load1', 0):.2f}"


REVISION_NOTE = "392621b (MLPerf Storage v2.0's mlperf_storage_v2.0)"


def figures(res: dict, out: Path) -> dict:
    """Draw every figure the results allow; returns section -> PNG file name."""
    s = res["sections"]
    made = {}
    draws = {"readpath": plots.readpath, "overhead": plots.overhead, "dlio": plots.dlio_breakdown,
             "generation": plots.generation, "scaling": plots.scaling, "profilers": plots.profilers,
             "vol": plots.vol, "validation": validation.plot, "scale": scale.plot}
    for name, draw in draws.items():
        sec = s.get(name)
        if not sec or "error" in sec or "skipped" in sec and isinstance(sec["skipped"], str):
            continue
        if name == "vol" and not sec.get("cases"):  # the pass-through row alone: a table, no figure
            continue
        made[name] = plots.save(draw(sec), out / f"{name}.png")
    return made


def _header(m: dict) -> list[str]:
    """the title; the host, versions and duration; how to read a cell"""
    v = m.get("versions", {})
    return [f"# make bench: {m['date']} (SCALE={m['scale']})", "",
            f"Host `{m.get('host')}`, {m.get('cpus')} cores, kernel {v.get('kernel', '?')} "
            f"(HDF5 {v.get('kernel_hdf5', '?')}), "
            f"DLIO {v.get('dlio', '?')} (h5py {v.get('dlio_h5py', '?')}, HDF5 {v.get('dlio_hdf5', '?')}), git "
            f"{str(v.get('git_revision', '?'))[:12]}{' (dirty)' if v.get('git_dirty') else ''}; "
            f"{m.get('duration_s', 0):.0f} s. "
            "The machine is shared: every number is the median of the repetitions with [min–max]; ratios are medians "
            "of ratios of interleaved repetitions, or of medians where noted. Load averages per section below.", ""]


def _readpath(sec: dict) -> list[str]:
    """1. the read path against fio"""
    L: list[str] = []
    L += ["## 1. Read path vs a plain reader (fio)", "",
          f"{sec['files']} files x {sec['sample_bytes'] / MIB:.0f} MiB, 1 rank, read-threads 0; fio reads the "
          f"same bytes (the records dataset, from offset {sec.get('records_offset')}, one sample per file, "
          "psync, same transfer size); cold = "
          f"{sec['cold_method']}. {sec['repeat']} repetitions, interleaved. Target: kernel >= "
          f"{sec['target'] * 100:.0f}% of fio. {_load(sec)}.", ""]
    rows = []
    for mode, x in sec["modes"].items():
        rows.append([mode, fmt(x["kernel_raw_bw_bytes_per_s"], 1 / MIB, 0), fmt(x["fio_syscall_bw_bytes_per_s"],
                     1 / MIB, 0), fratio(x["ratio_raw"], pct=True), fmt(x["kernel_e2e_bw_bytes_per_s"], 1 / MIB, 0),
                     fmt(x["fio_wall_bw_bytes_per_s"], 1 / MIB, 0), fratio(x["ratio_e2e"], pct=True),
                     "yes" if x["target_met"] else "**no**",
                     fmt(x.get("fio_from0_syscall_bw_bytes_per_s"), 1 / MIB, 0)])
    L += [table(["cache", "kernel in H5Dread MiB/s", "fio in pread MiB/s (same bytes)", "kernel/fio",
                 "kernel end to end MiB/s", "fio wall MiB/s", "kernel/fio end to end", ">= 95%",
                 "fio whole file from offset 0, in pread MiB/s"], rows), ""]
    if sec.get("fio_odirect_bw_bytes_per_s"):
        od = fmt(sec["fio_odirect_bw_bytes_per_s"], 1 / MIB, 0)
        L += [f"fio O_DIRECT (the device without the page cache): {od} MiB/s.", ""]
    return L


def _overhead(sec: dict) -> list[str]:
    """2. the kernel's overhead per epoch"""
    L: list[str] = []
    w = sec["workload"]
    L += ["## 2. Kernel overhead", "",
          f"unet3d shape: {w['num_files_train']} files, record_length {w['record_length'] / MIB:.0f} MiB "
          f"(stdev {w['record_length_stdev'] / MIB:.2f} MiB), batch 7, 0.323 s compute, {w['epochs']} epochs; "
          "overhead = observed - (compute + raw read + metadata) per rank and epoch (read-threads 0), or observed "
          f"- (compute + waiting for batches) with reader processes. Target <= {sec['target_percent']}%. "
          f"{_load(sec)}.", ""]
    rows = [[str(c["ranks"]), str(c["read_threads"]), str(c["repeat"]), fmt(c["observed_epoch_s"], 1, 3),
             fmt(c["rank_epoch_overhead_s"], 1000, 2), fmt(c["rank_epoch_overhead_percent"], 1, 3, True),
             fmt(c["job_overhead_percent"], 1, 3, True), "yes" if c["target_met"] else "**no**"]
            for c in sec["cases"]]
    L += [table(["ranks", "read threads", "runs", "epoch s", "overhead ms", "overhead % (rank, epoch)",
                 "job-level % (max observed - rank means)", "<= 1%"], rows), ""]
    if any(c.get("rank_epoch_barrier_s", {}).get("n") for c in sec["cases"]):
        rows = [[str(c["ranks"]), str(c["read_threads"]), fmt(c["rank_epoch_barrier_s"], 1000, 2),
                 fmt(c["rank_epoch_overhead_excl_barrier_percent"], 1, 3, True)] for c in sec["cases"]]
        L += ["With the per-step barrier timed apart (waiting for the slowest rank):", "",
              table(["ranks", "read threads", "barrier ms per epoch", "overhead excluding the barrier"], rows), ""]
    return L


def _dlio_generation(sec: dict) -> list[str]:
    """3. kernel vs DLIO: generation, re-measurements, the launch with ~0 work"""
    L: list[str] = []
    L += ["## 3. Kernel vs DLIO 2.0.0 (unet3d; a row named after another workload: that reference config)", "",
          f"{sec['ranks']} ranks, {sec['repeat']} interleaved repetitions per variant"
          + "".join(f" ({n}: {x['repeat']})" for n, x in sec["variants"].items()
                    if x.get("repeat", sec["repeat"]) != sec["repeat"])
          + "; the harness's own argv. "
          f"{_load(sec)}.", "", "Generation (launch wall and in-program time):", ""]
    rows = []
    for sc, x in sec["scales"].items():
        g = x["generate"]
        rows.append([sc, f"{x['files_train']}+{x['files_eval']}", fmt(g["dlio"]["wall_s"], 1, 2),
                     fmt(g["kernel"]["wall_s"], 1, 2), fratio(g["ratio_wall"], 1),
                     fmt(g["dlio"]["in_program_s"], 1, 3), fmt(g["kernel"]["in_program_s"], 1, 3),
                     fratio(g["ratio_in_program"], 1)])
    L += [table(["scale", "files", "DLIO wall s", "kernel wall s", "DLIO/kernel", "DLIO in program s",
                 "kernel in program s", "DLIO/kernel in program"], rows), ""]
    for rm in sec.get("remeasured", []):
        ld = rm.get("load") or {}
        L += [f"Re-measured later (1-min load {(ld.get('before') or {}).get('load1', 0):.1f}–"
              f"{(ld.get('after') or {}).get('load1', 0):.1f}): {', '.join(rm['variants'])}"
              + (f" (and the generation of {', '.join(rm.get('scales') or {})}, 1 repetition)"
                 if rm.get("scales") else "") + ".", ""]
    if sec.get("empty_launch"):
        e = sec["empty_launch"]
        L += [f"A launch with ~0 work ({e['what']}): DLIO {fmt(e['dlio_wall_s'], 1, 2)} s, kernel "
              f"{fmt(e['kernel_wall_s'], 1, 2)} s ({fratio(e['ratio'], 1)}).", ""]
    return L


def _dlio_training(sec: dict) -> list[str]:
    """3. kernel vs DLIO: training launches, end to end, variants run on one side only"""
    L: list[str] = []
    L += ["Training launches (train epochs + evaluation where enabled); start-up = DLIO: launch to its first log "
          "line, kernel: launch wall minus in-program wall; per-sample overhead = (DLIO last epoch - kernel last "
          "epoch) / samples per rank; loader start-up = DLIO epoch 1 - last epoch:", ""]
    rows = []
    for n, x in sec["variants"].items():
        if "error" in x:
            rows.append([n, "failed: " + x["error"][:160].replace("|", "/").replace("\n", " ")] + ["-"] * 11)
            continue
        d, k = x.get("dlio", {}), x.get("kernel", {})
        r = x.get("ratio", {})
        rows.append([n, fmt(d.get("wall_s"), 1, 1), fmt(k.get("wall_s"), 1, 2), fratio(r.get("wall"), 1),
                     fmt(d.get("epochs_s"), 1, 2), fmt(k.get("epochs_s"), 1, 2), fratio(r.get("epochs"), 2),
                     fmt(d.get("eval_s"), 1, 2) + " / " + fmt(k.get("eval_s"), 1, 2),
                     fmt(d.get("startup_s"), 1, 1), fmt(k.get("startup_s"), 1, 2),
                     fmt(x.get("per_sample_overhead_s"), 1000, 1), fmt(x.get("dlio_loader_startup_s"), 1, 2),
                     "–".join(f"{v:.1f}" for v in x.get("load_1min", [])) or "-"])
    L += [table(["variant", "DLIO wall s", "kernel wall s", "wall DLIO/kernel", "DLIO epochs s",
                 "kernel epochs s", "epochs DLIO/kernel", "eval s DLIO / kernel", "DLIO start-up s",
                 "kernel start-up+teardown s", "per-sample overhead ms", "DLIO loader start-up s",
                 "load (1-min)"], rows), ""]
    e2e = [(n, x) for n, x in sec["variants"].items() if x.get("end_to_end_ratio")]
    if e2e:
        L += ["End to end (generation launch + training launch):", ""]
        L += [table(["variant", "DLIO s", "kernel s", "DLIO/kernel"],
                    [[n, fmt(x["end_to_end_wall_s"]["dlio"], 1, 1), fmt(x["end_to_end_wall_s"]["kernel"], 1, 2),
                      fratio(x["end_to_end_ratio"], 1)] for n, x in e2e]), ""]
    alone = [(n, x["kernel_side"]) for n, x in sec["variants"].items()
             if x.get("kernel_side", "run") != "run" and "error" not in x]
    for n, why in alone:  # rows measured before the kernel emulated DLIO's tf.data path say so in their own words
        L += [f"{n}: DLIO only, kernel side {why}", ""]
    return L


def _dlio(sec: dict) -> list[str]:
    """3. kernel vs DLIO"""
    return _dlio_generation(sec) + _dlio_training(sec)


def _generation(sec: dict) -> list[str]:
    """4. generation against fio and dd, peak RSS"""
    L: list[str] = []
    L += ["## 4. Generation", "",
          f"{sec['files']} files x {sec['samples_per_file']} x {sec['sample_bytes'] / MIB:.0f} MiB, 16 MiB "
          "writes; fio: one job per rank, same files, same bytes at the records' offset; dd: one file of the "
          "same total, 16 MiB blocks. 'page cache' = the program's own write time (no fsync, like h5py); "
          f"'to disk' = that + a `sync` right after. {_load(sec)}.", ""]
    rows = []
    for b in sec["bandwidth"]:
        for view, pre in (("to disk (+ sync)", "disk_"), ("page cache", "")):
            if f"kernel_{pre}bw_bytes_per_s" not in b:
                continue
            rows.append([str(b["ranks"]), view, fmt(b[f"kernel_{pre}bw_bytes_per_s"], 1 / MIB, 0),
                         fmt(b[f"fio_{pre}bw_bytes_per_s"], 1 / MIB, 0), fratio(b[f"{pre}ratio_vs_fio"], pct=True),
                         fmt(b[f"dd_{pre}bw_bytes_per_s"], 1 / MIB, 0), fratio(b[f"{pre}ratio_vs_dd"], pct=True)])
    L += [table(["ranks", "view", "kernel MiB/s", "fio MiB/s", "kernel/fio", "dd MiB/s", "kernel/dd"], rows), ""]
    rows = [[f"{r['buffer_bytes'] / MIB:.0f}", f"{r['sample_bytes'] / MIB:.1f}",
             f"{max(r['generate_maxrss_kb']) / 1024:.1f}", f"{max(r['train_maxrss_kb']) / 1024:.1f}",
             f"{r['baseline_kb'] / 1024:.1f}", f"{r['bound_kb'] / 1024:.1f}",
             "yes" if r["within_bound"] else "**no**"] for r in sec["rss"]]
    L += ["Peak RSS per rank (max over 2 ranks, /usr/bin/time):", "",
          table(["buffer MiB", "sample MiB", "generation MiB", "training MiB", "baseline MiB",
                 "bound = baseline + buffer + sample", "within"], rows), ""]
    return L


def _scaling(sec: dict) -> list[str]:
    """5. scaling with ranks and dataset size"""
    L: list[str] = []
    L += ["## 5. Scaling", "", f"{sec['files']} files x {sec['record_length'] / MIB:.0f} MiB, page cache warm, "
          "read-threads 0, no compute, batch 7 (a barrier after each step, as DLIO), second epoch; "
          f"**{sec['cpus']} cores**: 4 and 8 ranks are "
          f"oversubscribed. {_load(sec)}.", ""]
    base = sec["ranks"][0]["aggregate_bw_bytes_per_s"]["median"]
    rows = [[str(r["ranks"]), fmt(r["aggregate_bw_bytes_per_s"], 1 / MIB, 0),
             f"{r['aggregate_bw_bytes_per_s']['median'] / base:.2f}x" if base else "-",
             fmt(r["per_rank_raw_bw_bytes_per_s"], 1 / MIB, 0), fmt(r["observed_epoch_s"], 1, 3),
             fmt(r.get("fio_aggregate_bw_bytes_per_s"), 1 / MIB, 0), fratio(r.get("ratio_vs_fio"), pct=True)]
            for r in sec["ranks"]]
    L += [table(["ranks", "aggregate MiB/s", "vs 1 rank", "per rank in H5Dread MiB/s", "epoch s",
                 "fio, one job per rank, MiB/s", "kernel/fio"], rows), ""]
    rows = [[str(r["samples"]), f"{r['bytes'] / MIB:.0f}", fmt(r["launch_wall_s"], 1, 2),
             fmt(r["epochs_observed_s"], 1, 3)] for r in sec["size"]]
    L += [f"Runtime vs dataset size ({sec['size'][0]['ranks'] if sec['size'] else '?'} ranks, 2 epochs):", "",
          table(["samples", "MiB", "launch wall s", "epochs s"], rows), ""]
    return L


def _profilers(sec: dict) -> list[str]:
    """6. each profiler's overhead"""
    L: list[str] = []
    scales = sec.get("scales") or {sec.get("scale", "tiny"): sec["profiles"]}  # one scale before the strace profile
    L += ["## 6. Profiler overhead", "", f"unet3d at scale {', '.join(scales)}, {sec['ranks']} ranks, 4 read threads, "
          f"{sec['repeat']} interleaved repetitions; skipped: " + (", ".join(f"{k} ({v})" for k, v in
                                                                          sec["skipped"].items()) or "none") +
          f". {_load(sec)}.", ""]
    rows = []
    for sc, by_side in scales.items():
        for side, ps in by_side.items():
            for pr, x in ps.items():
                rows.append([sc, side, pr, fmt(x["wall_s"], 1, 2), fratio(x.get("ratio_wall"), 2),
                             fmt(x["epochs_s"], 1, 3), fratio(x.get("ratio_epochs"), 2)])
    L += [table(["scale", "side", "profile", "launch wall s", "vs timing", "epochs s", "vs timing"], rows), ""]
    return L


def _checkpoint(sec: dict) -> list[str]:
    """7. checkpoint writes against fio, peak RSS"""
    L: list[str] = []
    L += ["## 7. Checkpoints", "",
          f"DLIO 2.0.0's checkpoint of a {sec['model_bytes'] / MIB:.0f} MiB model file per rank (all_ranks, no "
          "layer file): the kernel's checkpoint span (first open to last rename) against fio writing the same "
          "bytes per file in one call of the model's size, one job per rank. 'page cache' = each program's own "
          f"time; 'to disk' = that + a `sync` right after. Goal: kernel/fio >= 95%. {_load(sec)}.", ""]
    rows = []
    for b in sec["bandwidth"]:
        for view, pre in (("to disk (+ sync)", "disk_"), ("page cache", "")):
            rows.append([str(b["ranks"]), view, fmt(b[f"kernel_{pre}bw_bytes_per_s"], 1 / MIB, 0),
                         fmt(b[f"fio_{pre}bw_bytes_per_s"], 1 / MIB, 0), fratio(b[f"{pre}ratio_vs_fio"], pct=True)])
    L += [table(["ranks", "view", "kernel MiB/s", "fio MiB/s", "kernel/fio"], rows), ""]
    r = sec["rss"]
    L += [f"Peak RSS per rank ({r['ranks']} ranks, max, /usr/bin/time): checkpointing off "
          f"{max(r['off_kb']) / 1024:.1f} MiB, on {max(r['on_kb']) / 1024:.1f} MiB (+{r['delta_kb']} KiB; "
          f"goal: + the {r['buffer_bytes']}-byte write buffer, 1 MiB allowed): "
          f"{'within' if r['within_bound'] else '**over**'}. The MLPerf Storage cycle: {sec['mlperf_cycle']}.", ""]
    return L


def _checkpoint_hdf5(sec: dict) -> list[str]:
    """7b. torch.save files against the kernel's HDF5 checkpoints"""
    L: list[str] = []
    m = sec["model"]
    L += ["## 7b. Checkpoints: torch.save files vs HDF5", "",
          f"DLIO 2.0.0-52's transformer checkpoints (checkpoint-only: {sec['checkpoints']} written, then read in "
          f"another launch; {m['num_layers']} layers, hidden {m['hidden_size']}, FFN {m['ffn_hidden_size']}, "
          f"vocabulary {m['vocab_size']}, {m['model_datatype']}/{m['optimizer_datatype']}, ZeRO 3) as "
          "torch.save files and as the kernel's HDF5 (checkpoint-format hdf5), the same tensors, the same node. "
          "Write: each program's checkpoint span ('to disk': + a `sync` right after); read cold: after `sync` "
          "and posix_fadvise(DONTNEED) of the checkpoint files; warm: the same read again. "
          f"{_load(sec)}.", ""]
    rows = [[str(c["ranks"]), c["format"], f"{c['bytes_per_checkpoint'] / MIB:.0f}",
             fmt(c["write_bw_bytes_per_s"], 1 / MIB, 0), fmt(c["write_disk_bw_bytes_per_s"], 1 / MIB, 0),
             fmt(c["read_cold_bw_bytes_per_s"], 1 / MIB, 0), fmt(c["read_warm_bw_bytes_per_s"], 1 / MIB, 0)]
            for c in sec["cases"]]
    L += [table(["ranks", "format", "MiB per checkpoint", "write MiB/s", "write to disk MiB/s",
                 "read cold MiB/s", "read warm MiB/s"], rows), ""]
    return L


def _mlperf(sec: dict) -> list[str]:
    """8. the MLPerf Storage checkpoint cycle"""
    L: list[str] = []
    L += ["## 8. The MLPerf Storage checkpoint cycle", "",
          f"`{sec['workload']}` ({sec['ranks']} ranks, {sec['bytes_per_checkpoint'] / MIB:.1f} MiB per "
          "checkpoint): "
          f"a launch writing {sec['checkpoints']} checkpoints, then one reading them back, DLIO {REVISION_NOTE} "
          "against the kernel (entry 2.0.0-52), interleaved. Gap bound = the read launch's wall time less its "
          f"loads as the program times them (start-up, sleeps, barriers, teardown); MLPerf's rule: <= "
          f"{sec['rule_s']:.0f} s between the phases. Page caches not dropped. {_load(sec)}.", ""]
    rows = [[side, fmt(x["write_wall_s"], 1, 2), fmt(x["read_wall_s"], 1, 2), fmt(x["cycle_wall_s"], 1, 2),
             fmt(x["save_s"], 1, 3), fmt(x["load_s"], 1, 3), fmt(x["gap_bound_s"], 1, 2),
             "yes" if sec["within_rule"][side] else "**no**"] for side, x in sec["sides"].items()]
    L += [table(["side", "write launch s", "read launch s", "cycle s", "saves s", "loads s", "gap bound s",
                 "within 30 s"], rows), "",
          f"DLIO/kernel, cycle wall: {fratio(sec['ratio_cycle'], 1)}." +
          (f" DLIO's measured gap (the write launch's exit to rank 0's first load): "
           f"{fmt(sec['dlio_gap_measured_s'], 1, 1)} s." if sec.get("dlio_gap_measured_s") else ""), ""]
    return L


def _vol_pass_through(pt: dict) -> list[str]:
    """9's pass-through row: native against HDF5's pass-through connector, per workload"""
    L = ["**The pass-through connector's overhead** (issue 28's goal: <= 2%): the project's kernel "
         f"(`{Path(pt['kernel']).name}`) on the same files, native against HDF5's built-in `pass_through` over native "
         f"(key `vol-connector`), {pt['repeat']} interleaved repetitions in alternating order, 1 rank, no compute, "
         "page cache warm (the files just written and read); time = the kernel's training time (observed_s, all "
         "epochs), I/O = its load wait, CPU = the launch's user + system time (mpirun and the rank: less stretched "
         "by the machine's load than the clock); ratio = pass-through / native: the median of the repetitions' pairs "
         "with their [min–max]; overhead from the time ratio. Each launch's stack is what its output.json says HDF5 "
         "ran "
         f"({pt['workloads'][0]['stacks']['native']!r}, {pt['workloads'][0]['stacks']['pass_through']!r}). "
         f"{_load(pt)}.", ""]
    rows = []
    for w in pt["workloads"]:
        sh = w["shape"]
        pr, io, cpu = w["ratio_epoch"]["paired"], w["ratio_io"]["paired"], (w.get("ratio_cpu") or {}).get("paired")
        rows.append([w["name"], f"{sh['num_files_train']} x {sh['record_length'] / 1024:g} KiB, batch "
                     f"{sh['batch_size']}, {sh['epochs']} epoch(s)", fmt(w["native"]["epoch_s"], 1000, 1),
                     fmt(w["pass_through"]["epoch_s"], 1000, 1), fmt(pr, 1, 4), fmt(io, 1, 4),
                     f"{fmt(w['native'].get('cpu_s'), 1, 2)} / {fmt(w['pass_through'].get('cpu_s'), 1, 2)}",
                     fmt(cpu, 1, 4),
                     f"{w['overhead_percent']:+.1f}%", "yes" if w["within_goal"] else "**no**",
                     "yes" if w["same_counts"] else "**no**"])
    L += [table(["workload", "shape", "native ms", "pass-through ms", "pass-through / native", "I/O ratio",
                 "CPU s native / pass-through", "CPU ratio", "overhead", "<= 2%", "same bytes, opens, reads"],
                rows), ""]
    return L


def _vol(sec: dict) -> list[str]:
    """9. the pass-through connector's overhead and the async VOL connector in the training loop"""
    if "pass_through" not in sec:
        return _vol_async(sec, ["## 9. The async VOL connector in the training loop", ""])
    L = ["## 9. HDF5 VOL connectors: the pass-through overhead, async in the training loop", ""]
    L += _vol_pass_through(sec["pass_through"])
    if sec["cases"]:
        return _vol_async(sec, L + ["**Async in the training loop.**", ""])
    why = sec.get("async_skipped") or "not run in this invocation (`--vol-parts`)"
    return L + [f"The async sweep: {why}.", ""]


def _vol_async(sec: dict, L: list[str]) -> list[str]:
    """9's async sweep: sync, implicit and explicit per ranks, cache and compute"""
    sh = sec["shape"]
    L = [*L,
         f"{sh['num_files_train']} files x {sh['num_samples_per_file']} samples of "
         f"{sh['record_length'] / MIB:g} MiB, batch {sh['batch_size']}, {sh['epochs']} epoch(s), "
         "read-threads 0, the kernel built against the thread-safe HDF5: sync (native), implicit (`async` under the "
         "kernel's synchronous calls), explicit (`vol-async-prefetch`: the next batch read with H5Dread_async behind "
         f"the step's compute), {sec['repeat']} interleaved repetition(s); cache warm (files just written) and cold "
         "(the dataset's pages dropped with posix_fadvise before each launch). From the kernel's timers, training: "
         "epoch = observed_s per epoch; I/O wait = load_wait_s (steps waiting for their batch); hidden = sync's "
         "I/O wait - explicit's. "
         f"{_load(sec)}.", ""]
    rows = []
    for c in sec["cases"]:
        for m in ("sync", "implicit", "explicit"):
            x = c[m]
            hid = (f"{c['hidden_io_s'] * 1000:.1f} ms ({c['hidden_io_percent']:.0f}%)"
                   if m == "explicit" and c.get("hidden_io_percent") is not None else "")
            rows.append([str(c["ranks"]), c["cache"], f"{c['compute_s']:g}", m, fmt(x["epoch_s"], 1000, 1),
                         fmt(x["au_percent"], 1, 1), fmt(x["io_wait_s"], 1000, 1), hid])
    head = ["ranks", "cache", "compute s/step", "mode", "epoch ms", "AU %", "I/O wait ms", "I/O hidden"]
    L += [table(head, rows), "",
          "Same bytes and opens in every launch: "
          f"{'yes' if all(c['same_counts'] for c in sec['cases']) else '**no**'}.", ""]
    return L


def _mlperf3(sec: dict) -> list[str]:
    """11. MLPerf Storage v3.0 on DLIO 3.x: a unet3d_b200 epoch, the llama3_8b_v3 checkpoint cycle, launch cost"""
    e, c = sec["epoch"], sec["cycle"]
    L = ["## 11. MLPerf Storage v3.0 on DLIO 3.x", "",
         f"DLIO {sec['revision']} against the kernel (entry {sec['entry']}), {sec['repeat']} interleaved "
         f"repetition(s), page caches not dropped. {_load(sec)}.", "",
         f"**A unet3d_b200 epoch** (`{e['workload']}`, {e['ranks']} ranks, {e['files']} npz files, "
         f"{e['bytes'] / MIB:.1f} MiB, batch {e['batch_size']}, {e['computation_time']} s compute per step, "
         f"{e['epochs']} epoch(s), reader.odirect {str(e['odirect']).lower()}): one dataset, read by each side and "
         f"by the plain limit ({e['plain']}, one process per rank, each file whole). Epoch = the program's own "
         "time (DLIO: rank 0's per_epoch_stats duration; kernel: observed_s); launch cost = wall less that; AU and "
         "throughput as MLPerf computes them (first step excluded). The steps' compute alone takes "
         f"{e['compute_floor_s']:.3f} s.", ""]
    rows = [[side, fmt(x["epoch_s"], 1, 3), fmt(x["wall_s"], 1, 2), fmt(x["launch_cost_s"], 1, 2),
             fmt(x["au_percent"], 1, 1), fmt(x["throughput_samples_per_s"], 1, 2)] for side, x in e["sides"].items()]
    rows.append([e["plain"], "-", fmt(e["plain_wall_s"], 1, 3), "-", "-",
                 fmt(e["plain_bw_bytes_per_s"], 1 / MIB, 0) + " MiB/s"])
    L += [table(["side", "epoch s", "launch wall s", "launch cost s", "MLPerf AU %", "MLPerf samples/s"], rows), "",
          f"DLIO/kernel: epoch {fratio(e['ratio_epoch'], 2)}, launch wall {fratio(e['ratio_wall'], 1)}.", "",
          f"**The checkpoint cycle** (`{c['workload']}`, {c['ranks']} ranks): a launch writing {c['checkpoints']} "
          f"checkpoints ({c['time_between_checkpoints']:g} s apart), then one reading them back. Gap bound = the read "
          "launch's wall less its loads as the program times them; MLPerf's rule: <= "
          f"{c['rule_s']:.0f} s between the phases.", ""]
    rows = [[side, fmt(x["write_wall_s"], 1, 2), fmt(x["read_wall_s"], 1, 2), fmt(x["save_s"], 1, 3),
             fmt(x["load_s"], 1, 3), fmt(x["gap_bound_s"], 1, 2), fmt(x["launch_cost_s"], 1, 2),
             "yes" if c["within_rule"][side] else "**no**"] for side, x in c["sides"].items()]
    L += [table(["side", "write launch s", "read launch s", "saves s", "loads s", "gap bound s",
                 "launch cost s", "within 30 s"], rows), "",
          f"DLIO/kernel: cycle wall {fratio(c['ratio_cycle'], 1)}, saves {fratio(c['ratio_save'], 2)}, loads "
          f"{fratio(c['ratio_load'], 2)}." +
          (f" DLIO's measured gap (the write launch's exit to rank 0's first load): "
           f"{fmt(c['dlio_gap_measured_s'], 1, 1)} s." if c.get("dlio_gap_measured_s") else ""), ""]
    lc = sec["launch_cost"]
    L += [f"**Launch cost** (wall less the program's own time): DLIO 3.x {fmt(lc['dlio_train_s'], 1, 1)} s per "
          f"training launch and {fmt(lc['dlio_checkpoint_s'], 1, 1)} s per checkpoint launch; the kernel "
          f"{fmt(lc['kernel_train_s'], 1, 2)} s and {fmt(lc['kernel_checkpoint_s'], 1, 2)} s.", ""]
    return L


# (section of results.json, the key it must hold to be shown, its writer), in the order of results.md
SECTIONS = (
    ("readpath", "modes", _readpath),
    ("overhead", "cases", _overhead),
    ("dlio", "variants", _dlio),
    ("generation", "bandwidth", _generation),
    ("scaling", "ranks", _scaling),
    ("profilers", "profiles", _profilers),
    ("checkpoint", "bandwidth", _checkpoint),
    ("checkpoint_hdf5", "cases", _checkpoint_hdf5),
    ("mlperf", "sides", _mlperf),
    ("vol", "cases", _vol),
    ("validation", "points", validation.markdown),
    ("mlperf3", "sides", _mlperf3),
    ("scale", "files", scale.markdown),
    ("density", "sides", density.markdown),
)


def _not_measured(s: dict) -> list[str]:
    """the sections that failed or were skipped, with why"""
    L: list[str] = []
    errs = {k: v["error"] for k, v in s.items() if isinstance(v, dict) and "error" in v}
    skipped = {k: v["skipped"] for k, v in s.items() if isinstance(v, dict) and isinstance(v.get("skipped"), str)}
    if errs or skipped:
        L += ["## Not measured", ""] + [f"- {k}: error: {v}" for k, v in errs.items()] + \
             [f"- {k}: skipped: {v}" for k, v in skipped.items()] + [""]
    return L


def _figures(figs: dict) -> list[str]:
    """the figures drawn (section -> PNG file name)"""
    L: list[str] = []
    if figs:
        L += ["## Figures", ""] + [f"![{k}]({f})" for k, f in figs.items()] + [""]
    return L


def markdown(res: dict, figs: dict) -> str:
    """results.json -> results.md: the header, each section results.json holds (in SECTIONS' order), what was not
    measured, the figures"""
    m, s = res["meta"], res["sections"]
    L = _header(m)
    for name, key, write in SECTIONS:
        sec = s.get(name)
        if sec and key in sec:
            L += write(sec)
    L += _not_measured(s) + _figures(figs)
    return "\n".join(L)
