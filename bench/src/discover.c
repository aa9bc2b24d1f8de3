/* Dataset discovery as DLIO makes it, before its first data-file open (discover.h). A listing is what CPython's
 * os.listdir and os.scandir (glob) make: opendir (one open with O_DIRECTORY and its fstat), readdir to the end,
 * closedir; the kernel makes the same calls through the same glibc, and the strace profile compares them per rank
 * (profiles/strace.py check_discovery). Nothing here stats or names a file per file: a bit per configured file marks
 * it listed under the name the kernel will open. */
#define _GNU_SOURCE
#include "discover.h"
#include "mutate.h"
#include "util.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    const layout_t *L;
    int ph;
    const char *ext;  /* DLIO's format: the files' extension */
    const char *glob; /* a glob pass's suffix (".npz", then ".NPZ"); NULL: a flat listing's filter */
    uint8_t *seen;    /* one bit per configured file of the phase: listed under the name the kernel opens */
    int64_t listed;   /* the entries DLIO keeps */
    int64_t entries;  /* the entries of the last top listing */
    char first[256];  /* its first entry (DLIO 2.x probes it) */
    char *msg;        /* the first problem (CHECK_MSG long) */
} disc_t;

typedef void (*entry_fn)(disc_t *d, const char *dir, const struct dirent *e);

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* One listing of a folder; fn on each entry but "." and ".." (os.listdir leaves them out). -1: it cannot be opened
 * (errno set). */
static int list_folder(disc_t *d, const char *dir, entry_fn fn)
{
    DIR *D = opendir(dir);
    if (!D)
        return -1;
    d->entries = 0;
    d->first[0] = 0;
    const struct dirent *e;
    while ((e = readdir(D)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            if (!d->entries++)
                snprintf(d->first, sizeof d->first, "%s", e->d_name);
            fn(d, dir, e);
        }
    closedir(D);
    return 0;
}

/* An entry DLIO keeps: when it is named as the kernel names file i of the phase, in this folder, file i is there. */
static void keep(disc_t *d, const char *dir, const struct dirent *e)
{
    const config_t *c = d->L->cfg;
    size_t plen = strlen(c->file_prefix);
    d->listed++;
    if (strncmp(e->d_name, c->file_prefix, plen) || e->d_name[plen] != '_')
        return;
    char *end = NULL;
    long long v = strtoll(e->d_name + plen + 1, &end, 10);
    int64_t i = c->naming == NAMING_H5BENCH ? v - 1 : v;
    if (end == e->d_name + plen + 1 || i < 0 || i >= d->L->nfiles[d->ph])
        return;
    char want[4600], got[4600];
    layout_path(d->L, d->ph, i, want, sizeof want);
    snprintf(got, sizeof got, "%s/%s", dir, e->d_name);
    if (strcmp(want, got))
        return;
    if (e->d_type != DT_REG && e->d_type != DT_LNK && e->d_type != DT_UNKNOWN && !*d->msg)
        snprintf(d->msg, CHECK_MSG, "key 'data-folder': %s is not a regular file", got);
    d->seen[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* A flat listing's entry: DLIO 2.0.0 main.py:191-192, 3.x main.py:436-442 keep `entry.endswith(format)`. */
static void flat_entry(disc_t *d, const char *dir, const struct dirent *e)
{
    if (ends_with(e->d_name, d->ext))
        keep(d, dir, e);
}

/* A glob's file: `*` matches no leading dot (Lib/glob.py _ishidden), then the suffix. */
static void glob_file(disc_t *d, const char *dir, const struct dirent *e)
{
    if (e->d_name[0] != '.' && ends_with(e->d_name, d->glob))
        keep(d, dir, e);
}

/* DLIO 2.0.0's glob of "<type>/<star>/<star>.<format>": the sub-folders (dironly: entry.is_dir(), from the
 * entry's type), then each one's files. */
static void glob_subfolder(disc_t *d, const char *dir, const struct dirent *e)
{
    char sub[4400];
    struct stat st;
    if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
        return;
    snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
    if (e->d_type == DT_UNKNOWN && (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode)))
        return;
    int64_t entries = d->entries;
    list_folder(d, sub, glob_file); /* glob swallows a folder it cannot list */
    d->entries = entries;
}

/* storage/file_storage.py:73-82 walk_node(use_pattern=True): glob.glob(pattern) + glob.glob(pattern with the format
 * upper-cased): every folder listed twice. */
static void glob_twice(disc_t *d, const char *dir, const char *name)
{
    char lower[64], upper[64], path[4400];
    snprintf(lower, sizeof lower, ".%s", d->ext);
    snprintf(upper, sizeof upper, "%s", lower);
    for (char *s = upper; *s; s++) *s = (char)(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);
    const char *pass[2] = {lower, upper};
    for (int k = 0; k < 2; k++) {
        d->glob = pass[k];
        if (name) /* 3.x: "<type>/<sub-folder>/<star>.<format>" */
            snprintf(path, sizeof path, "%s/%s", dir, name), list_folder(d, path, glob_file);
        else /* 2.0.0: "<type>/<star>/<star>.<format>" */
            list_folder(d, dir, glob_subfolder);
    }
    d->glob = NULL;
}

/* DLIO 2.0.0 main.py:171-193, on every rank: os.listdir(<type>) (:176); none: next type (:177-178); get_node of its
 * first entry (:179-181: file_storage.py:62-71, os.path.exists then os.path.isdir, two stats); a folder: the glob
 * (:183-185), else the listing filtered (:190-192). */
static int discover_2x(disc_t *d, const char *dir)
{
    if (list_folder(d, dir, flat_entry) < 0)
        return -1;
    if (!d->entries)
        return 0;
    char probe[4700];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/%s", dir, d->first);
    if (stat(probe, &st) == 0 && stat(probe, &st) == 0 && S_ISDIR(st.st_mode)) {
        d->listed = 0;
        memset(d->seen, 0, (size_t)(d->L->nfiles[d->ph] + 7) / 8);
        glob_twice(d, dir, NULL);
    }
    return 0;
}

typedef struct {
    char **v;
    size_t n, cap;
} names_t;
static names_t g_names;

static void collect(disc_t *d, const char *dir, const struct dirent *e)
{
    (void)d, (void)dir;
    if (g_names.n == g_names.cap) {
        g_names.cap = g_names.cap ? 2 * g_names.cap : 16;
        g_names.v = realloc(g_names.v, g_names.cap * sizeof *g_names.v);
        if (!g_names.v)
            die(EXIT_RUNTIME, "out of memory listing the data folder");
    }
    g_names.v[g_names.n++] = strcpy(xmalloc(strlen(e->d_name) + 1, "a sub-folder name"), e->d_name);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* DLIO 3.x (f6796ed) main.py:378-430, rank 0 only: sub-folders configured (:380): sorted(os.listdir(<type>)) (:384),
 * then each name's glob "<type>/<name>/<star>.<format>" (:391-395, threads); else the listing filtered (:433-442). No
 * probe stat. */
static int discover_3x(disc_t *d, const char *dir, int subfolders)
{
    if (subfolders <= 1)
        return list_folder(d, dir, flat_entry);
    g_names.n = 0;
    if (list_folder(d, dir, collect) < 0)
        return -1;
    qsort(g_names.v, g_names.n, sizeof *g_names.v, by_name);
    for (size_t i = 0; i < g_names.n; i++) {
        glob_twice(d, dir, g_names.v[i]);
        free(g_names.v[i]);
    }
    free(g_names.v);
    g_names = (names_t){0};
    return 0;
}

/* Rank 0's stat of every configured file (skip_listing: DLIO lists nothing; MUTANT discovery-stat-all). */
static void stat_every_file(const layout_t *L, int ph, char *msg)
{
    for (int64_t i = 0; i < L->nfiles[ph] && !*msg; i++) {
        char path[4600];
        struct stat st;
        layout_path(L, ph, i, path, sizeof path);
        if (stat(path, &st) != 0)
            snprintf(msg, CHECK_MSG, "key 'data-folder': %s: %s (generate it with generate-data=true)", path,
                     strerror(errno));
        else if (!S_ISREG(st.st_mode))
            snprintf(msg, CHECK_MSG, "key 'data-folder': %s is not a regular file", path);
    }
}

/* The first configured file no listing named, as an error. */
static void check_complete(disc_t *d, const char *dir)
{
    int64_t n = d->L->nfiles[d->ph];
    for (int64_t i = 0; i < n && !*d->msg; i++)
        if (!(d->seen[i / 8] >> (i % 8) & 1)) {
            char path[4600];
            layout_path(d->L, d->ph, i, path, sizeof path);
            snprintf(d->msg, CHECK_MSG,
                     "key 'data-folder': %.3000s: No such file or directory (DLIO's listing of %.3000s finds %lld "
                     "files, the "
                     "run reads %lld; generate it with generate-data=true)",
                     path, dir, (long long)d->listed, (long long)n);
        }
}

void discover_dataset(const layout_t *L, int rank)
{
    const config_t *c = L->cfg;
    char msg[CHECK_MSG] = "";
    int v3 = !strcmp(L->dlio->file_sharding, "round_robin");
    if (!v3 || rank == 0)
        for (int ph = 0; ph < NPHASES && !*msg; ph++) { /* DLIO: train, then valid (DatasetType order) */
            phase_cfg_t p = config_phase(c, ph);
            if (c->skip_listing) { /* 3.x main.py:280-305: no listing (rank 0 checks some files exist) */
                if (p.enabled)
                    stat_every_file(L, ph, msg);
                continue;
            }
            disc_t d = {.L = L, .ph = ph, .ext = c->naming == NAMING_H5BENCH ? "h5" : L->ext, .msg = msg};
            d.seen = xcalloc((size_t)(L->nfiles[ph] + 8) / 8, 1, "the dataset listing");
            char dir[4400];
            snprintf(dir, sizeof dir, "%s/%s", c->data_folder, p.folder);
            int r = v3 ? discover_3x(&d, dir, (int)p.subfolders) : discover_2x(&d, dir);
            if (r < 0 && p.enabled)
                snprintf(msg, CHECK_MSG, "key 'data-folder': %s: %s (generate it with generate-data=true)", dir,
                         strerror(errno));
            else if (p.enabled)
                check_complete(&d, dir);
            free(d.seen);
            if (c->mutant == MUT_DISC_STAT_ALL && rank == 0 && p.enabled && !*msg) /* MUTANT (mutate.h) */
                stat_every_file(L, ph, msg);
        }
    agree_any_or_exit(msg, rank);
}
