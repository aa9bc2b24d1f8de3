"""The README documents every kernel key `h5dlio --help` lists (and no key the kernel does not have)."""
import re
import subprocess
from pathlib import Path

from kernel import BIN

README = Path(__file__).resolve().parent.parent / "README.md"


def help_keys() -> set[str]:
    out = subprocess.run([BIN, "--help"], capture_output=True, text=True, check=True).stdout
    table = out.split("\nKEY ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    return {line.split()[0] for line in table if line.strip()}


def readme_keys() -> set[str]:
    keys = set()
    for line in README.read_text().splitlines():
        m = re.match(r"\| ([a-z0-9-]+)(\(-stdev\))? \|", line)
        if m:
            keys.add(m.group(1))
            if m.group(2):
                keys.add(m.group(1) + "-stdev")
    return keys


def test_every_key_is_documented():
    missing = help_keys() - readme_keys()
    assert not missing, f"README's key table lacks {sorted(missing)}"


def test_no_stale_key_in_readme():
    stale = {k for k in readme_keys() - help_keys() if "-" in k or k in ("train", "evaluation", "epochs", "au")}
    assert not stale, f"README documents keys h5dlio does not have: {sorted(stale)}"
