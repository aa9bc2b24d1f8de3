"""An Lmod modulefile (Lua) for an h5dlio installed under PREFIX: `python3 scripts/modulefile.py PREFIX VERSION`
(make install writes it to PREFIX/share/modulefiles/h5dlio/VERSION.lua). Standard library only."""
from __future__ import annotations

import sys


def lua_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def modulefile(prefix: str, version: str) -> str:
    return f"""-- h5dlio {version}: written by `make install` (mk/install.mk, scripts/modulefile.py)
whatis("Name: h5dlio")
whatis("Version: {version}")
whatis("Description: DLIO Benchmark's HDF5 training I/O without the ML stack (h5dlio, h5bench_dlio)")
help([[
h5dlio {version}: run it under MPI, e.g. `mpirun -np 4 h5dlio --config $H5DLIO_CONFIGS/../examples/unet3d.yaml`.
The binary finds its parallel HDF5 through its rpath; MPI is the one it was built with (load it first if your site
provides MPI as a module). Man page: `man h5dlio`. Configs: $H5DLIO_CONFIGS. Docs: $H5DLIO_ROOT/share/doc/h5dlio.
]])
local root = {lua_str(prefix)}
prepend_path("PATH", pathJoin(root, "bin"))
prepend_path("MANPATH", pathJoin(root, "share/man"))
setenv("H5DLIO_ROOT", root)
setenv("H5DLIO_CONFIGS", pathJoin(root, "share/h5dlio/reference-configs"))
"""


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python3 scripts/modulefile.py PREFIX VERSION")
    sys.stdout.write(modulefile(sys.argv[1], sys.argv[2]))
