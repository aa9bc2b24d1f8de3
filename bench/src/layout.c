#include "layout.h"
#include "nprand.h"
#include "util.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One entry per DLIO release. Paths are relative to the dlio_benchmark package of the named revision.
 * Shared by every entry (unchanged from 2.0.0 to main): file names <prefix>_<i zero-padded to the digits of N>_of_<N>
 * .hdf5 (data_generator/data_generator.py:109-120 at v2.0.1), per-file dimensions numpy normal draws after
 * np.random.seed(10) (data_generator.py:66-67, hdf5_generator.py:58 at v2.0.1), 'labels' int64 zeros created after
 * the records, one h5py.File(path, 'r') per sample (reader/reader_handler.py:106-120 at v2.0.1: ON_DEMAND), the
 * rank slice [r*ceil(T/R), (r+1)*ceil(T/R)) (data_loader/torch_data_loader.py:90-95 at v2.0.1), drop_last. */
static const dlio_entry_t DLIO_ENTRIES[] = {
    /* PyPI 2.0.0 = git ec22aec (v2.0.0-3; the v2.0.0 tag, 866828c, has another sampler).
     * data_generator/hdf5_generator.py:56 h5py.File(path, 'w'): h5py defaults, superblock v0 (libver earliest);
     * :69 one 'records' dataset, :79 'labels'. reader/hdf5_reader.py:47 reads ['records'][i].
     * data_loader/torch_data_loader.py:104-108: dlio_sampler shuffles its persistent slice in place after
     * np.random.seed(seed) at every epoch (the permutation compounds); its slice is not clamped at T (IndexError).
     * main.py:287 the step cap is checked after the step (compute, barrier): exactly min(cap, batches) loaded;
     * main.py:239 evaluation likewise (at least one step). utils/config.py:407-412 dataset.record_length*. */
    {"2.0.0", "0", "PyPI dlio-benchmark 2.0.0 (git ec22aec)", H5F_LIBVER_EARLIEST, 1, 0, 1, 0, 0, "hdf5"},
    /* v2.0.1 (b56c741; its setup.py still says 2.0.0).
     * data_generator/hdf5_generator.py:44 h5py.File(name, 'w', libver='latest'): superblock v3, v2 object headers;
     * :45-47 datasets records_0..records_{num_dset_per_record-1}, created with data= (h5py's create_dataset sets
     * track_times=False, which v2 object headers honour), :48 'labels'. reader/hdf5_reader.py:47-48 reads
     * ['records_<k>'][i] for every k inside one open. data_loader/torch_data_loader.py:84-103: dlio_sampler no
     * longer shuffles (no sample_shuffle argument) and clamps its slice at T; utils/config.py:499-527: the index map
     * shuffles only the insertion order of a dict from global index to (file, index): the PyTorch read order is the
     * rank's slice in order whatever sample_shuffle says. main.py:328 and :242: the step cap is checked when a batch
     * arrives, before compute: one batch more than the cap is loaded when the loader has one.
     * utils/config.py:792-797 dataset.record_length_bytes* (record_length* silently ignored), :831-839
     * dataset.record_dims and dataset.hdf5.{chunk_dims, num_dset_per_record}; enable_chunking/chunk_size are read
     * (:813-816) but no longer used by the HDF5 generator. */
    {"2.0.1", "2.0.1", "git tag v2.0.1 (b56c741)", H5F_LIBVER_LATEST, 0, 1, 0, 1, 0, "hdf5"},
    /* main at e1919d7 (v2.0.1-17). As 2.0.1, plus main.py:224-246 (ad8ce8b, v2.0.1-12, "prevent barrier deadlock"):
     * when training, num_files_train is trimmed to a multiple of num_samples_per_file x batch_size x ranks (files
     * compared with samples), num_files_eval likewise with batch_size_eval; only the first files are read. */
    {"2.0.1-17", "2.0.1-12", "git main e1919d7 (v2.0.1-17)", H5F_LIBVER_LATEST, 0, 1, 0, 1, 1, "hdf5"},
};
#define NENTRIES (sizeof DLIO_ENTRIES / sizeof DLIO_ENTRIES[0])

/* "X[.Y[.Z[.W]]][-N[-gHASH]][+local]" -> v[0..3] numeric parts, v[4] = N (commits past the tag). -1: not a version */
static int parse_version(const char *s, long v[5])
{
    memset(v, 0, 5 * sizeof *v);
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    const char *p = s;
    for (int i = 0; i < 4; i++) {
        char *end;
        v[i] = strtol(p, &end, 10);
        if (end == p || v[i] < 0 || v[i] > 1000000)
            return -1;
        p = end;
        if (*p != '.')
            break;
        p++;
        if (i == 3 || !isdigit((unsigned char)*p))
            return -1;
    }
    if (*p == '-') {
        char *end;
        v[4] = strtol(p + 1, &end, 10);
        if (end == p + 1 || v[4] < 0 || v[4] > 1000000)
            return -1;
        p = end;
        if (*p == '-') { /* -gHASH */
            if (p[1] != 'g' || !p[2])
                return -1;
            for (p += 2; isxdigit((unsigned char)*p); p++)
                ;
        }
    }
    if (*p == '+') /* a local version label: ignored */
        return p[1] ? 0 : -1;
    return *p ? -1 : 0;
}

int dlio_version_cmp(const char *a, const char *b)
{
    long x[5], y[5];
    if (parse_version(a, x) || parse_version(b, y))
        return -2;
    for (int i = 0; i < 5; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

const dlio_entry_t *dlio_entry(const char *version)
{
    for (size_t i = 0; i < NENTRIES; i++)
        if (!strcmp(DLIO_ENTRIES[i].version, version))
            return &DLIO_ENTRIES[i];
    return NULL;
}

const dlio_entry_t *dlio_entry_resolve(const char *version, int *nearest)
{
    *nearest = 0;
    const dlio_entry_t *e = dlio_entry(version);
    if (e)
        return e;
    long v[5];
    if (parse_version(version, v))
        return NULL;
    *nearest = 1;
    for (size_t i = NENTRIES; i-- > 0;) /* entries in release order: the newest whose range has begun */
        if (dlio_version_cmp(DLIO_ENTRIES[i].since, version) <= 0)
            return &DLIO_ENTRIES[i];
    return &DLIO_ENTRIES[0];
}

const char *dlio_entry_list(void)
{
    static char buf[256];
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NENTRIES && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", DLIO_ENTRIES[i].version);
    return buf;
}

int64_t layout_files_used(const config_t *c, const dlio_entry_t *e, int phase, int nranks)
{
    int64_t n = phase == PH_TRAIN ? c->num_files_train : c->num_files_eval;
    if (!e->trim_files_to_steps || !c->train || c->ordering == ORDER_H5BENCH)
        return n;
    /* main.py:230-246: samples_per_step = num_samples_per_file x batch x ranks; files // that x that */
    int64_t per = c->num_samples_per_file * (phase == PH_TRAIN ? c->batch_size : c->batch_size_eval) * nranks;
    return per > 0 ? n / per * per : n;
}

void layout_records_name(const layout_t *L, int64_t k, char *out, size_t outlen)
{
    const config_t *c = L->cfg;
    int w = L->dlio->indexed_records ? snprintf(out, outlen, "%s_%lld", c->records_dataset_name, (long long)k)
                                     : snprintf(out, outlen, "%s", c->records_dataset_name);
    if (w < 0 || (size_t)w >= outlen)
        die(EXIT_BADINPUT, "key 'records-dataset-name': too long");
}

void layout_init(layout_t *L, const config_t *c)
{
    memset(L, 0, sizeof *L);
    L->cfg = c;
    L->dlio = dlio_entry(c->dlio_entry); /* resolved by config_load */
    if (!L->dlio)
        die(EXIT_BADINPUT, "key 'dlio-version': no entry for '%s'", c->dlio_version);
    L->nfiles[PH_TRAIN] = c->num_files_train;
    L->nfiles[PH_EVAL] = c->num_files_eval;
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
    double stdev = (double)c->record_length_stdev / 2.0 / sq;
    if (stdev > 0) {
        int64_t total = c->num_files_train + (c->num_files_eval > 0 ? c->num_files_eval : 0);
        L->dims = malloc((size_t)(2 * total + 2) * sizeof *L->dims);
        if (!L->dims)
            die(EXIT_RUNTIME, "out of memory for %lld file dimensions", (long long)total);
        nprand_t r;
        nprand_seed(&r, 10);
        for (int64_t k = 0; k < 2 * total; k++) {
            double d = nprand_normal(&r, (double)L->dim1, stdev);
            int64_t v = (int64_t)d; /* Python int(): truncation toward zero */
            L->dims[k] = v > 1 ? v : 1;
        }
    }
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

void layout_path(const layout_t *L, int phase, int64_t i, char *out, size_t outlen)
{
    const config_t *c = L->cfg;
    const char *sub = phase == PH_TRAIN ? c->train_data_folder : c->valid_data_folder;
    int64_t n = L->nfiles[phase];
    int w;
    if (c->naming == NAMING_H5BENCH) /* h5bench: 1-based, unpadded, .h5 */
        w = snprintf(out, outlen, "%s/%s/%s_%lld_of_%lld.h5", c->data_folder, sub, c->file_prefix, (long long)i + 1,
                     (long long)n);
    else /* DLIO: 0-based, zero-padded to the digits of N */
        w = snprintf(out, outlen, "%s/%s/%s_%0*lld_of_%lld.%s", c->data_folder, sub, c->file_prefix, ndigits(n),
                     (long long)i, (long long)n, L->dlio->file_ext);
    if (w < 0 || (size_t)w >= outlen)
        die(EXIT_BADINPUT, "key 'data-folder': file path too long (%d characters)", w);
}

/* ---------- file drivers ---------- */
static hid_t fapl_common(const config_t *c)
{
    (void)c;
    /* what h5py.File() sets: libver bounds (earliest, latest) and alignment (1, 1) */
    hid_t p = H5_CHECK(H5Pcreate(H5P_FILE_ACCESS), "fapl");
    H5_CHECK(H5Pset_libver_bounds(p, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST), "fapl");
    H5_CHECK(H5Pset_alignment(p, 1, 1), "fapl");
    return p;
}

/* Reading: like h5py, leave the driver unset, so the default (sec2) applies and HDF5_DRIVER (1.14+) is honoured */
static hid_t fapl_default(const config_t *c) { return fapl_common(c); }

/* Creating: sec2 set explicitly, so HDF5_DRIVER=log in the environment never routes creation through the Log VFD */
static hid_t fapl_sec2(const config_t *c)
{
    hid_t p = fapl_common(c);
    H5_CHECK(H5Pset_fapl_sec2(p), "fapl");
    return p;
}

static hid_t fapl_log(const config_t *c)
{
    hid_t p = fapl_common(c);
    /* NULL logfile = stderr; the same flags HDF5_DRIVER=log uses (1.14): LOC_IO | ALLOC */
    H5_CHECK(H5Pset_fapl_log(p, NULL, H5FD_LOG_LOC_IO | H5FD_LOG_ALLOC, 0), "fapl");
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
    H5_CHECK(H5Pset_fapl_mpio(p, MPI_COMM_SELF, MPI_INFO_NULL), "fapl");
    if (c->collective_meta) {
        H5_CHECK(H5Pset_all_coll_metadata_ops(p, 1), "fapl");
        H5_CHECK(H5Pset_coll_metadata_write(p, 1), "fapl");
    }
    return p;
}

static hid_t dxpl_mpio(const config_t *c)
{
    hid_t p = H5_CHECK(H5Pcreate(H5P_DATASET_XFER), "dxpl");
    H5_CHECK(H5Pset_dxpl_mpio(p, c->collective_data ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT), "dxpl");
    return p;
}
#endif

#ifdef H5_HAVE_SUBFILING_VFD
#include <H5FDsubfiling.h>
static hid_t fapl_subfiling(const config_t *c)
{
    hid_t p = fapl_common(c);
    H5_CHECK(H5Pset_mpi_params(p, MPI_COMM_SELF, MPI_INFO_NULL), "fapl");
    H5_CHECK(H5Pset_fapl_subfiling(p, NULL), "fapl");
    return p;
}
#endif

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
