"""strace profile: every I/O system call of every process of a rank, as the Linux kernel sees it.

DFTracer and Darshan see the C library's wrappers (and only those they wrap: glibc >= 2.33's stat family, readv and
O_DIRECT's flags are unseen or dropped); a library preloaded ahead of them can hide a call from the kernel altogether
(a no-op fsync or posix_fadvise). strace sees the system calls themselves. Each rank's command runs under
`strace -f -ff` (every thread and process it starts, reader processes included, each in its own file
`strace/trace.r<rank>.<pid>`, the rank from the launcher's environment); the system calls traced are the I/O ones
(SYSCALLS), with each descriptor's path (-y), a microsecond clock (-ttt) and at most 16 bytes or elements of a buffer
(-s 16: readv's first 16 iovec lengths; a longer vector is counted, its lengths past 16 not listed).

Collected per side (tables/strace-<side>.json), streaming one line at a time: per data file (relative to the side's
data folder) and per checkpoint file (relative to the launch's checkpoint folder; the kernel's `<name>.partial.<pid>`
under its final name) the open flags, the (offset, size) of every read, readv's iovec lengths, writes, fsync,
fdatasync, posix_fadvise (offset, length, advice), the stat family, renames, unlinks, mmaps, lseeks and closes; per
rank its data-file opens in time order and the processes that opened one; per rank the LD_PRELOAD its command ran
with. Checked: strace.per_file (every field side by side), strace.ranks (each rank's data-file opens: a multiset, in
order where the rank reads in its own process), strace.preload (an fsync or posix_fadvise DFTracer counts at the C
library that never reaches the kernel).

The package: traces.py reads the traces into the tables (the harness's collect), checks.py compares them (validate's
checks); here the Profile, its wrapper, the calls it traces and the names the callers take from `profiles.strace`
(each imported from its module when first asked for)."""
from __future__ import annotations

import os
import shutil
import subprocess

from profiles import Context, Deferred, Done, Found, Launch, Profile, Wrapped, counted, exports, register

__all__ = ["GEN_SYSCALLS", "STRACE_OPTS", "SYSCALLS", "WRAPPER", "Parser", "Strace", "check_discovery",
           "check_generate", "check_per_file", "check_preload", "check_ranks", "new_row", "parse", "strace_binary"]
__getattr__ = exports(__name__, {".checks": ("check_discovery", "check_generate", "check_per_file", "check_preload",
                                             "check_ranks"),
                                 ".traces": ("Parser", "new_row", "parse")})

# the calls traced (strace -e trace=?...) in every launch
SYSCALLS = ("open", "openat", "read", "pread64", "readv", "preadv", "preadv2", "write", "pwrite64", "writev",
            "pwritev", "pwritev2", "lseek", "close", "fsync", "fdatasync", "fadvise64", "newfstatat", "statx", "fstat",
            "stat", "lstat", "rename", "renameat", "renameat2", "unlink", "unlinkat", "mmap")
# the generate launches' calls besides those (a file's and a folder's metadata: creating, linking, truncating)
GEN_SYSCALLS = ("creat", "mkdir", "mkdirat", "rmdir", "link", "linkat", "symlink", "symlinkat", "truncate",
                "ftruncate", "fallocate")
STRACE_OPTS = ("-f", "-ff", "-qq", "-y", "-ttt", "-s", "16", "--seccomp-bpf")


def strace_binary() -> str | None:
    return shutil.which("strace")


# the rank's command under strace; the rank from the launcher's environment (traces.RANK_VARS), its LD_PRELOAD recorded
WRAPPER = ('r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-0}}}; p=$0; s=$1; shift; '
           'printf "%s\\n" "${LD_PRELOAD:-}" > "$p.r$r.preload"; exec "$s" -o "$p.r$r" "$@"')


HOW = "the strace profile (PROFILES=...,strace; on by default at tiny and small scale)"


@register
class Strace(Profile):
    name = "strace"
    describes = ("system calls per data and checkpoint file (open flags, reads, readv, fsync, fadvise, stat); calls a "
                 "preloaded library kept from the kernel (strace)")
    order = 45
    holds_file_tables = True
    traces_generation = True
    checks = Deferred(".checks:check_per_file", ".checks:check_discovery", ".checks:check_ranks",
                      ".checks:check_preload", ".checks:check_generate")
    covers = {k: HOW for k in ("open_flags", "readv", "sync_kernel", "stat", "stat_discovery")} | {
        "generation": "the strace profile on both generate launches (PROFILES=...,strace; on by default at tiny and "
                      "small scale)"}
    claims = (("strace.per_file", counted("open_flags", "readv", "sync_kernel", "stat")),)  # expected: the files

    def available(self, ctx: Context) -> Found:
        """strace on PATH and allowed to trace here (ptrace and seccomp-bpf: a container or Yama's ptrace_scope 3 may
        forbid them, and every launch under it would fail): one traced `true` with the launches' options."""
        exe = strace_binary()
        if exe is None:
            return Found(False, "no strace on PATH (Debian package strace: scripts/deps-system.sh installs it)")
        true = shutil.which("true") or "/bin/true"
        try:
            p = subprocess.run([exe, *STRACE_OPTS, "-o", os.devnull, "-e", "trace=?fsync", true], capture_output=True,
                               text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            return Found(False, f"{exe} cannot run here: {e}")
        if p.returncode != 0:
            return Found(False, f"{exe} cannot trace here (exit {p.returncode}: {' '.join(p.stderr.split())[:200]})")
        return Found(True, info={"strace": exe})

    def default_at(self, scale: str) -> bool:
        """On by default at the tiny and small presets (tiny_odirect, ...): its cost there is within the launches'
        noise (docs/validation.md#strace-system-calls); at field scale a trace line per call of every file (~10 per
        file and epoch) is asked for by name (PROFILES=...,strace)."""
        return scale.startswith(("tiny", "small"))

    def wrap(self, launch: Launch) -> Wrapped:
        """Each rank's command (not the launcher) under strace, its trace files in <workdir>/strace/."""
        folder = launch.workdir / "strace"
        calls = SYSCALLS + GEN_SYSCALLS if launch.step == "generate" else SYSCALLS
        trace = "trace=" + ",".join(f"?{c}" for c in calls)
        argv = ["sh", "-c", WRAPPER, str(folder / "trace"), launch.info.get("strace", "strace"), *STRACE_OPTS,
                "-e", trace, "--", *launch.argv]
        return Wrapped(argv, dict(launch.env), dirs=(folder,))

    def collect(self, done: Done) -> dict:
        """A training launch's table (strace-<side>.json); a generate launch's (strace-generate-<side>.json), none when
        it ran without strace (a DLIO side reused from a run that did not trace its generation)."""
        from profiles.strace.traces import parse
        if done.step == "generate":
            if not (done.workdir / "strace").is_dir():
                return {}
            return {f"strace-generate-{done.side}.json": parse(done.workdir, done.side, done.data, generation=True)}
        return {f"strace-{done.side}.json": parse(done.workdir, done.side, done.data)}
