#include "layout.h"
#include "nprand.h"
#include "util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void layout_records_name(const layout_t *L, int64_t k, char *out, size_t outlen)
{
    const config_t *c = L->cfg;
    int w = L->dlio->indexed_records ? snprintf(out, outlen, "%s_%lld", c->records_dataset_name, (long long)k)
                                     : snprintf(out, outlen, "%s", c->records_dataset_name);
    if (w < 0 || (size_t)w >= outlen)
        die(EXIT_BADINPUT, "key 'records-dataset-name': too long");
}

static void draw_dims(layout_t *L, uint32_t seed, int64_t first, int64_t step);

void layout_init(layout_t *L, const config_t *c)
{
    memset(L, 0, sizeof *L);
    L->cfg = c;
    L->dlio = dlio_entry(c->dlio_entry); /* resolved by config_load */
    if (!L->dlio)
        die(EXIT_BADINPUT, "key 'dlio-version': no entry for '%s'", c->dlio_version);
    L->nfiles[PH_TRAIN] = c->num_files_train;
    L->nfiles[PH_EVAL] = c->num_files_eval;
    /* DLIO 3.x names files .<format> (data_generator/data_generator.py:354-359 at f6796ed) */
    L->ext = strcmp(c->format, "hdf5") ? c->format : L->dlio->file_ext;
    /* DLIO: dimension = int(sqrt(record_length)); stdev = record_length_stdev / 2 / sqrt(record_length).
     * Without a stdev every file has the same dimensions: nothing is stored (a config with 10^9 files costs no
     * memory); with one, the draws are sequential, so they are stored (config_validate bounds the file count). */
    double sq = sqrt((double)c->record_length);
    L->dim1 = L->dim2 = (int64_t)sq;
    if (c->nrecord_dims == 2) { /* DLIO >= 2.0.1 record_dims: (d1 / num_dset_per_record, d2), hdf5_generator.py:62-63 */
        L->dim1 = c->record_dims[0] / c->num_dset_per_record;
        L->dim2 = c->record_dims[1];
        return; /* DLIO refuses record_dims with a stdev (utils/config.py:340-341 at v2.0.1) */
    }
    L->stdev = (double)c->record_length_stdev / 2.0 / sq;
    if (L->stdev > 0) {
        int64_t total = c->num_files_train + (c->num_files_eval > 0 ? c->num_files_eval : 0);
        L->dims = malloc((size_t)(2 * total + 2) * sizeof *L->dims);
        if (!L->dims)
            die(EXIT_RUNTIME, "out of memory for %lld file dimensions", (long long)total);
        draw_dims(L, 10, 0, 1);
    }
}

/* get_dimension(total) after np.random.seed(seed): 2 x total normal draws; file k keeps draws 2k and 2k+1, for
 * the files k = first, first + step, ... */
static void draw_dims(layout_t *L, uint32_t seed, int64_t first, int64_t step)
{
    int64_t total = L->nfiles[PH_TRAIN] + (L->nfiles[PH_EVAL] > 0 ? L->nfiles[PH_EVAL] : 0);
    nprand_t r;
    nprand_seed(&r, seed);
    for (int64_t k = 0; k < 2 * total; k++) {
        double d = nprand_normal(&r, (double)L->dim1, L->stdev);
        int64_t v = (int64_t)d; /* Python int(): truncation toward zero */
        if (k / 2 >= first && (k / 2 - first) % step == 0)
            L->dims[k] = v > 1 ? v : 1;
    }
}

void layout_ranks(layout_t *L, int nranks)
{
    /* MLCommons DLIO 3.x (gen_seed_per_rank): data_generator/hdf5_generator.py:70 np.random.seed(10 + my_rank) before
     * get_dimension(total) (:72), and rank q writes files q, q+R, ... (:81) with draws 2i, 2i+1 of its own stream:
     * file k's dimensions come from stream 10 + k % R */
    if (!L->dlio->gen_seed_per_rank || !L->dims)
        return;
    for (int q = 0; q < nranks; q++) draw_dims(L, (uint32_t)(10 + q), q, nranks);
}

void layout_free(layout_t *L)
{
    free(L->dims);
    L->dims = NULL;
}

void layout_dims(const layout_t *L, int phase, int64_t i, int64_t *d1, int64_t *d2)
{
    if (!L->dims) {
        *d1 = L->dim1;
        *d2 = L->dim2;
        return;
    }
    int64_t k = (phase == PH_TRAIN ? 0 : L->nfiles[PH_TRAIN]) + i;
    *d1 = L->dims[2 * k];
    *d2 = L->dims[2 * k + 1];
}

static int ndigits(int64_t n)
{
    int d = 1;
    while (n >= 10) n /= 10, d++;
    return d;
}

void layout_subfolder(const layout_t *L, int phase, int64_t k, char *out, size_t outlen)
{
    const config_t *c = L->cfg;
    phase_cfg_t p = config_phase(c, phase);
    int w = p.subfolders > 1
                ? snprintf(out, outlen, "%s/%s/%0*lld", c->data_folder, p.folder, ndigits(p.subfolders), (long long)k)
                : snprintf(out, outlen, "%s/%s", c->data_folder, p.folder);
    if (w < 0 || (size_t)w >= outlen)
        die(EXIT_BADINPUT, "key 'data-folder': file path too long (%d characters)", w);
}

void layout_path(const layout_t *L, int phase, int64_t i, char *out, size_t outlen)
{
    const config_t *c = L->cfg;
    phase_cfg_t p = config_phase(c, phase);
    int64_t n = L->nfiles[phase];
    char dir[4400];
    /* DLIO: file i in sub-folder i mod S when S > 1 (data_generator/data_generator.py:91-105 at 2.0.0) */
    layout_subfolder(L, phase, p.subfolders > 1 ? i % p.subfolders : 0, dir, sizeof dir);
    int w;
    if (c->naming == NAMING_H5BENCH) /* h5bench: 1-based, unpadded, .h5 */
        w = snprintf(out, outlen, "%s/%s_%lld_of_%lld.h5", dir, c->file_prefix, (long long)i + 1, (long long)n);
    else /* DLIO: 0-based, zero-padded to the digits of N */
        w = snprintf(out, outlen, "%s/%s_%0*lld_of_%lld.%s", dir, c->file_prefix, ndigits(n), (long long)i,
                     (long long)n, L->ext);
    if (w < 0 || (size_t)w >= outlen)
        die(EXIT_BADINPUT, "key 'data-folder': file path too long (%d characters)", w);
}

/* ---------- file drivers ---------- */
static hid_t fapl_common(const config_t *c)
{
    (void)c;
    /* what h5py.File() sets: libver bounds (earliest, latest) and alignment (1, 1) */
    hid_t p = H5_CHECK(H5Pcreate(H5P_FILE_ACCESS), "fapl", EXIT_RUNTIME);
    H5_CHECK(H5Pset_libver_bounds(p, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST), "fapl", EXIT_RUNTIME);
    H5_CHECK(H5Pset_alignment(p, 1, 1), "fapl", EXIT_RUNTIME);
    return p;
}

/* Reading: like h5py, leave the driver unset, so the default (sec2) applies and HDF5_DRIVER (1.14+) is honoured */
static hid_t fapl_default(const config_t *c) { return fapl_common(c); }

/* Creating: sec2 set explicitly, so HDF5_DRIVER=log in the environment never routes creation through the Log VFD */
static hid_t fapl_sec2(const config_t *c)
{
    hid_t p = fapl_common(c);
    H5_CHECK(H5Pset_fapl_sec2(p), "fapl", EXIT_RUNTIME);
    return p;
}

static hid_t fapl_log(const config_t *c)
{
    hid_t p = fapl_common(c);
    /* NULL logfile = stderr; the same flags HDF5_DRIVER=log uses (1.14): LOC_IO | ALLOC */
    H5_CHECK(H5Pset_fapl_log(p, NULL, H5FD_LOG_LOC_IO | H5FD_LOG_ALLOC, 0), "fapl", EXIT_RUNTIME);
    return p;
}

static hid_t dxpl_default(const config_t *c)
{
    (void)c;
    return H5P_DEFAULT;
}

#ifdef H5_HAVE_PARALLEL
/* Each rank reads files no other rank has open at that moment: MPI-IO on MPI_COMM_SELF, so a "collective"
 * open never waits for ranks that are reading other files (the h5bench kernel's hang). */
static hid_t fapl_mpio(const config_t *c)
{
    hid_t p = fapl_common(c);
    H5_CHECK(H5Pset_fapl_mpio(p, MPI_COMM_SELF, MPI_INFO_NULL), "fapl", EXIT_RUNTIME);
    if (c->collective_meta) {
        H5_CHECK(H5Pset_all_coll_metadata_ops(p, 1), "fapl", EXIT_RUNTIME);
        H5_CHECK(H5Pset_coll_metadata_write(p, 1), "fapl", EXIT_RUNTIME);
    }
    return p;
}

static hid_t dxpl_mpio(const config_t *c)
{
    hid_t p = H5_CHECK(H5Pcreate(H5P_DATASET_XFER), "dxpl", EXIT_RUNTIME);
    H5_CHECK(H5Pset_dxpl_mpio(p, c->collective_data ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT), "dxpl",
             EXIT_RUNTIME);
    return p;
}
#endif

#ifdef H5_HAVE_SUBFILING_VFD
#include <H5FDsubfiling.h>
static hid_t fapl_subfiling(const config_t *c)
{
    hid_t p = fapl_common(c);
    H5_CHECK(H5Pset_mpi_params(p, MPI_COMM_SELF, MPI_INFO_NULL), "fapl", EXIT_RUNTIME);
    H5_CHECK(H5Pset_fapl_subfiling(p, NULL), "fapl", EXIT_RUNTIME);
    return p;
}
#endif

// clang-format off: a table, kept as written
static const driver_t DRIVERS[] = {
    {"default", fapl_default, dxpl_default},
    {"sec2", fapl_sec2, dxpl_default},
    {"log", fapl_log, dxpl_default},
#ifdef H5_HAVE_PARALLEL
    {"mpio", fapl_mpio, dxpl_mpio},
#endif
#ifdef H5_HAVE_SUBFILING_VFD
    {"subfiling", fapl_subfiling, dxpl_default},
#endif
};
// clang-format on

static const driver_t *driver_by_name(const char *n)
{
    for (size_t i = 0; i < sizeof DRIVERS / sizeof DRIVERS[0]; i++)
        if (!strcmp(DRIVERS[i].name, n))
            return &DRIVERS[i];
    die(EXIT_BADINPUT, "file driver '%s' is not available in this HDF5 build", n);
}

const driver_t *driver_select(const config_t *c, int for_create)
{
    if (c->subfiling)
        return driver_by_name("subfiling");
    if (c->collective_data || c->collective_meta)
        return driver_by_name("mpio");
    if (c->log_vfd && !for_create)
        return driver_by_name("log");
    return driver_by_name(for_create ? "sec2" : "default");
}
