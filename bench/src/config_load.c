/* Loading a configuration: read the file, pick its front-end, apply the --set overrides, two passes for the DLIO
 * release, and the load-time warnings. */
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

static char *read_file(const char *path, size_t *len, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(err, "%s: cannot open config file: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap, "reading the config file");
    for (;;) {
        if (n == cap) {
            if (cap > (64u << 20)) {
                fclose(f);
                free(buf);
                fail(err, "%s: config file larger than 64 MiB", path);
                return NULL;
            }
            buf = xrealloc(buf, cap *= 2, "reading the config file");
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (!r)
            break;
        n += r;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fail(err, "%s: read error", path);
        return NULL;
    }
    if (memchr(buf, 0, n)) {
        free(buf);
        fail(err, "%s: not a text file (NUL byte)", path);
        return NULL;
    }
    *len = n;
    return buf;
}

/* The --set overrides, in order, after the file: a kernel key, a release-specific DLIO key, or a known DLIO key */
static int apply_sets(config_t *c, int nset, char *const sets[], char *err, const dlio_entry_t *e)
{
    for (int i = 0; i < nset; i++) {
        const char *eq = strchr(sets[i], '=');
        if (!eq || eq == sets[i])
            return fail(err, "--set '%s': expected key=value", sets[i]);
        char key[256];
        size_t kl = (size_t)(eq - sets[i]);
        if (kl >= sizeof key)
            return fail(err, "--set: key too long");
        memcpy(key, sets[i], kl);
        key[kl] = 0;
        const opt_t *o = find_opt(key, BY_ANY);
        if (o) {
            if (set_opt(c, o, eq + 1, "--set", err))
                return -1;
            continue;
        }
        const dlio_key_t *vk = dlio_key(key);
        if (vk) {
            if (apply_versioned(c, vk, eq + 1, "--set", err, e))
                return -1;
            continue;
        }
        const known_t *k = find_known(key);
        if (k) {
            if (k->allowed && !*k->allowed)
                return fail(err, "--set: key '%s' is not emulated: %s", key, k->why);
            if (!k->allowed && k->why)
                warn(c, "--set: key '%s' is ignored: %s; ignored here too", key, k->why);
            if (check_known(k, key, eq + 1, "--set", err))
                return -1;
            continue;
        }
        return unknown_key("--set", key, err);
    }
    return 0;
}

/* One pass over the defaults, the file and the --set overrides. e: the DLIO entry whose key names apply (NULL: the
 * first pass, which only finds dlio-version; release-specific keys are skipped). */
static int load_pass(config_t *c, const char *path, int entry, int nset, char *const sets[], char *err,
                     const dlio_entry_t *e, int nearest)
{
    int source = SRC_DEFAULTS, is_json = 0;
    char *text = NULL;
    size_t len = 0;
    if (path) {
        if (!(text = read_file(path, &len, err)))
            return -1;
        size_t i = 0;
        while (i < len && isspace((unsigned char)text[i])) i++;
        const char *dot = strrchr(path, '.');
        is_json = (dot && lowereq(dot, ".json")) || (i < len && text[i] == '{');
        source = is_json ? SRC_H5BENCH_JSON : SRC_DLIO_YAML;
    }
    if (entry && !is_json) {
        free(text);
        return fail(err, "--entry %d: needs an h5bench JSON configuration file (--config FILE.json)", entry);
    }
    set_defaults(c, source == SRC_DLIO_YAML);
    if (e && e->checkpoint_rules >= 2) /* 392621b utils/config.py:132-133, f6796ed :204-205: num_layers -1, [] */
        c->num_layers = -1, c->n_layer_parameters = 0;
    c->source = source;
    if (e) {
        snprintf(c->dlio_entry, sizeof c->dlio_entry, "%s", e->version);
        c->dlio_nearest = nearest;
    }
    if (path) {
        snprintf(c->config_path, sizeof c->config_path, "%s", path);
        node_t *root = NULL;
        int rc = tree_parse(text, len, is_json, path, &root, err, CFG_ERRLEN);
        free(text);
        if (rc)
            return one_line(err), -1;
        if (root->kind != NODE_MAP) {
            tree_free(root);
            return fail(err, "%s: top level must be a mapping/object", path);
        }
        c->nset = nset, c->sets = sets;
        rc = is_json ? apply_h5bench(c, root, path, entry, err) : apply_dlio_map(c, root, "", path, err, e);
        c->nset = 0, c->sets = NULL;
        tree_free(root);
        if (rc)
            return -1;
    }
    size_t off = 0;
    c->nover = 0;
    for (int i = 0; i < nset && c->nover >= 0; i++) {
        size_t n = strlen(sets[i]) + 1;
        c->nover = off + n <= sizeof c->over ? c->nover + 1 : -1;
        if (c->nover > 0)
            memcpy(c->over + off, sets[i], n), off += n;
    }
    return apply_sets(c, nset, sets, err, e);
}

/* What the file and its --set overrides give option o, read leniently, the last one winning: its DLIO path or
 * h5dlio.<name> in the file (two levels deep, as dataset.format), any of its names in a --set. */
static void asked(const node_t *root, int nset, char *const sets[], const opt_t *o, char *out, size_t n)
{
    for (size_t i = 0; root && root->kind == NODE_MAP && i < root->n; i++) {
        const node_t *m = root->items[i];
        int by = strcmp(root->keys[i], "h5dlio") ? BY_YAML : BY_ANY;
        for (size_t j = 0; m->kind == NODE_MAP && j < m->n; j++) {
            char path[512];
            snprintf(path, sizeof path, "%s.%s", root->keys[i], m->keys[j]);
            if (m->items[j]->kind == NODE_SCALAR && find_opt(path, by) == o)
                snprintf(out, n, "%s", m->items[j]->text);
        }
    }
    for (int i = 0; i < nset; i++) {
        const char *eq = strchr(sets[i], '=');
        char key[256];
        if (!eq || (size_t)(eq - sets[i]) >= sizeof key)
            continue;
        memcpy(key, sets[i], (size_t)(eq - sets[i]));
        key[eq - sets[i]] = 0;
        if (find_opt(key, BY_ANY) == o)
            snprintf(out, n, "%s", eq + 1);
    }
}

/* A load that failed: when the format asked for is one the entry does not replay (e, or the dlio-version asked for
 * when the first pass failed), that is the reason named first (a jpeg workload over DLIO 2.0.0's resnet50_h100 also
 * inherits its record length 114660.07, not an integer), the load's own error after it. */
static int load_failed(const char *path, int nset, char *const sets[], char *err, const dlio_entry_t *e)
{
    const opt_t *fo = find_opt("format", BY_NAME), *vo = find_opt("dlio-version", BY_NAME);
    char fmt[256], ver[256], tmp[CFG_ERRLEN];
    snprintf(fmt, sizeof fmt, "%s", fo->def_dlio);
    snprintf(ver, sizeof ver, "%s", vo->def_dlio);
    size_t len = 0;
    char *text = path ? read_file(path, &len, tmp) : NULL;
    node_t *root = NULL;
    if (text && tree_parse(text, len, 0, path, &root, tmp, sizeof tmp))
        root = NULL;
    asked(root, nset, sets, fo, fmt, sizeof fmt);
    asked(root, nset, sets, vo, ver, sizeof ver);
    tree_free(root);
    free(text);
    int nearest = 0;
    if (!e)
        e = dlio_entry_resolve(ver, &nearest);
    if (e && format_refusal(fmt, e, tmp)) {
        char first[CFG_ERRLEN];
        snprintf(first, sizeof first, "%s", err);
        snprintf(err, CFG_ERRLEN, "%.600s; also: %.400s", tmp, first);
    }
    return -1;
}

int config_load(config_t *c, const char *path, int nset, char *const sets[], char *err)
{
    return config_load_entry(c, path, 0, nset, sets, err);
}

int config_load_entry(config_t *c, const char *path, int entry, int nset, char *const sets[], char *err)
{
    /* the key names of a DLIO workload depend on the release: find dlio-version first, then read for real */
    if (load_pass(c, path, entry, nset, sets, err, NULL, 0))
        return load_failed(path, nset, sets, err, NULL);
    int nearest = 0;
    const dlio_entry_t *e = dlio_entry_resolve(c->dlio_version, &nearest);
    if (!e)
        return fail(err,
                    "key 'dlio-version': '%s' is not a DLIO version (X.Y.Z, or X.Y.Z-N for N commits past a "
                    "release tag; entries: %s)",
                    c->dlio_version, dlio_entry_list());
    if (load_pass(c, path, entry, nset, sets, err, e, nearest))
        return load_failed(path, nset, sets, err, e);
    /* a mutant (mutate.h): only from the environment, never from a config, a --set or the harness */
    const char *mut = getenv("H5DLIO_MUTATE");
    if ((c->mutant = mutant_lookup(mut)) < 0)
        return fail(err, "environment variable H5DLIO_MUTATE: '%s' is not a mutant (h5dlio --mutants lists them)", mut);
    if (c->mutant)
        warn(c,
             "MUTANT '%s' INJECTED (H5DLIO_MUTATE): %s. This run diverges from DLIO on purpose: a test of the "
             "validator, never a measurement",
             MUTANTS[c->mutant].name, MUTANTS[c->mutant].what);
    if (nearest) {
        char w[512];
        dlio_nearest_warning(w, sizeof w, c->dlio_version, e);
        warn(c, "%s", w);
    }
    /* reader processes are forked before MPI_Init and have no MPI: an MPI-IO mode needs the rank's own reads. The
     * thesis kernel set read-threads to 0 for subfiling (h5bench_dlio.c, "Multiprocessing can't be used with
     * subfiling") and h5bench's sample asks for collective I/O with a reader: both run, read-threads 0, said so */
    if (c->read_threads > 0 && (c->subfiling || c->collective_data || c->collective_meta)) {
        warn(c,
             "key 'read-threads': %lld reader process(es) asked for with %s; reader processes have no MPI, so "
             "each rank reads its own samples (read-threads 0)",
             (long long)c->read_threads,
             c->subfiling         ? "subfiling"
             : c->collective_data ? "collective-data"
                                  : "collective-meta");
        c->read_threads = 0;
    }
    if (e->checkpoint_rules == 2 && c->checkpoint && c->checkpoint_fsync_yaml && !c->checkpoint_fsync)
        warn(c,
             "key 'checkpoint.fsync': DLIO %s stores it in args.checkpoint_sync, which nothing reads "
             "(utils/config.py:879; its checkpointing reads checkpoint_fsync, default False): no fsync, as DLIO; "
             "h5dlio.checkpoint-fsync=true fsyncs each file",
             e->version);
    if (e->checkpoint_rules == 3 && c->checkpoint && c->checkpoint_fsync_yaml && !c->checkpoint_fsync)
        warn(c,
             "key 'checkpoint.fsync': DLIO %s stores it in args.checkpoint_sync, which nothing reads "
             "(utils/config.py:1767-1768); its %s fsyncs every file whatever it says (%s): so does the kernel",
             e->version,
             strcmp(e->checkpoint_stream, "mlpstorage_streaming") ? "SimpleStreamingCheckpointing"
                                                                  : "mlpstorage StreamingCheckpointing",
             strcmp(e->checkpoint_stream, "mlpstorage_streaming") ? "simple_streaming_checkpointing.py:305-306"
                                                                  : "storage_writers/file_writer.py close()");
    if (c->checkpoint && !c->train &&
        e->checkpoint_rules < 2) /* DLIO checkpoints inside its training loop (main.py:274-302) */
        warn(c, "key 'checkpoint': checkpoints are written during training, and train is off: none will be written");
    return 0;
}
