/* What a dataset looks like on disk and how files are opened: file names, per-file sample dimensions,
 * the per-DLIO-release choices (one table entry per release) and the file-driver table. */
#ifndef H5DLIO_LAYOUT_H
#define H5DLIO_LAYOUT_H
#include "config.h"
#include <hdf5.h>
#include <stdint.h>

/* DLIO-release-specific choices of the kernel, one entry per DLIO release, each derived from that release's source
 * (file:line in layout.c). Supporting the next release = one new entry; an unknown release uses the nearest entry. */
typedef struct {
    const char *version;        /* release, or `git describe` past a tag without its hash: "2.0.1-17" */
    const char *since;          /* first DLIO revision whose HDF5 I/O this entry describes (nearest-entry range) */
    const char *source;         /* the DLIO source the entry was derived from */
    H5F_libver_t libver_low;    /* h5py.File(libver=...) low bound used by DLIO's generator */
    int track_times;            /* dataset creation/modification times recorded */
    int indexed_records;        /* samples datasets named <records>_<k>, k < num-dset-per-record (else <records>) */
    int sampler_shuffles;       /* PyTorch path: sample_shuffle changes the read order */
    int cap_checked_on_fetch;   /* the step cap is checked after a batch is fetched (one more batch loaded) */
    int trim_files_to_steps;    /* initialize() trims the file counts to multiples of samples x batch x ranks */
    const char *file_ext;       /* DLIO names files <prefix>_<i>_of_<N>.<ext> */
} dlio_entry_t;
/* The entry of exactly this version, or NULL. */
const dlio_entry_t *dlio_entry(const char *version);
/* The entry for a version: exact, else the nearest (the newest entry whose `since` is not after the version; the
 * oldest entry before every `since`), *nearest set to 1. NULL if the version is not a version string. */
const dlio_entry_t *dlio_entry_resolve(const char *version, int *nearest);
/* Version order (numeric, then the commit count past the tag); -2 if either is not a version string. */
int dlio_version_cmp(const char *a, const char *b);
/* "2.0.0, 2.0.1, ..." (static buffer) */
const char *dlio_entry_list(void);

enum phase { PH_TRAIN = 0, PH_EVAL = 1 };

typedef struct {
    const config_t *cfg;
    const dlio_entry_t *dlio;
    int64_t nfiles[2];    /* train, eval */
    int64_t dim1, dim2;   /* every file's sample dimensions when record-length-stdev is 0: int(sqrt(record-length))
                             twice, or record-dims (d1 / num-dset-per-record, d2) */
    int64_t *dims;        /* record-length-stdev > 0: 2 x (train+eval) drawn dimensions, DLIO's order; else NULL */
} layout_t;

/* Compute per-file dimensions exactly as DLIO draws them (numpy legacy RNG, seed 10). */
void layout_init(layout_t *L, const config_t *cfg);
void layout_free(layout_t *L);
/* Path of file i of a phase; returns the length (truncation is a fatal error). */
void layout_path(const layout_t *L, int phase, int64_t i, char *out, size_t outlen);
void layout_dims(const layout_t *L, int phase, int64_t i, int64_t *d1, int64_t *d2);
/* Name of samples dataset k of a file (k < num-dset-per-record). */
void layout_records_name(const layout_t *L, int64_t k, char *out, size_t outlen);
/* Files of a phase the release's training run uses for nranks ranks (DLIO main trims them, see trim_files_to_steps). */
int64_t layout_files_used(const config_t *c, const dlio_entry_t *e, int phase, int nranks);

/* File-driver table: how files are opened for the configured mode. */
typedef struct {
    const char *name;
    hid_t (*fapl)(const config_t *c);   /* file access property list for open/create */
    hid_t (*dxpl)(const config_t *c);   /* transfer property list for H5Dread/H5Dwrite */
} driver_t;
/* for_create: never route creation through the Log VFD (it changes EOA and later "Allocated" lines). */
const driver_t *driver_select(const config_t *c, int for_create);
#endif
