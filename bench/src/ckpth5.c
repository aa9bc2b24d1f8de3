/* HDF5 checkpoints (checkpoint-format hdf5): see ckpth5.h. The tensors are those of DLIO's states (ckpt.c), one 1-D
 * contiguous dataset each, named after the state's dict keys; the bytes stream through one buffer of
 * checkpoint-buffer-size bytes (a hyperslab per H5Dwrite/H5Dread), so a checkpoint of any size costs that buffer. */
#define _GNU_SOURCE
#include "ckpth5.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hdf5.h>
#ifdef H5_HAVE_SUBFILING_VFD
#include <H5FDsubfiling.h>
#endif

/* One tensor of the checkpoint: its dataset (path in the file), elements, dtype and the rank that holds it */
typedef struct {
    char name[240];
    int64_t numel;
    int32_t dtype, owner;
} entry_t;

void h5ck_init(h5ck_t *h, const config_t *c, int rank, int nranks)
{
    memset(h, 0, sizeof *h);
    h->cfg = c, h->rank = rank, h->nranks = nranks, h->buf_dtype = -1;
    h->subfiling = c->checkpoint_subfiling;
    h->shared = h->subfiling || strcmp(c->checkpoint_mpiio, "off") != 0;
    h->collective = !strcmp(c->checkpoint_mpiio, "collective");
    h->pid0 = (long)getpid();
    if (h->shared)
        MPI_CHECK(MPI_Bcast(&h->pid0, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    h->buf = xmalloc((size_t)c->checkpoint_buffer_size, "the HDF5 checkpoint buffer (checkpoint-buffer-size)");
}

void h5ck_free(h5ck_t *h)
{
    free(h->it), free(h->buf);
    memset(h, 0, sizeof *h);
}

const char *h5ck_driver(const h5ck_t *h)
{
    return h->subfiling ? "subfiling" : !h->shared ? "sec2" : h->collective ? "mpio-collective" : "mpio-independent";
}

void h5ck_add(h5ck_t *h, const ts_state_t *s, const char *group)
{
    if (h->n == h->cap)
        h->it = xrealloc(h->it, (size_t)(h->cap = h->cap ? 2 * h->cap : 8) * sizeof *h->it, "the checkpoint states");
    h->it[h->n].s = s;
    snprintf(h->it[h->n].group, sizeof h->it[h->n].group, "%s", group);
    h->n++;
}

/* the dict keys from the state's root to node k, '/'-separated */
static void key_path(const ts_state_t *s, int k, char *out, size_t len)
{
    if (s->n[k].parent <= 0) {
        snprintf(out, len, "%s", s->n[k].key);
        return;
    }
    key_path(s, s->n[k].parent, out, len);
    size_t u = strlen(out);
    snprintf(out + u, len - u, "/%s", s->n[k].key);
}

/* This rank's tensors (the states added), then, shared, every rank's, in rank order. Returns the count. */
static int64_t manifest(h5ck_t *h, entry_t **out)
{
    int64_t n = 0, cap = 16;
    entry_t *e = xcalloc((size_t)cap, sizeof *e, "the checkpoint manifest");
    for (int i = 0; i < h->n; i++) {
        const ts_state_t *s = h->it[i].s;
        for (int k = 1; k < s->nn; k++) {
            if (s->n[k].is_dict)
                continue;
            if (n == cap)
                e = xrealloc(e, (size_t)(cap *= 2) * sizeof *e, "the checkpoint manifest");
            char kp[100];
            key_path(s, k, kp, sizeof kp);
            entry_t *x = &e[n++];
            memset(x, 0, sizeof *x);
            if (h->shared)
                snprintf(x->name, sizeof x->name, "/rank-%d/%s/%s", h->rank, h->it[i].group, kp);
            else
                snprintf(x->name, sizeof x->name, "/%s/%s", h->it[i].group, kp);
            x->numel = s->n[k].numel, x->dtype = s->n[k].dtype, x->owner = h->rank;
        }
    }
    h->n = 0;
    if (!h->shared) {
        *out = e;
        return n;
    }
    int mine = (int)(n * (int64_t)sizeof *e), *cnt = xcalloc((size_t)h->nranks, sizeof *cnt, "the checkpoint manifest"),
        *dsp = xcalloc((size_t)h->nranks, sizeof *dsp, "the checkpoint manifest");
    MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD));
    int64_t total = 0;
    for (int q = 0; q < h->nranks; q++) {
        if (total + cnt[q] > (int64_t)1 << 30)
            die(EXIT_RUNTIME, "HDF5 checkpoint: more than 2^30 bytes of tensor names across the ranks");
        dsp[q] = (int)total, total += cnt[q];
    }
    entry_t *all = xcalloc((size_t)(total / (int64_t)sizeof *e) + 1, sizeof *e, "the checkpoint manifest");
    MPI_CHECK(MPI_Allgatherv(e, mine, MPI_BYTE, all, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD));
    free(e), free(cnt), free(dsp);
    *out = all;
    return total / (int64_t)sizeof *e;
}

/* the file (and memory) type of a dtype: the bytes go as they are (no conversion). bf16 has no predefined HDF5 type:
 * IEEE single's sign and exponent with 7 mantissa bits (h5py reads it as a 2-byte float). Returns a type to close. */
static hid_t h5_type(int dtype, const char *path)
{
    switch (dtype) {
    case TS_INT8: return H5_CHECK(H5Tcopy(H5T_STD_I8LE), path, EXIT_RUNTIME);
    case TS_UINT8: return H5_CHECK(H5Tcopy(H5T_STD_U8LE), path, EXIT_RUNTIME);
    case TS_FP16: return H5_CHECK(H5Tcopy(H5T_IEEE_F16LE), path, EXIT_RUNTIME);
    case TS_FP32: return H5_CHECK(H5Tcopy(H5T_IEEE_F32LE), path, EXIT_RUNTIME);
    case TS_FP64: return H5_CHECK(H5Tcopy(H5T_IEEE_F64LE), path, EXIT_RUNTIME);
    default: {
        hid_t t = H5_CHECK(H5Tcopy(H5T_IEEE_F32LE), path, EXIT_RUNTIME);
        H5_CHECK(H5Tset_fields(t, 15, 7, 8, 0, 7), path, EXIT_RUNTIME);
        H5_CHECK(H5Tset_precision(t, 16), path, EXIT_RUNTIME);
        H5_CHECK(H5Tset_size(t, 2), path, EXIT_RUNTIME);
        H5_CHECK(H5Tset_ebias(t, 127), path, EXIT_RUNTIME);
        return t;
    }
    }
}

static hid_t file_access(const h5ck_t *h, const char *path)
{
    hid_t p = H5_CHECK(H5Pcreate(H5P_FILE_ACCESS), path, EXIT_RUNTIME);
    H5_CHECK(H5Pset_libver_bounds(p, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST), path, EXIT_RUNTIME);
    if (!h->shared) {
        H5_CHECK(H5Pset_fapl_sec2(p), path, EXIT_RUNTIME);
        return p;
    }
#ifdef H5_HAVE_SUBFILING_VFD
    if (h->subfiling) {
        H5_CHECK(H5Pset_mpi_params(p, MPI_COMM_WORLD, MPI_INFO_NULL), path, EXIT_RUNTIME);
        H5_CHECK(H5Pset_fapl_subfiling(p, NULL), path, EXIT_RUNTIME);
        return p;
    }
#endif
    H5_CHECK(H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL), path, EXIT_RUNTIME);
    H5_CHECK(H5Pset_all_coll_metadata_ops(p, 1), path, EXIT_RUNTIME);
    H5_CHECK(H5Pset_coll_metadata_write(p, 1), path, EXIT_RUNTIME);
    return p;
}

static hid_t transfer(const h5ck_t *h, const char *path)
{
    hid_t p = H5_CHECK(H5Pcreate(H5P_DATASET_XFER), path, EXIT_RUNTIME);
    if (h->shared && !h->subfiling)
        H5_CHECK(H5Pset_dxpl_mpio(p, h->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT), path, EXIT_RUNTIME);
    return p;
}

/* One dataset's bytes, in hyperslabs of at most the buffer: its owner selects them; in collective mode every other
 * rank takes part in each H5Dwrite/H5Dread with an empty selection. */
static void move(h5ck_t *h, hid_t d, hid_t type, hid_t dxpl, const entry_t *e, int write, int fill, const char *path,
                 h5ck_io_t *io)
{
    int mine = e->owner == h->rank;
    if (!mine && !h->collective)
        return;
    int64_t es = ts_dtype_size(e->dtype), per = h->cfg->checkpoint_buffer_size / es;
    if (write && mine && (h->buf_dtype != e->dtype || h->buf_fill != fill)) {
        ts_pattern(h->buf, (size_t)(per * es), e->dtype, fill);
        h->buf_dtype = e->dtype, h->buf_fill = fill;
    }
    char what[4900]; /* the file and the dataset, for a failing write or read */
    snprintf(what, sizeof what, "%s, dataset %s", path, e->name);
    hid_t fs = H5_CHECK(H5Dget_space(d), path, EXIT_RUNTIME);
    for (int64_t off = 0; off < e->numel; off += per) {
        hsize_t o = (hsize_t)off, n = (hsize_t)(e->numel - off < per ? e->numel - off : per), one = 1;
        hid_t ms = H5_CHECK(H5Screate_simple(1, mine ? &n : &one, NULL), path, EXIT_RUNTIME);
        if (mine)
            H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &o, NULL, &n, NULL), path, EXIT_RUNTIME);
        else
            H5_CHECK(H5Sselect_none(fs), path, EXIT_RUNTIME), H5_CHECK(H5Sselect_none(ms), path, EXIT_RUNTIME);
        if (write)
            H5_CHECK(H5Dwrite(d, type, ms, fs, dxpl, h->buf), what, EXIT_RUNTIME);
        else
            H5_CHECK(H5Dread(d, type, ms, fs, dxpl, h->buf), what, EXIT_RUNTIME);
        H5_CHECK(H5Sclose(ms), path, EXIT_RUNTIME);
        if (mine)
            io->calls++, io->bytes += (int64_t)n * es;
    }
    if (!write)
        h->buf_dtype = -1; /* the reads overwrote the pattern */
    H5_CHECK(H5Sclose(fs), path, EXIT_RUNTIME);
}

void h5ck_write(h5ck_t *h, const char *path, int fill, h5ck_io_t *io)
{
    entry_t *e = NULL;
    int64_t n = manifest(h, &e);
    if (n == 0) { /* a rank (every rank, shared) with nothing to checkpoint writes no file */
        free(e);
        return;
    }
    char tmp[4700];
    if (h->subfiling) /* its subfiles and their config file are named after the file: written in place */
        snprintf(tmp, sizeof tmp, "%s", path);
    else
        snprintf(tmp, sizeof tmp, "%s.partial.%ld", path, h->shared ? h->pid0 : (long)getpid());
    if (!h->cfg->overwrite && access(path, F_OK) == 0)
        die(EXIT_BADINPUT,
            "key 'checkpoint-folder': %s exists (another run's checkpoint?): remove it, use another folder, or set "
            "overwrite=true to replace it",
            path);
    err_ctx()->partial = tmp; /* die() and the signal handlers remove it */
    hid_t fapl = file_access(h, tmp), dxpl = transfer(h, tmp);
    hid_t f = H5_CHECK(H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), tmp, EXIT_RUNTIME);
    hid_t lcpl = H5_CHECK(H5Pcreate(H5P_LINK_CREATE), tmp, EXIT_RUNTIME);
    H5_CHECK(H5Pset_create_intermediate_group(lcpl, 1), tmp, EXIT_RUNTIME);
    hid_t dcpl = H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), tmp, EXIT_RUNTIME);
    H5_CHECK(H5Pset_layout(dcpl, H5D_CONTIGUOUS), tmp, EXIT_RUNTIME);
    H5_CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), tmp, EXIT_RUNTIME); /* no fill-value pass over the bytes */
    for (int64_t i = 0; i < n; i++) { /* shared: every rank creates every dataset, in the same order (collective) */
        hsize_t dim = (hsize_t)e[i].numel;
        hid_t sp = H5_CHECK(H5Screate_simple(1, &dim, NULL), tmp, EXIT_RUNTIME), t = h5_type(e[i].dtype, tmp);
        hid_t d = H5_CHECK(H5Dcreate2(f, e[i].name, t, sp, lcpl, dcpl, H5P_DEFAULT), tmp, EXIT_RUNTIME);
        move(h, d, t, dxpl, &e[i], 1, fill, tmp, io);
        H5_CHECK(H5Dclose(d), tmp, EXIT_RUNTIME);
        H5_CHECK(H5Tclose(t), tmp, EXIT_RUNTIME), H5_CHECK(H5Sclose(sp), tmp, EXIT_RUNTIME);
    }
    H5_CHECK(H5Pclose(dcpl), tmp, EXIT_RUNTIME), H5_CHECK(H5Pclose(lcpl), tmp, EXIT_RUNTIME);
    H5_CHECK(H5Fclose(f), tmp, EXIT_RUNTIME);
    H5_CHECK(H5Pclose(fapl), tmp, EXIT_RUNTIME), H5_CHECK(H5Pclose(dxpl), tmp, EXIT_RUNTIME);
    if (!h->shared || h->rank == 0) {
        if (h->cfg->checkpoint_fsync) { /* the closed file's pages: fsync on any descriptor of it */
            int fd = open(tmp, O_RDONLY | O_CLOEXEC);
            if (fd < 0 || fsync(fd) != 0)
                die(EXIT_RUNTIME, "checkpoint %s: fsync: %s", tmp, strerror(errno));
            close(fd);
            io->fsyncs++;
        }
        if (strcmp(tmp, path) && rename(tmp, path) != 0)
            die(EXIT_RUNTIME, "checkpoint: rename %s -> %s: %s", tmp, path, strerror(errno));
        io->files++;
    }
    if (h->shared) /* the file is under its final name for every rank before the checkpoint ends */
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    err_ctx()->partial = NULL;
    free(e);
}

void h5ck_read(h5ck_t *h, const char *path, h5ck_io_t *io)
{
    entry_t *e = NULL;
    int64_t n = manifest(h, &e);
    if (n == 0) {
        free(e);
        return;
    }
    if (access(path, R_OK) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: %s", path, strerror(errno));
    hid_t fapl = file_access(h, path), dxpl = transfer(h, path);
    hid_t f = H5_CHECK(H5Fopen(path, H5F_ACC_RDONLY, fapl), path, EXIT_RUNTIME);
    for (int64_t i = 0; i < n; i++) {
        hid_t d = H5Dopen2(f, e[i].name, H5P_DEFAULT);
        if (d < 0)
            die(EXIT_RUNTIME, "checkpoint %s: no dataset %s: not this model's checkpoint", path, e[i].name);
        hid_t sp = H5_CHECK(H5Dget_space(d), path, EXIT_RUNTIME), ft = H5_CHECK(H5Dget_type(d), path, EXIT_RUNTIME);
        hsize_t dim = 0;
        int nd = H5Sget_simple_extent_dims(sp, &dim, NULL);
        if (nd != 1 || (int64_t)dim != e[i].numel || H5Tget_size(ft) != (size_t)ts_dtype_size(e[i].dtype))
            die(EXIT_RUNTIME, "checkpoint %s: dataset %s is not this model's tensor (%lld %s elements expected)", path,
                e[i].name, (long long)e[i].numel, ts_dtype_name(e[i].dtype));
        hid_t t = h5_type(e[i].dtype, path);
        move(h, d, t, dxpl, &e[i], 0, 0, path, io);
        H5_CHECK(H5Tclose(t), path, EXIT_RUNTIME), H5_CHECK(H5Tclose(ft), path, EXIT_RUNTIME);
        H5_CHECK(H5Sclose(sp), path, EXIT_RUNTIME), H5_CHECK(H5Dclose(d), path, EXIT_RUNTIME);
    }
    H5_CHECK(H5Fclose(f), path, EXIT_RUNTIME);
    H5_CHECK(H5Pclose(fapl), path, EXIT_RUNTIME), H5_CHECK(H5Pclose(dxpl), path, EXIT_RUNTIME);
    if (!h->shared || h->rank == 0)
        io->files++;
    free(e);
}
