/* Front-end: an h5bench JSON configuration (a dlio benchmark entry or a bare object, its vol block) into config_t. */
#include "config_int.h"
#include "npz.h"
#include "mutate.h"
#include "tree.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5.h>
#include "dlio.h"
#include "tfsplit.h"
#include "util.h"
#include "torchsave.h"

/* ---------- h5bench JSON ---------- */
/* An h5bench configuration's `vol` block, as h5bench's runner reads it (src/h5bench.py prepare_vol, enable_vol):
 * `connector` becomes HDF5_VOL_CONNECTOR, `path` HDF5_PLUGIN_PATH, `library` is added to LD_LIBRARY_PATH and
 * `preload` to LD_PRELOAD of the launched job. The kernel takes `connector` as its vol-connector key and `path` as the
 * plugin folder (vol.c applies both); `library` and `preload` act only at process start, where the runner puts them:
 * accepted with a warning. Runs after the entry's configuration, so both naming different connectors is an error. */
static int apply_h5bench_vol(config_t *c, const node_t *vol, const char *file, char *err)
{
    char where[4200];
    if (vol->kind != NODE_MAP)
        return fail(err, "%s:%d: key 'vol': must be an object (h5bench: connector, path, library, preload)", file,
                    vol->line);
    for (size_t i = 0; i < vol->n; i++) {
        const char *k = vol->keys[i];
        const node_t *v = vol->items[i];
        snprintf(where, sizeof where, "%s:%d", file, v->line);
        int known = !strcmp(k, "connector") || !strcmp(k, "path") || !strcmp(k, "library") || !strcmp(k, "preload");
        if (!known)
            return fail(err, "%s: unknown key 'vol.%s' (h5bench's runner reads connector, path, library, preload)",
                        where, k);
        if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key 'vol.%s' must be a string", where, k);
        if (!strcmp(k, "connector")) {
            if (*c->vol_connector && strcmp(c->vol_connector, v->text))
                return fail(err,
                            "%s: key 'vol.connector' ('%s') and key 'vol-connector' ('%s') name different VOL "
                            "connectors",
                            where, v->text, c->vol_connector);
            if (set_opt(c, find_opt("vol-connector", BY_NAME), v->text, where, err))
                return -1;
        } else if (!strcmp(k, "path")) {
            if (strlen(v->text) >= sizeof c->vol_plugin_path)
                return fail(err, "%s: key 'vol.path': longer than %zu characters", where,
                            sizeof c->vol_plugin_path - 1);
            strcpy(c->vol_plugin_path, v->text);
        } else if (*v->text)
            warn(c,
                 "%s: key 'vol.%s' is ignored: it acts at process start (h5bench's runner adds it to %s of the "
                 "launched job)",
                 where, k, !strcmp(k, "library") ? "LD_LIBRARY_PATH" : "LD_PRELOAD");
    }
    return 0;
}

/* entry 0: the file's one dlio benchmark (or a bare object of its keys). entry N >= 1: the N-th item of
 * `benchmarks`, read as h5bench's runner (PR #124, src/h5bench.py) reads it: `directory` is required (validate_json,
 * h5bench.py:161-175) and prefixed to a data-folder the configuration gives (run_dlio, h5bench.py:993-995). */
int apply_h5bench(config_t *c, const node_t *root, const char *file, int entry, char *err)
{
    char where[4200];
    const node_t *conf = root, *dir = NULL;
    const node_t *bm = tree_get(root, "benchmarks");
    if (entry && !bm)
        return fail(err, "--entry %d: %s has no 'benchmarks' list (an h5bench configuration file)", entry, file);
    if (bm) {
        static const char *top[] = {"mpi", "vol", "file-system", "directory", "benchmarks"};
        for (size_t i = 0; i < root->n; i++) {
            int ok = 0;
            for (size_t j = 0; j < 5; j++) ok |= !strcmp(root->keys[i], top[j]);
            snprintf(where, sizeof where, "%s:%d", file, root->items[i]->line);
            if (!ok)
                return fail(err,
                            "%s: unknown top-level key '%s' (h5bench: mpi, vol, file-system, directory, benchmarks)",
                            where, root->keys[i]);
        }
        if (bm->kind != NODE_SEQ)
            return fail(err, "%s:%d: 'benchmarks' must be a list", file, bm->line);
        conf = NULL;
        char dlio_items[256] = "";
        size_t ndlio = 0, dl = 0;
        for (size_t i = 0; i < bm->n; i++) {
            const node_t *b = tree_get(bm->items[i], "benchmark");
            int is_dlio = b && b->kind == NODE_SCALAR && !strcmp(b->text, "dlio");
            if (is_dlio && dl < sizeof dlio_items - 16)
                dl += (size_t)snprintf(dlio_items + dl, sizeof dlio_items - dl, "%s%zu", ndlio ? ", " : "", i + 1);
            ndlio += is_dlio;
            if (!is_dlio || (entry && (size_t)entry != i + 1) || (!entry && conf))
                continue;
            conf = tree_get(bm->items[i], "configuration");
            if (!conf)
                return fail(err, "%s:%d: dlio benchmark without 'configuration'", file, bm->items[i]->line);
        }
        if (entry && (size_t)entry > bm->n)
            return fail(err, "--entry %d: 'benchmarks' in %s has %zu entries", entry, file, bm->n);
        if (entry && !conf)
            return fail(err, "--entry %d: entry %d of 'benchmarks' in %s is not a dlio benchmark (dlio entries: %s)",
                        entry, entry, file, ndlio ? dlio_items : "none");
        if (!entry && ndlio > 1)
            return fail(err,
                        "%s:%d: more than one dlio benchmark in 'benchmarks' (entries %s): choose one with "
                        "--entry N, as h5bench's runner runs each in its own job",
                        file, bm->line, dlio_items);
        if (!conf)
            return fail(err, "%s: no benchmark with \"benchmark\": \"dlio\" in 'benchmarks'", file);
        if (entry) {
            dir = tree_get(root, "directory");
            if (!dir)
                return fail(err,
                            "%s: key 'directory': missing (--entry runs an entry as h5bench's runner does, which "
                            "requires it and puts the data folder under it)",
                            file);
            if (dir->kind != NODE_SCALAR || !*dir->text)
                return fail(err, "%s:%d: key 'directory': must be a non-empty string", file, dir->line);
        }
    }
    if (conf->kind != NODE_MAP)
        return fail(err, "%s:%d: configuration must be an object", file, conf->line);
    for (size_t i = 0; i < conf->n; i++) {
        const node_t *v = conf->items[i];
        snprintf(where, sizeof where, "%s:%d", file, v->line);
        const opt_t *o = find_opt(conf->keys[i], BY_NAME);
        if (!o)
            return unknown_key(where, conf->keys[i], err);
        if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key '%s' must be a scalar", where, conf->keys[i]);
        if (dir && !strcmp(o->name, "data-folder")) {
            char joined[8192];
            snprintf(joined, sizeof joined, "%s/%s", dir->text, v->text);
            if (set_opt(c, o, joined, where, err))
                return -1;
        } else if (set_opt(c, o, v->text, where, err))
            return -1;
    }
    const node_t *vol = bm ? tree_get(root, "vol") : NULL;
    return vol ? apply_h5bench_vol(c, vol, file, err) : 0;
}
