"""bench/perf/density.py (issue 37 item 3): what the density section measures per launch (the peak PSS of the whole
process tree, CPU, a timeout that leaves nothing behind), the memory bound that stops a DLIO count before it is
launched, and the ratios and table it writes. The measurement itself is `make bench BENCH_SECTIONS=density`."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from bench.perf import density

ALLOC = "import time; b = bytearray({n} * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.5)"


def test_peak_memory_counts_a_grandchild(tmp_path):
    """300 MiB touched in a grandchild (bash -> python): the tree's peak PSS sees it; 1 MiB does not look like 300."""
    big = density.launch(["bash", "-c", f"{sys.executable} -c \"{ALLOC.format(n=300)}\"; true"], tmp_path / "a", 60)
    small = density.launch(["bash", "-c", f"{sys.executable} -c \"{ALLOC.format(n=1)}\"; true"], tmp_path / "b", 60)
    assert big["rc"] == 0 and small["rc"] == 0
    assert big["peak_pss_MiB"] > 280, big
    assert small["peak_pss_MiB"] < 100, small
    assert big["processes"] >= 2          # bash and its python, at least
    assert big["cpu_s"] > 0.01            # touching 300 MiB costs CPU: the children's rusage reached us


def test_a_timeout_kills_the_whole_tree(tmp_path):
    marker = f"h5dlio-density-{os.getpid()}"
    r = density.launch(["bash", "-c", f"exec -a {marker} sleep 300 & sleep 300"], tmp_path / "t", 1)
    assert r["rc"] is None
    time.sleep(0.3)
    alive = [p for p in Path("/proc").iterdir() if p.name.isdigit() and marker.encode() in _cmdline(p)]
    assert not alive, "a grandchild outlived the launch's timeout"


def _cmdline(p: Path) -> bytes:
    try:
        return (p / "cmdline").read_bytes()
    except OSError:
        return b""


def _trials(side: str, done: dict, fraction: float = 0.8) -> density.Trials:
    t = density.Trials.__new__(density.Trials)
    t.side, t.st, t.p = side, {"trials": done}, {"mem_fraction": fraction}
    return t


def test_a_dlio_count_past_the_memory_is_not_launched(monkeypatch):
    """2 accelerators measured at 4,000 MiB: 8 would need 16,000 MiB; with 10,000 MiB available (80%: 8,000) it is
    refused naming the numbers, 3 (6,000 MiB) is launched; the kernel is never memory-bound here."""
    monkeypatch.setattr(density, "load_avail_mib", lambda: 10_000.0)
    done = {"1": {"n": 1, "peak_pss_MiB": 1_900.0}, "2": {"n": 2, "peak_pss_MiB": 4_000.0}}
    why = _trials("dlio", done)._memory_bound(8)
    assert why and "8 x 2000 MiB" in why and "15.6 GiB" in why and "not launched" in why
    assert _trials("dlio", done)._memory_bound(3) is None
    assert _trials("kernel", done)._memory_bound(8) is None
    assert _trials("dlio", {})._memory_bound(64) is None   # nothing measured yet: launch and see


def _t(n, pss, cpu, au=95.0, ok=True, files=None):
    return {"n": n, "files": files or 140 * n, "au": au, "pass": ok, "peak_pss_MiB": pss, "cpu_s": cpu,
            "processes": 2 * n + 1}


def _side(largest, outcome, trials):
    return {"outcome": outcome, "largest": largest, "first_fail": None if outcome == "feeds_all" else largest + 1,
            "trials": trials}


KERNEL = _side(6, "max", [_t(1, 30.0, 0.2), _t(2, 40.0, 0.4), _t(4, 60.0, 1.0), _t(6, 96.0, 3.0),
                          _t(7, 100.0, 3.5, au=80.0, ok=False)])


def test_per_accelerator_at_the_count_both_sides_launched():
    """DLIO launched at 1 and 6 (the kernel's answer), the kernel at 1..7: both compared at 6, the largest count
    both launched (not the kernel at 7 against DLIO at 1, where DLIO runs two readers a rank)."""
    dlio = _side(0, "fails_at_1", [_t(1, 1600.0, 65.0, au=44.0, ok=False), _t(6, 6000.0, 240.0, au=34.0, ok=False)])
    per = density.per_accelerator({"kernel": KERNEL, "dlio": dlio})
    assert per["kernel"]["n"] == per["dlio"]["n"] == 6
    assert per["kernel"]["pss_MiB"] == 16.0 and per["dlio"]["pss_MiB"] == 1000.0 and per["dlio"]["cpu_s"] == 40.0
    alone = density.per_accelerator({"kernel": KERNEL, "dlio": _side(0, "fails_at_1", [_t(1, 1600.0, 65.0)])})
    assert alone["kernel"]["n"] == 1 and alone["dlio"]["n"] == 1    # only 1 in common
    # a refused count (no launch) is no measurement
    refused = {"n": 8, "pass": False, "reason": "memory: x"}
    assert density.per_accelerator({"kernel": KERNEL, "dlio": _side(0, "fails_at_1", [_t(1, 1600.0, 65.0),
                                                                                         refused])})["dlio"]["n"] == 1


def test_ratios_worked_by_hand():
    dlio = _side(2, "max", [_t(1, 1000.0, 10.0), _t(2, 1600.0, 20.0), _t(4, 6000.0, 80.0, ok=False),
                            _t(6, 9600.0, 120.0, ok=False)])
    r = density.ratios({"kernel": KERNEL, "dlio": dlio})
    # at 6: DLIO 1,600 MiB and 20 s per accelerator, the kernel 16 MiB and 0.5 s
    assert r["accelerators"] == 3.0 and r["memory_per_accelerator"] == 100.0 and r["cpu_per_accelerator"] == 40.0
    none = density.ratios({"kernel": KERNEL, "dlio": _side(0, "fails_at_1", [_t(1, 1600.0, 20.0, ok=False)])})
    assert none["accelerators"] is None and "DLIO meets the threshold at no count; the kernel at 6" in \
        none["accelerators_note"]


def test_the_table_names_each_side_and_a_refused_count():
    dlio = _side(2, "max", [_t(1, 1000.0, 10.0), _t(2, 1600.0, 20.0), _t(4, 6000.0, 80.0, ok=False),
                            _t(6, 9600.0, 120.0, ok=False), {"n": 8, "pass": False, "reason": "memory: x"}])
    sec = {"preset": {"min_steps": 20}, "cores": 2, "mem_available_MiB": 20_480.0,
           "load": {"before": {"load1": 0.2}, "after": {"load1": 1.5}},
           "workload": {"name": "unet3d_b200", "scale": "tiny_odirect", "batch_size": 7, "record_length": 2**20,
                        "computation_time": 0.162, "odirect": True, "au_threshold": 0.9, "epochs": 1},
           "storage": {"read_bps": 300 * 2**20, "what": "ext4 on a loop device", "analytic": 6.94,
                       "demand_per_accelerator_MiB_s": 43.2},
           "sides": {"kernel": KERNEL, "dlio": dlio}}
    md = "\n".join(density.markdown(sec))
    assert "| kernel | 6 (max) | 7 | 16 (at 6) |" in md and "| dlio | 2 (max) | 3 | 1,600 (at 6) |" in md
    assert "**3.0x**" in md and "**100.0x**" in md and "**40.0x**" in md
    assert "| dlio | 8 | - | - | no | - | memory: x |" in md
    assert "holds kernel 1,280, dlio 12 accelerators" in md
