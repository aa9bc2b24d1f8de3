"""The streamed parse against pydarshan's DarshanReport parse, log by log: `profiles.darshan.parse.parse_log` of two
trees (the one before, exported with `git archive`, and this one) on every log given, each under three folder
choices (the data folder "/" (every file a data file), the checkpoint folder "/" (POSIX and DXT records all
checkpoint files), and the data folder the log's most common parent folder), the outputs compared as JSON text,
byte for byte.
Then `profiles.darshan.parse.parse` (a launch's table) of one folder holding every log, each program named in turn the
launched one (the other logs children of the launch).
Usage: python equal.py OLD_TREE NEW_TREE LOG...   (exit 1 and the first difference if any output differs)
       python equal.py --dump LOG...               (what one tree gives, one JSON line per log and choice: internal)"""
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path


def choices(log: Path) -> list:
    from darshan.backend import cffi_backend as be  # pydarshan's own reader (the old tree has no darshan_log)

    lg = be.log_open(str(log))
    try:
        parents = Counter(str(Path(n.split(":/")[0]).parent) for n in be.log_get_name_records(lg).values()
                          if n.startswith("/"))
    finally:
        be.log_close(lg)
    common = parents.most_common(1)[0][0] if parents else "/none"
    return [("/", None), ("/none", "/"), (common, None)]


def dump(logs: list) -> None:
    from profiles import darshan

    for log in map(Path, logs):
        for data, ckpt in choices(log):
            try:
                t = darshan.parse.parse_log(log, Path(data), Path(ckpt) if ckpt else None)
                out = json.dumps(t, default=str)
            except Exception as e:  # noqa: BLE001  (a log one tree cannot read: the error is compared too)
                out = json.dumps({"error": type(e).__name__})
            print(json.dumps({"log": log.name, "data": data, "ckpt": ckpt}), out, sep="\t", flush=True)


def launch(logs: list) -> None:
    import shutil
    import tempfile

    from profiles import darshan

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "logs").mkdir()
        for i, log in enumerate(logs):  # a numbered copy: two logs of the same name are both kept
            shutil.copy(log, Path(tmp) / "logs" / f"{i:03d}_{Path(log).name}")
        for prog in ("h5sample", "h5py_sample.py", "ior", "macsio", "pq_app", "not-there"):
            try:
                out = json.dumps(darshan.parse.parse(Path(tmp), "kernel", Path("/scratch/dlio/data"), programs=(prog,)),
                                 default=str)
            except Exception as e:  # noqa: BLE001
                out = json.dumps({"error": type(e).__name__, "text": str(e).replace(tmp, "TMP")})
            print(json.dumps({"launch": prog}), out, sep="\t", flush=True)


def main() -> int:
    if sys.argv[1] == "--dump":
        dump(sys.argv[2:])
        launch(sys.argv[2:])
        return 0
    old, new, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
    outs = []
    for tree in (old, new):
        env = {**os.environ, "PYTHONPATH": tree}
        p = subprocess.run([sys.executable, __file__, "--dump", *logs], env=env, capture_output=True, text=True)
        if p.returncode:
            print(f"{tree}: {p.stderr[-2000:]}")
            return 2
        outs.append(p.stdout.splitlines())
    same = 0
    for a, b in zip(*outs, strict=True):
        if a != b:
            print(f"DIFFERENT {a.split(chr(9))[0]}\n  old: {a[:600]}\n  new: {b[:600]}")
            return 1
        same += 1
    errors = sum('"error"' in a.split("\t")[1][:20] for a in outs[0])
    print(json.dumps({"compared": same, "logs": len(logs), "byte_identical": True, "both_refused": errors}))
    return 0


sys.exit(main())
