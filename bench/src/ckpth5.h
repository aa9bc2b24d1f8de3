/* The kernel's own checkpoint format (checkpoint-format hdf5): the tensors DLIO's checkpoint states hold (ckpt.c
 * decides which, torchsave.h describes them), written as one HDF5 file per writing rank per checkpoint, one group per
 * torch.save file DLIO would write and one 1-D dataset per tensor; or, with checkpoint-mpiio / checkpoint-subfiling,
 * one file per checkpoint shared by every rank (/rank-<r>/<group>/...). Not DLIO's: no DLIO writes HDF5 checkpoints. */
#ifndef H5DLIO_CKPTH5_H
#define H5DLIO_CKPTH5_H
#include "config.h"
#include "torchsave.h"
#include <stdint.h>

typedef struct {
    const ts_state_t *s;
    char group[100]; /* the torch.save file's name without .pt (DLIO 2.0.0: model, optimizer, layer-<l>) */
} h5ck_item_t;

typedef struct {
    int64_t files, bytes, calls, fsyncs; /* files this rank created (shared: rank 0), tensor bytes, H5Dwrite/H5Dread */
} h5ck_io_t;

typedef struct {
    const config_t *cfg;
    int rank, nranks;
    int shared;     /* 0: a file per rank (sec2); 1: one file per checkpoint (MPI-IO or subfiling) */
    int collective; /* shared with checkpoint-mpiio collective: every H5Dwrite/H5Dread is collective */
    int subfiling;
    long pid0;       /* rank 0's pid: the shared file's partial name */
    h5ck_item_t *it; /* the states of the checkpoint under way */
    int n, cap;
    uint8_t *buf; /* checkpoint-buffer-size bytes: every H5Dwrite/H5Dread goes through it */
    int buf_dtype, buf_fill;
} h5ck_t;

/* collective (shared: rank 0's pid is broadcast) */
void h5ck_init(h5ck_t *h, const config_t *c, int rank, int nranks);
void h5ck_free(h5ck_t *h);
/* the driver's name for the results: sec2, mpio-independent, mpio-collective, subfiling */
const char *h5ck_driver(const h5ck_t *h);
/* a state of the checkpoint under way (ckpt.c calls it where the torch path writes or reads a file) */
void h5ck_add(h5ck_t *h, const ts_state_t *s, const char *group);
/* The states added since the last call, written to `path` (per-rank file: only when there are any; shared: every
 * rank calls it, collective). Partial name, then rename (shared with subfiling: in place: the subfiles are named
 * after the file). fill: enum ts_fill. */
void h5ck_write(h5ck_t *h, const char *path, int fill, h5ck_io_t *io);
/* The states added since the last call, read back from `path` (every tensor, in buffer-size hyperslabs). */
void h5ck_read(h5ck_t *h, const char *path, h5ck_io_t *io);
#endif
