"""Describe a generated dataset with h5py (run with the reference venv's Python): per file, its datasets with
shape, dtype, layout, chunks and filters. Usage: python inspect_dataset.py DATA_FOLDER > tables.json"""
import json
import sys
from pathlib import Path

import h5py

LAYOUTS = {0: "compact", 1: "contiguous", 2: "chunked", 3: "virtual"}


def describe(path: Path) -> dict:
    out = {}
    with h5py.File(path, "r") as f:
        for name, obj in f.items():
            if isinstance(obj, h5py.Dataset):
                out[name] = {"shape": list(obj.shape), "dtype": obj.dtype.str,
                             "layout": LAYOUTS.get(obj.id.get_create_plist().get_layout(), "?"),
                             "chunks": list(obj.chunks) if obj.chunks else None, "compression": obj.compression}
    return out


def main(folder: str) -> int:
    root = Path(folder)
    files = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            try:
                files[rel] = describe(p)
            except OSError as e:
                files[rel] = {"error": str(e)}
    json.dump({"folder": str(root), "files": files}, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
