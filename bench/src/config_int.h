/* Private to the config files (options.c, config_*.c, help.c): the options table and the helpers they share.
 * config.h is the public header; nothing outside these files includes this one. */
#ifndef H5DLIO_CONFIG_INT_H
#define H5DLIO_CONFIG_INT_H
#include "config.h"
#include "dlio.h"
#include "tree.h"
#include <stddef.h>

// clang-format off: a table, kept as written
enum opt_type {
    T_BOOL,
    T_INT,
    T_DBL,
    T_STR,
    T_SHUFFLE,
    T_ORDER,
    T_NAMING,
    T_COMPRESSION,
    T_VERSION,
    T_DIMS,
    T_LOADER,
    T_LIST,
    T_CKPT_TYPE
};
// clang-format on

// clang-format off: a table, kept as written
enum opt_flag {
    OPT_EMPTY_OK = 1,    /* T_STR: an empty value is allowed (output-folder: the current directory) */
    OPT_STRIP_SLASH = 2, /* T_STR: trailing slashes are removed, as DLIO removes them (data-folder) */
};
// clang-format on

/* One option: everything the parsers, the validator, --help and the resolved-config JSON need to know about it. */
typedef struct {
    const char *name; /* canonical key (h5bench style) */
    const char *yaml; /* DLIO workload YAML path, or NULL (then only under the YAML's `h5dlio:` section); names
                             that depend on the DLIO release are in DLIO_KEYS[] (dlio.c) */
    enum opt_type type;
    size_t off, size;     /* where the value lives in config_t */
    const char *def_h5;   /* default for h5bench JSON / no config file */
    const char *def_dlio; /* default for a DLIO YAML (DLIO 2.0.0's own defaults, except generation buffer) */
    double min, max;      /* T_INT/T_DBL/T_LIST items: range; T_DIMS: how many dimensions */
    const char *help;
    unsigned flags;    /* enum opt_flag */
    size_t count;      /* T_DIMS/T_LIST: offset of the int counting the values given */
    const char *stdev; /* the YAML value may be a distribution {mean, stdev, type: normal}: the option its stdev
                             sets */
} opt_t;

extern const opt_t OPTS[];
extern const size_t NOPTS;

/* DLIO keys the kernel accepts without emulating them, and keys whose value must be one it emulates. */
typedef struct {
    const char *path;
    const char *allowed; /* NULL: accepted and ignored (with a warning naming why, when why is set); else
                          * '|'-separated accepted values */
    const char *why;
} known_t;
extern const known_t KNOWN[];
extern const size_t NKNOWN;

/* The one look-up of an option. by: which spellings count: BY_NAME the canonical name (h5bench JSON), BY_YAML the
 * DLIO path (a DLIO YAML), BY_ALIAS also h5dlio.<name> and underscores for hyphens (--set, a YAML's h5dlio: section). */
enum { BY_NAME = 1, BY_YAML = 2, BY_ALIAS = 4 };
#define BY_ANY (BY_NAME | BY_YAML | BY_ALIAS)

/* global names of the shared helpers, so that they do not take libc's (warn) or a generic name */
#define warn cfg_warn
#define fail cfg_fail

void warn(config_t *c, const char *fmt, ...);
void one_line(char *err);
int fail(char *err, const char *fmt, ...);
int lowereq(const char *a, const char *b);
/* config_check.c: a format the kernel does not write or entry e does not replay: -1 and the refusal in err */
int format_refusal(const char *format, const dlio_entry_t *e, char *err);
int parse_bool(const char *s, int *out);
int parse_i64(const char *s, int64_t *out);
int parse_dbl(const char *s, double *out);
int set_opt(config_t *c, const opt_t *o, const char *v, const char *where, char *err);
const opt_t *find_opt(const char *key, unsigned by);
const char *closest_key(const char *key, int names_only);
int unknown_key(const char *where, const char *key, char *err);
const known_t *find_known(const char *path);
int set_later(const config_t *c, const char *path);
int check_known(const known_t *k, const char *path, const char *v, const char *where, char *err);
int apply_versioned(config_t *c, const dlio_key_t *k, const char *v, const char *where, char *err,
                    const dlio_entry_t *e);
void set_defaults(config_t *c, int dlio);
int apply_dlio_map(config_t *c, const node_t *n, const char *prefix, const char *file, char *err,
                   const dlio_entry_t *e);
int apply_h5bench(config_t *c, const node_t *root, const char *file, int entry, char *err);
#endif
