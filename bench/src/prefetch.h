/* Explicit asynchronous reads through HDF5's async VOL connector (vol-async): key vol-async-prefetch. A loader
 * (run.h's loader_ops_t) that issues the next batch's sample reads with H5Fopen_async / H5Dopen_async /
 * H5Dread_async / H5Dclose_async / H5Fclose_async into one event set per batch before the current step's emulated
 * compute, and waits for them (H5ESwait) when the next step asks for that batch: DLIO's prefetch (one batch ahead),
 * with HDF5's background thread doing the reads. What is read is what the synchronous in-rank loader reads (the
 * same files, samples, datasets and selections); only when changes (docs/vol.md). */
#ifndef H5DLIO_PREFETCH_H
#define H5DLIO_PREFETCH_H
#include "run.h"
#include "vol.h"

/* The loader of key vol-async-prefetch (read-threads 0, PyTorch's loader, DLIO's h5py reads): main.c hands it to
 * runner_init, which replaces the configured loader with it. */
extern const loader_ops_t LOADER_ASYNC_PREFETCH;

/* After vol_probe, before any read: the key needs the async connector in the stack HDF5 reports and a loader it can
 * replace. 0, or -1 with a one-line message naming the key and the stack in use. */
int prefetch_check(const config_t *c, const layout_t *L, const vol_t *v, char *err, size_t errlen);

/* Collective (every rank): the ranks' prefetch statistics as a JSON object on rank 0 (malloc'd; NULL elsewhere or
 * when the key is off). *line: the summary line (rank 0; "" when off). */
char *prefetch_report(const runner_t *R, char *line, size_t linelen);
/* After the report: the statistics' handle (runner_free leaves it for the report). */
void prefetch_free(runner_t *R);
#endif
