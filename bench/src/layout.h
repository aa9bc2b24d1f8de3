/* What a dataset looks like on disk and how files are opened: file names, per-file sample dimensions (following the
 * DLIO entry in use, dlio.h) and the file-driver table. */
#ifndef H5DLIO_LAYOUT_H
#define H5DLIO_LAYOUT_H
#include "config.h"
#include "dlio.h"
#include <hdf5.h>
#include <stdint.h>

typedef struct {
    const config_t *cfg;
    const dlio_entry_t *dlio;
    int64_t nfiles[2];  /* train, eval */
    const char *ext;    /* the data files' extension: the entry's (hdf5), or npz (format npz) */
    int64_t dim1, dim2; /* every file's sample dimensions when record-length-stdev is 0: int(sqrt(record-length))
                             twice, or record-dims (d1 / num-dset-per-record, d2) */
    int64_t *dims;      /* record-length-stdev > 0: 2 x (train+eval) drawn dimensions, DLIO's order; else NULL */
    double stdev;       /* the draws' scale: record-length-stdev / 2 / sqrt(record-length) */
} layout_t;

/* Compute per-file dimensions exactly as DLIO draws them (numpy legacy RNG, seed 10). */
void layout_init(layout_t *L, const config_t *cfg);
void layout_free(layout_t *L);
/* Once the rank count is known: entries whose generation seeds each rank apart (gen_seed_per_rank) draw file k's
 * dimensions from stream 10 + k % nranks (else nothing changes). */
void layout_ranks(layout_t *L, int nranks);
/* Path of file i of a phase; returns the length (truncation is a fatal error). */
void layout_path(const layout_t *L, int phase, int64_t i, char *out, size_t outlen);
/* The folder holding a phase's files: <data-folder>/<train|valid>, or its sub-folder k when the phase has more than
 * one (num-subfolders-train/eval) */
void layout_subfolder(const layout_t *L, int phase, int64_t k, char *out, size_t outlen);
void layout_dims(const layout_t *L, int phase, int64_t i, int64_t *d1, int64_t *d2);
/* Name of samples dataset k of a file (k < num-dset-per-record). */
void layout_records_name(const layout_t *L, int64_t k, char *out, size_t outlen);

/* File-driver table: how files are opened for the configured mode. */
typedef struct {
    const char *name;
    hid_t (*fapl)(const config_t *c); /* file access property list for open/create */
    hid_t (*dxpl)(const config_t *c); /* transfer property list for H5Dread/H5Dwrite */
} driver_t;
/* for_create: never route creation through the Log VFD (it changes EOA and later "Allocated" lines). */
const driver_t *driver_select(const config_t *c, int for_create);
#endif
