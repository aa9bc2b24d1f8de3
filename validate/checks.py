"""validate's own checks (the launches, the datasets, the reference DLIO, the runtime) and the loop that runs them
with every profile's checks (profiles.registry(): each profile says what it compares) over a run directory. Each
check is a function of the run returning its rows {name, status, expected, observed, detail, required}; a table a
check derives (tables/files-<profile>.json) is handed to run.put_table and stored by one writer after the checks.
Names start with what they use: steps., vol., dataset., dlio., logvfd., counts., dftracer., darshan., nodes.,
similarity, runtime."""
from __future__ import annotations

import fnmatch
import json
from collections import Counter
from pathlib import Path
from typing import Any

from common.rundir import SIDES, TIMING, RunDir, verdict_label  # noqa: F401 (verdict_label: validate's API)
from profiles import FAIL, PASS, SKIP, Shape, checkpoint_dir, checkpoint_only, compute_asks, counted, registry, result
from validate import model


class Run(RunDir):
    """The run directory being validated, as checks see it (profiles.RunView): a RunDir (manifest, step, cfg, ranks,
    release, tables) and what is validate's own: the analytic model of the run, the tables the checks derive."""

    def __init__(self, path: Path):
        super().__init__(path)
        self.manifest = self.load()  # read now: a manifest validate cannot read is refused before any check runs
        self.derived: dict[str, Any] = {}  # tables the checks derived: stored by store_tables()

    def model_reads(self, cfg: dict) -> dict:
        """The analytic model's reads of cfg (rank -> phase segments) for this run's ranks and DLIO release."""
        return model.workload_reads(cfg, self.ranks, self.release, kernel_machine(self))

    def model_checkpoint_io(self) -> dict[str, dict]:
        """The analytic model's POSIX calls per checkpoint file of this run (DLIO 3.x's streamed checkpoints:
        model.checkpoint_io_v3, from DLIO's and mlpstorage's source); empty when the run does not checkpoint or its
        release writes torch.save containers (compared side against side, not against the model)."""
        if not (self.cfg.get("workflow") or {}).get("checkpoint") or self.release not in ("3.0.2", "3.0.2+mlpstorage"):
            return {}
        return model.checkpoint_io_v3(self.cfg, self.ranks, model.release(self.release)["ckpt_stream"])

    def put_table(self, name: str, obj: Any) -> None:
        self.derived[name] = obj

    def store_tables(self) -> None:
        for name, obj in self.derived.items():
            self.write_table(name, obj)


def kernel_machine(run: Run) -> dict | None:
    """The inputs MLCommons DLIO 3.x sizes its readers by (CPU count, ranks per node, DLIO_MAX_AUTO_THREADS) as the
    run's kernel recorded them (output.json read_threads_auto, the first kernel launch that has it; both sides ran
    on the same nodes with the same environment variable); None: no kernel launch recorded them (a 2.0.x entry, or
    a run from before the kernel sized its readers: read_threads as given)."""
    if not hasattr(run, "_machine"):
        run._machine = None
        for p in sorted((run.path / "kernel").glob("*/out/output.json")):
            try:
                auto = json.loads(p.read_text()).get("read_threads_auto")
            except (OSError, ValueError):
                continue
            if auto:
                run._machine = {k: auto.get(k) for k in ("cpu_count", "ranks_per_node", "cap")}
                break
    return run._machine


def check_steps(run: Run) -> list[dict]:
    """Each launch ended well and its output could be read (a profiler that wrote nothing fails here, by name)."""
    out = []
    unread = run.manifest.get("collect_errors") or {}
    for name, rec in sorted(run.manifest["steps"].items()):
        ok = rec.get("status") == "ok"
        if ok and name in unread:
            out.append(result(f"steps.{name}", FAIL, "readable output", None, f"ran, output unreadable: {unread[name]}"
                              [:500]))
            continue
        out.append(result(f"steps.{name}", PASS if ok else FAIL, 0, rec.get("rc"),
                          "" if ok else f"{rec.get('status')}: {rec.get('detail', '')}"[:500]))
    return out


def _rules_line(probed: dict, entry: dict | None, name: str) -> str:
    """Each probed rule next to the entry's: "sampler_shuffles true (2.0.0: true), ...", keys as "key <option>"."""
    def fmt(v):
        return json.dumps(v) if isinstance(v, bool) or v is None else str(v)
    rows = [(r, v, (entry or {}).get(r)) for r, v in probed.get("rules", {}).items()]
    rows += [(f"key {o}", v, ((entry or {}).get("keys") or {}).get(o)) for o, v in probed.get("keys", {}).items()]
    return ", ".join(f"{r} {fmt(v)}" + (f" ({name}: {fmt(e)})" if entry else "") for r, v, e in rows)


def check_dlio_version(run: Run) -> list[dict]:
    """Which DLIO was the reference and which kernel entry stood for it, chosen by behaviour: the probed rules next to
    the entry's. A DLIO whose behaviour matches no entry fails here with the differing rules (the harness refuses it
    before launching; a run made before the probe used the entry its version number gave)."""
    d = run.manifest.get("dlio")
    if not d:
        ver = run.manifest.get("versions", {}).get("dlio", "unknown")
        return [result("dlio.version", PASS, "2.0.0", ver, f"DLIO {ver} (manifest without a dlio block: PyPI "
                       "release assumed), kernel entry 2.0.0")]
    where = d.get("source", "?") + (f" @ {d['revision'][:12]}" if d.get("revision") not in (None, "pypi") else "")
    probed = d.get("probed")
    extra = {"probed": probed, "entry_rules": d.get("entry_rules")} if probed else {}
    if not d.get("entry"):
        return [result("dlio.version", FAIL, d.get("version"), None,
                       f"DLIO {d.get('version')} ({where}): the kernel has no entry for it: {d.get('warning', '')}")
                | extra]
    if d["entry"] not in model.RELEASES:
        return [result("dlio.version", FAIL, d.get("version"), d["entry"],
                       f"DLIO {d['version']} ({where}): kernel entry {d['entry']} has no counterpart in the analytic "
                       f"model (validate/model.py RELEASES: {', '.join(model.RELEASES)})") | extra]
    if probed:
        unseen = d.get("unverified") or []
        detail = (f"DLIO {d['version']} ({where}) behaves as kernel entry {d['entry']}: "
                  f"{_rules_line(probed, d.get('entry_rules'), d['entry'])}" +
                  (f"; not observed: {', '.join(unseen)}" if unseen else ""))
    elif d.get("nearest"):
        detail = f"nearest entry {d['entry']} used for {d['version']} ({where}); check the divergences below"
    else:
        detail = f"DLIO {d['version']} ({where}) validated with its own kernel entry (by version: run before the probe)"
    return [result("dlio.version", PASS, d.get("version"), d["entry"], detail) | {"nearest": bool(d.get("nearest"))}
            | extra]


def check_dataset(run: Run) -> list[dict]:
    d, k = run.table("dataset-dlio.json"), run.table("dataset-kernel.json")
    if checkpoint_only(run.cfg):
        return [result("dataset.files", SKIP, detail="a checkpoint-only workload (workflow.train false): no dataset")]
    if d is None or k is None:
        return [result("dataset.files", SKIP, detail="a generation step did not finish: no dataset tables")]
    out = []
    df, kf = sorted(d["files"]), sorted(k["files"])
    out.append(result("dataset.files", PASS if df == kf and df else FAIL, len(df), len(kf),
                      "" if df == kf else f"only DLIO: {sorted(set(df) - set(kf))[:5]}; only kernel: "
                                          f"{sorted(set(kf) - set(df))[:5]}") | {"compared": ["dataset"] * bool(df)})
    diffs = [f for f in df if f in k["files"] and d["files"][f] != k["files"][f]]
    detail = ""
    if diffs:
        f = diffs[0]
        detail = f"{f}: DLIO {d['files'][f]} kernel {k['files'][f]}"
    out.append(result("dataset.structure", PASS if not diffs else FAIL, 0, len(diffs),
                      detail or "dataset names, shapes, dtypes, layout, chunks, filters equal in every file"))
    cross = next(((p, s.step) for p in registry().values() for s in p.launches(_shape(run)) if s.data == "other"),
                 None)   # the first launch of a profile that reads the other side's dataset
    for name, side in (("dlio_reads_kernel", "dlio"), ("kernel_reads_dlio", "kernel")):
        who = f"{side}.{cross[1]}" if cross else None
        rec = run.step(who) if who else None
        if rec is None:
            out.append(result(f"dataset.{name}", SKIP, detail=f"no {who} step ({cross[0].name} profile not run)"
                              if cross else "no profile here reads the other side's dataset"))
        else:
            ok = rec.get("status") == "ok"
            out.append(result(f"dataset.{name}", PASS if ok else FAIL, 0, rec.get("rc"),
                              f"{who} read the other side's dataset" if ok else rec.get("detail", "")[:500]))
    return out


def check_checkpoints(run: Run) -> list[dict]:
    """counts.checkpoints: every training launch's checkpoint folder holds exactly the files the analytic model
    predicts from the workload (names and bytes), on both sides."""
    want = model.checkpoint_files(run.cfg, run.ranks, run.release) if (run.cfg.get("workflow") or {}).get(
        "checkpoint") else {}
    if not want:
        return [result("counts.checkpoints", SKIP, detail="checkpointing is off in this workload")]
    bad, seen = [], 0
    for name, rec in sorted(run.manifest["steps"].items()):
        side, step = name.split(".", 1)
        if step == "generate" or rec.get("status") != "ok":
            continue
        folder = checkpoint_dir(run.path / side / step)
        # names relative to the folder: 2.0.0-52 writes into global_epoch<e>_step<s>/ (base_checkpointing.py:389-390)
        got = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()} \
            if folder.is_dir() else {}
        seen += 1
        if got != want:
            missing = sorted(set(want) - set(got))[:3]
            extra = sorted(set(got) - set(want))[:3]
            size = sorted(n for n in set(want) & set(got) if want[n] != got[n])[:3]
            sizes = [(n, got[n], want[n]) for n in size]
            bad.append(f"{name}: missing {missing}, unexpected {extra}, other size (name, got, model) {sizes}")
    return [result("counts.checkpoints", PASS if seen and not bad else FAIL, len(want), None if bad else len(want),
                   f"{seen} launches each wrote the model's {len(want)} checkpoint files "
                   f"({sum(want.values())} bytes)" if seen and not bad else "; ".join(bad)[:800] or "no launch")
            | {"compared": ["model_checkpoints"] * bool(seen)}]


def _partition(hosts: list) -> list[int]:
    """Each rank's node as an index in the order the nodes first appear: the placement, whatever the nodes' names."""
    seen: dict = {}
    return [seen.setdefault(h, len(seen)) for h in hosts]


def _placement_row(d: dict, k: dict) -> dict:
    dp, kp = _partition(d["rank_host"]), _partition(k["rank_host"])
    shown = f"DLIO {d['rank_host']}, kernel {k['rank_host']}"
    if dp != kp or d.get("num_hosts") != k["num_hosts"]:
        bad = next((r for r, (a, b) in enumerate(zip(dp, kp, strict=False)) if a != b), min(len(dp), len(kp)))
        return result("nodes.placement", FAIL, dp, kp, f"the ranks ran on other nodes: from rank {bad} ({shown}; "
                      f"num_hosts DLIO {d.get('num_hosts')}, kernel {k['num_hosts']})")
    return result("nodes.placement", PASS, dp, kp, f"{k['num_hosts']} node(s), the same ranks on each ({shown})")


def _local_rank_0_row(d: dict, k: dict) -> dict:
    dm, km = d.get("host_memory_GiB"), k["host_memory_GiB"]
    if dm is None:
        return result("nodes.local_rank_0", SKIP, detail="DLIO's summary.json has no host_memory_GB")
    if len(dm) != len(km) or any(abs(a - b) > 1e-3 * max(abs(a), 1.0) for a, b in zip(dm, km, strict=True)):
        return result("nodes.local_rank_0", FAIL, dm, km, "what each node's local rank 0 reported (its MemTotal, "
                      f"GiB) differs: DLIO {dm}, kernel {km}")
    return result("nodes.local_rank_0", PASS, dm, km, f"one entry per node from its local rank 0, equal ({km} GiB)")


def check_nodes(run: Run) -> list[dict]:
    """The timing launch of each side ran the same ranks on the same nodes (compared as a partition: two launches
    may get other nodes of a cluster), and what DLIO's summary lists per node, from each node's local rank 0
    (host_memory_GB), the kernel lists the same (output.json "nodes"). DLIO 2.0.0 does nothing else per node: no
    I/O by local rank 0, no node-local path (3.x's drop_caches is by global rank 0, main.py:742)."""
    t = run.table(TIMING) or {}
    d = next((r.get("nodes") for r in t.get("dlio", []) if r.get("nodes")), None)
    k = next((r.get("nodes") for r in t.get("kernel", []) if r.get("nodes")), None)
    if not d or not k:
        why = "no timing launch of a side" if not t.get("dlio") or not t.get("kernel") else \
            f"no per-rank hostnames from {'DLIO (<rank>_output.json)' if not d else 'the kernel (output.json nodes)'}"
        return [result("nodes.placement", SKIP, detail=why), result("nodes.local_rank_0", SKIP, detail=why)]
    return [_placement_row(d, k), _local_rank_0_row(d, k)]


def _vol_launch(step: str, got: dict | None, want: list) -> str:
    """Why one kernel launch's reported VOL stack is not the one it was given ("" when it is): the run's stack where
    the launch was given the connector key, native where not (generation; reader processes under async-prefetch)."""
    if not got or not got.get("stack"):
        return f"{step}: its output.json names no VOL stack"
    asked = got.get("asked") or {}
    prefetch_asked = bool(asked.get("prefetch"))
    exp = ["native"] if asked.get("connector", "native") == "native" else want
    if got["stack"] != exp:
        return f"{step}: HDF5 reported {' > '.join(got['stack'])}, asked {' > '.join(exp)}"
    pf = got.get("async_prefetch")
    if prefetch_asked and not (pf and pf.get("mode") == "explicit" and pf.get("train_batches")):
        return f"{step}: explicit async reads asked (vol-async-prefetch), none reported ({pf})"
    if not prefetch_asked and pf:
        return f"{step}: explicit async reads reported ({pf}), not asked"
    return ""


def check_vol(run: Run) -> list[dict]:
    """vol.kernel: the VOL connector stack each kernel launch's output.json says HDF5 used (the kernel asks HDF5,
    bench/src/vol.c), against the stack the run asked for (VOL=, manifest vol.expected_stack) where the launch was
    given the connector key, native where not (generation; reader processes under async-prefetch), at least one
    launch given it, and explicit async reads (async_prefetch) in exactly the launches asked to make them. DLIO's side
    is h5py on HDF5's native connector: not asked, not judged."""
    v = run.manifest.get("vol")
    if not isinstance(v, dict) or v.get("kernel_launches") is None:
        return [result("vol.kernel", SKIP, detail="a run from before the harness recorded the kernel's VOL stack")]
    want = v.get("expected_stack") or ["native"]
    launches = v["kernel_launches"]
    bad = [why for step, got in sorted(launches.items()) if (why := _vol_launch(step, got, want))]
    if want != ["native"] and not any(((g or {}).get("asked") or {}).get("connector", "native") != "native"
                                      for g in launches.values()):
        bad.append(f"VOL={v.get('requested')}: no kernel launch was given the connector")
    seen = sorted({" > ".join(g["stack"]) for g in launches.values() if g and g.get("stack")})
    explicit = sorted(s for s, g in launches.items() if g and g.get("async_prefetch"))
    given = ", ".join(s for s, g in sorted(launches.items()) if g and g.get("stack") != ["native"]) or "none"
    detail = "; ".join(bad)[:800] if bad else (
        f"VOL={v.get('requested')}: {len(launches)} kernel launches, each on the stack it was given, as HDF5 reported "
        f"it ({' > '.join(want)}: {given})" + (f"; explicit async reads in {', '.join(explicit)}" if explicit else "")
        + f"; DLIO: {v.get('dlio', 'native')}")
    return [result("vol.kernel", FAIL if bad or not launches else PASS, " > ".join(want), seen, detail)]


def _stats(xs: list[float]) -> dict:
    n = len(xs)
    m = sum(xs) / n
    return {"n": n, "min": min(xs), "max": max(xs), "mean": m, "stdev": (sum((x - m) ** 2 for x in xs) / n) ** 0.5}


def check_runtime(run: Run) -> list[dict]:
    """Reported, not judged: wall time per phase and side (min/max/mean/stdev over repetitions) and the ratio."""
    out = []
    d, k = run.step("dlio.generate"), run.step("kernel.generate")
    if d and k and d.get("status") == "ok" and k.get("status") == "ok" and k["wall_s"] > 0:
        out.append(result("runtime.generate", PASS, round(d["wall_s"], 3), round(k["wall_s"], 3),
                          f"launch wall time DLIO {d['wall_s']:.2f} s, kernel {k['wall_s']:.2f} s, DLIO/kernel "
                          f"{d['wall_s'] / k['wall_s']:.2f}x (reported, not judged)", required=False))
    else:
        out.append(result("runtime.generate", SKIP, required=False,
                          detail="no dataset (checkpoint-only workload)" if checkpoint_only(run.cfg) else
                          "a generation launch did not finish"))
    t = run.table(TIMING)
    if not t or not t.get("dlio") or not t.get("kernel"):
        out.append(result("runtime.train", SKIP, detail=f"no tables/{TIMING} of both sides (its profile not run, or a "
                          "side failed)", required=False))
        return out
    for key, label, what in (("wall_s", "runtime.train", "launch wall time"),
                             ("train_s", "runtime.train_in_program", "training epochs as each program times them")):
        if key == "train_s" and checkpoint_only(run.cfg):
            out.append(result(label, SKIP, detail="no training epoch (checkpoint-only workload)", required=False))
            continue
        ds = _stats([r["wall_s"] if key == "wall_s" else sum(r["train_epoch_s"]) for r in t["dlio"]])
        ks = _stats([r["wall_s"] if key == "wall_s" else sum(r["train_epoch_s"]) for r in t["kernel"]])
        ratio = ds["mean"] / ks["mean"] if ks["mean"] > 0 else float("nan")
        out.append(result(label, PASS, ds, ks, f"{what}: DLIO {ds['mean']:.2f} s (sd {ds['stdev']:.2f}), kernel "
                          f"{ks['mean']:.2f} s (sd {ks['stdev']:.2f}), DLIO/kernel {ratio:.2f}x over {ds['n']} run(s) "
                          "(reported, not judged)", required=False))
    return out


def checks() -> list:
    """Every check in verdict order: validate's own about the run, each profile's (in the profiles' order), then the
    runtime report."""
    return [check_dlio_version, check_run_status, check_steps, check_vol, check_dataset, check_checkpoints,
            check_nodes,
            *(fn for p in registry().values() for fn in p.checks), check_runtime]


def run_checks(run: Run, fns: list) -> list[dict]:
    """The rows of fns over run; the tables they derived are stored (atomically) in run's tables/."""
    rows = []
    for fn in fns:
        try:
            rows += fn(run)
        except model.UnknownRelease as e:  # a check that needs the model, for an entry the model does not know
            rows.append(result(f"{fn.__name__.removeprefix('check_')}.model", FAIL, run.release, None, str(e)))
    run.store_tables()
    return rows


def _reads_data(run: Run) -> bool:
    return not checkpoint_only(run.cfg)


def _computes(run: Run) -> bool:
    """a workload whose steps ask for computation (computation_time or eval_time): else there is nothing to compare"""
    return _reads_data(run) and bool(compute_asks(run.cfg))


def _checkpoints(run: Run) -> bool:
    return bool((run.cfg.get("workflow") or {}).get("checkpoint"))


def _always(run: Run) -> bool:
    return True


# The classes of I/O a run may differ in: key, a short label (the printed `not compared:` lines), what it is (verdict
# and report), whether it applies to the run. What would compare a class (the verdict's "needs") is said by the
# profiles whose checks compare it (Profile.covers, joined in their order) and by validate's own checks (OWN_NEEDS). A
# row of verdict.json that compared at least one item of a class lists the class in its "compared" (declared by the
# check: `result(...) | {"compared": [...]}`; the profiles' claims for rows that do not declare it); a class no PASS
# row compared is in the verdict's not_compared.
CLASSES = [
    ("dataset", "the generated datasets", "the generated datasets: file names and each file's structure", _reads_data),
    ("data_reads", "data-file reads", "data-file reads: per file or rank, opens, reads and bytes (a multiset at least)",
     _reads_data),
    ("read_order", "each rank's reads in order", "each rank's data reads in order (per open, HDF5 blocks in sequence: "
     "a multiset comparison does not count)", _reads_data),
    ("open_order", "each rank's opens by file name, in order", "each rank's data-file opens by name, in order "
     "(equal-size files make HDF5 blocks alike)", _reads_data),
    ("readers", "the reader processes and threads", "how many processes and threads read, and which read each batch",
     _reads_data),
    ("posix_data", "POSIX I/O on the data files", "POSIX I/O on the data files outside the HDF5 reads (extra opens, "
     "plain reads, accesses)", _reads_data),
    ("traced_other", "other calls in the traced folders", "every other call and file in the data and checkpoint "
     "folders, classified", _always),
    ("other_files", "files outside the traced folders", "every file outside the data and checkpoint folders a side "
     "touched (DFTracer traces only those folders: DFTRACER_DATA_DIR)", _always),
    ("checkpoint_writes", "checkpoint I/O side by side", "checkpoint files written and read: bytes, write calls, "
     "fsyncs, stray files, side by side", _checkpoints),
    ("model_reads", "data reads against the model", "each side's data reads per rank against the analytic model",
     _reads_data),
    ("model_checkpoints", "checkpoint files against the model", "the checkpoint files (names, bytes) against the "
     "analytic model", _checkpoints),
    ("open_flags", "open flags", "open flags (O_DIRECT, access mode)", _always),
    ("readv", "readv", "readv and preadv calls (DFTracer 2.2.0 records none)", _reads_data),
    ("sync_kernel", "fsync/fadvise at the kernel", "fsync, fdatasync and posix_fadvise as they reach the kernel (a "
     "preloaded library can drop what DFTracer counts at libc)", _always),
    ("stat", "the stat family", "the stat family (stat, fstat, lstat, statx, newfstatat) on data and checkpoint "
     "files once a rank opened its first data file", _always),
    ("stat_discovery", "dataset discovery", "dataset discovery per rank: its listings of the data folders and its "
     "stats of data files before its first data-file open (DLIO lists each folder and probes the first entry; the "
     "kernel does the same, bench/src/discover.c): strace.discovery", _reads_data),
    ("generation", "generation I/O", "the generate launches' I/O calls per data file side by side: metadata "
     "operations (renames, unlinks, links, truncates, failed calls), open flags, bytes and fsyncs; an HDF5 file's "
     "writes (offset, size) and stats (strace.generate)", _reads_data),
    ("compute", "compute emulation", "the emulated computation per step: DFTracer's compute regions side by side "
     "(runtime.* is reported, not judged)", _computes),
    ("metrics", "AU and throughput as DLIO computes them", "each side's reported AU, throughput and MB/s recomputed "
     "with DLIO's formula from its own per-step times (the two sides' AU are reported side by side, not compared: "
     "metrics.au)", _reads_data),
]
OWN_NEEDS = {"dataset": "the generation launches (dataset tables)",
             "model_checkpoints": "a training launch that checkpoints"}


def _joined(hows: list[str]) -> str:
    return hows[0] if len(hows) == 1 else ", ".join(hows[:-1]) + " or " + hows[-1]


def coverage() -> dict[str, tuple[str, str, str, Any]]:
    """Every class: key -> (label, what, needs, applies); needs: validate's own checks, then each profile that
    declares the class (Profile.covers), in the profiles' order; a class no check here compares says so."""
    profs = registry().values()
    for p in profs:
        unknown = set(p.covers) - {c[0] for c in CLASSES}
        if unknown:
            raise KeyError(f"profile {p.name}: covers {sorted(unknown)}, not classes of validate/checks.py CLASSES")
    return {key: (label, what, _joined([h for h in (OWN_NEEDS.get(key),) if h] +
                                       [p.covers[key] for p in profs if key in p.covers])
                  if key in OWN_NEEDS or any(key in p.covers for p in profs) else "a profile that compares it (none "
                  "known here)", applies) for key, label, what, applies in CLASSES}


MODEL_CLASSES = ("model_reads", "model_checkpoints")  # the classes a kernel-only run compares (the model's)


# What validate's own rows compared, for rows that do not declare it themselves (their name, an fnmatch pattern, ->
# a function of the run and the row giving its classes, empty when the row compared nothing); the profiles' rows:
# their Profile.claims.
OWN_CLAIMS = (("counts.dlio.*", counted("model_reads")), ("counts.kernel.*", counted("model_reads")))


def claims() -> tuple:
    return OWN_CLAIMS + tuple(c for p in registry().values() for c in p.claims)


def declare_compared(run: Run, rows: list[dict]) -> None:
    """Each row that ran (not a SKIP) and does not say what it compared gets its "compared" from CLAIMS; a class its
    row names that CLASSES does not know is a bug of that check (KeyError, naming it)."""
    known, patterns = coverage(), claims()
    for c in rows:
        if c["status"] == SKIP:
            c.pop("compared", None)
            continue
        if "compared" not in c:
            fn = next((f for pat, f in patterns if fnmatch.fnmatchcase(c["name"], pat)), None)
            got = tuple(fn(run, c)) if fn else ()
            if got:
                c["compared"] = sorted(got)
        unknown = set(c.get("compared", ())) - set(known)
        if unknown:
            raise KeyError(f"check {c['name']}: compared classes {sorted(unknown)} are not in validate/checks.py "
                           "CLASSES")


def covered(rows: list[dict]) -> set[str]:
    """The classes the required rows that passed compared."""
    return {k for c in rows if c["status"] == PASS and c.get("required", True) for k in c.get("compared", ())}


# A kernel-only run (SIDES=kernel, manifest "sides": ["kernel"]) keeps only the checks that judge the kernel against
# the analytic model or itself (validate's own: these prefixes; the profiles': their Profile.kernel_only, e.g. a
# tracer's opens of the kernel per data file, or the kernel's AU against DLIO's formula); every other row, side by
# side by nature, becomes a SKIP.
KERNEL_ONLY = ("dlio.version", "run.status", "steps.", "vol.", "counts.kernel.", "counts.checkpoints",
               "counts.checkpoint_io.kernel")
KERNEL_ONLY_SKIP = "kernel-only run: no DLIO side"
NO_DLIO = {"io": "dlio", "label": "DLIO's I/O (kernel-only run)",
           "what": "DLIO's I/O (kernel-only run: checked against the analytic model only)",
           "needs": "a side-by-side run (SIDES=both, the default)"}


def kernel_only(run: Run) -> bool:
    return list(run.manifest.get("sides", SIDES)) == ["kernel"]


def restrict_kernel_only(rows: list[dict]) -> list[dict]:
    """A kernel-only run's rows: the kernel-against-model ones as they are, every other one a SKIP saying why (a
    runtime row stays informational)."""
    keep = KERNEL_ONLY + tuple(x for p in registry().values() for x in p.kernel_only)
    return [c if c["name"].startswith(keep) else
            result(c["name"], SKIP, detail=KERNEL_ONLY_SKIP, required=c.get("required", True)) for c in rows]


def not_compared(run: Run, rows: list[dict]) -> list[dict]:
    """Every class of I/O (coverage()) that applies to this run and that no required row that passed compared: what,
    and what would compare it; a kernel-only run names DLIO's I/O first."""
    done, alone = covered(rows), kernel_only(run)
    failed: dict[str, list[str]] = {}
    for c in rows:
        if c["status"] == FAIL and c.get("required", True):
            for k in c.get("compared", ()):
                failed.setdefault(k, []).append(c["name"])

    def why(key: str, needs: str) -> str:
        if key in failed:   # compared, and found different: what it needs is that check passing
            names = failed[key]
            return f"{', '.join(names[:2])}{f' and {len(names) - 2} more' if len(names) > 2 else ''} to pass: " \
                "compared, and FAILed"
        return NO_DLIO["needs"] if alone and key not in MODEL_CLASSES else needs
    return [NO_DLIO] * alone + [
        {"io": key, "label": label, "what": what, "needs": why(key, needs)}
        for key, (label, what, needs, applies) in coverage().items() if applies(run) and key not in done]


def _shape(run: Run) -> Shape:
    """The run's shape as the harness planned it (the workload, the repetitions, the rules the probe saw)."""
    rules = ((run.manifest.get("dlio") or {}).get("probed") or {}).get("rules") or {}
    return Shape(run.cfg, int(run.manifest.get("repeat", 1)), rules, run.ranks)


def planned_launches(run: Run) -> list[str]:
    """The launches the harness plans for this run (harness/run.py plan: generation when the workload reads data, then
    each of the manifest's profiles' launches, on each of its sides but a side the profile was skipped on), as step
    names; a profile this validation does not know plans none here."""
    m, reg, shape = run.manifest, registry(), _shape(run)
    specs = [(None, "generate")] * shape.reads_data + [(p, s.step) for p in m.get("profiles") or [] if p in reg
                                                       for s in reg[p].launches(shape)]
    skipped = m.get("skipped_profiles") or {}
    return [f"{side}.{step}" for prof, step in specs for side in m.get("sides", SIDES)
            if prof is None or f"{prof}.{side}" not in skipped]


def check_run_status(run: Run) -> list[dict]:
    """run.status: the harness finished the run (manifest status "complete") with every launch it planned ok (no
    failed_steps, no step whose status is not ok, no planned launch missing from the manifest). A run interrupted or
    with a failed launch is never a PASS: the checks of a launch that did not run are SKIPs, not evidence."""
    m = run.manifest
    status = m.get("status")
    failed = list(dict.fromkeys([*(m.get("failed_steps") or []),
                                 *(n for n, r in sorted(m["steps"].items()) if r.get("status") != "ok"),
                                 *(n for n in planned_launches(run) if n not in m["steps"])]))
    why = [f"run {status or 'with no recorded status'}, not complete"] * (status != "complete")
    if failed:
        why.append(f"launches failed or never ran: {', '.join(failed[:4])}" +
                   (f" (+{len(failed) - 4} more)" if len(failed) > 4 else ""))
    if not why:
        return [result("run.status", PASS, "complete", status,
                       f"the harness finished the run: {len(m['steps'])} launches, each ok")]
    return [result("run.status", FAIL, "complete", status, "; ".join(why) + " (the checks of a launch that did not "
                   "run are SKIPs, not evidence: resume with python -m harness run --resume RUN_DIR)")
            | {"reason": "; ".join(why)}]


def check_kernel_model(run: Run, rows: list[dict]) -> list[dict]:
    """coverage.kernel_model: a kernel-only run is judged against the analytic model alone, so its PASS needs the
    model's classes that apply (the data reads of a training workload, the checkpoint files of a checkpointing one)
    compared by a required row (that passed, or failed: then the verdict fails on that row) and compared at least one
    item. Side-by-side runs: no row."""
    if not kernel_only(run):
        return []
    cov = coverage()
    need = [k for k in MODEL_CLASSES if cov[k][3](run)]
    # a row that compared and FAILed is a comparison too: the verdict fails on it, and this row would only repeat it
    compared = {k for c in rows if c["status"] != SKIP and c.get("required", True) for k in c.get("compared", ())}
    missing = [k for k in need if k not in compared]
    labels = " and ".join(cov[k][0] for k in missing)
    if not missing:
        return [result("coverage.kernel_model", PASS, need, need, "the kernel was compared with the analytic model: "
                       + ", ".join(cov[k][0] for k in need))]
    reason = f"kernel-only: no check compared {labels}"
    return [result("coverage.kernel_model", FAIL, need, [k for k in need if k not in missing],
                   f"{reason} (profiles run: {', '.join(run.manifest.get('profiles') or []) or 'none'}; needs "
                   f"{cov[missing[0]][2]})") | {"reason": reason}]


def mutants(run: Run) -> list[str]:
    """The kernel mutants (H5DLIO_MUTATE, bench/src/mutate.c) the run's kernel launches ran with: as each launch's
    out/output.json names it ("mutant", first in its header) and the harness copies it (manifest vol block)."""
    names = {str(g["mutant"]) for g in ((run.manifest.get("vol") or {}).get("kernel_launches") or {}).values()
             if isinstance(g, dict) and g.get("mutant")}
    for p in sorted((run.path / "kernel").glob("*/out/output.json")):
        try:
            o = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(o, dict) and o.get("mutant"):
            names.add(str(o["mutant"]))
    return sorted(names)


def validate(path: Path) -> dict:
    """The verdict of a run directory: PASS when every required row passes (at least one), the run is complete
    (run.status) and a kernel-only run compared the model's classes (coverage.kernel_model); "reasons" names why a
    FAIL is not only a failed comparison; "mutant" names a kernel mutant the run was made with (never a plain
    PASS: verdict_label); not_compared every class of I/O no passing row compared."""
    run = Run(path)
    checks_ = run_checks(run, checks())
    if kernel_only(run):
        checks_ = restrict_kernel_only(checks_)
    declare_compared(run, checks_)
    checks_ += check_kernel_model(run, checks_)
    req = [c for c in checks_ if c["required"]]
    failed = [c["name"] for c in req if c["status"] == FAIL]
    verdict = "pass" if not failed and any(c["status"] == PASS for c in req) else "fail"
    return {"run": run.manifest["run_id"], "workload": run.manifest["workload"]["name"],
            "scale": run.manifest["workload"]["scale"], "ranks": run.ranks, "verdict": verdict,
            "sides": list(run.manifest.get("sides", SIDES)), "scope": "kernel-model" if kernel_only(run) else "sides",
            "mutant": ", ".join(mutants(run)) or None,
            "reasons": [c["reason"] for c in req if c["status"] == FAIL and c.get("reason")],
            "failed": failed, "summary": dict(Counter(c["status"] for c in checks_)),
            "not_compared": not_compared(run, checks_), "checks": checks_}
