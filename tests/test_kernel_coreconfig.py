"""The kernel's own comparability (bench/src/coreconfig.c, sha256.c): output.json's "comparability" and
`h5dlio --core-config` carry the core-config-v1 hash, class and DLIO acceptance common/coreconfig.py gives a harness
run. Held to: the NIST SHA-256 vectors (FIPS 180-4 examples) and Python's hashlib; mlcommons/storage's documented
hashes (editions.yaml, through tests/test_core_config.py's fixtures); common/coreconfig.py itself for every DLIO
workload of reference-configs/ and for values whose canonical text is delicate (floats in repr's shortest form,
numeric and boolean strings, YAML 1.1 integers). Controls: a changed core key changes the hash and loses the class,
a non-core key keeps both, an entry whose DLIO revision editions.yaml does not list is not accepted."""
from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from kernel import BIN, MPIRUN
from test_core_config import UNET3D_B200

from common import coreconfig as cc

REPO = Path(__file__).resolve().parent.parent
F6796ED = "f6796ed281e39ccc83a450e2b1f21b9c909d8fd0"


def sha(data: bytes) -> str:
    p = subprocess.run([BIN, "--sha256"], input=data, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.decode().strip()


def block(tmp: Path, cfg: dict | str, *sets: str, text: bool = False) -> dict:
    """`h5dlio --core-config` of cfg written as a DLIO workload YAML (a str: written as is)."""
    f = tmp / "w.yaml"
    f.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg, sort_keys=False))
    argv = [BIN, "--config", str(f), "--core-config"] + [a for s in sets for a in ("--set", s)]
    env = dict(os.environ, H5DLIO_CORECONFIG_TEXT="1") if text else None
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    if text:
        out["text"] = p.stderr.strip()
    return out


def py_text(cfg: dict) -> str:
    """The canonical text common/coreconfig.py hashes (core_config's json.dumps, done here from its parts)."""
    flat = cc.flatten(cfg)
    keys = sorted(k for k in flat if cc.allowed(k, "training@1"))
    return json.dumps({k: cc.canon(flat[k]) for k in keys}, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize("data,want", [
    (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    (b"a" * 1_000_000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
], ids=["empty", "abc", "448-bit", "million-a"])
def test_sha256_nist_vectors(data, want):
    assert sha(data) == want


def test_sha256_every_padding_boundary_against_hashlib():
    """Lengths around the 55/56/64-byte padding edges, and a multi-block message with every byte value."""
    for n in (1, 55, 56, 57, 63, 64, 65, 119, 120, 128):
        data = bytes((i * 7 + n) % 256 for i in range(n))
        assert sha(data) == hashlib.sha256(data).hexdigest(), n


def test_documented_hash_and_class_and_acceptance(tmp_path):
    """mlcommons/storage's v3.0 CLOSED unet3d_b200 run: 0d3ad0dec188becd, class unet3d-b200-A; the ZettaLane
    'True' form f636f5a57473fca2; the 3.0.2 entry replays f6796ed, accepted for v3.0 (editions.yaml)."""
    b = block(tmp_path, UNET3D_B200, "dlio-version=3.0.2")
    assert (b["hash"], b["class"], b["allowlist"], b["family"]) == (
        "0d3ad0dec188becd", "unet3d-b200-A", "training@1", "training")
    assert (b["dlio_revision"], b["kernel_entry"], b["dlio_accepted"], b["submission"]) == (F6796ED, "3.0.2", True,
                                                                                         False)
    assert b == cc.comparability(UNET3D_B200, {"revision": F6796ED, "entry": "3.0.2"})
    z = copy.deepcopy(UNET3D_B200)
    z["workflow"]["checkpoint"] = "True"
    assert (block(tmp_path, z)["hash"], block(tmp_path, z)["class"]) == ("f636f5a57473fca2", "unet3d-b200-A")


def test_controls_core_key_non_core_key_override_revision(tmp_path):
    base = block(tmp_path, UNET3D_B200, "dlio-version=3.0.2")
    core = copy.deepcopy(UNET3D_B200)
    core["train"]["computation_time"] = 0.163
    b = block(tmp_path, core, "dlio-version=3.0.2")
    assert b["hash"] != base["hash"] and b["class"] == "no class"
    assert b == cc.comparability(core, {"revision": F6796ED, "entry": "3.0.2"})
    other = copy.deepcopy(UNET3D_B200)
    other["dataset"]["data_folder"] = "/elsewhere"
    other["reader"]["read_threads"] = 3
    assert block(tmp_path, other, "dlio-version=3.0.2") == base  # not core keys: same hash, same class
    # a --set of a core key is part of the configuration hashed, as mlpstorage hashes a template with overrides
    b = block(tmp_path, UNET3D_B200, "dlio-version=3.0.2", "train.computation_time=0.163")
    assert (b["hash"], b["class"]) == (cc.core_config(core)["hash"], "no class")
    b = block(tmp_path, UNET3D_B200, "dlio-version=3.0.2", "epochs=6")  # the h5bench name: its DLIO path
    assert b["hash"] == cc.core_config({**UNET3D_B200, "train": {**UNET3D_B200["train"], "epochs": 6}})["hash"]
    old = block(tmp_path, UNET3D_B200)  # the 2.0.0 entry: PyPI 2.0.0 (ec22aec), not one editions.yaml lists
    assert old["hash"] == base["hash"] and old["dlio_accepted"] is False
    assert old["dlio_revision"] == "ec22aec74eb9a547a9007b7a915dde2a80497828" and old["kernel_entry"] == "2.0.0"
    assert "not accepted" in old["dlio_acceptance"]


DELICATE = """
workflow: {train: true, checkpoint: no}
train: {epochs: 1, computation_time: 0.1}
model:
  floats: [0.1, 1.0e-05, 0.0001, 123456.789, 1.5, 2.0, -0.25, 3.0e+20, 1.0e-300, 0.30000000000000004, 1e3, 7.]
  strings: ["0.5", " TRUE ", "7.0", "1e3", "1_000", "seed", "-0", "00012", "inf", "caf\\u00e9", "a\\"b\\\\c\\n"]
  yaml11: [yes, Off, 0x1F, 017, 0b101, 1_000, ~, .inf, -.inf, '', +12, 1.5e+3]
  nested: {a: {b: [1, [2, "3"]]}}
"""


def test_delicate_values_canonicalised_as_python(tmp_path):
    """Python's json.dumps of mlpstorage's canonical values (float repr, int(), bools, ensure_ascii) and PyYAML's
    YAML 1.1 typing, byte for byte: the canonical text itself is compared, then the hash."""
    cfg = yaml.safe_load(DELICATE)
    b = block(tmp_path, DELICATE, text=True)
    assert b["text"] == py_text(cfg)
    assert b["hash"] == cc.core_config(cfg)["hash"] != "unknown"
    planted = DELICATE.replace("0.30000000000000004", "0.3")  # control: one float's last digit moves the hash
    assert block(tmp_path, planted)["hash"] == cc.core_config(yaml.safe_load(planted))["hash"] != b["hash"]


def test_refused_values_and_h5bench_json_have_no_hash(tmp_path):
    b = block(tmp_path, "workflow: {train: true}\nmodel: {at: 1:30}\n")  # PyYAML: sexagesimal 90
    assert b["hash"] == "unknown" and "sexagesimal" in b["note"] and b["class"] == "no class"
    j = tmp_path / "h.json"
    j.write_text(json.dumps({"train": True}))
    p = subprocess.run([BIN, "--config", str(j), "--core-config"], capture_output=True, text=True, timeout=60)
    out = json.loads(p.stdout)
    assert (out["hash"], out["allowlist"]) == ("unknown", "unknown") and "h5bench JSON" in out["note"]


def test_output_json_and_provenance_json(tmp_path):
    """A kernel run alone: output.json's comparability is what --core-config gives (the same configuration), and
    provenance.json beside it is common/coreconfig.py's stamp."""
    cfg = {"workflow": {"generate_data": True, "train": True},
           "dataset": {"data_folder": str(tmp_path / "data"), "num_files_train": 4, "num_samples_per_file": 1,
                       "record_length": 4096},
           "reader": {"batch_size": 1, "read_threads": 0}, "train": {"epochs": 1, "computation_time": 0.0}}
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump(cfg))
    p = subprocess.run([*MPIRUN, "-np", "1", BIN, "--config", str(f), "--set", f"output-folder={tmp_path / 'out'}",
                        "--set", "quiet=true"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = json.loads((tmp_path / "out" / "output.json").read_text())["comparability"]
    assert got == block(tmp_path, cfg) == cc.comparability(cfg, {"revision": got["dlio_revision"], "entry": "2.0.0"})
    assert got["class"] == "no class" and got["hash"] == cc.core_config(cfg)["hash"]
    # provenance.json beside it: mlpstorage's stamp as common/coreconfig.py stamps a harness run, but stamped by
    # the kernel, its DLIO commit the one its entry declares
    head = json.loads((tmp_path / "out" / "output.json").read_text())
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text())
    want = cc.provenance(cfg, {"version": "2.0.0", "source": prov["dlio"]["source"], "revision": got["dlio_revision"]},
                         {"kernel": head["h5dlio_version"], "git_revision": head["git_revision"]})
    assert (prov.pop("stamped_by"), prov["provenance"].pop("dlio")) == ("h5dlio kernel", "declared")
    assert prov.pop("stamped_at").endswith("Z") and want.pop("stamped_at")
    want.pop("stamped_by"), want["provenance"].pop("dlio")
    assert prov == want and "not a submission" in prov["notes"] and "ec22aec" in prov["dlio"]["source"]
    assert prov["core_config"]["hash"] == got["hash"] and "null" not in json.dumps(prov)


def _workload_folders() -> list[tuple[Path, str | None]]:
    venv = os.environ.get("H5DLIO_DLIO_VENV")
    cache = Path(os.environ.get("H5DLIO_CACHE") or Path.home() / ".cache" / "h5dlio")
    out = []
    for root, ver in ((Path(venv) if venv else None, None), *((p, "3.0.2") for p in cache.glob("dlio-3.0.2-*"))):
        hits = sorted(root.glob("lib/python3*/site-packages/dlio_benchmark/configs/workload")) if root else []
        out += [(hits[0], ver)] if hits else []
    return out


@pytest.mark.dlio
def test_every_reference_workload_hashes_as_python(tmp_path):
    """Each DLIO workload of reference-configs/ merged on DLIO 2.0.0's bundled files (and 3.x's when its venv is
    cached, with the 3.0.2 entry), as the harness writes workload.yaml: the kernel's block equals Python's."""
    from fidelity.workloads import reference_workloads
    from harness.workload import WorkloadError, load
    folders = _workload_folders()
    if not folders:
        pytest.skip("no reference DLIO venv (H5DLIO_DLIO_VENV): DLIO's bundled workloads are not here")
    names, _ = reference_workloads(REPO / "reference-configs")
    compared = []
    for folder, ver in folders:
        for n in names:
            try:
                wl = load(n, None, folder)
            except WorkloadError:
                continue  # its base is another DLIO's
            f = tmp_path / f"{n}.yaml"
            f.write_text(yaml.safe_dump(wl.config, sort_keys=False))
            argv = [BIN, "--config", str(f), "--core-config"] + (["--set", f"dlio-version={ver}"] if ver else [])
            p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            if p.returncode == 2:  # a value this entry refuses at load (2.0.0's record_length under a 3.x entry)
                continue
            k = json.loads(p.stdout)
            assert k == cc.comparability(wl.config, {"revision": k["dlio_revision"], "entry": k["kernel_entry"]}), n
            compared.append(n)
    assert len(compared) >= 15 * len(folders), compared  # 2.0.0: 18 workloads, 3.x: 19


def _restated(facts: dict, paths: list[Path]) -> list[str]:
    """Class hashes and accepted revisions of coreconfig.json written again in a product source."""
    lits = [h for c in facts["classes"].values() for h in c["hashes"]] + [r for rs in facts["accepted"].values()
                                                                          for r in rs]
    return [f"{p.name}: {x}" for p in paths for x in lits if x in p.read_text()]


def test_the_facts_have_one_source(tmp_path):
    """common/coreconfig.json is the only place of the classes' hashes and the accepted revisions: the Python module
    reads it, the kernel's header is generated from it (bench/coreconfig_facts.cmake). dlio.c's entry commits are
    the entries' own facts, not the edition's list, so it is left out."""
    facts = json.loads((REPO / "common" / "coreconfig.json").read_text())
    srcs = [REPO / "common" / "coreconfig.py", *(p for p in (REPO / "bench").rglob("*.[ch]") if p.name != "dlio.c")]
    assert _restated(facts, srcs) == []
    planted = tmp_path / "planted.c"  # control: a source restating one class hash is found
    planted.write_text('static const char *h = "0d3ad0dec188becd";\n')
    assert _restated(facts, [planted]) == ["planted.c: 0d3ad0dec188becd"]
