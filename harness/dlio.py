"""Which DLIO a reference venv holds and which kernel entry stands for it, chosen by behaviour, not by number: the probe
(harness/probe.py, run with the venv's Python) observes what the installed DLIO does, and the entry whose rules all
match is used (`h5dlio --dlio-entries` lists the entries; the kernel keeps that knowledge in one place). A DLIO whose
behaviour matches no entry is refused before anything is launched (UnrecognisedDLIO, exit 2), the differing rules
named. Workload keys are renamed to the ones the probe saw DLIO honour.

A venv made by scripts/deps-dlio.sh holds .h5dlio-dlio.json (version, git revision, source): shown in the verdict,
never used to choose. DLIO's own version says little: its setup.py still says 2.0.0 at the v2.0.1 tag and on main, and
the mlperf_storage_v2.0 branch (v2.0.0-52) behaves partly as 2.0.0 and partly as 2.0.1."""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import subprocess
from pathlib import Path

from common.mapping import dotted_get
from harness.paths import KERNEL_BIN, PROBE
from harness.workload import WorkloadError


class UnrecognisedDLIO(WorkloadError):
    """The installed DLIO behaves as no kernel entry does (exit status 2, before any launch)."""


def _kernel() -> Path:
    return KERNEL_BIN


@functools.lru_cache(maxsize=32)
def _entries(kernel_bin: str, version: str | None) -> dict:
    argv = [kernel_bin, "--dlio-entries"] + (["--set", f"dlio-version={version}"] if version is not None else [])
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise ValueError(p.stderr.strip()[-300:] or f"{kernel_bin} --dlio-entries: exit {p.returncode}")
    return json.loads(p.stdout)


def entries(version: str | None = None, kernel_bin: Path | None = None) -> dict:
    """The kernel's DLIO release knowledge, the one place it is kept (`h5dlio --dlio-entries`): its entries, the
    workload keys only some releases read, and with a version the entry it selects ("selected": entry, nearest,
    warning, and for each option the key name that entry reads). ValueError with the kernel's message when it
    refuses the version."""
    return copy.deepcopy(_entries(str(kernel_bin or _kernel()), version))


def info(venv: Path) -> dict:
    """{version, revision, describe, source, lock, dirty} of the DLIO installed in venv."""
    meta = Path(venv) / ".h5dlio-dlio.json"
    if meta.exists():
        return json.loads(meta.read_text())
    # a venv from before .h5dlio-dlio.json: a PyPI install, its version from the package metadata
    p = subprocess.run([str(Path(venv) / "bin" / "python"), "-c",
                        "import importlib.metadata as m; print(m.version('dlio-benchmark'))"],
                       capture_output=True, text=True)
    ver = p.stdout.strip() if p.returncode == 0 else "2.0.0"
    return {"version": ver, "revision": "pypi", "describe": f"dlio-benchmark=={ver}", "source": "pypi",
            "lock": f"dlio-{ver}.lock.txt", "dirty": False}


def translate(cfg: dict, reads: str | dict, kernel_bin: Path | None = None) -> tuple[dict, list[str]]:
    """A workload written with DLIO 2.0.0's key names (reference-configs/ overlays), renamed to the names DLIO
    reads: `reads` is {option: yaml key DLIO honours, or None} (the probe's "keys", see probed_keys) or a kernel
    entry's name (that entry's key names). Returns the new dict and what was renamed."""
    return _translate(cfg, reads, entries(reads if isinstance(reads, str) else None, kernel_bin))


def _translate(cfg: dict, reads: str | dict, known: dict) -> tuple[dict, list[str]]:
    chosen = known["selected"]["keys"] if isinstance(reads, str) else reads
    names: dict[str, list[str]] = {}
    for k in known["versioned_keys"]:
        names.setdefault(k["option"], []).append(k["yaml"])
    out = copy.deepcopy(cfg)
    done = []
    for opt, read in chosen.items():
        for src in names.get(opt, []) if read else []:  # a key DLIO does not read stays (DLIO and the kernel ignore it)
            sec, key = src.rsplit(".", 1)
            node = dotted_get(out, sec)
            if src == read or not isinstance(node, dict) or key not in node:
                continue
            dsec, dkey = read.rsplit(".", 1)
            dst = out
            for part in dsec.split("."):
                dst = dst.setdefault(part, {})
            dst[dkey] = node.pop(key)
            done.append(f"{src} -> {read}")
    return out, done


class KeyTable:
    """What the installed DLIO reads, for harness.workload.load: the kernel's entries are asked here, once, when the
    caller makes the table (`h5dlio --dlio-entries`); unread and translate then only look at it."""

    def __init__(self, reads: str | dict, kernel_bin: Path | None = None):
        self.reads = reads
        self.known = entries(reads if isinstance(reads, str) else None, kernel_bin)

    def unread(self, cfg: dict) -> list[str]:
        return _unread(cfg, self.reads, self.known)

    def translate(self, cfg: dict) -> dict:
        return _translate(cfg, self.reads, self.known)[0]


def key_table(reads: str | dict | None, kernel_bin: Path | None = None) -> KeyTable | None:
    """The table for `reads` (the probe's {option: yaml key or None}, or an entry's name); None for none."""
    return KeyTable(reads, kernel_bin) if reads else None


def unread_keys(cfg: dict, reads: str | dict, kernel_bin: Path | None = None) -> list[str]:
    """The keys of cfg that some DLIO release reads (a kernel entry's key names) but this one does not (`reads` as in
    translate: the probe's {option: yaml key or None}, or an entry's name); e.g. 2.0.0-52's model.transformer.* and
    checkpoint.num_checkpoints_* against DLIO 2.0.0, which would run something else without a word."""
    return _unread(cfg, reads, entries(reads if isinstance(reads, str) else None, kernel_bin))


def _unread(cfg: dict, reads: str | dict, known: dict) -> list[str]:
    chosen = known["selected"]["keys"] if isinstance(reads, str) else reads
    out = []
    for k in known["versioned_keys"]:
        if chosen.get(k["option"], "") is None and k["yaml"] and dotted_get(cfg, k["yaml"], None) is not None:
            out.append(k["yaml"])
    return sorted(set(out))


PROBE_CACHE = "H5DLIO_PROBE_CACHE"  # a folder the probe's answers are kept in across processes (the test suite's)


@functools.lru_cache(maxsize=8)
def _probe(python: str, keys_json: str, stamp: tuple) -> str:
    cached = _probe_file(python, keys_json, stamp)
    if cached is not None and cached.exists():
        return cached.read_text()
    p = subprocess.run([python, str(PROBE), keys_json], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "DFTRACER_ENABLE": "0"})
    if p.returncode != 0 or not p.stdout.strip():
        raise WorkloadError(f"{python} {PROBE.name}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    if cached is not None:
        part = cached.with_name(f"{cached.name}.{os.getpid()}.part")
        part.write_text(p.stdout)
        part.replace(cached)  # whole or absent: a concurrent harness reads one or the other
    return p.stdout


def _probe_file(python: str, keys_json: str, stamp: tuple) -> Path | None:
    """Where $H5DLIO_PROBE_CACHE keeps the probe's answer for this interpreter, probe script (its bytes), the keys
    asked and the venv's state (its python, dlio_benchmark and pyvenv.cfg: the same venv re-installed is probed
    again); None without the variable. The test suite sets it (tests/conftest.py): every harness launch of a session
    probes the same venv, ~15 s each. Raises WorkloadError naming the variable when it names no folder."""
    folder = os.environ.get(PROBE_CACHE)
    if not folder:
        return None
    if not Path(folder).is_dir():
        raise WorkloadError(f"{PROBE_CACHE}={folder}: not a folder")
    venv = Path(python).parent.parent
    state = [(str(f), f.stat().st_mtime_ns, f.stat().st_size) if f.exists() else (str(f), None, None)
             for f in (Path(python).resolve(), venv / "bin" / "dlio_benchmark", venv / "pyvenv.cfg")]
    key = json.dumps([python, keys_json, list(stamp), state, hashlib.sha256(PROBE.read_bytes()).hexdigest()])
    return Path(folder) / f"probe-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def probe(venv: Path, kernel_bin: Path | None = None) -> dict:
    """What the DLIO installed in venv does (harness/probe.py run with its Python, ~15 s, cached per process):
    {rules, keys (yaml key -> honoured), how, unknown}, plus "options": {option: the yaml key it honours or None}."""
    python = Path(venv) / "bin" / "python"
    if not python.exists():
        raise WorkloadError(f"DLIO venv {venv}: no bin/python")
    versioned = entries(None, kernel_bin)["versioned_keys"]
    stamp = (str(python.resolve()), PROBE.stat().st_mtime_ns)
    out = json.loads(_probe(str(python), json.dumps([{"yaml": k["yaml"], "option": k["option"]} for k in versioned]),
                            stamp))
    out["options"], unknown = probed_keys(out, versioned)
    out["unknown"].update(unknown)
    return out


def probed_keys(found: dict, versioned: list[dict]) -> tuple[dict, dict]:
    """{option: the one yaml key the probe saw DLIO honour, or None} and {f"key {option}": why} for an option it
    could not tell (a key not observed, or two names honoured at once)."""
    opts: dict[str, str | None] = {}
    unknown: dict[str, str] = {}
    for opt in dict.fromkeys(k["option"] for k in versioned):
        names = [k["yaml"] for k in versioned if k["option"] == opt]
        seen = {n: found["keys"].get(n) for n in names}
        yes = [n for n in names if seen[n] is True]
        if len(yes) > 1:
            unknown[f"key {opt}"] = f"DLIO honours {' and '.join(yes)}"
        elif not yes and any(v is None for v in seen.values()):
            unknown[f"key {opt}"] = f"not observed: {', '.join(n for n in names if seen[n] is None)}"
        opts[opt] = yes[0] if len(yes) == 1 else None
    return opts, unknown


NOT_RULES = {"version", "since", "source", "keys", "unsupported"}


def rules_of(entry: dict) -> list[str]:
    """The behaviour rules a kernel entry carries (every field of h5dlio --dlio-entries but its name and source): a
    rule the kernel gains is compared, or named as not observed, without a change here."""
    return [r for r in entry if r not in NOT_RULES]


def kernel_entries(kernel_bin: Path | None = None) -> list[dict]:
    """The kernel's entries, each with "keys": {option: the yaml key that entry reads, or None}."""
    out = []
    for e in entries(None, kernel_bin)["entries"]:
        out.append({**e, "keys": entries(e["version"], kernel_bin)["selected"]["keys"]})
    return out


def _fmt(v) -> str:
    return json.dumps(v) if isinstance(v, bool) or v is None else str(v)


def differences(found: dict, entry: dict) -> list[dict]:
    """Each rule (and key option) where the probed behaviour differs from the entry; a rule the probe could not
    observe (null) is not a difference (see unverified)."""
    out = []
    for r in rules_of(entry):
        got = found["rules"].get(r)
        if got is not None and got != entry[r]:
            out.append({"rule": r, "probed": got, "entry": entry[r]})
    for opt, want in entry["keys"].items():
        if f"key {opt}" in found.get("unknown", {}):
            continue
        got = found["options"].get(opt)
        if got != want:
            out.append({"rule": f"key {opt}", "probed": got, "entry": want})
    return out


def unverified(found: dict, known: list[dict]) -> list[str]:
    """The rules the probe could not observe (named in its "unknown" with the reason)."""
    rules = dict.fromkeys(r for e in known for r in rules_of(e))
    return [r for r in rules if found["rules"].get(r) is None] + \
        sorted(k for k in found.get("unknown", {}) if k.startswith("key "))


def match(found: dict, known: list[dict]) -> dict:
    """The kernel entry whose rules all match the probed behaviour: {entry (None: none, or more than one, does),
    differs: {entry: [differences]}, unverified: [rules]}."""
    differs = {e["version"]: differences(found, e) for e in known}
    ok = [v for v, d in differs.items() if not d]
    return {"entry": ok[0] if len(ok) == 1 else None, "candidates": ok, "differs": differs,
            "unverified": unverified(found, known)}


def refusal(who: str, m: dict) -> str:
    """The message naming why no entry stands for a DLIO: the closest entry's differing rules, the others' counts."""
    if len(m["candidates"]) > 1:
        return (f"{who}: its behaviour matches kernel entries {', '.join(m['candidates'])} alike (not observed: "
                f"{', '.join(m['unverified'])}); cannot choose one")
    closest = min(m["differs"], key=lambda v: len(m["differs"][v]))
    rules = ", ".join(f"{d['rule']} probed {_fmt(d['probed'])} ({closest}: {_fmt(d['entry'])})"
                      for d in m["differs"][closest])
    others = "; ".join(f"{v}: {len(d)} rules differ" for v, d in m["differs"].items() if v != closest)
    note = f"; not observed: {', '.join(m['unverified'])}" if m["unverified"] else ""
    return (f"{who}: no kernel entry matches its behaviour: {rules}" + (f" ({others})" if others else "") + note +
            ". A new release needs its entry in bench/src/dlio.c (see docs/fidelity.md, When DLIO releases)")


def not_replayed(who: str, entry: dict) -> str:
    """The message for a DLIO whose behaviour matches a kernel entry the kernel lists but cannot replay yet."""
    return (f"{who}: behaves as kernel entry {entry['version']} ({entry['source']}), which the kernel lists but does "
            f"not replay yet: {entry['unsupported']}. Validation would compare the kernel's reads with I/O DLIO "
            "does not do (bench/src/dlio.c, that entry's `unsupported`)")


def describe(venv: Path, kernel_bin: Path | None = None) -> dict:
    """The manifest's "dlio" block: the installed DLIO, what the probe saw it do, and the kernel entry whose rules
    all match ("entry" None when none does: see select)."""
    d = info(venv)
    found = probe(venv, kernel_bin)
    known = kernel_entries(kernel_bin)
    m = match(found, known)
    entry = next((e for e in known if e["version"] == m["entry"]), None)
    warning = "" if entry else refusal(f"DLIO {d.get('version')}", m)
    if entry and entry.get("unsupported"):
        warning = not_replayed(f"DLIO {d.get('version')}", entry)
    return {**d, "entry": m["entry"], "nearest": False, "replayed": bool(entry) and not entry.get("unsupported"),
            "warning": warning,
            "probed": {"rules": found["rules"], "keys": found["options"], "unknown": found["unknown"],
                       "how": found["how"]},
            "entry_rules": ({**{r: entry[r] for r in rules_of(entry)}, "keys": entry["keys"]} if entry else None),
            "differs": m["differs"], "unverified": m["unverified"]}


def select(venv: Path, kernel_bin: Path | None = None, who: str | None = None) -> dict:
    """describe(venv), refusing a DLIO no kernel entry matches (UnrecognisedDLIO naming the differing rules)."""
    d = describe(venv, kernel_bin)
    if not d["entry"] or not d["replayed"]:
        raise UnrecognisedDLIO(d["warning"].replace(f"DLIO {d.get('version')}", who or f"DLIO {d.get('version')} "
                                                    f"({d.get('source')}, venv {venv})", 1))
    return d
