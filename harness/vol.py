"""The HDF5 VOL connector stack the kernel side of a run reads through (`make validate VOL=<name>`, --vol;
docs/vol-validation.md).
DLIO's side is unchanged: h5py on HDF5's native connector. The kernel takes the connector from its `vol-connector` key
on every launch but generation (both datasets are written natively, as DLIO writes its own), and, for `async-prefetch`,
reads the next batch with vol-async's event sets (key `vol-async-prefetch`) in every launch whose ranks read
themselves (read-threads 0: the workload's own, or the Log VFD's read_threads=0 variant), and leaves the launches with
reader processes native (vol-async 1.8.1's implicit mode hangs now and then, a lost wake-up in vol-async itself,
docs/vol.md; `async` puts the connector under them, implicit). What the run used is not this table: it is what each
kernel launch's output.json says HDF5 reported (`vol` and `async_prefetch`), which validate's vol.kernel compares
with the stack asked for.

vol-async needs a thread-safe parallel HDF5 and a kernel built against it (`make vol-kernel`; its path goes to the
harness as H5DLIO_KERNEL_BIN) and its plugin folder: HDF5_PLUGIN_PATH when the user sets it (their own install, as a
DARSHAN_PREFIX), else the one `make vol-deps` built (build/.vol-prefix)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from harness.paths import REPO
from harness.workload import WorkloadError


@dataclass(frozen=True)
class Stack:
    name: str             # VOL=<name>
    connector: str        # the kernel's vol-connector key ("" for native)
    stack: tuple          # the stack HDF5 must report, top first
    plugins: bool         # the connector is a plugin (needs HDF5_PLUGIN_PATH)
    prefetch: bool        # explicit async reads (vol-async-prefetch) where the ranks read themselves
    readers: bool         # launches with reader processes get the connector too
    what: str


ASYNC = "async under_vol=0;under_info={}"
STACKS = {s.name: s for s in (
    Stack("native", "", ("native",), False, False, True, "HDF5's native connector (the default)"),
    Stack("pass_through", "pass_through under_vol=0;under_info={}", ("pass_through", "native"), False, False, True,
          "HDF5's built-in pass-through connector over native"),
    Stack("async", ASYNC, ("async", "native"), True, False, True,
          "vol-async over native, implicit: the kernel's synchronous calls queued to async's background thread "
          "(in reader processes too)"),
    Stack("async-prefetch", ASYNC, ("async", "native"), True, True, False,
          "vol-async over native, explicit, in the launches whose ranks read themselves (vol-async-prefetch: the next "
          "batch's reads issued behind the step's compute); launches with reader processes stay native (vol-async's "
          "implicit mode hangs there now and then, docs/vol.md)"),
)}


def stack(name: str | None) -> Stack:
    """The stack VOL=<name> asks for (None, "": native). WorkloadError naming VOL for an unknown one."""
    if not name:
        return STACKS["native"]
    if name not in STACKS:
        raise WorkloadError(f"VOL={name} (--vol): unknown connector stack (known: {', '.join(STACKS)})")
    return STACKS[name]


def _stamp(name: str) -> str:
    p = REPO / "build" / name
    return p.read_text().strip() if p.exists() else ""


def plugin_path(s: Stack, env: dict | None = None) -> str:
    """The plugin folder HDF5 finds the connector in ("" for a built-in one): HDF5_PLUGIN_PATH when set (the user's
    install), else `make vol-deps`'s. WorkloadError when there is none."""
    if not s.plugins:
        return ""
    env = os.environ if env is None else env
    if env.get("HDF5_PLUGIN_PATH"):
        return env["HDF5_PLUGIN_PATH"]
    built = _stamp(".vol-prefix")
    if built and (Path(built) / "lib").is_dir():
        return str(Path(built) / "lib")
    raise WorkloadError(f"VOL={s.name} (--vol): no vol-async plugin folder: set HDF5_PLUGIN_PATH to your install, or "
                        "build it with `make vol-kernel` (make validate VOL=... does)")


def refuse_env(env: dict | None = None) -> None:
    """A HDF5_VOL_CONNECTOR in the harness's environment would reach both sides (DLIO's h5py too): refused, naming it
    (the kernel's connector is chosen with VOL=)."""
    env = os.environ if env is None else env
    if env.get("HDF5_VOL_CONNECTOR"):
        raise WorkloadError(f"HDF5_VOL_CONNECTOR={env['HDF5_VOL_CONNECTOR']!r} is set: it would put that connector "
                            "under both sides, DLIO's h5py included; unset it and choose the kernel's with VOL= "
                            "(--vol)")


def kernel_sets(s: Stack, in_rank: bool) -> list[str]:
    """The kernel's --set for a training launch under s (in_rank: the ranks read themselves, read-threads 0)."""
    if not s.connector or not (in_rank or s.readers):
        return []
    return [f"vol-connector={s.connector}"] + (["vol-async-prefetch=true"] if s.prefetch and in_rank else [])


def kernel_env(s: Stack, plugins: str, in_rank: bool = True) -> dict:
    """The variables the kernel's ranks get: the plugin folder (the key names the connector)."""
    return {"HDF5_PLUGIN_PATH": plugins} if plugins and s.plugins and (in_rank or s.readers) else {}


def manifest_block(s: Stack, plugins: str, kernel_bin: Path) -> dict:
    """manifest["vol"]: what was asked (the kernel's launches say what HDF5 used: validate's vol.kernel)."""
    return {"requested": s.name, "connector": s.connector or "native", "expected_stack": list(s.stack),
            "prefetch": s.prefetch, "what": s.what, "plugin_path": plugins, "kernel_bin": str(kernel_bin),
            "dlio": "native (DLIO's h5py, unchanged)"}
