"""Which file, in which order, end to end (issue 35): `make validate` on the tiny imagenet_files workload (64
one-sample HDF5 files of 100 KiB, all of one size, 2 ranks, 8 reader processes, 2 epochs), where the Log VFD's records
name no file and every file reads alike. The unmutated run PASSes with dftracer.order.rank0/1; each order mutant of
the kernel, re-launched against the same DLIO side (--reuse-dlio, kernel launches only), FAILs on dftracer.order."""
from __future__ import annotations

import json
import shutil

import pytest
import test_validation_e2e as e2e

pytestmark = [pytest.mark.dlio, pytest.mark.slow]


@pytest.fixture(scope="module")
def fixed_size_run(tmp_path_factory):
    if not e2e.VENV or not e2e.Path(e2e.VENV, "bin", "dlio_benchmark").exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={e2e.VENV!r}); `make test` installs it")
    tmp = tmp_path_factory.mktemp("order")
    rc, run = e2e.harness(tmp, workload="imagenet_files")
    yield tmp, rc, run
    shutil.rmtree(tmp, ignore_errors=True)  # ~0.4 GB: freed when the module ends, not the session


def test_the_unmutated_fixed_size_run_passes_with_the_order_compared(fixed_size_run):
    _, rc, run = fixed_size_run
    assert rc == 0
    vrc, v = e2e.validate(run)
    assert vrc == 0 and not e2e.failing(v), e2e.failing(v)
    rows = {c["name"]: c for c in v["checks"]}
    for r in (0, 1):
        assert rows[f"dftracer.order.rank{r}"]["status"] == "pass"
        assert "8 reading processes on each side, 64 data-file opens" in rows[f"dftracer.order.rank{r}"]["detail"]
    assert "open_order" not in {x["io"] for x in v["not_compared"]}


# mutant -> the order rows it must fail (the others: bench/src/mutate.c; the whole matrix: `make mutants`, family
# fixed-size). rank-seed: the last rank's sampler seeded with seed + 1; swap-rank-slices: ranks 0 and 1 read each
# other's slice. Both leave every per-file total and every Log VFD record as they were on this workload.
ORDER_MUTANTS = {"rank-seed": {"dftracer.order.rank1"},
                 "swap-rank-slices": {"dftracer.order.rank0", "dftracer.order.rank1"}}
# the other checks that see a mutant: which files each rank opened (the strace profile, on by default at tiny scale)
# sees two ranks' slices swapped; nothing else may fail
ALSO = {"rank-seed": set(), "swap-rank-slices": {"strace.ranks"}}


@pytest.mark.parametrize("mutant", sorted(ORDER_MUTANTS))
def test_an_order_mutant_fails_the_order_check(fixed_size_run, mutant):
    tmp, _, run = fixed_size_run
    rc, neg = e2e.harness(tmp / mutant, "--reuse-dlio", str(run), workload="imagenet_files",
                          env={"H5DLIO_MUTATE": mutant})
    assert rc == 0  # every launch ran fine: only validation can tell
    assert json.loads((neg / "kernel" / "timing" / "out" / "output.json").read_text())["mutant"] == mutant
    vrc, v = e2e.validate(neg)
    bad = e2e.failing(v)
    assert vrc == 1 and v["verdict"] == "fail"
    assert {n for n in bad if n.startswith("dftracer.order.")} == ORDER_MUTANTS[mutant], bad
    assert {n for n in bad if not n.startswith("dftracer.order.")} == ALSO[mutant], bad
    detail = next(c["detail"] for c in v["checks"] if c["name"] == sorted(ORDER_MUTANTS[mutant])[0])
    assert "first differing open: rank" in detail and "DLIO train/" in detail and "the kernel train/" in detail
