"""h5dlio(1) in man(7) format, generated from the program's own --help and --version (whose key table is the
options table of bench/src/options.c): `python3 scripts/manpage.py build/h5dlio > h5dlio.1`. Standard library only."""
from __future__ import annotations

import subprocess
import sys


def roff(text: str) -> str:
    """Text safe in man(7): backslashes doubled, a line starting with . or ' escaped."""
    out = []
    for line in text.replace("\\", "\\\\").splitlines():
        out.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(out)


def page(binary: str) -> str:
    helptext = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    usage, _, rest = helptext.partition("\n\n")
    intro, _, body = rest.partition("\n\n")
    ver = version.split()[1] if len(version.split()) > 1 else "?"
    return "\n".join([
        f'.TH H5DLIO 1 "" "h5dlio {ver}" "User Commands"',
        ".SH NAME",
        "h5dlio, h5bench_dlio \\- DLIO Benchmark's HDF5 I/O without the ML stack",
        ".SH SYNOPSIS", ".nf", roff(usage.replace(binary, "h5dlio").removeprefix("usage: ")), ".fi",
        ".SH DESCRIPTION", roff(intro),
        ".PP", "Run under MPI (mpirun, srun). The same program is installed as h5bench_dlio, the name h5bench's runner "
        "starts. The key table below is the program's options table: every key, its DLIO YAML path, its default "
        "(h5bench form and DLIO YAML form) and its meaning.",
        ".SH OPTIONS AND KEYS", ".nf", roff(body), ".fi",
        ".SH VERSION", roff(version),
        ".SH SEE ALSO", "mpirun(1); the manual in share/doc/h5dlio (docs/ of the source)."]) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 scripts/manpage.py <h5dlio binary>")
    sys.stdout.write(page(sys.argv[1]))
