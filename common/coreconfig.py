"""MLPerf Storage's comparability of a run: the `core-config-v1` hash of its DLIO configuration, the comparability
class the rules give that hash, and whether the DLIO revision is accepted for the v3.0 edition; and a
`provenance.json` of mlpstorage's form for an h5dlio run, marked as not a submission.

Written from mlcommons/storage as facts (its code is not copied; read at commit 9cf5d20 for the first two files,
0e57fc4 for editions.yaml and its test):
- the allowlists: `mlpstorage_py/rules/core_config_keys.yaml:19-73` (schema `mlps-core-config-allowlist/1`; family
  training -> `training@1`, checkpointing -> `checkpointing@1`; an entry `p.*` matches every key starting with `p.`,
  an exact entry only itself; `exclude` wins over `include`); :21-25 (`families`): kv_cache and vector_database have
  none.
- the hash (provenance.py cited by function: the stored copy was read whole, not by line): `mlpstorage_py/
  provenance.py` `flatten_parameters` (nested mappings to dotted keys, any non-mapping value
  a leaf, lists included), `_canon` (bool kept; an integral float and a numeric string become the int; "true"/"false"
  in any case, stripped, become the bool; other numeric strings the float; lists element-wise),
  `core_config_hash` (SHA-256 of `json.dumps` with sorted keys, separators "," and ":", ASCII; the first 16 hex
  digits), `compute_core_config` (keys = sorted allowlisted dotted keys; none present: hash "unknown"; a family with
  no allowlist: allowlist and hash "unknown"); the parameters are first passed through a JSON round trip.
- the stamp: `mlpstorage_py/provenance.py` `RunProvenance.to_dict` and `_validate_stamp` (schema
  `mlps-run-provenance/1`; keys schema, rules_edition, layout_version, tool {name, version, git_sha, code_image},
  dlio {version, source, commit}, storage_library {name[, version]}, core_config {algorithm, allowlist, hash, keys},
  stamped_at, stamped_by, provenance {one tag per stamp field}, notes; "unknown", never null).
- the classes and revisions: `mlpstorage_py/rules/editions.yaml:128-138` (edition "3.0" `dlio_revisions`: ten accepted
  DLIO commits) and :145- (`classes`; CLASSES below holds the seven classes of edition 3.0, llama3-8b-A also of
  2.0). Rule EDN-03 (`tests/unit/test_rules_editions.py` `test_edition_dlio_revisions_are_full_shas`): accepted
  means the full 40-digit commit is in the edition's list; "unknown" never is.
- the documented hashes tests/test_core_config.py holds us to: `tests/unit/test_leaf_provenance.py` UNET3D_B200 (a
  v3.0 CLOSED TTA run) classifies as unet3d-b200-A (`tests/unit/test_rules_editions.py` `test_v30_unet3d_b200`), the
  class's first hash being the workflow.checkpoint=false form (editions.yaml, the class's notes);
  its ZettaLane form (workflow.checkpoint 'True') the second (both in coreconfig.json).

What is hashed here: the workload configuration the harness gave DLIO and the kernel (the run's workload.yaml, the
manifest's workload.config): mlpstorage hashes the parameters it recorded for DLIO (the workload template with its
overrides), not DLIO's defaults, and its own test hashes a shipped template as is (`test_v30_classes_equal_the_
shipped_workload_templates`). A run at a scale other than the field's hashes differently: the scale shrinks record
sizes and epochs, which are core keys, so only a field-scale run can carry a class."""
from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

# The facts (allowlists, families, classes, accepted revisions, edition, the stamp's schema and note) have one
# source, coreconfig.json beside this file, which the kernel's build turns into its C header
# (bench/coreconfig_facts.cmake); its "_about" cites them.
_FACTS = json.loads((Path(__file__).with_name("coreconfig.json")).read_text())
ALGORITHM: str = _FACTS["algorithm"]
SCHEMA: str = _FACTS["provenance"]["schema"]
LAYOUT_VERSION: int = _FACTS["provenance"]["layout_version"]
UNKNOWN = "unknown"
NO_CLASS = "no class"
EDITION: str = _FACTS["edition"]
NOT_A_SUBMISSION: str = _FACTS["provenance"]["notes"]

# core_config_keys.yaml:27-73
ALLOWLISTS: dict[str, dict[str, tuple[str, ...]]] = {
    name: {kind: tuple(spec[kind]) for kind in ("include", "exclude")} for name, spec in _FACTS["allowlists"].items()}
FAMILIES: dict[str, str] = dict(_FACTS["families"])  # core_config_keys.yaml:21-25
# editions.yaml: class id -> (family, the hashes it declares one workload, its editions)
CLASSES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    cid: (c["family"], tuple(c["hashes"]), tuple(c["editions"])) for cid, c in _FACTS["classes"].items()}
# editions.yaml:128-138, edition 3.0's dlio_revisions (all from mlcommons/DLIO_local_changes but the last)
ACCEPTED: dict[str, tuple[str, ...]] = {ed: tuple(revs) for ed, revs in _FACTS["accepted"].items()}


def flatten(params: Any, prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}} -> {"a.b": 1}; every non-mapping value (a list too) is a leaf."""
    out: dict[str, Any] = {}
    if isinstance(params, dict):
        for k, v in params.items():
            if isinstance(v, dict):
                out.update(flatten(v, f"{prefix}{k}."))
            else:
                out[f"{prefix}{k}"] = v
    return out


def canon(v: Any) -> Any:
    """One form for the values the rules call equal: 7, 7.0 and "7"; True and " TRUE "."""
    if isinstance(v, bool | int):
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else v
    if isinstance(v, list):
        return [canon(x) for x in v]
    if not isinstance(v, str):
        return v
    s = v.strip()
    if s.lower() in ("true", "false"):
        return s.lower() == "true"
    for conv in (int, float):
        try:
            x = conv(s)
        except ValueError:
            continue
        return int(x) if isinstance(x, float) and x.is_integer() else x
    return s


def allowed(key: str, allowlist: str) -> bool:
    spec = ALLOWLISTS[allowlist]
    if key in spec["exclude"]:
        return False
    return any(key.startswith(e[:-1]) if e.endswith(".*") else key == e for e in spec["include"])


def family_of(config: dict) -> str:
    """The mlpstorage benchmark a DLIO configuration is: checkpointing when it checkpoints and does not train."""
    wf = config.get("workflow") or {}
    return "checkpointing" if canon(wf.get("checkpoint")) is True and canon(wf.get("train")) is not True \
        else "training"


def core_config(config: dict, family: str | None = None) -> dict:
    """{"algorithm", "allowlist", "hash", "keys"} of a DLIO workload configuration (the mapping under `workload:`
    or the mapping itself), as mlpstorage stamps it."""
    config = json.loads(json.dumps(config.get("workload", config) if isinstance(config, dict) else {}, default=str))
    family = family or family_of(config)
    allowlist = FAMILIES.get(family)
    if allowlist is None:
        return {"algorithm": ALGORITHM, "allowlist": UNKNOWN, "hash": UNKNOWN, "keys": []}
    flat = flatten(config)
    keys = sorted(k for k in flat if allowed(k, allowlist))
    if not keys:
        return {"algorithm": ALGORITHM, "allowlist": allowlist, "hash": UNKNOWN, "keys": []}
    text = json.dumps({k: canon(flat[k]) for k in keys}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return {"algorithm": ALGORITHM, "allowlist": allowlist, "hash": hashlib.sha256(text.encode()).hexdigest()[:16],
            "keys": keys}


def class_of(digest: str, family: str, edition: str = EDITION) -> str:
    """The comparability class of edition `edition` declaring this hash for this family, or NO_CLASS."""
    for cid, (fam, hashes, editions) in CLASSES.items():
        if fam == family and digest in hashes and edition in editions:
            return cid
    return NO_CLASS


def accepted(commit: str | None, edition: str = EDITION) -> bool:
    """Whether a DLIO commit is one the edition accepts (rule EDN-03: the full commit, listed)."""
    return bool(commit) and commit in ACCEPTED.get(edition, ())


def commit_of(dlio: dict | None) -> str:
    """The manifest's DLIO revision when it is a commit (40 hex digits), else "unknown" (a PyPI install: "pypi")."""
    rev = str((dlio or {}).get("revision") or "")
    return rev if re.fullmatch(r"[0-9a-f]{40}", rev) else UNKNOWN


def comparability(config: dict, dlio: dict | None) -> dict:
    """The verdict's and report's block: the hash, the keys it covers, the class, the DLIO revision's acceptance.
    dlio: the manifest's "dlio" block (its "revision" is the commit the DLIO side ran and the kernel replays; its
    "entry" the kernel's entry for it)."""
    cc = core_config(config)
    fam = family_of(config.get("workload", config))
    rev = commit_of(dlio)
    ok = accepted(rev)
    name = rev[:12] if rev != UNKNOWN else f"{(dlio or {}).get('version', UNKNOWN)} (no commit)"
    return {"algorithm": ALGORITHM, "allowlist": cc["allowlist"], "hash": cc["hash"], "keys": cc["keys"],
            "family": fam, "edition": EDITION,
            "class": class_of(cc["hash"], fam) if cc["hash"] != UNKNOWN else NO_CLASS,
            "dlio_revision": rev, "kernel_entry": (dlio or {}).get("entry"),
            "dlio_accepted": ok,
            "dlio_acceptance": (f"DLIO {name} is accepted for MLPerf Storage v{EDITION} (editions.yaml)" if ok
                                else f"DLIO {name} is not accepted for MLPerf Storage v{EDITION}: not one of "
                                     f"the {len(ACCEPTED[EDITION])} revisions editions.yaml lists"),
            "submission": False}


def line(block: dict) -> str:
    """The block in one line (the report's header, the validator's output)."""
    acc = "accepted" if block["dlio_accepted"] else "NOT accepted"
    return (f"MLPerf Storage v{block['edition']} comparability (not a submission): {block['algorithm']} "
            f"{block['hash']} over {len(block['keys'])} keys ({block['allowlist']}), "
            f"{'no class' if block['class'] == NO_CLASS else 'class ' + block['class']}; "
            f"{block['dlio_acceptance'].split(' is ')[0]} {acc} for v{block['edition']}")


def provenance(config: dict, dlio: dict | None, versions: dict | None) -> dict:
    """A provenance.json of mlpstorage's form (mlps-run-provenance/1) for an h5dlio run, its notes saying it is not
    a submission. versions: the manifest's "versions" (the kernel's version, the repository's git revision)."""
    dlio, versions = dlio or {}, versions or {}
    cc = core_config(config)
    src = str(dlio.get("source") or UNKNOWN)
    dl = {"version": str(dlio.get("version") or UNKNOWN), "source": src, "commit": commit_of(dlio)}
    return {
        "schema": SCHEMA, "rules_edition": EDITION, "layout_version": LAYOUT_VERSION,
        "tool": {"name": "h5dlio", "version": str(versions.get("kernel") or UNKNOWN),
                 "git_sha": str(versions.get("git_revision") or UNKNOWN), "code_image": UNKNOWN},
        "dlio": dl, "storage_library": {"name": "none"}, "core_config": cc,
        "stamped_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "stamped_by": "h5dlio harness",
        "provenance": {"rules_edition": "declared", "layout_version": "n/a", "tool": "runtime",
                       "dlio": "runtime" if dl["commit"] != UNKNOWN else
                       "package-metadata" if dl["version"] != UNKNOWN else "unknown", "storage_library": "n/a",
                       "core_config": "runtime" if cc["hash"] != UNKNOWN else "unknown"},
        "notes": NOT_A_SUBMISSION,
    }
