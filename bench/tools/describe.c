/* h5dlio-describe: the structure of every HDF5 file under a folder, for the dataset.structure check (harness/run.py
 * collects both sides' generated datasets with it; docs/validation.md). Usage: h5dlio-describe FOLDER.
 * Per regular file under FOLDER (recursively; FOLDER itself may be a symbolic link, none under it is followed), one
 * line on stdout:
 *   "<path relative to FOLDER, a JSON string>\t<description, JSON>"
 * where the description is what harness/inspect_dataset.py's h5py describer gives, for the root group's datasets
 * (h5py's f.items(): soft links followed, sub-groups not descended), in name order:
 *   {"<dataset>": {"shape": [...] | null (a null dataspace), "dtype": numpy's dtype.str ("<f4", "|u1", "|S10";
 *    another class: "?class<N>-size<B>"), "layout": "compact"|"contiguous"|"chunked"|"virtual",
 *    "chunks": [...] | null, "compression": "gzip"|"lzf"|"szip" | null (h5py's rule), "filters": [every filter id]}}
 * or {"error": "..."} for a file HDF5 cannot open or walk. A file ending in .npz, .jpeg or .png (DLIO 3.x's formats,
 * described by inspect_dataset.py) gets the line "<path>\tother". Identical structures give identical text, so the
 * caller groups files by it. HDF5's own error stack is silenced: a failure is the file's description.
 * --part K/N: only the files whose relative path hashes (FNV-1a, 64-bit) to K modulo N, so that N processes describe
 * the folder together, each file once (the caller merges their lines; a cold file system serves them concurrently).
 * Exit 0 when the folder was walked (whatever the files held); 2 for bad usage or a folder that is not one; 1 when
 * the walk itself failed (naming the path). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static size_t root_len_;
static unsigned long part_k_, part_n_ = 1; /* --part K/N */
static FILE *desc_;                        /* the description being built (open_memstream) */
static char *desc_buf_;
static size_t desc_len_;

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(o, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(o, "\\u%04x", *p);
        else
            fputc(*p, o);
    }
    fputc('"', o);
}

static void dims_json(FILE *o, int n, const hsize_t *d)
{
    fputc('[', o);
    for (int i = 0; i < n; i++) fprintf(o, "%s%llu", i ? ", " : "", (unsigned long long)d[i]);
    fputc(']', o);
}

/* numpy's dtype.str of an HDF5 type, as h5py maps it; classes h5py maps otherwise get a name of their own (both
 * sides are described by this program, so any name compares them) */
static void dtype_json(FILE *o, hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    const char *order = size == 1 ? "|" : H5Tget_order(t) == H5T_ORDER_BE ? ">" : "<";
    if (c == H5T_INTEGER)
        fprintf(o, "\"%s%c%zu\"", order, H5Tget_sign(t) == H5T_SGN_NONE ? 'u' : 'i', size);
    else if (c == H5T_FLOAT)
        fprintf(o, "\"%sf%zu\"", order, size);
    else if (c == H5T_STRING && H5Tis_variable_str(t) > 0)
        fputs("\"|O\"", o);
    else if (c == H5T_STRING)
        fprintf(o, "\"|S%zu\"", size);
    else
        fprintf(o, "\"?class%d-size%zu\"", (int)c, size);
}

static const char *LAYOUTS[] = {"compact", "contiguous", "chunked", "virtual"};

/* h5py's Dataset.compression: the first of gzip, lzf, szip among the filters (h5py/_hl/dataset.py:603-608, h5py 3.x);
 * "filter_values": each filter's client data (gzip: its level), so a compression level is compared, not only the id */
static void filters_json(FILE *o, hid_t dcpl)
{
    int n = H5Pget_nfilters(dcpl), gzip = 0, lzf = 0, szip = 0;
    fputs(", \"filters\": [", o);
    for (int i = 0; i < n; i++) {
        unsigned flags, conf;
        size_t nv = 0;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nv, NULL, 0, NULL, &conf);
        fprintf(o, "%s%d", i ? ", " : "", (int)id);
        gzip |= id == H5Z_FILTER_DEFLATE, lzf |= id == 32000, szip |= id == H5Z_FILTER_SZIP;
    }
    fputs("], \"filter_values\": [", o);
    for (int i = 0; i < n; i++) {
        unsigned flags, conf, cd[16];
        size_t nv = 16;
        H5Pget_filter2(dcpl, (unsigned)i, &flags, &nv, cd, 0, NULL, &conf);
        fputs(i ? ", [" : "[", o);
        for (size_t j = 0; j < nv && j < 16; j++) fprintf(o, "%s%u", j ? ", " : "", cd[j]);
        fputs("]", o);
    }
    const char *comp = gzip ? "\"gzip\"" : lzf ? "\"lzf\"" : szip ? "\"szip\"" : "null";
    fprintf(o, "], \"compression\": %s", comp);
}

static int dataset_json(FILE *o, hid_t d)
{
    hid_t s = H5Dget_space(d), t = H5Dget_type(d), p = H5Dget_create_plist(d);
    int ok = s >= 0 && t >= 0 && p >= 0;
    if (ok) {
        fputs("{\"shape\": ", o);
        hsize_t dims[H5S_MAX_RANK];
        int n = H5Sget_simple_extent_ndims(s);
        if (H5Sget_simple_extent_type(s) == H5S_NULL || n < 0)
            fputs("null", o);
        else
            dims_json(o, H5Sget_simple_extent_dims(s, dims, NULL), dims);
        fputs(", \"dtype\": ", o);
        dtype_json(o, t);
        H5D_layout_t l = H5Pget_layout(p);
        fprintf(o, ", \"layout\": \"%s\", \"chunks\": ", l >= 0 && l <= 3 ? LAYOUTS[l] : "?");
        if (l == H5D_CHUNKED)
            dims_json(o, H5Pget_chunk(p, H5S_MAX_RANK, dims), dims);
        else
            fputs("null", o);
        filters_json(o, p);
        fputc('}', o);
    }
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    if (p >= 0)
        H5Pclose(p);
    return ok ? 0 : -1;
}

typedef struct {
    int n, failed;
} walk_t;

static herr_t member(hid_t g, const char *name, const H5L_info2_t *li, void *arg)
{
    (void)li;
    walk_t *w = arg;
    H5O_info2_t oi;
    if (H5Oget_info_by_name3(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        w->failed = 1;
        return -1;
    }
    if (oi.type != H5O_TYPE_DATASET)
        return 0;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    fputs(w->n++ ? ", " : "", desc_);
    json_str(desc_, name);
    fputs(": ", desc_);
    if (d < 0 || dataset_json(desc_, d) < 0)
        w->failed = 1;
    if (d >= 0)
        H5Dclose(d);
    return w->failed ? -1 : 0;
}

/* the file's description into desc_buf_ (NUL-terminated) */
static void describe(const char *path)
{
    rewind(desc_);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    walk_t w = {0, 0};
    if (f >= 0) {
        fputc('{', desc_);
        if (H5Literate2(f, H5_INDEX_NAME, H5_ITER_INC, NULL, member, &w) < 0)
            w.failed = 1;
        fputc('}', desc_);
        H5Fclose(f);
    }
    if (f < 0 || w.failed) {
        rewind(desc_);
        fprintf(desc_, "{\"error\": \"%s\"}",
                f < 0 ? "HDF5 cannot open it (H5Fopen failed)" : "HDF5 cannot read its root group's datasets");
    }
    fputc('\0', desc_);
    fflush(desc_);
}

static unsigned long long fnv1a(const char *s)
{
    unsigned long long h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    return h;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (type == FTW_DNR || type == FTW_NS) {
        fprintf(stderr, "h5dlio-describe: %s: cannot be read (%s)\n", path, strerror(errno));
        return 1;
    }
    if (type != FTW_F)
        return 0;
    const char *rel = path + root_len_ + (path[root_len_] == '/');
    if (part_n_ > 1 && fnv1a(rel) % part_n_ != part_k_)
        return 0;
    json_str(stdout, rel);
    if (ends_with(rel, ".npz") || ends_with(rel, ".jpeg") || ends_with(rel, ".png")) {
        fputs("\tother\n", stdout);
        return 0;
    }
    describe(path);
    fprintf(stdout, "\t%s\n", desc_buf_);
    return ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
    struct stat st;
    if (argc == 4 && !strcmp(argv[1], "--part")) {
        char *end;
        part_k_ = strtoul(argv[2], &end, 10);
        part_n_ = *end == '/' ? strtoul(end + 1, &end, 10) : 0;
        if (*end || part_n_ < 1 || part_k_ >= part_n_) {
            fprintf(stderr, "h5dlio-describe: --part %s: expected K/N with 0 <= K < N\n", argv[2]);
            return 2;
        }
        argv += 2, argc -= 2;
    }
    if (argc != 2 || !strcmp(argv[1], "--help")) {
        fprintf(stderr, "usage: h5dlio-describe [--part K/N] FOLDER (one line per file: its path and its HDF5 "
                        "structure)\n");
        return 2;
    }
    if (stat(argv[1], &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "h5dlio-describe: %s: not a folder\n", argv[1]);
        return 2;
    }
    char *root = realpath(argv[1], NULL); /* a folder named through a symbolic link is walked (FTW_PHYS: inside) */
    if (!root)
        return 1;
    root_len_ = strlen(root);
    desc_ = open_memstream(&desc_buf_, &desc_len_);
    if (!desc_ || H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0)
        return 1;
    int rc = nftw(root, visit, 32, FTW_PHYS);
    free(root);
    fclose(desc_);
    free(desc_buf_);
    if (rc != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "h5dlio-describe: %s: the walk failed\n", argv[1]);
        return 1;
    }
    return 0;
}
