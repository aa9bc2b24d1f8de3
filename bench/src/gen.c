#define _GNU_SOURCE
#include "gen.h"
#include "mutate.h"
#include "image.h"
#include "npz.h"
#include "pcg64.h"
#include "util.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

/* The data folders generation must never write into: "/" and home directories (the user's and every home of
 * the password database), compared after resolving symlinks. Returns the matching home or NULL. */
static const char *forbidden_folder(const char *real)
{
    static char hit[256];
    char r[4096];
    if (!strcmp(real, "/"))
        return "/";
    const char *home = getenv("HOME");
    if (home && realpath(home, r) && !strcmp(real, r))
        return "your home directory";
    const char *found = NULL;
    setpwent();
    for (struct passwd *pw; !found && (pw = getpwent());)
        if (pw->pw_dir && *pw->pw_dir && realpath(pw->pw_dir, r) && !strcmp(real, r)) {
            snprintf(hit, sizeof hit, "the home directory of %.200s", pw->pw_name);
            found = hit;
        }
    endpwent();
    return found;
}

/* A name this kernel gives dataset files, for any index and count: <prefix>_<digits>_of_<digits>.<ext>, or the
 * temporary name of one being written (<that>.partial.<digits>). */
static int is_dataset_name(const layout_t *L, const char *name)
{
    const config_t *c = L->cfg;
    const char *ext = c->naming == NAMING_H5BENCH ? "h5" : L->ext;
    size_t pl = strlen(c->file_prefix);
    if (strncmp(name, c->file_prefix, pl) || name[pl] != '_')
        return 0;
    const char *p = name + pl + 1;
    size_t d = strspn(p, "0123456789");
    if (!d || strncmp(p + d, "_of_", 4))
        return 0;
    p += d + 4;
    if (!(d = strspn(p, "0123456789")) || p[d] != '.' || strncmp(p + d + 1, ext, strlen(ext)))
        return 0;
    p += d + 1 + strlen(ext);
    if (!*p)
        return 1;
    return !strncmp(p, ".partial.", 9) && p[9] && strspn(p + 9, "0123456789") == strlen(p + 9);
}

/* Count what a layout folder holds that is not this kernel's: dataset files, and (top = 1, the phase having
 * sub-folders) its sub-folders 0..S-1 named as DLIO names them, holding dataset files. */
static void scan_layout_dir(const layout_t *L, const char *dir, int phase, int top, int64_t *foreign, int64_t *own,
                            char *first, size_t firstlen)
{
    int64_t S = config_phase(L->cfg, phase).subfolders;
    DIR *d = opendir(dir);
    if (!d) {
        if (!(*foreign)++)
            snprintf(first, firstlen, "%s", dir);
        return;
    }
    for (struct dirent *f; (f = readdir(d));) {
        if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, ".."))
            continue;
        char fp[4700];
        if (snprintf(fp, sizeof fp, "%s/%s", dir, f->d_name) >= (int)sizeof fp)
            fp[sizeof fp - 1] = 0;
        struct stat st;
        if (lstat(fp, &st) != 0) {
            if (!(*foreign)++)
                snprintf(first, firstlen, "%s", fp);
            continue;
        }
        if (top && S > 1 && S_ISDIR(st.st_mode)) {
            char want[4400];
            size_t n = strspn(f->d_name, "0123456789");
            long long k = n && !f->d_name[n] ? atoll(f->d_name) : -1;
            if (k >= 0 && k < S) {
                layout_subfolder(L, phase, k, want, sizeof want);
                if (!strcmp(strrchr(want, '/') + 1, f->d_name)) { /* named as DLIO pads it */
                    scan_layout_dir(L, fp, phase, 0, foreign, own, first, firstlen);
                    continue;
                }
            }
        }
        if (is_dataset_name(L, f->d_name) && S_ISREG(st.st_mode))
            (*own)++;
        else if (!(*foreign)++)
            snprintf(first, firstlen, "%s", fp);
    }
    closedir(d);
}

#define REC_HEAD "{\"h5dlio_generation\": 1, \"state\": \""

int gen_record_state(const config_t *c, char *path, size_t len)
{
    char p[4600], text[1024] = "";
    snprintf(p, sizeof p, "%s/%s", c->data_folder, GEN_RECORD);
    if (path)
        snprintf(path, len, "%s", p);
    struct stat st;
    if (lstat(p, &st) != 0)
        return errno == ENOENT ? REC_ABSENT : REC_FOREIGN;
    int fd = S_ISREG(st.st_mode) && st.st_size < (off_t)sizeof text ? open(p, O_RDONLY) : -1;
    if (fd < 0)
        return REC_FOREIGN;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n < 0)
        return REC_FOREIGN;
    size_t head = strlen(REC_HEAD), got = (size_t)n;
    if (strncmp(text, REC_HEAD, got < head ? got : head))
        return REC_FOREIGN; /* neither this kernel's record nor a cut-short write of one */
    if (got > head && !strncmp(text + head, "complete\"", 9) && got >= 2 && !strcmp(text + got - 2, "}\n"))
        return REC_COMPLETE;
    return REC_INTERRUPTED; /* "generating", or cut short (empty included: killed between create and write) */
}

/* Rank 0: (re)write the record with `state`; on failure msg says why (the job then exits) */
static void write_record(const layout_t *L, int nranks, const char *state, char *msg, size_t len)
{
    const config_t *c = L->cfg;
    char p[4600], text[1024];
    snprintf(p, sizeof p, "%s/%s", c->data_folder, GEN_RECORD);
    int n = snprintf(text, sizeof text,
                     REC_HEAD "%s\", \"mode\": \"%s\", \"ranks\": %d, \"files_train\": %lld, "
                              "\"files_eval\": %lld, \"file_prefix\": \"%.200s\", \"format\": \"%.20s\"}\n",
                     state, c->generation_atomic_rename ? "atomic_rename" : "in_place", nranks,
                     (long long)L->nfiles[PH_TRAIN], (long long)L->nfiles[PH_EVAL], c->file_prefix, c->format);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, text, (size_t)n) != n || close(fd) != 0)
        snprintf(msg, len, "key 'data-folder': cannot write the generation record %s: %s", p, strerror(errno));
}

/* Generation writes only into a folder that is new, empty, or holds nothing but this kernel's dataset layout
 * (the train/valid sub-folders holding dataset files); anything else is someone else's, unless
 * reuse-data-folder=true. "/" and home directories are refused always. On refusal msg says why. *own: the
 * dataset-named files the listing found (0 for a new folder), -1 when it did not list (reuse-data-folder). */
static void check_data_folder(const layout_t *L, char *msg, size_t len, int64_t *own)
{
    const config_t *c = L->cfg;
    char real[4096];
    *own = 0;
    if (!realpath(c->data_folder, real))
        return; /* does not exist yet: we will create it */
    const char *bad = forbidden_folder(real);
    if (bad) {
        snprintf(msg, len, "key 'data-folder': refusing to generate into '%s' (%s): choose a folder of its own",
                 c->data_folder, bad);
        return;
    }
    if (c->reuse_data_folder) {
        *own = -1; /* not listed: prepare_folders checks each file */
        return;
    }
    char first[8400] = "";
    int64_t foreign = 0;
    DIR *top = opendir(real);
    if (!top) {
        snprintf(msg, len, "key 'data-folder': cannot list '%s': %s", c->data_folder, strerror(errno));
        return;
    }
    for (struct dirent *e; (e = readdir(top));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[4400];
        if (snprintf(sub, sizeof sub, "%s/%s", c->data_folder, e->d_name) >= (int)sizeof sub)
            sub[sizeof sub - 1] = 0;
        struct stat st;
        int is_layout = (!strcmp(e->d_name, c->train_data_folder) || !strcmp(e->d_name, c->valid_data_folder)) &&
                        lstat(sub, &st) == 0 && S_ISDIR(st.st_mode);
        if (!strcmp(e->d_name, GEN_RECORD))
            continue; /* the completion record: its own check (prepare_folders) */
        if (!is_layout) {
            if (!foreign++)
                snprintf(first, sizeof first, "%s", sub);
            continue;
        }
        int phase = !strcmp(e->d_name, c->train_data_folder) ? PH_TRAIN : PH_EVAL;
        scan_layout_dir(L, sub, phase, 1, &foreign, own, first, sizeof first);
    }
    closedir(top);
    if (foreign)
        snprintf(msg, len,
                 "key 'data-folder': '%s' holds files that are not this kernel's dataset (%lld; first: "
                 "%s): generate into a new or empty folder, or set reuse-data-folder=true to generate next to them "
                 "(they are never modified or deleted)",
                 c->data_folder, (long long)foreign, first);
}

/* Create one samples dataset and fill it in pieces of at most the generation buffer: whole samples when they fit,
 * else row slabs. */
static void write_records(hid_t f, const char *dname, hid_t fs, hid_t dcpl, hid_t dxpl, const hsize_t dims[3],
                          const uint8_t *buf, size_t bufsize, const char *path)
{
    hsize_t n = dims[0], sample_bytes = dims[1] * dims[2];
    hid_t ds = H5_CHECK(H5Dcreate2(f, dname, H5T_STD_U8LE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT), path, EXIT_RUNTIME);
    if (sample_bytes <= bufsize) {
        hsize_t per = bufsize / sample_bytes;
        for (hsize_t s = 0; s < n; s += per) {
            hsize_t k = per < n - s ? per : n - s;
            hsize_t start[3] = {s, 0, 0}, count[3] = {k, dims[1], dims[2]};
            hid_t ms = H5_CHECK(H5Screate_simple(3, count, NULL), path, EXIT_RUNTIME);
            H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), path, EXIT_RUNTIME);
            H5_CHECK(H5Dwrite(ds, H5T_NATIVE_UINT8, ms, fs, dxpl, buf), path, EXIT_RUNTIME);
            H5_CHECK(H5Sclose(ms), path, EXIT_RUNTIME);
        }
    } else {
        hsize_t rows = bufsize / dims[2]; /* bufsize >= d2 is guaranteed by the caller */
        for (hsize_t s = 0; s < n; s++)
            for (hsize_t r0 = 0; r0 < dims[1]; r0 += rows) {
                hsize_t k = rows < dims[1] - r0 ? rows : dims[1] - r0;
                hsize_t start[3] = {s, r0, 0}, count[3] = {1, k, dims[2]};
                hid_t ms = H5_CHECK(H5Screate_simple(3, count, NULL), path, EXIT_RUNTIME);
                H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), path, EXIT_RUNTIME);
                H5_CHECK(H5Dwrite(ds, H5T_NATIVE_UINT8, ms, fs, dxpl, buf), path, EXIT_RUNTIME);
                H5_CHECK(H5Sclose(ms), path, EXIT_RUNTIME);
            }
    }
    H5_CHECK(H5Dclose(ds), path, EXIT_RUNTIME);
}

/* The records datasets' creation properties: DLIO's chunks and gzip level, or a generation mutant's (training file 0:
 * `mutated`) */
static hid_t records_dcpl(const layout_t *L, int mutated, int64_t d1, int64_t d2, const char *path)
{
    const config_t *c = L->cfg;
    hid_t dcpl = H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), path, EXIT_RUNTIME);
    H5_CHECK(H5Pset_obj_track_times(dcpl, L->dlio->track_times), path, EXIT_RUNTIME);
    if (c->nchunk_dims) { /* DLIO >= 2.0.1: dataset.hdf5.chunk_dims as given (hdf5_generator.py:54-55) */
        hsize_t chunk[3] = {(hsize_t)c->chunk_dims[0], (hsize_t)c->chunk_dims[1], (hsize_t)c->chunk_dims[2]};
        H5_CHECK(H5Pset_chunk(dcpl, 3, chunk), path, EXIT_RUNTIME);
    } else if (c->chunking) { /* DLIO 2.0.0: c = ceil(sqrt(chunk_size)), capped (here at each sample dimension) */
        hsize_t cd = (hsize_t)ceil(sqrt((double)c->chunk_size));
        hsize_t chunk[3] = {1, cd < (hsize_t)d1 ? cd : (hsize_t)d1, cd < (hsize_t)d2 ? cd : (hsize_t)d2};
        H5_CHECK(H5Pset_chunk(dcpl, 3, chunk), path, EXIT_RUNTIME);
    }
    if (mutated && c->mutant == MUT_GEN_CHUNK) { /* contiguous: one chunk per sample; chunked: half the last dim */
        hsize_t chunk[3] = {1, (hsize_t)d1, (hsize_t)d2};
        if (H5_CHECK(H5Pget_layout(dcpl), path, EXIT_RUNTIME) == H5D_CHUNKED) {
            H5_CHECK(H5Pget_chunk(dcpl, 3, chunk), path, EXIT_RUNTIME);
            if (chunk[2] > 1)
                chunk[2] /= 2;
            else
                chunk[1] = chunk[1] > 1 ? chunk[1] / 2 : chunk[1];
        }
        H5_CHECK(H5Pset_chunk(dcpl, 3, chunk), path, EXIT_RUNTIME);
    }
    if (c->compression && (c->chunking || c->nchunk_dims))
        H5_CHECK(H5Pset_deflate(dcpl, (unsigned)(mutated && c->mutant == MUT_COMPRESSION ? c->compression_level % 9 + 1
                                                                                         : c->compression_level)),
                 path, EXIT_RUNTIME);
    else if (mutated && c->mutant == MUT_COMPRESSION) { /* no compression here: gzip 1, one chunk per sample */
        hsize_t chunk[3] = {1, (hsize_t)d1, (hsize_t)d2};
        if (H5_CHECK(H5Pget_layout(dcpl), path, EXIT_RUNTIME) != H5D_CHUNKED)
            H5_CHECK(H5Pset_chunk(dcpl, 3, chunk), path, EXIT_RUNTIME);
        H5_CHECK(H5Pset_deflate(dcpl, 1), path, EXIT_RUNTIME);
    }
    return dcpl;
}

static void write_one(const layout_t *L, int phase, int64_t i, uint8_t *buf, size_t bufsize, const char *path,
                      int64_t *bytes, uint64_t npz_seed)
{
    const config_t *c = L->cfg;
    int64_t d1, d2;
    layout_dims(L, phase, i, &d1, &d2);
    /* MUTANTS gen-dims, gen-chunk, compression-level (mutate.h): training file 0 only */
    int mutated = phase == PH_TRAIN && i == 0;
    if (mutated && c->mutant == MUT_GEN_DIMS)
        d2 += 1;
    if (!strcmp(c->format, "npz")) { /* DLIO 3.x npz_generator.py:95-99: np.savez(out, x=(d1, d2, n), y=[0] * n) */
        *bytes += npz_write(path, d1, d2, c->num_samples_per_file, buf, bufsize, npz_seed);
        return;
    }
    if (!strcmp(c->format, "jpeg") || !strcmp(c->format, "png")) { /* DLIO 3.x jpeg_generator.py:92-96: raw bytes */
        *bytes += image_write(path, d1, d2, buf, bufsize, npz_seed);
        return;
    }
    const driver_t *drv = driver_select(c, 1);
    hid_t fapl = drv->fapl(c), dxpl = drv->dxpl(c);
    hid_t fcpl = H5_CHECK(H5Pcreate(H5P_FILE_CREATE), path, EXIT_RUNTIME);
    if (L->dlio->libver_low != H5F_LIBVER_EARLIEST)
        H5_CHECK(H5Pset_libver_bounds(fapl, L->dlio->libver_low, H5F_LIBVER_LATEST), path, EXIT_RUNTIME);
    hid_t f = H5_CHECK(H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl), path, EXIT_RUNTIME);
    hsize_t n = (hsize_t)c->num_samples_per_file;
    hsize_t dims[3] = {n, (hsize_t)d1, (hsize_t)d2};
    hid_t fs = H5_CHECK(H5Screate_simple(3, dims, NULL), path, EXIT_RUNTIME);
    hid_t dcpl = records_dcpl(L, mutated, d1, d2, path);
    /* DLIO >= 2.0.1 creates and writes records_0, records_1, ... in turn (hdf5_generator.py:45-47), then labels */
    hsize_t sample_bytes = dims[1] * dims[2];
    for (int64_t k = 0; k < (L->dlio->indexed_records ? c->num_dset_per_record : 1); k++) {
        char dname[300];
        layout_records_name(L, k, dname, sizeof dname);
        write_records(f, dname, fs, dcpl, dxpl, dims, buf, bufsize, path);
        *bytes += (int64_t)(sample_bytes * n);
    }
    H5_CHECK(H5Sclose(fs), path, EXIT_RUNTIME);
    /* labels: int64 zeros, created after the records were written (DLIO's order: fixes the file layout) */
    hsize_t ln = n;
    hid_t ls = H5_CHECK(H5Screate_simple(1, &ln, NULL), path, EXIT_RUNTIME);
    hid_t ldcpl = H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), path, EXIT_RUNTIME);
    H5_CHECK(H5Pset_obj_track_times(ldcpl, L->dlio->track_times), path, EXIT_RUNTIME);
    hid_t lds = H5_CHECK(H5Dcreate2(f, c->labels_dataset_name, H5T_STD_I64LE, ls, H5P_DEFAULT, ldcpl, H5P_DEFAULT),
                         path, EXIT_RUNTIME);
    int64_t *zeros = xcalloc(n, sizeof *zeros, "the labels of a file");
    H5_CHECK(H5Dwrite(lds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, dxpl, zeros), path, EXIT_RUNTIME);
    free(zeros);
    H5_CHECK(H5Dclose(lds), path, EXIT_RUNTIME);
    H5_CHECK(H5Pclose(ldcpl), path, EXIT_RUNTIME);
    H5_CHECK(H5Sclose(ls), path, EXIT_RUNTIME);
    H5_CHECK(H5Pclose(dcpl), path, EXIT_RUNTIME);
    H5_CHECK(H5Pclose(fcpl), path, EXIT_RUNTIME);
    H5_CHECK(H5Fclose(f), path, EXIT_RUNTIME);
    H5_CHECK(H5Pclose(fapl), path, EXIT_RUNTIME);
    if (dxpl != H5P_DEFAULT)
        H5_CHECK(H5Pclose(dxpl), path, EXIT_RUNTIME);
}

/* Rank 0, before anyone writes: may this folder be written (check_data_folder), is no file of the dataset already
 * there (unless overwrite), and the data folder, its train/valid folders and every sub-folder made (out->created_*:
 * which of them this run made). msg: the refusal, empty when none. */
static void prepare_folders(const layout_t *L, gen_result_t *out, char *msg, size_t len)
{
    const config_t *c = L->cfg;
    int64_t own; /* dataset-named files the listing found; -1: not listed */
    check_data_folder(L, msg, len, &own);
    int rs = *msg ? REC_ABSENT : gen_record_state(c, NULL, 0);
    if (rs == REC_FOREIGN) /* never replaced, whatever reuse-data-folder and overwrite say */
        snprintf(msg, len,
                 "key 'data-folder': '%s' holds a file " GEN_RECORD " that is not this kernel's generation record "
                 "(the kernel writes its record under that name): generate into a new or empty folder",
                 c->data_folder);
    else if (rs == REC_INTERRUPTED && !c->overwrite)
        snprintf(msg, len,
                 "key 'data-folder': '%s' holds an interrupted generation (its " GEN_RECORD
                 " says it never completed: a run was "
                 "killed or failed mid-way, so its files may be incomplete): set overwrite=true to generate it again",
                 c->data_folder);
    /* a file of the dataset already there: only where the listing found dataset-named files (or did not list), so a
     * new or empty folder costs no stat per file (DLIO makes none) */
    if (!c->overwrite && own != 0)
        for (int ph = 0; ph < 2 && !*msg; ph++)
            for (int64_t i = 0; i < L->nfiles[ph]; i++) {
                char path[4600];
                struct stat st;
                layout_path(L, ph, i, path, sizeof path);
                if (stat(path, &st) == 0) {
                    snprintf(msg, len,
                             "%s exists: set generate-data=false to reuse the dataset, or "
                             "overwrite=true to replace it",
                             path);
                    break;
                }
            }
    const char *subs[3] = {"", c->train_data_folder, c->valid_data_folder};
    for (int k = 0; k < 3 && !*msg; k++) {
        char p[4600];
        snprintf(p, sizeof p, "%s%s%s", c->data_folder, *subs[k] ? "/" : "", subs[k]);
        int r = mkdir_p(p);
        if (r < 0)
            snprintf(msg, len, "key 'data-folder': cannot create '%s': %s", p, strerror(errno));
        out->created_dirs[k] = r;
    }
    /* DLIO's rank 0 makes every sub-folder, also those no file falls in (data_generator.py:70-75 at 2.0.0) */
    for (int ph = 0; ph < NPHASES && !*msg; ph++) {
        int64_t S = config_phase(c, ph).subfolders;
        if (S < 2)
            continue;
        out->created_sub[ph] = xcalloc((size_t)S, 1, "the list of created sub-folders");
        for (int64_t k = 0; k < S && !*msg; k++) {
            char p[4600];
            layout_subfolder(L, ph, k, p, sizeof p);
            int r = mkdir_p(p);
            if (r < 0)
                snprintf(msg, len, "key '%s': cannot create '%s': %s", config_phase(c, ph).subfolders_key, p,
                         strerror(errno));
            out->created_sub[ph][k] = r == 1;
        }
    }
}

void generate(const layout_t *L, int rank, int nranks, gen_result_t *out)
{
    const config_t *c = L->cfg;
    memset(out, 0, sizeof *out);
    /* Rank 0 decides, before anyone writes, whether this folder may be written (see check_data_folder) and
     * refuses to replace a file that is already there; on refusal every rank leaves with status 2. */
    char msg[CHECK_MSG] = "";
    if (rank == 0)
        prepare_folders(L, out, msg, sizeof msg);
    if (rank == 0 && !*msg) /* before any dataset file: a run that dies from here on leaves it "generating" */
        write_record(L, nranks, "generating", msg, sizeof msg);
    out->record_written = rank == 0 && !*msg;
    agree_or_exit(msg, rank);
    double t0 = now();
    int64_t total = L->nfiles[PH_TRAIN] + L->nfiles[PH_EVAL];
    int64_t maxd2 = 1;
    for (int64_t g = 0; g < total; g++) {
        int64_t d1, d2;
        layout_dims(L, g < L->nfiles[PH_TRAIN] ? PH_TRAIN : PH_EVAL,
                    g < L->nfiles[PH_TRAIN] ? g : g - L->nfiles[PH_TRAIN], &d1, &d2);
        if (d2 > maxd2)
            maxd2 = d2;
        if (!L->dims)
            break; /* all files alike */
    }
    size_t bufsize = (size_t)(c->generation_buffer_size > maxd2 ? c->generation_buffer_size : maxd2);
    uint8_t *buf = xmalloc(bufsize, "the generation buffer");
    fill_random(buf, bufsize, (uint64_t)c->random_seed * 1000003u + (uint64_t)rank);
    out->created = xcalloc((size_t)(total / nranks + 2), sizeof *out->created, "the list of generated files");
    /* npz, jpeg, png (DLIO 3.x data_generator.py:150-166, the template every 3.x generator but HDF5's uses): rank q's
     * rng = default_rng(10 + q) draws each of its files' seed, integers(0, 2**63), in its file order (train then eval,
     * i = q, q+R, ...) */
    int npz = strcmp(c->format, "hdf5") != 0;
    pcg64_t rank_rng;
    pcg64_seed(&rank_rng, 10u + (uint64_t)rank);
    for (int64_t g = rank; g < total; g += nranks) {
        int phase = g < L->nfiles[PH_TRAIN] ? PH_TRAIN : PH_EVAL;
        int64_t i = phase == PH_TRAIN ? g : g - L->nfiles[PH_TRAIN];
        char path[4600], tmp[4700];
        layout_path(L, phase, i, path, sizeof path);
        /* Default: DLIO's calls, the file created and written under its final name (hdf5_generator.py, h5py.File(out,
         * 'w')); the completion record marks the whole job done. generation-atomic-rename=true: written under a
         * temporary name and renamed when complete (an unlink and a rename per file DLIO does not make). */
        /* subfiling with it: refused (config_check.c); MUTANT gen-rename: training file 0 so, the mode unchanged */
        int atomic = (c->generation_atomic_rename || (c->mutant == MUT_GEN_RENAME && phase == PH_TRAIN && i == 0)) &&
                     !c->subfiling;
        if (atomic) {
            snprintf(tmp, sizeof tmp, "%s.partial.%d", path, (int)getpid());
            unlink(tmp); /* our own leftover name only (pid-specific) */
        } else
            snprintf(tmp, sizeof tmp, "%s", path);
        /* a failure from here on removes the file (die, the signal handlers): the partial name, or the final name
         * when this run creates it (overwrite=false: prepare_folders found no file of that name) */
        err_ctx()->partial = atomic || !c->overwrite ? tmp : NULL;
        uint64_t npz_seed = npz ? pcg64_int63(&rank_rng) : 0;
        write_one(L, phase, i, buf, bufsize, tmp, &out->bytes, npz_seed);
        if (atomic && rename(tmp, path) != 0)
            die(EXIT_RUNTIME, "rename %s -> %s: %s", tmp, path, strerror(errno));
        err_ctx()->partial = NULL;
        out->created[out->ncreated] = strdup(path);
        if (!out->created[out->ncreated++])
            die(EXIT_RUNTIME, "out of memory for the list of generated files");
        out->files++;
    }
    free(buf);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every rank has closed its last file */
    if (rank == 0) {
        write_record(L, nranks, "complete", msg, sizeof msg);
        if (*msg)
            die(EXIT_RUNTIME, "%s", msg);
    }
    out->start = t0;
    out->end = now();
    out->seconds = out->end - t0;
}

void cleanup_generated(const layout_t *L, gen_result_t *g, int rank)
{
    const config_t *c = L->cfg;
    for (int64_t i = 0; i < g->ncreated; i++) {
        if (unlink(g->created[i]) != 0 && errno != ENOENT)
            fprintf(stderr, "h5dlio: rank %d: warning: cannot delete %s: %s\n", rank, g->created[i], strerror(errno));
        free(g->created[i]);
    }
    g->ncreated = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        char rp[4600];
        if (g->record_written && gen_record_state(c, rp, sizeof rp) != REC_FOREIGN && unlink(rp) != 0)
            fprintf(stderr, "h5dlio: rank 0: warning: cannot delete %s: %s\n", rp, strerror(errno));
        for (int ph = 0; ph < NPHASES; ph++)
            for (int64_t k = 0; g->created_sub[ph] && k < config_phase(c, ph).subfolders; k++) {
                char p[4600];
                layout_subfolder(L, ph, k, p, sizeof p);
                if (g->created_sub[ph][k])
                    rmdir(p); /* only if empty */
            }
        const char *subs[3] = {"", c->train_data_folder, c->valid_data_folder};
        for (int k = 2; k >= 0; k--) {
            if (g->created_dirs[k] != 1)
                continue;
            char p[4600];
            snprintf(p, sizeof p, "%s%s%s", c->data_folder, *subs[k] ? "/" : "", subs[k]);
            rmdir(p); /* only if empty: a folder holding anything else stays */
        }
    }
}

void gen_result_free(gen_result_t *g)
{
    for (int64_t i = 0; i < g->ncreated; i++) free(g->created[i]);
    free(g->created);
    g->created = NULL;
    for (int ph = 0; ph < NPHASES; ph++) {
        free(g->created_sub[ph]);
        g->created_sub[ph] = NULL;
    }
    g->ncreated = 0;
}
