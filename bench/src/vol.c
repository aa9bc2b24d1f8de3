/* The VOL connector stack (vol.h). HDF5 1.14 reads HDF5_VOL_CONNECTOR once, when the library initializes; a connector
 * it cannot set up makes that first call fail and leaves the library initialized with the native connector, so a
 * program that does not check the first call silently runs on native (h5dump checks and refuses to start). The kernel
 * makes that first call itself (H5open, vol_probe) and checks it, then asks HDF5 which stack its file access property
 * list carries. */
#define _GNU_SOURCE
#include "vol.h"
#include "layout.h"
#include "util.h"
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#define ENV_CONN "HDF5_VOL_CONNECTOR"
#define ENV_PATH "HDF5_PLUGIN_PATH"

static int vfail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int vfail(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, CFG_ERRLEN, fmt, ap);
    va_end(ap);
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    return -1;
}

int vol_select(vol_t *v, const config_t *c, char *err)
{
    memset(v, 0, sizeof *v);
    v->source = "none";
    const char *env = getenv(ENV_CONN), *path = getenv(ENV_PATH);
#if !H5_VERSION_GE(1, 14, 0)
    (void)path;
    if (*c->vol_connector) /* config_validate says it first; kept here so this layer never runs without the check */
        return vfail(err, "key 'vol-connector': this HDF5 (%d.%d.%d) has no VOL layer", H5_VERS_MAJOR, H5_VERS_MINOR,
                     H5_VERS_RELEASE);
    if (env && *env)
        return vfail(err,
                     "%s='%s': this HDF5 (%d.%d.%d) has no VOL layer and would ignore it (the files would be read "
                     "by the native library, not by that connector): unset it, or build with the project's HDF5 (make "
                     "build, without HDF5_DIR)",
                     ENV_CONN, env, H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
    return 0;
#else
    v->layer = 1;
    if (*c->vol_connector) {
        if (env && *env && strcmp(env, c->vol_connector))
            return vfail(err, "key 'vol-connector' asks for '%s' but %s='%s' names another connector: set one of them",
                         c->vol_connector, ENV_CONN, env);
        if (setenv(ENV_CONN, c->vol_connector, 1) != 0)
            return vfail(err, "key 'vol-connector': cannot set %s", ENV_CONN);
        v->source = "key 'vol-connector'";
        snprintf(v->requested, sizeof v->requested, "%s", c->vol_connector);
    } else if (env && *env) {
        v->source = ENV_CONN;
        snprintf(v->requested, sizeof v->requested, "%s", env);
    }
    /* vol-cache 1.2.1 ('cache_ext'), measured here (docs/vol.md#vol-cache-refused): refused before HDF5 starts (its
     * init would crash the job or MPI_Abort it, exit 1, H5VLcache_ext.c:905-915) */
    if (strstr(v->requested, "cache_ext"))
        return vfail(err,
                     "%s '%s': the cache VOL connector (vol-cache 1.2.1, 'cache_ext') is refused: it keeps a dataset's "
                     "cached copy only while that dataset is open (removed at H5Dclose and H5Fclose, "
                     "H5VLcache_ext.c:3609-3611, 4481-4482), and DLIO opens and closes a file per sample, so no epoch "
                     "could read from it; it takes its communicator from an MPI-IO file access list (:5856) the sec2 "
                     "readers do not have; and here it crashes at start (docs/vol.md)",
                     v->source, v->requested);
    if (*c->vol_plugin_path) {
        if (path && *path && strcmp(path, c->vol_plugin_path))
            return vfail(err, "key 'vol.path' ('%s') and %s='%s' name different plugin folders: set one of them",
                         c->vol_plugin_path, ENV_PATH, path);
        if (setenv(ENV_PATH, c->vol_plugin_path, 1) != 0)
            return vfail(err, "key 'vol.path': cannot set %s", ENV_PATH);
    }
    return 0;
#endif
}

/* The first rank holding a message prints it; then every rank learns whether any failed (returns -1 on all). */
static int agree(const char *msg, int rank)
{
    int mine = *msg ? rank : INT_MAX, first = INT_MAX;
    MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first == INT_MAX)
        return 0;
    if (rank == first) {
        fprintf(stderr, "h5dlio: rank %d: error: %s\n", rank, msg);
        fflush(stderr);
    }
    return -1;
}

#if H5_VERSION_GE(1, 14, 0)
/* HDF5 looks for a plugin connector by opening every library of its plugin folders (names "lib*.so*") lazily
 * (RTLD_LAZY) and calling into it: a library with an unresolved symbol (vol-async built against a HDF5 without
 * thread safety: H5TSmutex_release) loads, and the process is then killed by the dynamic linker in the middle of
 * HDF5's start, with no message from HDF5 and no chance to exit 2. So before HDF5's start, each such library is
 * opened here with every symbol bound (RTLD_NOW): one that cannot be is named, with the linker's reason. */
static void plugin_preflight(const vol_t *v, char *msg, size_t n)
{
    if (!*v->requested)
        return;
    const char *env = getenv(ENV_PATH);
    char paths[4096];
    snprintf(paths, sizeof paths, "%s", env && *env ? env : H5_DEFAULT_PLUGINDIR);
    char *save = NULL;
    for (char *dir = strtok_r(paths, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        DIR *d = opendir(dir);
        if (!d)
            continue; /* HDF5 says so itself if the connector is not found */
        for (struct dirent *e; (e = readdir(d));) {
            if (strncmp(e->d_name, "lib", 3) || !strstr(e->d_name, ".so"))
                continue;
            char lib[4096];
            struct stat st;
            snprintf(lib, sizeof lib, "%s/%s", dir, e->d_name);
            if (stat(lib, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            dlerror();
            void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
            if (h) {
                dlclose(h);
                continue;
            }
            const char *why = dlerror();
            snprintf(msg, n,
                     "%s%s%s: the VOL connector '%s' cannot be loaded safely: %s holds %s, which HDF5 would open "
                     "while looking for the connector and which does not link (%.1000s): a connector built against "
                     "another HDF5? (vol-async needs a thread-safe parallel HDF5: docs/vol.md)",
                     strcmp(v->source, ENV_CONN) ? v->source : "", strcmp(v->source, ENV_CONN) ? " as " : "", ENV_CONN,
                     v->requested, env && *env ? ENV_PATH : "HDF5's default plugin folder", lib,
                     why ? why : "no reason given");
            closedir(d);
            return;
        }
        closedir(d);
    }
}

/* HDF5's error stack as one line: every description, top first (why a connector did not load is near the bottom:
 * "can't find plugin", "undefined symbol" ...) */
typedef struct {
    char *out;
    size_t n;
} chain_t;
static herr_t chain_walk(unsigned i, const H5E_error2_t *e, void *data)
{
    chain_t *ch = data;
    size_t len = strlen(ch->out);
    if (e->desc && len + 4 < ch->n)
        snprintf(ch->out + len, ch->n - len, "%s%s", i ? "; " : "", e->desc);
    return 0;
}

/* HDF5 names a connector only through an object it opened (H5VLget_connector_name takes a file, group ... id): open a
 * file through the property list in memory (core driver, no backing store: nothing touches the disk) and ask it. */
static void connector_name(hid_t fapl, char *out, size_t n)
{
    const char *what = "an in-memory file opened to ask HDF5 for the VOL connector";
    hid_t p = H5_CHECK(H5Pcopy(fapl), what, EXIT_RUNTIME);
    H5_CHECK(H5Pset_fapl_core(p, 1 << 16, 0), what, EXIT_RUNTIME);
    hid_t f = H5_CHECK(H5Fcreate("h5dlio-vol-probe", H5F_ACC_TRUNC, H5P_DEFAULT, p), what, EXIT_RUNTIME);
    H5_CHECK(H5VLget_connector_name(f, out, n), what, EXIT_RUNTIME);
    H5_CHECK(H5Fclose(f), what, EXIT_RUNTIME);
    H5_CHECK(H5Pclose(p), what, EXIT_RUNTIME);
}

/* A stacking connector's info as HDF5 serializes it holds "under_vol=<value>;under_info={<the next info>}" (the
 * pass-through connector, vol-async, vol-cache): the value of the connector below and its own info. 0 when none. */
static int under_of(const char *info, long *value, char *next, size_t n)
{
    const char *u = strstr(info, "under_vol="), *ui = strstr(info, "under_info={");
    if (!u || !ui)
        return 0;
    char *end = NULL;
    *value = strtol(u + 10, &end, 10);
    if (end == u + 10)
        return 0;
    const char *p = ui + 12;
    int depth = 1;
    size_t k = 0;
    for (; *p && depth; p++) {
        depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
        if (depth && k + 1 < n)
            next[k++] = *p;
    }
    next[k] = 0;
    return depth == 0;
}

/* The stack a file access property list of the kernel's file driver carries, top first, in HDF5's own words. */
static void describe(vol_t *v, const config_t *c)
{
    const char *what = "the file access property list's VOL connector";
    hid_t fapl = driver_select(c, 0)->fapl(c), id = H5I_INVALID_HID;
    void *info = NULL;
    char *str = NULL;
    H5_CHECK(H5Pget_vol_id(fapl, &id), what, EXIT_RUNTIME);
    H5_CHECK(H5Pget_vol_info(fapl, &info), what, EXIT_RUNTIME);
    if (info)
        H5_CHECK(H5VLconnector_info_to_str(info, id, &str), what, EXIT_RUNTIME);
    connector_name(fapl, v->names[0], sizeof v->names[0]);
    snprintf(v->info, sizeof v->info, "%s", str ? str : "");
    v->n = 1;
    char cur[sizeof v->info], next[sizeof v->info];
    snprintf(cur, sizeof cur, "%s", v->info);
    long value = 0;
    while (v->n < VOL_DEPTH && under_of(cur, &value, next, sizeof next)) { /* the connector below, and its info */
        hid_t under = H5_CHECK(H5VLpeek_connector_id_by_value((H5VL_class_value_t)value), what, EXIT_RUNTIME);
        void *uinfo = NULL;
        if (*next)
            H5_CHECK(H5VLconnector_str_to_info(next, under, &uinfo), what, EXIT_RUNTIME);
        hid_t p = H5_CHECK(H5Pcreate(H5P_FILE_ACCESS), what, EXIT_RUNTIME);
        H5_CHECK(H5Pset_vol(p, under, uinfo), what, EXIT_RUNTIME);
        connector_name(p, v->names[v->n], sizeof v->names[v->n]);
        H5_CHECK(H5Pclose(p), what, EXIT_RUNTIME);
        if (uinfo)
            H5_CHECK(H5VLfree_connector_info(under, uinfo), what, EXIT_RUNTIME);
        v->n++;
        memcpy(cur, next, sizeof cur);
    }
    if (str)
        H5_CHECK(H5free_memory(str), what, EXIT_RUNTIME);
    if (info)
        H5_CHECK(H5VLfree_connector_info(id, info), what, EXIT_RUNTIME);
    H5_CHECK(H5VLclose(id), what, EXIT_RUNTIME);
    H5_CHECK(H5Pclose(fapl), what, EXIT_RUNTIME);
}
#endif

int vol_probe(vol_t *v, const config_t *c, int rank)
{
    char msg[CHECK_MSG] = "";
    int failed = 0; /* H5open() failed here */
#if H5_VERSION_GE(1, 14, 0)
    plugin_preflight(v, msg, sizeof msg);
    /* the library's first call: it reads HDF5_VOL_CONNECTOR now, and only now */
    if (*msg)
        ; /* HDF5 is not started: a library its search would open cannot be loaded */
    else if (H5open() < 0) {
        failed = 1;
        char why[2048] = "";
        chain_t ch = {why, sizeof why};
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, chain_walk, &ch);
        const char *path = getenv(ENV_PATH);
        snprintf(msg, sizeof msg, "%s%s%s: HDF5 cannot set up the VOL connector '%s' (%s %s%s%s): %s",
                 strcmp(v->source, ENV_CONN) ? v->source : "", strcmp(v->source, ENV_CONN) ? " as " : "", ENV_CONN,
                 v->requested, ENV_PATH, path && *path ? "'" : "", path && *path ? path : "unset: HDF5's default",
                 path && *path ? "'" : "", *why ? why : "no HDF5 error detail");
    } else
        describe(v, c);
#else
    (void)c;
    snprintf(v->stack, sizeof v->stack, "none (HDF5 %d.%d.%d has no VOL layer)", H5_VERS_MAJOR, H5_VERS_MINOR,
             H5_VERS_RELEASE);
#endif
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    v->h5_failed = failed;
    if (agree(msg, rank))
        return -1;
    if (!v->layer)
        return 0;
    for (int i = 0; i < v->n; i++) {
        size_t len = strlen(v->stack);
        snprintf(v->stack + len, sizeof v->stack - len, "%s%s", i ? " > " : "", v->names[i]);
    }
    /* one stack for the job: a rank whose environment or plugin folder differs would read through another one */
    char root[sizeof v->stack];
    memcpy(root, v->stack, sizeof root);
    MPI_CHECK(MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (strcmp(root, v->stack))
        snprintf(msg, sizeof msg,
                 "VOL connector stack '%s' here, '%s' on rank 0 (%s: each rank's environment must "
                 "name the same connector)",
                 v->stack, root, v->source);
    return agree(msg, rank);
}

char *vol_json(const vol_t *v)
{
    sb_t b = {0};
    sb_printf(&b, "{\"stack\": [");
    for (int i = 0; i < v->n; i++) {
        sb_printf(&b, "%s", i ? ", " : "");
        sb_json_str(&b, v->names[i]);
    }
    sb_printf(&b, "], \"connector\": ");
    if (v->n)
        sb_json_str(&b, v->names[0]);
    else
        sb_printf(&b, "null");
    sb_printf(&b, ", \"info\": ");
    sb_json_str(&b, v->info);
    sb_printf(&b, ", \"selected_by\": ");
    sb_json_str(&b, v->source);
    sb_printf(&b, ", \"description\": ");
    sb_json_str(&b, v->stack);
    sb_printf(&b, "}");
    return b.s;
}
