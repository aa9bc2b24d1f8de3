/* Front-end: h5bench's runner form on the command line (--KEY VALUE, a bare --KEY), turned into --set KEY=VALUE. */
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

/* ---------- h5bench's runner form: --KEY VALUE, a bare --KEY for its yes/no keys ---------- */
/* Keys h5bench's runner passes that are not options: its output argument, and a flag of the thesis kernel's parser. */
static const struct {
    const char *name, *opt, *fixed, *why;
} RUNNER_KEYS[] = {
    /* run_dlio appends it (h5bench.py:999); the thesis kernel writes <it>/<output-csv-name>.csv (dlio/stats.c:436) */
    {"output-data-folder", "output-folder", NULL, NULL},
    /* dlio/utils.c:301-302 at PR #124: the flag can only restate its default (true); no option of its own here */
    {"drop-last", NULL, "true",
     "the thesis kernel's --drop-last can only restate its default (dlio/utils.c:58,301-302 at h5bench PR #124); "
     "which batches are kept follows 'ordering'"},
};
#define NRUNNER_KEYS (sizeof RUNNER_KEYS / sizeof RUNNER_KEYS[0])

int config_runner_arg(int argc, char *const argv[], int i, char *set, size_t setlen, char *err)
{
    const char *arg = argv[i], *key = arg + 2;
    const opt_t *o = NULL;
    const char *fixed = NULL, *why = NULL;
    *set = 0;
    if (strncmp(arg, "--", 2) || !*key || strchr(key, '='))
        return fail(err, "unknown argument '%s' (see --help)", arg);
    for (size_t k = 0; k < NRUNNER_KEYS && !o && !fixed; k++)
        if (!strcmp(RUNNER_KEYS[k].name, key)) {
            if (RUNNER_KEYS[k].opt)
                o = find_opt(RUNNER_KEYS[k].opt, BY_NAME);
            fixed = RUNNER_KEYS[k].fixed, why = RUNNER_KEYS[k].why;
        }
    if (!o && !fixed)
        o = find_opt(key, BY_NAME);
    if (!o && !fixed)
        return fail(err, "unknown argument '%s': no key '%s' (did you mean '--%s'? see --help)", arg, key,
                    closest_key(key, 1));
    /* h5bench's yes/no keys (h5bench.py:972-991): bare when true, absent when false; a value is taken if one follows */
    int flag = fixed || o->type == T_BOOL || o->type == T_SHUFFLE || o->type == T_COMPRESSION;
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    int has_value = next && strncmp(next, "--", 2);
    if (!flag && !has_value)
        return fail(err, "%s: key '%s' needs a value", arg, key);
    const char *v = has_value ? next : "true";
    if (fixed) {
        int b;
        if (parse_bool(v, &b) || !b)
            return fail(err, "%s: key '%s': '%s' is not accepted: %s", arg, key, v, why);
        return has_value ? 2 : 1; /* nothing to set */
    }
    static config_t scratch; /* the value is checked here, so the message names the argument */
    if (set_opt(&scratch, o, v, arg, err))
        return -1;
    if ((size_t)snprintf(set, setlen, "%s=%s", o->name, v) >= setlen)
        return fail(err, "%s: key '%s': value too long", arg, key);
    return has_value ? 2 : 1;
}
