"""One Darshan log read a record at a time: libdarshan-util's own darshan_log_get_record through pydarshan's cffi
backend (its `ffi` and `libdutil`), without pydarshan's DarshanReport, which holds every record of every module of
the log (then copies them again in `to_df`, and makes two DataFrames per DXT record). Each record is handed over
and dropped; the caller keeps what its tables store. The values are the log's own: counters as int64, fcounters and
DXT times as the doubles stored (darshan-parser's and darshan-dxt-parser's text rounds them to 6 and 4 decimals).
Every record is handed over, named or not (DarshanReport passes over records without a name record: the caller
does, from the names it keeps)."""
from __future__ import annotations

import operator
import struct
from collections.abc import Iterator
from pathlib import Path

# struct segment_info of darshan-dxt-log-format.h (3.5.0): int64 offset, int64 length, double start_time, end_time,
# after the struct dxt_file_record, the record's writes first then its reads (darshan-dxt-logutils.c)
SEGMENT = struct.Struct("=qqdd")
STRUCTS = {"POSIX": "struct darshan_posix_file **", "H5F": "struct darshan_hdf5_file **",
           "H5D": "struct darshan_hdf5_dataset **", "DXT_POSIX": "struct dxt_file_record **"}


class Log:
    """An open Darshan log: .exe, .nprocs, .modules ({name: {"idx", "partial_flag", ...}}), then .names() once and
    .records(...) / .dxt() once per module. Use as a context manager (the log is closed on leaving)."""

    def __init__(self, path: Path):
        from darshan.backend import cffi_backend as be  # pydarshan, imported only when there is a log to read

        self.path, self._be, self._ffi, self._lib = Path(path), be, be.ffi, be.libdutil
        self._handle = self._lib.darshan_log_open(str(path).encode())
        if not self._handle:
            raise ValueError(f"{path}: not a readable Darshan log (libdarshan-util could not open it)")
        try:
            log = {"handle": self._handle, "modules": None, "name_records": None}
            self.nprocs = be.log_get_job(log)["nprocs"]
            self.exe = be.log_get_exe(log)
            self.modules = be.log_get_modules(log)
        except BaseException:
            self.__exit__()
            raise

    def __enter__(self) -> Log:
        return self

    def __exit__(self, *exc) -> None:
        if self._handle is not None:
            self._lib.darshan_log_close(self._handle)
            self._handle = None

    def names(self) -> Iterator[tuple[int, str]]:
        """(record id, name) of every name record."""
        ffi, lib = self._ffi, self._lib
        recs, cnt = ffi.new("struct darshan_name_record **"), ffi.new("int *")
        lib.darshan_log_get_name_records(self._handle, recs, cnt)  # void
        if recs[0] == ffi.NULL:  # its table unreadable: libdarshan-util has closed the log (darshan-logutils.c)
            self._handle = None
            raise ValueError(f"{self.path}: its name records cannot be read (a truncated or corrupt log)")
        try:
            for i in range(cnt[0]):
                yield recs[0][i].id, ffi.string(recs[0][i].name).decode("utf-8")
        finally:
            for i in range(cnt[0]):
                lib.darshan_free(recs[0][i].name)
            lib.darshan_free(recs[0])

    def _get(self, mod: str, buf) -> bool:
        """The module's next record into buf[0] (libdarshan-util fills a counter module's buffer in place when given
        one, and mallocs a DXT record's to its size when given NULL); False at the module's end."""
        r = self._lib.darshan_log_get_record(self._handle, self.modules[mod]["idx"], buf)
        if r < 0:
            raise ValueError(f"{self.path}: a {mod} record cannot be read (darshan_log_get_record returned {r}): "
                             "a truncated or corrupt log")
        return r > 0

    def _layout(self, mod: str, counters: tuple, fcounters: tuple) -> tuple:
        """The record's size, a struct.Struct of its base record (id, rank), counters and fcounters (the names
        libdarshan-util exports, in its order), and the picker of (id, rank, the named ones...)."""
        ffi, be = self._ffi, self._be
        st = ffi.typeof(STRUCTS[mod]).item.item
        cn, fn = be.counter_names(mod), be.fcounter_names(mod)
        oc, of, size = ffi.offsetof(st, "counters"), ffi.offsetof(st, "fcounters"), ffi.sizeof(st)
        if oc < 16 or of < oc + 8 * len(cn) or size < of + 8 * len(fn):
            raise ValueError(f"{self.path}: {mod}: libdarshan-util's record layout is not the one this reader "
                             "knows (profiles/darshan/log.py)")
        layout = struct.Struct(f"=Qq{oc - 16}x{len(cn)}q{of - oc - 8 * len(cn)}x{len(fn)}d")
        pick = [0, 1] + [2 + cn.index(c) for c in counters] + [2 + len(cn) + fn.index(c) for c in fcounters]
        return size, layout, operator.itemgetter(*pick)

    def records(self, mod: str, counters: tuple = (), fcounters: tuple = ()) -> Iterator[tuple]:
        """(id, rank, the named counters' values..., the named fcounters' values...) per record of a counter module
        (POSIX, H5F, H5D)."""
        if mod not in self.modules:
            return
        size, layout, pick = self._layout(mod, counters, fcounters)
        ffi, buf = self._ffi, self._ffi.new("void **")
        rec = ffi.cast("char **", buf)
        try:
            while self._get(mod, buf):
                yield pick(layout.unpack(ffi.buffer(rec[0], size)))
        finally:
            if buf[0] != ffi.NULL:
                self._lib.darshan_free(buf[0])

    def dxt(self, mod: str = "DXT_POSIX") -> Iterator[tuple]:
        """(id, rank, write segments, read segments) per DXT record, each segment (offset, length, start, end)."""
        if mod not in self.modules:
            return
        ffi, free = self._ffi, self._lib.darshan_free
        head = ffi.sizeof("struct dxt_file_record")
        buf = ffi.new("void **")
        cast = ffi.cast(STRUCTS["DXT_POSIX"], buf)
        while self._get(mod, buf):
            try:
                rec = cast[0]
                w, r = rec.write_count, rec.read_count
                segs = list(SEGMENT.iter_unpack(ffi.buffer(ffi.cast("char *", buf[0]) + head, (w + r) * SEGMENT.size)))
                rid, rank = rec.base_rec.id, rec.base_rec.rank
            finally:
                free(buf[0])
                buf[0] = ffi.NULL
            yield rid, rank, segs[:w], segs[w:]
