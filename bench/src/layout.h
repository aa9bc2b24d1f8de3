/* What a dataset looks like on disk and how files are opened: file names, per-file sample dimensions,
 * the per-DLIO-release choices (one table entry per release) and the file-driver table. */
#ifndef H5DLIO_LAYOUT_H
#define H5DLIO_LAYOUT_H
#include "config.h"
#include <hdf5.h>
#include <stdint.h>

/* DLIO-release-specific choices of the kernel. Supporting the next release = one new entry. */
typedef struct {
    const char *version;
    H5F_libver_t libver_low;   /* h5py.File(libver=...) low bound used by DLIO's generator */
    int track_times;           /* dataset creation/modification times recorded */
    int sampler_shuffles;      /* PyTorch dlio_sampler applies sample_shuffle */
    const char *file_ext;      /* DLIO names files <prefix>_<i>_of_<N>.<ext> */
} dlio_entry_t;
const dlio_entry_t *dlio_entry(const char *version);

enum phase { PH_TRAIN = 0, PH_EVAL = 1 };

typedef struct {
    const config_t *cfg;
    const dlio_entry_t *dlio;
    int64_t nfiles[2];    /* train, eval */
    int64_t dim;          /* int(sqrt(record-length)): every file's dimensions when record-length-stdev is 0 */
    int64_t *dims;        /* record-length-stdev > 0: 2 x (train+eval) drawn dimensions, DLIO's order; else NULL */
} layout_t;

/* Compute per-file dimensions exactly as DLIO 2.0.0 draws them (numpy legacy RNG, seed 10). */
void layout_init(layout_t *L, const config_t *cfg);
void layout_free(layout_t *L);
/* Path of file i of a phase; returns the length (truncation is a fatal error). */
void layout_path(const layout_t *L, int phase, int64_t i, char *out, size_t outlen);
void layout_dims(const layout_t *L, int phase, int64_t i, int64_t *d1, int64_t *d2);

/* File-driver table: how files are opened for the configured mode. */
typedef struct {
    const char *name;
    hid_t (*fapl)(const config_t *c);   /* file access property list for open/create */
    hid_t (*dxpl)(const config_t *c);   /* transfer property list for H5Dread/H5Dwrite */
} driver_t;
/* for_create: never route creation through the Log VFD (it changes EOA and later "Allocated" lines). */
const driver_t *driver_select(const config_t *c, int for_create);
#endif
