#define _GNU_SOURCE
#include "gen.h"
#include "util.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void refuse_dangerous_folder(const char *folder)
{
    char real[4096];
    if (!realpath(folder, real))
        return; /* does not exist yet: we will create it */
    const char *home = getenv("HOME");
    char rhome[4096];
    if (!strcmp(real, "/") || (home && realpath(home, rhome) && !strcmp(real, rhome)))
        die(EXIT_BADINPUT, "key 'data-folder': refusing to generate into '%s' (%s)", folder, real);
}

static void write_one(const layout_t *L, int phase, int64_t i, uint8_t *buf, size_t bufsize, const char *path,
                      int64_t *bytes)
{
    const config_t *c = L->cfg;
    int64_t d1, d2;
    layout_dims(L, phase, i, &d1, &d2);
    const driver_t *drv = driver_select(c, 1);
    hid_t fapl = drv->fapl(c), dxpl = drv->dxpl(c);
    hid_t fcpl = H5_CHECK(H5Pcreate(H5P_FILE_CREATE), path);
    if (L->dlio->libver_low != H5F_LIBVER_EARLIEST)
        H5_CHECK(H5Pset_libver_bounds(fapl, L->dlio->libver_low, H5F_LIBVER_LATEST), path);
    hid_t f = H5_CHECK(H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl), path);
    hsize_t n = (hsize_t)c->num_samples_per_file;
    hsize_t dims[3] = {n, (hsize_t)d1, (hsize_t)d2};
    hid_t fs = H5_CHECK(H5Screate_simple(3, dims, NULL), path);
    hid_t dcpl = H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), path);
    H5_CHECK(H5Pset_obj_track_times(dcpl, L->dlio->track_times), path);
    if (c->chunking) { /* DLIO: c = ceil(sqrt(chunk_size)), capped (here at each sample dimension) */
        hsize_t cd = (hsize_t)ceil(sqrt((double)c->chunk_size));
        hsize_t chunk[3] = {1, cd < (hsize_t)d1 ? cd : (hsize_t)d1, cd < (hsize_t)d2 ? cd : (hsize_t)d2};
        H5_CHECK(H5Pset_chunk(dcpl, 3, chunk), path);
        if (c->compression)
            H5_CHECK(H5Pset_deflate(dcpl, (unsigned)c->compression_level), path);
    }
    hid_t ds = H5_CHECK(H5Dcreate2(f, c->records_dataset_name, H5T_STD_U8LE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT), path);
    /* Write in pieces of at most the generation buffer: whole samples when they fit, else row slabs. */
    hsize_t sample_bytes = dims[1] * dims[2];
    if (sample_bytes <= bufsize) {
        hsize_t per = bufsize / sample_bytes;
        for (hsize_t s = 0; s < n; s += per) {
            hsize_t k = per < n - s ? per : n - s;
            hsize_t start[3] = {s, 0, 0}, count[3] = {k, dims[1], dims[2]};
            hid_t ms = H5_CHECK(H5Screate_simple(3, count, NULL), path);
            H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), path);
            H5_CHECK(H5Dwrite(ds, H5T_NATIVE_UINT8, ms, fs, dxpl, buf), path);
            H5Sclose(ms);
        }
    } else {
        hsize_t rows = bufsize / dims[2]; /* bufsize >= d2 is guaranteed by the caller */
        for (hsize_t s = 0; s < n; s++)
            for (hsize_t r0 = 0; r0 < dims[1]; r0 += rows) {
                hsize_t k = rows < dims[1] - r0 ? rows : dims[1] - r0;
                hsize_t start[3] = {s, r0, 0}, count[3] = {1, k, dims[2]};
                hid_t ms = H5_CHECK(H5Screate_simple(3, count, NULL), path);
                H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), path);
                H5_CHECK(H5Dwrite(ds, H5T_NATIVE_UINT8, ms, fs, dxpl, buf), path);
                H5Sclose(ms);
            }
    }
    H5Dclose(ds);
    H5Sclose(fs);
    /* labels: int64 zeros, created after the records were written (DLIO's order: fixes the file layout) */
    hsize_t ln = n;
    hid_t ls = H5_CHECK(H5Screate_simple(1, &ln, NULL), path);
    hid_t ldcpl = H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), path);
    H5_CHECK(H5Pset_obj_track_times(ldcpl, L->dlio->track_times), path);
    hid_t lds = H5_CHECK(H5Dcreate2(f, c->labels_dataset_name, H5T_STD_I64LE, ls, H5P_DEFAULT, ldcpl, H5P_DEFAULT), path);
    int64_t *zeros = calloc(n, sizeof *zeros);
    if (!zeros)
        die(EXIT_RUNTIME, "out of memory for %llu labels", (unsigned long long)n);
    H5_CHECK(H5Dwrite(lds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, dxpl, zeros), path);
    free(zeros);
    H5Dclose(lds);
    H5Pclose(ldcpl);
    H5Sclose(ls);
    H5Pclose(dcpl);
    H5Pclose(fcpl);
    H5_CHECK(H5Fclose(f), path);
    H5Pclose(fapl);
    if (dxpl != H5P_DEFAULT)
        H5Pclose(dxpl);
    *bytes += (int64_t)(sample_bytes * n);
}

void generate(const layout_t *L, int rank, int nranks, gen_result_t *out)
{
    const config_t *c = L->cfg;
    memset(out, 0, sizeof *out);
    if (rank == 0) {
        refuse_dangerous_folder(c->data_folder);
        const char *subs[3] = {"", c->train_data_folder, c->valid_data_folder};
        for (int k = 0; k < 3; k++) {
            char p[4600];
            snprintf(p, sizeof p, "%s%s%s", c->data_folder, *subs[k] ? "/" : "", subs[k]);
            int r = mkdir_p(p);
            if (r < 0)
                die(EXIT_BADINPUT, "key 'data-folder': cannot create '%s': %s", p, strerror(errno));
            out->created_dirs[k] = r;
        }
    }
    /* Refuse, before anyone writes, to replace a file that is already there (every rank leaves with status 2). */
    char msg[8192] = "";
    if (rank == 0 && !c->overwrite)
        for (int ph = 0; ph < 2 && !*msg; ph++)
            for (int64_t i = 0; i < L->nfiles[ph]; i++) {
                char path[4600];
                struct stat st;
                layout_path(L, ph, i, path, sizeof path);
                if (stat(path, &st) == 0) {
                    snprintf(msg, sizeof msg, "%s exists: set generate-data=false to reuse the dataset, or "
                             "overwrite=true to replace it", path);
                    break;
                }
            }
    MPI_CHECK(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (*msg) {
        if (rank == 0)
            fprintf(stderr, "h5dlio: error: %s\n", msg);
        MPI_Finalize();
        exit(EXIT_BADINPUT);
    }
    double t0 = now();
    int64_t total = L->nfiles[PH_TRAIN] + L->nfiles[PH_EVAL];
    int64_t maxd2 = 1;
    for (int64_t k = 0; k < 2 * total; k += 2)
        if (L->dims[k + 1] > maxd2)
            maxd2 = L->dims[k + 1];
    size_t bufsize = (size_t)(c->generation_buffer_size > maxd2 ? c->generation_buffer_size : maxd2);
    uint8_t *buf = malloc(bufsize);
    if (!buf)
        die(EXIT_RUNTIME, "out of memory for the %zu-byte generation buffer", bufsize);
    fill_random(buf, bufsize, (uint64_t)c->random_seed * 1000003u + (uint64_t)rank);
    out->created = calloc((size_t)(total / nranks + 2), sizeof *out->created);
    for (int64_t g = rank; g < total; g += nranks) {
        int phase = g < L->nfiles[PH_TRAIN] ? PH_TRAIN : PH_EVAL;
        int64_t i = phase == PH_TRAIN ? g : g - L->nfiles[PH_TRAIN];
        char path[4600], tmp[4700];
        layout_path(L, phase, i, path, sizeof path);
        /* Write under a temporary name and rename when complete: an interrupted generation never leaves a file
         * that looks whole. Subfiling names its subfiles after the file, so it writes in place. */
        if (c->subfiling)
            snprintf(tmp, sizeof tmp, "%s", path);
        else
            snprintf(tmp, sizeof tmp, "%s.partial.%d", path, (int)getpid());
        unlink(tmp); /* our own leftover name only (pid-specific) */
        write_one(L, phase, i, buf, bufsize, tmp, &out->bytes);
        if (!c->subfiling && rename(tmp, path) != 0)
            die(EXIT_RUNTIME, "rename %s -> %s: %s", tmp, path, strerror(errno));
        out->created[out->ncreated++] = strdup(path);
        out->files++;
    }
    free(buf);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    out->seconds = now() - t0;
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
