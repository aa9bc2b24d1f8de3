/* np.savez(path, x=records, y=[0] * spf) as MLCommons DLIO 3.x's numpy generator calls it
 * (data_generator/npz_generator.py:95-101 at f6796ed) and numpy 2.x with CPython 3.12's zipfile write it: a zip of
 * two STORED members x.npy (uint8, shape (d1, d2, spf)) and y.npy (int64 zeros, shape (spf,)), each local header
 * with a zip64 extra field (numpy opens each member with force_zip64=True), npy 1.0 headers padded to 64 bytes
 * (numpy's GROWTH_AXIS_MAX_DIGITS spaces included), a central directory without zip64 records. With the per-file
 * seed DLIO draws (data_generator.py:155-190: default_rng(10 + rank).integers(0, 2**63) per file, in the rank's file
 * order), byte-identical to DLIO's file when DLIO runs numpy's generator (no dgen-py, no s3dlio). */
#ifndef H5DLIO_NPZ_H
#define H5DLIO_NPZ_H
#include <stddef.h>
#include <stdint.h>

/* The largest file the writer produces: CPython's zipfile switches to zip64 central records past 2^31 - 1 */
#define NPZ_MAX_FILE ((int64_t)0x7FFFFFFF)

/* The file's size in bytes for samples of d1 x d2 bytes, spf samples. */
int64_t npz_file_size(int64_t d1, int64_t d2, int64_t spf);

/* Write the file at path (created, truncated). The sample bytes are DLIO's: the stream of np.random.default_rng(seed)
 * as gen_random_tensor scales it to uint8 (pcg64.h), generated bufsize bytes at a time into buf. Returns the sample
 * bytes written; on failure dies naming the file (EXIT_RUNTIME). */
int64_t npz_write(const char *path, int64_t d1, int64_t d2, int64_t spf, uint8_t *buf, size_t bufsize, uint64_t seed);
#endif
