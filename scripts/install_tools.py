"""`make install`'s Python tools (mk/install.mk): the packages they run copied into <prefix>/share/h5dlio (beside the
reference configs, so they find them as in a checkout) and one launcher per tool in <prefix>/libexec/h5dlio/, made
from scripts/installed-tool.sh; `h5dlio <tool> ...` (the installed kernel) runs it. Installing again replaces the
packages and launchers it wrote; nothing else is touched.

usage: python3 scripts/install_tools.py PREFIX"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("common", "harness", "profiles", "store")  # what harness sizing and store import (tests/test_install.py)
# tool -> (the module it runs, the name its help and errors go by, what it imports from outside, their pip names)
TOOLS = {"sizing": ("harness sizing", "h5dlio", "yaml", "pyyaml matplotlib"),
         "runs": ("store", "h5dlio runs", "numpy", "numpy matplotlib")}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.rsplit("\n", 1)[-1], file=sys.stderr)
        return 2
    prefix = Path(argv[0]).resolve()
    share, libexec = prefix / "share" / "h5dlio", prefix / "libexec" / "h5dlio"
    for pkg in PACKAGES:
        shutil.rmtree(share / pkg, ignore_errors=True)
        shutil.copytree(REPO / pkg, share / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    libexec.mkdir(parents=True, exist_ok=True)
    template = (REPO / "scripts" / "installed-tool.sh").read_text()
    for tool, (module, prog, needs, pip) in TOOLS.items():
        text = template
        for key, value in (("TOOL", tool), ("MODULE", module), ("PROG", prog), ("NEEDS", needs), ("PIP", pip)):
            text = text.replace(f"@{key}@", value)
        dst = libexec / f"h5dlio-{tool}"
        dst.write_text(text)
        dst.chmod(0o755)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
