/* The resolved configuration as JSON (--dry-run, output.json's config): every option of the table, then the
 * entry, the warnings and the source. */
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

char *config_to_json(const config_t *c)
{
    sb_t b = {0};
    sb_printf(&b, "{");
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &OPTS[i];
        const char *p = (const char *)c + o->off;
        sb_printf(&b, "%s\"%s\": ", i ? ", " : "", o->name);
        switch (o->type) {
        case T_BOOL: sb_printf(&b, "%s", *(const int *)p ? "true" : "false"); break;
        case T_INT: sb_printf(&b, "%lld", (long long)*(const int64_t *)p); break;
        case T_DBL: sb_printf(&b, "%.17g", *(const double *)p); break;
        case T_STR:
        case T_VERSION: sb_json_str(&b, p); break;
        case T_SHUFFLE: sb_printf(&b, "\"%s\"", shuffle_name(*(const int *)p)); break;
        case T_ORDER:
        case T_NAMING: sb_printf(&b, "\"%s\"", *(const int *)p ? "h5bench" : "dlio"); break;
        case T_LOADER: sb_printf(&b, "\"%s\"", *(const int *)p ? "tensorflow" : "pytorch"); break;
        case T_COMPRESSION: sb_printf(&b, "\"%s\"", *(const int *)p ? "gzip" : "none"); break;
        case T_CKPT_TYPE: sb_printf(&b, "\"%s\"", *(const int *)p ? "all_ranks" : "rank_zero"); break;
        case T_DIMS:
        case T_LIST: {
            int n = *(const int *)((const char *)c + o->count);
            sb_printf(&b, "[");
            for (int k = 0; k < n; k++) sb_printf(&b, "%s%lld", k ? ", " : "", (long long)((const int64_t *)p)[k]);
            sb_printf(&b, "]");
            break;
        }
        }
    }
    sb_printf(&b, ", \"dlio-entry\": ");
    sb_json_str(&b, c->dlio_entry);
    if (c->mutant) {
        sb_printf(&b, ", \"mutant\": ");
        sb_json_str(&b, MUTANTS[c->mutant].name);
    }
    sb_printf(&b, ", \"dlio-entry-nearest\": %s, \"warnings\": [", c->dlio_nearest ? "true" : "false");
    int first = 1;
    for (const char *w = c->warnings; *w;) {
        const char *nl = strchr(w, '\n');
        size_t wl = nl ? (size_t)(nl - w) : strlen(w);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(wl < sizeof line ? wl : sizeof line - 1), w);
        sb_printf(&b, "%s", first ? "" : ", ");
        sb_json_str(&b, line);
        first = 0;
        w += wl + (nl ? 1 : 0);
    }
    sb_printf(&b, "], \"config-source\": \"%s\", \"config-file\": ",
              c->source == SRC_H5BENCH_JSON ? "h5bench-json"
              : c->source == SRC_DLIO_YAML  ? "dlio-yaml"
                                            : "defaults");
    sb_json_str(&b, c->config_path);
    sb_printf(&b, "}");
    return b.s;
}
