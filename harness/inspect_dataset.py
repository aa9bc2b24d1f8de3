"""Describe a generated dataset with h5py (run with the reference venv's Python): per file, its datasets with
shape, dtype, layout, chunks and filters; an .npz file (DLIO 3.x's np.savez files) by its zip members: name,
compression, offsets, sizes, the zip64 extra field, the npy header (shape, dtype, order, length) and the member's
CRC-32, as stored and as computed from the bytes on disk (the kernel replays the bytes of DLIO 3.x's numpy
generator: equal CRCs say the samples are DLIO's), and the file's size; a .jpeg/.png file (DLIO 3.x's non-DALI image
generator writes d1 x d2 raw random bytes, no image bitstream: jpeg_generator.py:78-98 at f6796ed) by its size, its
first bytes, whether they open an image (JPEG's SOI, PNG's signature) and its CRC-32.
Usage: python inspect_dataset.py DATA_FOLDER [--only-other] > tables.json (--only-other: the .npz/.jpeg/.png files
only; the harness describes HDF5 files with bench/tools/describe.c: harness/describe_dataset.py)"""
import json
import struct
import sys
import zipfile
import zlib
from pathlib import Path

import h5py

LAYOUTS = {0: "compact", 1: "contiguous", 2: "chunked", 3: "virtual"}


def describe(path: Path) -> dict:
    out = {}
    with h5py.File(path, "r") as f:
        for name, obj in f.items():
            if isinstance(obj, h5py.Dataset):
                out[name] = {"shape": list(obj.shape), "dtype": obj.dtype.str,
                             "layout": LAYOUTS.get(obj.id.get_create_plist().get_layout(), "?"),
                             "chunks": list(obj.chunks) if obj.chunks else None, "compression": obj.compression}
    return out


def describe_npz(path: Path) -> dict:
    import numpy.lib.format as npf
    out = {"file_size": path.stat().st_size}
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        for i in z.infolist():
            # the local header: 30 bytes, then the name and its extra field (numpy: a zip64 one, force_zip64=True)
            nlen, xlen = struct.unpack_from("<HH", raw, i.header_offset + 26)
            extra = raw[i.header_offset + 30 + nlen: i.header_offset + 30 + nlen + xlen]
            start = i.header_offset + 30 + nlen + xlen
            with z.open(i) as f:
                version = npf.read_magic(f)
                shape, fortran, dtype = (npf.read_array_header_1_0 if version == (1, 0) else
                                         npf.read_array_header_2_0)(f)
                hlen = f.tell()
            out[i.filename] = {"shape": list(shape), "dtype": dtype.str, "fortran_order": fortran,
                               "npy_version": list(version), "npy_header": hlen, "compress_type": i.compress_type,
                               "header_offset": i.header_offset, "data_offset": start, "size": i.file_size,
                               "compress_size": i.compress_size, "extra": extra.hex(), "flag_bits": i.flag_bits,
                               "crc32_stored": f"{i.CRC:08x}",  # and of the bytes on disk (STORED members):
                               "crc32": f"{zlib.crc32(raw[start:start + i.compress_size]):08x}",
                               "versions": [i.create_version, i.create_system, i.extract_version],
                               "date_time": list(i.date_time), "external_attr": i.external_attr}
    return out


def describe_image(path: Path) -> dict:
    raw = path.read_bytes()
    return {"file_size": len(raw), "head": raw[:8].hex(),
            "image_bitstream": raw[:3] == b"\xff\xd8\xff" or raw[:8] == b"\x89PNG\r\n\x1a\n",
            "crc32": f"{zlib.crc32(raw):08x}"}


OTHER = (".npz", ".jpeg", ".png")
GEN_RECORD = "h5dlio-generation.json"  # the kernel's completion record (bench/src/gen.h): no dataset file


def main(folder: str, only_other: bool = False) -> int:
    root = Path(folder)
    files = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and (p.suffix in OTHER or not only_other) and rel != GEN_RECORD:
            try:
                files[rel] = (describe_npz(p) if p.suffix == ".npz" else
                              describe_image(p) if p.suffix in (".jpeg", ".png") else describe(p))
            except (OSError, zipfile.BadZipFile, ValueError) as e:
                files[rel] = {"error": str(e)}
    json.dump({"folder": str(root), "files": files}, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:] == ["--only-other"]))
