# Sourced by the scripts that build into the cache (deps-dlio.sh, deps-hdf5.sh): one builder per cache folder.
# cache_lock FOLDER NAME: hold FOLDER.lock (on fd 9, until the script exits), waiting for another builder of FOLDER
# (another clone, a parallel job) rather than deleting its half-built folder beneath it (measured: two make
# dlio-venv at once both failed with a broken pip); true when FOLDER is now finished (.h5dlio-complete).
cache_lock() {
  exec 9>"$1.lock"
  if ! flock -n 9; then
    echo "$2: another process is building $1: waiting for it" >&2
    flock 9
  fi
  [ -f "$1/.h5dlio-complete" ]
}
