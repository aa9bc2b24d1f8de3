"""The per-file rows of tables/files-<profile>.json (FileRows, Differences), a data file's index by DLIO's name, the
<profile>.explained row, and the DLIO paper's similarity over I/O features."""
from __future__ import annotations

import re

from profiles import FAIL, PASS, result


def cosine_similarity(a: dict, b: dict) -> float:
    """The DLIO paper's similarity: cosine of two I/O feature vectors; each feature is first scaled by the larger of
    the two sides, so that bytes do not drown percentages."""
    keys = sorted(set(a) & set(b))
    va, vb = [], []
    for key in keys:
        m = max(abs(a[key]), abs(b[key]))
        va.append(a[key] / m if m else 1.0)
        vb.append(b[key] / m if m else 1.0)
    na, nb = sum(x * x for x in va) ** 0.5, sum(x * x for x in vb) ** 0.5
    return sum(x * y for x, y in zip(va, vb, strict=True)) / (na * nb) if na and nb else 0.0


def explained(profile: str, other: list[dict], dropped: int = 0) -> dict:
    """<profile>.explained: every difference outside the data-file reads has a class (tables/files-<profile>.json);
    dropped: classified differences counted but not listed (Differences)."""
    unexplained = [x for x in other if x["class"] is None]
    return result(f"{profile}.explained", PASS if not unexplained else FAIL, 0, len(unexplained),
                  f"{len(other) + dropped} non-data differences, all classified (tables/files-{profile}.json)"
                  if not unexplained else f"unclassified: {unexplained[:3]}")


def similarity(name: str, d: dict, k: dict, what: str) -> list[dict]:
    """The similarity result of one profile's tables (DLIO's features as expected, the kernel's as observed);
    nothing when a side has no features."""
    fa, fb = d.get("features") or {}, k.get("features") or {}
    if not (fa and fb):
        return []
    score = cosine_similarity(fa, fb)
    return [result(name, PASS, fa, fb, f"cosine similarity {score:.4f} over I/O features of {what} (each feature "
                   "scaled by the larger side; reported, not judged)", required=False) | {"observed_score": score}]


FILE_INDEX = re.compile(r"_(\d+)_of_(\d+)\.[^/]+$")


def file_index(f: str) -> int:
    """A data file's index by DLIO's name (img_<i>_of_<N>.<ext>), -1 for any other name."""
    m = FILE_INDEX.search(f)
    return int(m.group(1)) if m else -1


def train_file_index(f: str, cfg: dict) -> int:
    """A training file's index by DLIO's name and place: under the data folder's train/ (DLIO's DatasetType.TRAIN
    folder, sub-folders below it allowed) and named img_<i>_of_<N> with N the workload's num_files_train and i below
    it; -1 for any other name (an evaluation file, a file of another dataset's size, a stray copy elsewhere)."""
    m = FILE_INDEX.search(f)
    n = int((cfg.get("dataset") or {}).get("num_files_train", 0) or 0)
    if not m or f.split("/", 1)[0] != "train" or int(m.group(2)) != n or int(m.group(1)) >= n:
        return -1
    return int(m.group(1))


class FileRows:
    """The per-file rows of tables/files-<profile>.json, bounded whatever the file count: each side's counters of the
    first `listed` files (in the order added: sorted) and of the first `differing` files that are not identical on
    both sides (a field or the transfer-size histogram differs, or one side did not touch the file), plus a summary
    of every file and the distinct (DLIO bytes, kernel bytes, identical) pairs with their file counts (the report's
    scatter). Every file's counters per side stay in tables/<profile>-<side>.json; every difference is listed in the
    table's `differences` (validate writes both)."""

    def __init__(self, fields: tuple[str, ...], listed: int = 200, differing: int = 2000):
        self.fields, self.listed, self.differing = (*fields, "sizes"), listed, differing
        self.rows: list[dict] = []
        self.counts = {"files": 0, "identical": 0, "only_dlio": 0, "only_kernel": 0, "differ": 0}
        self.pairs: dict[tuple, int] = {}
        self._kept_differing = 0

    def add(self, name: str, d: dict | None, k: dict | None) -> None:
        """one file; d, k: each side's row (its fields and `sizes`), None where that side did not touch it"""
        same = d is not None and k is not None and all(d.get(f) == k.get(f) for f in self.fields)
        kind = "identical" if same else "only_kernel" if d is None else "only_dlio" if k is None else "differ"
        self.counts["files"] += 1
        self.counts[kind] += 1
        pair = (int((d or {}).get("bytes") or 0), int((k or {}).get("bytes") or 0), same)
        self.pairs[pair] = self.pairs.get(pair, 0) + 1
        keep = self.counts["files"] <= self.listed
        if not same and self._kept_differing < self.differing:
            self._kept_differing += 1
            keep = True
        if keep:
            self.rows += [{"file": name, "side": side, **row} for side, row in (("dlio", d), ("kernel", k))
                          if row is not None]

    def table(self, differences: list, **rest) -> dict:
        """the table; differences: a Differences (its classified groups' counts kept beside it) or a list"""
        listed = len({r["file"] for r in self.rows})
        counts = {"difference_counts": differences.counts(), "differences_dropped": differences.dropped} \
            if isinstance(differences, Differences) else {}
        return {"rows": self.rows, "summary": {**self.counts, "listed": listed},
                "pairs": [[a, b, same, n] for (a, b, same), n in self.pairs.items()], "differences": differences,
                **counts, **rest}


class Differences(list):
    """A per-file comparison's differences, bounded whatever the file count: every unclassified one (each a failure),
    and of the classified ones (explained I/O outside the data reads, e.g. a Python stat per data file: one per file
    at 10^6 files) the first `keep` of each (call, class), the others counted (`groups`: every classified one)."""

    def __init__(self, keep: int = 20):
        super().__init__()
        self.keep, self.dropped = keep, 0
        self.groups: dict[tuple[str, str], int] = {}

    def append(self, x: dict) -> None:
        if x.get("class") is not None:
            key = (str(x["field"]), str(x["class"]))
            n = self.groups[key] = self.groups.get(key, 0) + 1
            if n > self.keep:
                self.dropped += 1
                return
        super().append(x)

    def counts(self) -> list[list]:
        """[call, class, differences] of every classified group, listed or not"""
        return [[field, cls, n] for (field, cls), n in self.groups.items()]
