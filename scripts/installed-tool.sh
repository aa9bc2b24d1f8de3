#!/bin/sh
# h5dlio @TOOL@: a Python tool of h5dlio, installed by `make install` (mk/install.mk) into <prefix>/libexec/h5dlio/
# and run by `h5dlio @TOOL@ ...` (the kernel hands a first word it knows as a tool to this file). The packages it
# runs are in <prefix>/share/h5dlio beside the reference configs; H5DLIO_PYTHON picks the Python (default python3).
prefix=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
py=${H5DLIO_PYTHON:-python3}
if ! "$py" -c 'import @NEEDS@' >/dev/null 2>&1; then
  echo "h5dlio @TOOL@: H5DLIO_PYTHON=$py cannot import @NEEDS@ (pip install --user @PIP@, or set H5DLIO_PYTHON to a" \
       "Python 3.10+ that has them)" >&2
  exit 2
fi
H5DLIO_KERNEL_BIN=${H5DLIO_KERNEL_BIN:-$prefix/bin/h5dlio} H5DLIO_PROG="@PROG@" \
  PYTHONPATH="$prefix/share/h5dlio${PYTHONPATH:+:$PYTHONPATH}" exec "$py" -m @MODULE@ "$@"
