"""Reliability, determinism (issue 7): the same config and seed give byte-identical normalized Log VFD traces."""
from __future__ import annotations

import hashlib

from kernel import run, tiny
from reliability import gen

from profiles import logvfd


def _normalized_traces(r) -> dict[int, bytes]:
    out = {}
    for rank in range(2):
        blocks, stray = logvfd.split_blocks(logvfd.parse(r.stderr(rank)))
        out[rank] = "\n".join("|".join(logvfd.normalize_block(b)) for b in blocks).encode()
        assert stray == 0 and len(blocks) >= 16
    return out


def test_same_config_and_seed_give_byte_identical_traces(tmp_path):
    """Two runs on one dataset, and a run on a second dataset generated with the same config and seed: the normalized
    Log VFD traces of each rank are byte-identical. Another seed changes them (the comparison can see a change)."""
    for d in ("data", "data2"):
        assert run(tmp_path, 2, gen(tmp_path / d, **{"record-length-stdev": 16384}), name=f"gen-{d}").rc == 0
    sets = tiny(tmp_path / "data", train=True, evaluation=True, epochs=2, **{"log-vfd": True,
                                                                           "record-length-stdev": 16384})
    a = run(tmp_path, 2, sets, log=True, name="a")
    b = run(tmp_path, 2, sets, log=True, name="b")
    c = run(tmp_path, 2, {**sets, "data-folder": str(tmp_path / "data2")}, log=True, name="c")
    other = run(tmp_path, 2, {**sets, "random-seed": 124}, log=True, name="other")
    for r in (a, b, c, other):
        assert r.rc == 0, r.proc.stderr
    ta, tb, tc, to = (_normalized_traces(r) for r in (a, b, c, other))
    for rank in range(2):
        digest = hashlib.sha256(ta[rank]).hexdigest()
        assert hashlib.sha256(tb[rank]).hexdigest() == digest, f"rank {rank}: second run differs"
        assert hashlib.sha256(tc[rank]).hexdigest() == digest, f"rank {rank}: regenerated dataset differs"
        assert to[rank] != ta[rank], f"rank {rank}: another seed gave the same trace"
