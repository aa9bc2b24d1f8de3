/* The core-config-v1 hash of a DLIO workload YAML as mlpstorage (mlcommons/storage mlpstorage_py/provenance.py
 * flatten_parameters, _canon, core_config_hash, compute_core_config; common/coreconfig.py) makes it from the values
 * PyYAML's safe_load gives: plain scalars resolved as PyYAML resolves them (null, bool, int, float; sexagesimal
 * numbers and timestamps are not reproduced: the hash is then "unknown" with a note), quoted ones strings; then
 * canonicalised (an integral float and a numeric string become the int, "true"/"false" the bool, other numeric
 * strings the float) and written as Python's json.dumps(sort_keys, separators (",", ":"), ensure_ascii) writes
 * them: floats in repr's shortest round-trip form. */
#include "coreconfig.h"
#include "config_int.h"
#include "coreconfig_facts.h"
#include "dlio.h"
#include "sha256.h"
#include "tree.h"
#include "util.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define NROWS(a) (sizeof(a) / sizeof(a)[0])

typedef struct {
    char *key;
    const node_t *n; /* the file's value, or NULL: the --set text `set` */
    const char *set;
} ent_t;

typedef struct {
    ent_t *e;
    size_t n, cap;
} flat_t;

/* Python's json.dumps of a str with ensure_ascii: ", \ and controls escaped, non-ASCII as \uXXXX (UTF-16) */
static void py_str(sb_t *b, const char *s, size_t len)
{
    sb_printf(b, "\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        unsigned cp = ch;
        int extra = ch >= 0xf0 ? 3 : ch >= 0xe0 ? 2 : ch >= 0xc0 ? 1 : 0;
        if (extra && i + (size_t)extra < len) {
            cp = ch & (0x3f >> extra);
            for (int k = 1; k <= extra; k++) cp = cp << 6 | ((unsigned char)s[i + (size_t)k] & 0x3f);
            i += (size_t)extra;
        }
        if (cp == '"' || cp == '\\')
            sb_printf(b, "\\%c", (char)cp);
        else if (cp == '\n')
            sb_printf(b, "\\n");
        else if (cp == '\r')
            sb_printf(b, "\\r");
        else if (cp == '\t')
            sb_printf(b, "\\t");
        else if (cp == '\b')
            sb_printf(b, "\\b");
        else if (cp == '\f')
            sb_printf(b, "\\f");
        else if (cp < 0x20 || (cp > 0x7e && cp < 0x10000 && cp != 0x7f))
            sb_printf(b, "\\u%04x", cp);
        else if (cp >= 0x10000)
            sb_printf(b, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
        else
            sb_printf(b, "%c", (char)cp);
    }
    sb_printf(b, "\"");
}

/* Python's repr of a finite non-integral float: the shortest digits that read back, exponent form when the
 * decimal point is more than 16 places right or 4 left (Python's float_repr_style 'short') */
static void py_float(sb_t *b, double x)
{
    if (isnan(x)) {
        sb_printf(b, "NaN");
        return;
    }
    if (isinf(x)) {
        sb_printf(b, x < 0 ? "-Infinity" : "Infinity");
        return;
    }
    char buf[64], dig[32];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    const char *q = buf;
    if (*q == '-')
        sb_printf(b, "-"), q++;
    size_t nd = 0;
    for (; *q && *q != 'e'; q++)
        if (isdigit((unsigned char)*q))
            dig[nd++] = *q;
    while (nd > 1 && dig[nd - 1] == '0') nd--;
    dig[nd] = 0;
    int decpt = atoi(q + 1) + 1;
    if (decpt <= -4 || decpt > 16)
        sb_printf(b, "%c%s%.*se%c%02d", dig[0], nd > 1 ? "." : "", (int)nd - 1, dig + 1, decpt - 1 < 0 ? '-' : '+',
                  abs(decpt - 1));
    else if (decpt <= 0) {
        sb_printf(b, "0.");
        for (int k = 0; k < -decpt; k++) sb_printf(b, "0");
        sb_printf(b, "%s", dig);
    } else if ((size_t)decpt >= nd) {
        sb_printf(b, "%s", dig);
        for (int k = (int)nd; k < decpt; k++) sb_printf(b, "0");
        sb_printf(b, ".0");
    } else
        sb_printf(b, "%.*s.%s", decpt, dig, dig + decpt);
}

/* Python's int(float) of an integral double, or the float's repr */
static void py_number(sb_t *b, double x)
{
    if (isfinite(x) && x == floor(x))
        sb_printf(b, "%.0f", x == 0 ? 0.0 : x);
    else
        py_float(b, x);
}

static int match(const char *re, const char *s, int icase)
{
    regex_t r;
    if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0)))
        return 0;
    int m = !regexec(&r, s, 0, NULL, 0);
    regfree(&r);
    return m;
}

static char *no_underscores(const char *s)
{
    char *o = xcalloc(strlen(s) + 1, 1, "a value"), *p = o;
    for (; *s; s++)
        if (*s != '_')
            *p++ = *s;
    return o;
}

/* a decimal integer string (sign, digits, underscores) as Python's int() prints it */
static void py_decimal(sb_t *b, const char *s)
{
    char *d = no_underscores(s), *p = d;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    while (p[0] == '0' && p[1]) p++;
    sb_printf(b, "%s%s", neg && strcmp(p, "0") ? "-" : "", p);
    free(d);
}

#define DIGITS "[0-9](_?[0-9])*"
/* mlpstorage's _canon of a Python str: stripped; "true"/"false" in any case the bool; int(s), else float(s) (an
 * integral one the int), else the stripped str */
static void canon_str(sb_t *b, const char *s)
{
    size_t i = 0, n = strlen(s);
    while (i < n && (isspace((unsigned char)s[i]) || (s[i] >= 0x1c && s[i] <= 0x1f))) i++;
    while (n > i && (isspace((unsigned char)s[n - 1]) || (s[n - 1] >= 0x1c && s[n - 1] <= 0x1f))) n--;
    char *t = strndup(s + i, n - i);
    if (!strcasecmp(t, "true") || !strcasecmp(t, "false"))
        sb_printf(b, "%s", tolower((unsigned char)t[0]) == 't' ? "true" : "false");
    else if (match("^[+-]?" DIGITS "$", t, 0))
        py_decimal(b, t);
    else if (match("^[+-]?((" DIGITS ")(\\.(" DIGITS ")?)?|\\." DIGITS ")([eE][+-]?" DIGITS ")?$", t, 0) ||
             match("^[+-]?(inf|infinity|nan)$", t, 1)) {
        char *d = no_underscores(t);
        py_number(b, strtod(d, NULL));
        free(d);
    } else
        py_str(b, t, strlen(t));
    free(t);
}

/* a plain scalar as PyYAML's safe_load types it (resolver.py's implicit resolvers), then canonicalised; -1: a type
 * the kernel does not reproduce (note set) */
static int canon_plain(sb_t *b, const char *s, char *note, size_t nn)
{
    if (match("^(~|null|Null|NULL|)$", s, 0))
        sb_printf(b, "null");
    else if (match("^(yes|Yes|YES|true|True|TRUE|on|On|ON)$", s, 0))
        sb_printf(b, "true");
    else if (match("^(no|No|NO|false|False|FALSE|off|Off|OFF)$", s, 0))
        sb_printf(b, "false");
    else if (match("^[-+]?\\.(inf|Inf|INF)$", s, 0))
        sb_printf(b, "%sInfinity", *s == '-' ? "-" : "");
    else if (match("^\\.(nan|NaN|NAN)$", s, 0))
        sb_printf(b, "NaN");
    else if (match("^([-+]?[0-9][0-9_]*\\.[0-9_]*([eE][-+][0-9]+)?|\\.[0-9][0-9_]*([eE][-+][0-9]+)?)$", s, 0)) {
        char *d = no_underscores(s);
        py_number(b, strtod(d, NULL));
        free(d);
    } else if (match("^[-+]?(0|[1-9][0-9_]*)$", s, 0))
        py_decimal(b, s);
    else if (match("^[-+]?0(b[0-1_]+|x[0-9a-fA-F_]+|[0-7_]+)$", s, 0)) {
        char *d = no_underscores(s), *p = d + (*d == '-' || *d == '+');
        int base = p[1] == 'b' ? 2 : p[1] == 'x' ? 16 : 8;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(p + (base == 8 ? 1 : 2), &end, base);
        int ok = !errno && end && !*end && (base == 8 || p[2]);
        free(d);
        if (!ok)
            return snprintf(note, nn, "the value '%s' (a YAML 1.1 integer out of range)", s), -1;
        sb_printf(b, "%s%llu", *s == '-' && v ? "-" : "", v);
    } else if (match("^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?$", s, 0) ||
               match("^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?", s, 0))
        return snprintf(note, nn, "the value '%s' (PyYAML reads it as a sexagesimal number or a timestamp)", s), -1;
    else
        canon_str(b, s);
    return 0;
}

/* a leaf: a scalar, or a list of scalars and lists (element-wise); -1 with note otherwise */
static int canon_node(sb_t *b, const node_t *n, char *note, size_t nn)
{
    if (n->kind == NODE_SCALAR) {
        if (!n->quoted)
            return canon_plain(b, n->text, note, nn);
        canon_str(b, n->text);
        return 0;
    }
    if (n->kind == NODE_MAP)
        return snprintf(note, nn, "a mapping inside a list"), -1;
    sb_printf(b, "[");
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            sb_printf(b, ",");
        if (canon_node(b, n->items[i], note, nn))
            return -1;
    }
    sb_printf(b, "]");
    return 0;
}

static void flat_add(flat_t *f, const char *key, const node_t *n, const char *set)
{
    if (f->n == f->cap)
        f->e = realloc(f->e, (f->cap = f->cap * 2 + 16) * sizeof *f->e);
    if (!f->e)
        die(1, "out of memory (the comparability)");
    f->e[f->n++] = (ent_t){strdup(key), n, set};
}

/* {"a": {"b": 1}} -> "a.b": every non-mapping value is a leaf (provenance.py flatten_parameters) */
static void flatten(flat_t *f, const node_t *m, const char *prefix)
{
    for (size_t i = 0; i < m->n; i++) {
        char key[1024];
        snprintf(key, sizeof key, "%s%s", prefix, m->keys[i]);
        if (m->items[i]->kind == NODE_MAP) {
            strncat(key, ".", sizeof key - strlen(key) - 1);
            flatten(f, m->items[i], key);
        } else
            flat_add(f, key, m->items[i], NULL);
    }
}

/* a --set KEY=VALUE replaces the value at KEY's DLIO path (a subtree too), as an override of the template does */
static void flat_set(flat_t *f, const char *set, const dlio_entry_t *e)
{
    const char *eq = strchr(set, '=');
    char key[256], path[256];
    if (!eq || (size_t)(eq - set) >= sizeof key)
        return;
    snprintf(key, sizeof key, "%.*s", (int)(eq - set), set);
    const opt_t *o = strchr(key, '.') ? NULL : find_opt(key, BY_NAME | BY_ALIAS);
    const char *dp = o ? (dlio_key_name(o->name, e) ? dlio_key_name(o->name, e) : o->yaml) : key;
    if (!dp || !strchr(dp, '.') || !strncmp(dp, "h5dlio.", 7))
        return; /* a kernel-only key: not a DLIO parameter */
    snprintf(path, sizeof path, "%s", dp);
    size_t pl = strlen(path), j = 0;
    for (size_t i = 0; i < f->n; i++) {
        size_t kl = strlen(f->e[i].key);
        int under = !strncmp(f->e[i].key, path, pl) && (f->e[i].key[pl] == '.' || !f->e[i].key[pl]);
        int above = kl < pl && !strncmp(f->e[i].key, path, kl) && path[kl] == '.';
        if (under || above)
            free(f->e[i].key);
        else
            f->e[j++] = f->e[i];
    }
    f->n = j;
    flat_add(f, path, NULL, eq + 1);
}

static int canon_ent(sb_t *b, const ent_t *x, char *note, size_t nn)
{
    return x->n ? canon_node(b, x->n, note, nn) : canon_plain(b, x->set, note, nn);
}

static int by_key(const void *a, const void *b) { return strcmp(((const ent_t *)a)->key, ((const ent_t *)b)->key); }

static int allowed(const char *key, const char *allowlist)
{
    for (size_t i = 0; i < NROWS(CC_ALLOW); i++)
        if (!strcmp(CC_ALLOW[i][0], allowlist) && !strcmp(CC_ALLOW[i][1], "exclude") && !strcmp(CC_ALLOW[i][2], key))
            return 0;
    for (size_t i = 0; i < NROWS(CC_ALLOW); i++) {
        const char *k = CC_ALLOW[i][2];
        size_t kl = strlen(k);
        if (strcmp(CC_ALLOW[i][0], allowlist) || strcmp(CC_ALLOW[i][1], "include"))
            continue;
        if (kl >= 2 && !strcmp(k + kl - 2, ".*") ? !strncmp(key, k, kl - 1) : !strcmp(key, k))
            return 1;
    }
    return 0;
}

/* the canonical value of key (NULL: absent) */
static char *value_of(const flat_t *f, const char *key)
{
    char note[8];
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].key, key)) {
            sb_t b = {0};
            if (canon_ent(&b, &f->e[i], note, sizeof note))
                return free(b.s), NULL;
            return b.s;
        }
    return NULL;
}

/* the hash of the file's configuration with its overrides; keys, allowlist, family and note filled */
static void core_hash(const config_t *c, const node_t *root, sb_t *keys, char *hash, const char **allowlist,
                      const char **family, char *note, size_t nn)
{
    const node_t *w = tree_get(root, "workload");
    flat_t f = {0};
    flatten(&f, w && w->kind == NODE_MAP ? w : root, "");
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    const char *o = c->over;
    for (int i = 0; i < c->nover; i++, o += strlen(o) + 1) flat_set(&f, o, e);
    char *ck = value_of(&f, "workflow.checkpoint"), *tr = value_of(&f, "workflow.train");
    *family = ck && !strcmp(ck, "true") && !(tr && !strcmp(tr, "true")) ? "checkpointing" : "training";
    free(ck), free(tr);
    *allowlist = "unknown";
    for (size_t i = 0; i < NROWS(CC_FAMILIES); i++)
        if (!strcmp(CC_FAMILIES[i][0], *family))
            *allowlist = CC_FAMILIES[i][1];
    qsort(f.e, f.n, sizeof *f.e, by_key);
    sb_t text = {0};
    int nk = 0, bad = 0;
    sb_printf(&text, "{");
    sb_printf(keys, "[");
    for (size_t i = 0; i < f.n && strcmp(*allowlist, "unknown"); i++) {
        if (!allowed(f.e[i].key, *allowlist))
            continue;
        sb_printf(&text, "%s", nk ? "," : "");
        sb_printf(keys, "%s", nk++ ? ", " : "");
        py_str(&text, f.e[i].key, strlen(f.e[i].key));
        sb_json_str(keys, f.e[i].key);
        sb_printf(&text, ":");
        if (!bad && canon_ent(&text, &f.e[i], note, nn))
            bad = 1;
    }
    sb_printf(&text, "}");
    sb_printf(keys, "]");
    snprintf(hash, 17, "unknown");
    if (nk && !bad) {
        char hex[65];
        sha256_hex(text.s, text.len, hex);
        snprintf(hash, 17, "%.16s", hex);
    }
    if (getenv("H5DLIO_CORECONFIG_TEXT")) /* tests: the canonical text hashed */
        fprintf(stderr, "%s\n", text.s);
    free(text.s);
    for (size_t i = 0; i < f.n; i++) free(f.e[i].key);
    free(f.e);
}

static node_t *read_tree(const char *path, char *note, size_t nn)
{
    FILE *fp = fopen(path, "rb");
    sb_t t = {0};
    char buf[65536];
    size_t r;
    while (fp && (r = fread(buf, 1, sizeof buf, fp)) > 0) sb_printf(&t, "%.*s", (int)r, buf);
    if (fp)
        fclose(fp);
    node_t *root = NULL;
    char err[512];
    if (!fp || tree_parse(t.s ? t.s : "", t.len, 0, path, &root, err, sizeof err) || root->kind != NODE_MAP) {
        snprintf(note, nn, "%s could not be read again", path);
        tree_free(root), root = NULL;
    }
    free(t.s);
    return root;
}

/* The core-config part of both outputs */
typedef struct {
    char note[512], hash[17];
    const char *allowlist, *family;
    sb_t keys;
} core_t;

static void core_of(const config_t *c, core_t *k)
{
    *k = (core_t){.hash = "unknown", .allowlist = "unknown", .family = "training"};
    node_t *root = NULL;
    if (c->source != SRC_DLIO_YAML)
        snprintf(k->note, sizeof k->note, "no DLIO workload YAML (%s): no core-config hash",
                 c->source == SRC_H5BENCH_JSON ? "an h5bench JSON configuration" : "no --config");
    else if (c->nover < 0)
        snprintf(k->note, sizeof k->note, "the --set overrides are longer than %zu bytes: no core-config hash",
                 sizeof c->over);
    else if ((root = read_tree(c->config_path, k->note, sizeof k->note)))
        core_hash(c, root, &k->keys, k->hash, &k->allowlist, &k->family, k->note, sizeof k->note);
    tree_free(root);
    if (!k->keys.s)
        sb_printf(&k->keys, "[]");
}

static const char *revision_of(const config_t *c)
{
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    return e && e->commit ? e->commit : "unknown";
}

char *coreconfig_json(const config_t *c)
{
    core_t k;
    core_of(c, &k);
    const char *cls = "no class";
    for (size_t i = 0; i < NROWS(CC_CLASSES) && strcmp(k.hash, "unknown"); i++)
        if (!strcmp(CC_CLASSES[i][1], k.family) && !strcmp(CC_CLASSES[i][2], k.hash) &&
            !strcmp(CC_CLASSES[i][3], CC_EDITION))
            cls = CC_CLASSES[i][0];
    const char *rev = revision_of(c);
    int ok = 0, nacc = 0;
    for (size_t i = 0; i < NROWS(CC_ACCEPTED); i++)
        if (!strcmp(CC_ACCEPTED[i][0], CC_EDITION))
            nacc++, ok |= !strcmp(CC_ACCEPTED[i][1], rev);
    char acc[512], name[64];
    snprintf(name, sizeof name, "%.12s", rev);
    if (ok)
        snprintf(acc, sizeof acc, "DLIO %s is accepted for MLPerf Storage v%s (editions.yaml)", name, CC_EDITION);
    else
        snprintf(acc, sizeof acc,
                 "DLIO %s is not accepted for MLPerf Storage v%s: not one of the %d revisions "
                 "editions.yaml lists",
                 name, CC_EDITION, nacc);
    sb_t b = {0};
    sb_printf(&b,
              "{\"algorithm\": \"%s\", \"allowlist\": \"%s\", \"hash\": \"%s\", \"keys\": %s, \"family\": \"%s\", "
              "\"edition\": \"%s\", \"class\": \"%s\", \"dlio_revision\": \"%s\", \"kernel_entry\": ",
              CC_ALGORITHM, k.allowlist, k.hash, k.keys.s, k.family, CC_EDITION, cls, rev);
    sb_json_str(&b, c->dlio_entry);
    sb_printf(&b, ", \"dlio_accepted\": %s, \"dlio_acceptance\": ", ok ? "true" : "false");
    sb_json_str(&b, acc);
    sb_printf(&b, ", \"submission\": false");
    if (*k.note) {
        sb_printf(&b, ", \"note\": ");
        sb_json_str(&b, k.note);
    }
    sb_printf(&b, "}");
    free(k.keys.s);
    return b.s;
}

char *coreconfig_provenance(const config_t *c)
{
    core_t k;
    core_of(c, &k);
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    sb_t b = {0};
    sb_printf(&b,
              "{\n  \"schema\": \"%s\", \"rules_edition\": \"%s\", \"layout_version\": %d,\n"
              "  \"tool\": {\"name\": \"h5dlio\", \"version\": \"%s\", \"git_sha\": \"%s\", \"code_image\": "
              "\"unknown\"},\n  \"dlio\": {\"version\": ",
              CC_SCHEMA, CC_EDITION, CC_LAYOUT_VERSION, H5DLIO_VERSION, H5DLIO_GIT);
    sb_json_str(&b, e ? e->version : "unknown");
    sb_printf(&b, ", \"source\": ");
    sb_json_str(&b, e && e->source ? e->source : "unknown");
    sb_printf(&b,
              ", \"commit\": \"%s\"},\n  \"storage_library\": {\"name\": \"none\"},\n"
              "  \"core_config\": {\"algorithm\": \"%s\", \"allowlist\": \"%s\", \"hash\": \"%s\", \"keys\": %s},\n"
              "  \"stamped_at\": \"%s\", \"stamped_by\": \"h5dlio kernel\",\n"
              "  \"provenance\": {\"rules_edition\": \"declared\", \"layout_version\": \"n/a\", \"tool\": \"runtime\", "
              "\"dlio\": \"declared\", \"storage_library\": \"n/a\", \"core_config\": \"%s\"},\n  \"notes\": ",
              revision_of(c), CC_ALGORITHM, k.allowlist, k.hash, k.keys.s, when,
              strcmp(k.hash, "unknown") ? "runtime" : "unknown");
    sb_json_str(&b, CC_NOT_A_SUBMISSION);
    sb_printf(&b, "\n}\n");
    free(k.keys.s);
    return b.s;
}
