/* Front-end: a DLIO workload YAML (its dotted key paths, distributions, release-specific keys) into config_t. */
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

/* ---------- DLIO YAML ---------- */

/* An option whose YAML value is a distribution {mean: x, stdev: y, type: normal} (computation_time, eval_time): the
 * mean sets the option, the stdev the option its table entry names. */
static int apply_dist(config_t *c, const opt_t *o, const node_t *n, const char *path, const char *file, char *err)
{
    char where[4200];
    for (size_t i = 0; i < n->n; i++) {
        const node_t *v = n->items[i];
        snprintf(where, sizeof where, "%s:%d", file, v->line);
        if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key '%s.%s' must be a scalar", where, path, n->keys[i]);
        if (!strcmp(n->keys[i], "mean")) {
            if (set_opt(c, o, v->text, where, err))
                return -1;
        } else if (!strcmp(n->keys[i], "stdev")) {
            if (set_opt(c, find_opt(o->stdev, BY_NAME), v->text, where, err))
                return -1;
        } else if (!strcmp(n->keys[i], "type")) {
            if (!lowereq(v->text, "normal"))
                return fail(err, "%s: key '%s.type': distribution '%s' is not supported (normal)", where, path,
                            v->text);
        } else
            return fail(err, "%s: unknown key '%s.%s' (expected mean, stdev, type)", where, path, n->keys[i]);
    }
    return 0;
}

static int apply_dlio_node(config_t *c, const node_t *v, const char *path, const char *file, char *err,
                           const dlio_entry_t *e)
{
    char where[4200];
    snprintf(where, sizeof where, "%s:%d", file, v->line);
    const dlio_key_t *vk = dlio_key(path);
    if (vk) {
        char list[512] = "";
        const char *text = v->text;
        if (v->kind == NODE_SEQ) { /* dimension lists: [a, b, c] */
            size_t n = 0;
            for (size_t i = 0; i < v->n && n < sizeof list; i++) {
                if (v->items[i]->kind != NODE_SCALAR)
                    return fail(err, "%s: key '%s' must be a list of integers", where, path);
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "", v->items[i]->text);
            }
            text = list;
        } else if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key '%s' must be a scalar", where, path);
        return apply_versioned(c, vk, text, where, err, e);
    }
    int kernel_only = !strncmp(path, "h5dlio.", 7);
    const opt_t *o = find_opt(path, kernel_only ? BY_ANY : BY_YAML);
    if (!o && kernel_only)
        return unknown_key(where, path, err);
    if (o) {
        if (v->kind == NODE_MAP && o->stdev && !kernel_only) /* DLIO's {mean, stdev} syntax: under its own path */
            return apply_dist(c, o, v, path, file, err);
        if (v->kind == NODE_SEQ && o->type == T_LIST) { /* checkpoint.layer_parameters: [a, b] */
            char list[2048] = "";
            size_t n = 0;
            for (size_t i = 0; i < v->n && n < sizeof list; i++) {
                if (v->items[i]->kind != NODE_SCALAR)
                    return fail(err, "%s: key '%s' must be a list of integers", where, path);
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "", v->items[i]->text);
            }
            return set_opt(c, o, list, where, err);
        }
        if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key '%s' must be a scalar", where, path);
        return set_opt(c, o, v->text, where, err);
    }
    if (v->kind == NODE_MAP && (!strcmp(path, "model") || !strncmp(path, "model.", 6))) /* >= 2.0.0-52: model.* */
        return apply_dlio_map(c, v, path, file, err, e);
    const known_t *k = find_known(path);
    if (k) {
        if (!k->allowed && k->why && !set_later(c, path))
            warn(c, "%s: key '%s' is ignored: %s; ignored here too", where, path, k->why);
        if (!k->allowed || set_later(c, path))
            return 0; /* a --set of the same key decides (and is checked) */
        if (!*k->allowed)
            return fail(err, "%s: key '%s' is not emulated: %s", where, path, k->why);
        if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key '%s' must be a scalar", where, path);
        return check_known(k, path, v->text, where, err);
    }
    if (v->kind == NODE_MAP)
        return apply_dlio_map(c, v, path, file, err, e);
    if (!strncmp(path, "checkpoint.", 11)) { /* later releases' checkpoint keys (num_checkpoints_write, ...) */
        if (e)                               /* the second pass: warned once */
            warn(c, "%s: key '%s' is not read by DLIO 2.0.0's checkpointing: ignored", where, path);
        return 0;
    }
    return unknown_key(where, path, err);
}

int apply_dlio_map(config_t *c, const node_t *n, const char *prefix, const char *file, char *err, const dlio_entry_t *e)
{
    for (size_t i = 0; i < n->n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", n->keys[i]);
        if (apply_dlio_node(c, n->items[i], path, file, err, e))
            return -1;
    }
    return 0;
}
