"""runs import DIR: add every run under DIR once (e.g. runs/): each folder holding a manifest.json is a run
directory (not searched further: its own kernel outputs belong to it), each holding an output.json a bare kernel
run. A folder that cannot be read is named and skipped; already kept runs stay one row each."""
from __future__ import annotations

import os
from pathlib import Path

from common.rundir import MANIFEST
from store import BadInput, cli, db, ingest


def setup_parser(p) -> None:
    p.add_argument("dir", type=Path, help="a folder of runs (e.g. runs/)")
    cli.add_db(p)


def run_folders(root: Path) -> list[Path]:
    """The run directories and kernel output folders under root, in path order."""
    found = []
    for d, subdirs, files in os.walk(root):
        if MANIFEST in files or ingest.KERNEL_OUTPUT in files:
            found.append(Path(d))
            subdirs[:] = []
        else:
            subdirs.sort()
    return sorted(found)


def main(argv=None) -> int:
    a = cli.parse("import", __doc__, setup_parser, argv)

    def body() -> int:
        if not a.dir.is_dir():
            raise BadInput(f"{a.dir}: no such folder")
        con = db.connect(a.db)
        added = kept = 0
        for f in run_folders(a.dir):
            try:
                rid, new = db.put(con, ingest.load(f))
            except BadInput as e:
                print(f"skipped {f}: {e}")
                continue
            added, kept = added + new, kept + (not new)
        print(f"runs import: {added} added, {kept} already kept, from {a.dir} into {a.db}")
        return 0
    return cli.run("import", body)
