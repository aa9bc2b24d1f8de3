"""One canonical workload: DLIO's bundled config <- our overlay <- a scale preset, as a DLIO workload dict.
Both sides read the same merged YAML: DLIO through hydra (--config-dir), the kernel through --config."""
from __future__ import annotations

import copy
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import yaml

from harness.paths import REFERENCE_CONFIGS, REPO  # noqa: F401  (REPO: re-exported for callers)


class WorkloadError(ValueError):
    """Bad workload name, scale or reference config (exit status 2)."""


def deep_merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


@dataclass
class Workload:
    name: str
    scale: str
    base: str
    config: dict          # merged DLIO workload (a run's, harness.plan.Plan.workload: generation buffer bounded)
    base_path: str        # DLIO's bundled file it came from

    @property
    def read_threads(self) -> int:
        return int(self.config.get("reader", {}).get("read_threads", 1))

    def with_overrides(self, over: dict) -> Workload:
        return Workload(self.name, self.scale, self.base, deep_merge(self.config, over), self.base_path)

    def to_dict(self) -> dict:
        return {"name": self.name, "scale": self.scale, "base": self.base, "base_path": self.base_path,
                "config": self.config}


def dlio_config_dir(dlio_python: str) -> Path:
    probe = "import dlio_benchmark, os; print(os.path.dirname(dlio_benchmark.__file__))"
    out = subprocess.run([dlio_python, "-c", probe], capture_output=True, text=True)
    if out.returncode != 0:
        raise WorkloadError(f"cannot import dlio_benchmark with {dlio_python}: {out.stderr.strip()[-300:]}")
    return Path(out.stdout.strip()) / "configs" / "workload"


def _yaml(path: Path):
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(f"{path}: cannot read: {e}") from None
    except yaml.YAMLError as e:
        raise WorkloadError(f"{path}: bad YAML: {' '.join(str(e).split())}") from None


REF_KEYS = ("base", "overlay", "scales", "default_scale", "extends")


def _reference(path: Path, ref_dir: Path, seen: list[str]) -> dict:
    """A reference config as a dict; with `extends: <name>` (another file of ref_dir, e.g. DLIO's accelerator
    variants of one workload), that file's dict with this one's keys merged over it (base replaced, overlay and
    scales merged)."""
    ref = _yaml(path)
    if not isinstance(ref, dict):
        raise WorkloadError(f"{path}: top level must be a mapping ({', '.join(REF_KEYS)})")
    unknown = set(ref) - set(REF_KEYS)
    if unknown:
        raise WorkloadError(f"{path}: unknown keys {sorted(unknown)} ({', '.join(REF_KEYS)})")
    parent = ref.pop("extends", None)
    if parent is None:
        return ref
    if not isinstance(parent, str) or "/" in parent or not (ref_dir / f"{parent}.yaml").is_file():
        raise WorkloadError(f"{path}: extends: {parent!r} is not a reference config of {ref_dir}")
    if parent in seen:
        raise WorkloadError(f"{path}: extends: {' -> '.join([*seen, parent])} is a cycle")
    return deep_merge(_reference(ref_dir / f"{parent}.yaml", ref_dir, [*seen, parent]), ref)


def default_scale(name: str, ref_dir: Path = REFERENCE_CONFIGS) -> str:
    """The scale a run of the workload gets without SCALE= (its default_scale); "tiny" for a name load() refuses
    (load says why)."""
    path = Path(name) if name.endswith((".yaml", ".yml")) or "/" in name else ref_dir / f"{name}.yaml"
    try:
        scale = _reference(path, ref_dir, [path.stem]).get("default_scale", "tiny")
    except (OSError, WorkloadError, yaml.YAMLError):
        return "tiny"
    return scale if isinstance(scale, str) else "tiny"


class KeyTable(Protocol):
    """The key names the installed DLIO reads, as the caller found them (harness.dlio.KeyTable: the kernel's entries
    and the probe's or an entry's key names, asked once, before loading): loading a workload runs nothing."""
    def unread(self, cfg: dict) -> list[str]: ...
    def translate(self, cfg: dict) -> dict: ...


def load(name: str, scale: str | None, dlio_workloads: Path, ref_dir: Path = REFERENCE_CONFIGS,
         keys: KeyTable | None = None) -> Workload:
    """dlio_workloads: the installed DLIO's configs/workload folder (see dlio_config_dir). name: a reference config
    of ref_dir, or the path of one (a name ending in .yaml/.yml or holding a '/'). keys: the key names the installed
    DLIO reads (None: DLIO 2.0.0's, as the overlays are written): keys it does not read are refused, others renamed."""
    if name.endswith((".yaml", ".yml")) or "/" in name:
        path = Path(name)
        name = path.stem
        if not path.is_file():
            raise WorkloadError(f"WORKLOAD={path}: no such file")
    else:
        path = ref_dir / f"{name}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in ref_dir.glob("*.yaml")))
        raise WorkloadError(f"WORKLOAD={name}: no {path} (known: {known})")
    ref = _reference(path, ref_dir, [path.stem])
    scale = scale or ref.get("default_scale", "tiny")
    scales = ref.get("scales", {})
    if not isinstance(scales, dict) or not isinstance(scale, str):
        raise WorkloadError(f"{path}: 'scales' must be a mapping of scale name -> overrides, 'default_scale' a name")
    if scale not in scales:
        raise WorkloadError(f"SCALE={scale}: {path} has scales {sorted(scales)}")
    if "base" not in ref:
        raise WorkloadError(f"{path}: no 'base' (the DLIO workload it overlays)")
    for what, v in (("overlay", ref.get("overlay") or {}), (f"scales.{scale}", scales[scale] or {})):
        if not isinstance(v, dict):
            raise WorkloadError(f"{path}: {what} must be a mapping of DLIO workload keys, not {type(v).__name__}")
    if keys is not None:  # refuse what this DLIO would silently ignore (keys of another release)
        unread = keys.unread(deep_merge(ref.get("overlay") or {}, scales[scale] or {}))
        if unread:
            raise WorkloadError(f"{path}: the installed DLIO ({dlio_workloads.parent.parent}) does not read "
                                f"{', '.join(unread)}: this workload is for a DLIO that has those keys (make validate "
                                "DLIO=<its checkout>; docs/fidelity.md)")
    base_path = dlio_workloads / f"{ref['base']}.yaml"
    if not base_path.exists():
        raise WorkloadError(f"{path}: base '{ref['base']}' is not a workload of the installed DLIO ({base_path})")
    base = _yaml(base_path)
    if not isinstance(base, dict):
        raise WorkloadError(f"{path}: base {base_path} must be a mapping of DLIO workload keys, not "
                            f"{type(base).__name__}")
    overlay, preset = ref.get("overlay") or {}, scales[scale] or {}
    if keys is not None:  # overlays use DLIO 2.0.0's key names: rename them to what this DLIO reads
        overlay, preset = keys.translate(overlay), keys.translate(preset)
    merged = deep_merge(deep_merge(base, overlay), preset)
    return Workload(name, scale, ref["base"], merged, str(base_path))
