"""Reference vectors for the kernel's C unit tests, computed with numpy's legacy RandomState (the generator
DLIO 2.0.0 uses). Run as a script to rewrite bench/tests/vectors/; tests/test_vectors.py checks the committed
files equal what numpy produces now, so the C tests never compare against the kernel's own output."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

VEC_DIR = Path(__file__).resolve().parent.parent / "bench" / "tests" / "vectors"
SEEDS = [0, 1, 10, 42, 123, 2**31 - 1, 2**32 - 1]


def seed_state() -> str:
    out = []
    for s in SEEDS:
        np.random.seed(s)
        _, key, pos, has_gauss, gauss = np.random.get_state()
        words = " ".join(str(int(k)) for k in key)
        out.append(f"{s} {pos} {words}")
    return "\n".join(out) + "\n"


def random_sample() -> str:
    out = []
    for s in SEEDS:
        np.random.seed(s)
        vals = np.random.random_sample(700)  # > 624 words: crosses a state refill
        out.append(f"{s} {len(vals)} " + " ".join(repr(float(v)) for v in vals))
    return "\n".join(out) + "\n"


def normal() -> str:
    """np.random.normal(loc, scale, n) after np.random.seed(s); odd n exercises the cached second value."""
    cases = [(10, 12107.0, 2822.25, 336), (10, 1024.0, 0.0001, 7), (42, 0.0, 1.0, 1001), (123, -5.0, 3.5, 3)]
    out = []
    for s, loc, scale, n in cases:
        np.random.seed(s)
        vals = np.random.normal(loc, scale, n)
        out.append(f"{s} {loc!r} {scale!r} {n} " + " ".join(repr(float(v)) for v in vals))
    return "\n".join(out) + "\n"


def dlio_dims() -> str:
    """DLIO 2.0.0 DataGenerator.get_dimension for HDF5: seed 10, normal(dim, stdev, 2*files), max(int(d), 1)."""
    cases = [(146600628, 68341808, 168, 0), (1048576, 524288, 8, 2), (67108864, 0, 4, 1), (100, 5000, 6, 0)]
    out = []
    for rl, rls, ntrain, neval in cases:
        total = ntrain + neval
        dim = int(math.sqrt(rl))
        sd = rls / 2.0 / math.sqrt(rl)
        np.random.seed(10)
        if sd > 0:
            dims = [max(int(d), 1) for d in np.random.normal(dim, sd, 2 * total)]
        else:
            dims = [dim] * (2 * total)
        out.append(f"{rl} {rls} {ntrain} {neval} " + " ".join(str(d) for d in dims))
    return "\n".join(out) + "\n"


def dlio_sampler() -> str:
    """DLIO 2.0.0 torch_data_loader.dlio_sampler: rank slice of ceil(T/R), np.random.seed(seed) then
    np.random.shuffle(self.indices) at every epoch, on the same list (the permutation compounds)."""
    cases = [(32, 2, 123, 3), (32, 3, 123, 2), (128 * 4, 32, 42, 2), (16, 1, 7, 4), (1000, 4, 2**32 - 1, 2)]
    out = []
    for total, ranks, seed, epochs in cases:
        spp = int(math.ceil(total / ranks))
        for rank in range(ranks):
            idx = list(range(rank * spp, min((rank + 1) * spp, total)))
            for epoch in range(1, epochs + 1):
                np.random.seed(seed)
                np.random.shuffle(idx)
                out.append(f"{total} {ranks} {rank} {seed} {epoch} {len(idx)} " + " ".join(map(str, idx)))
    return "\n".join(out) + "\n"


def dlio3_reshard() -> str:
    """MLCommons DLIO 3.x (f6796ed) file lists per rank and epoch: the analytic model's dlio3_file_lists, written
    literally from DLIO's source with path strings (main.py:274-278, :483-484 the round-robin listing trimmed to
    floor(N/R); utils/config.py:1067-1110 the reshard at every reconfigure(epoch)), not from the kernel.
    Line: N R seed sce epoch rank n files."""
    sys.path.insert(0, str(VEC_DIR.parent.parent.parent))  # run as a script: the repository's packages
    from validate.model import dlio3_file_lists
    cases = [(28, 2, 123, True, 3), (30, 4, 123, True, 2), (7, 3, 42, False, 2), (64, 5, 2**31 - 1, True, 2),
             (9, 1, 123, True, 2)]
    out = []
    for n_files, ranks, seed, sce, epochs in cases:
        for epoch, lists in enumerate(dlio3_file_lists(n_files, ranks, seed, epochs, True, sce), start=1):
            for r, idx in enumerate(lists):
                out.append(f"{n_files} {ranks} {seed} {int(sce)} {epoch} {r} {len(idx)} " + " ".join(map(str, idx)))
    return "\n".join(out) + "\n"


def dlio3_dims() -> str:
    """MLCommons DLIO 3.x HDF5Generator.generate (data_generator/hdf5_generator.py:70-83 at f6796ed): rank q seeds
    np.random.seed(10 + q), draws get_dimension(total) (data_generator.py: normal(dim, stdev, 2*total),
    max(int(d), 1)) and writes files q, q+R, ... with draws 2i, 2i+1.
    Line: record_length stdev ntrain neval ranks, then d1 d2 per file."""
    cases = [(1048576, 488832, 28, 0, 2), (1048576, 524288, 8, 2, 3), (100, 5000, 6, 0, 1)]
    out = []
    for rl, rls, ntrain, neval, ranks in cases:
        total = ntrain + neval
        dim = int(math.sqrt(rl))
        sd = rls / 2.0 / math.sqrt(rl)
        files: list[tuple[int, int]] = [(0, 0)] * total
        for q in range(ranks):
            np.random.seed(10 + q)
            d = [max(int(x), 1) for x in np.random.normal(dim, sd, 2 * total)]
            for i in range(q, total, ranks):
                files[i] = (d[2 * i], d[2 * i + 1])
        out.append(f"{rl} {rls} {ntrain} {neval} {ranks} " + " ".join(f"{a} {b}" for a, b in files))
    return "\n".join(out) + "\n"


FILES = {
    "seed_state.txt": seed_state,
    "random_sample.txt": random_sample,
    "normal.txt": normal,
    "dlio_dims.txt": dlio_dims,
    "dlio_sampler.txt": dlio_sampler,
    "dlio3_reshard.txt": dlio3_reshard,
    "dlio3_dims.txt": dlio3_dims,
}


def main() -> int:
    VEC_DIR.mkdir(parents=True, exist_ok=True)
    for name, fn in FILES.items():
        (VEC_DIR / name).write_text(fn())
        print(f"wrote {VEC_DIR / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
