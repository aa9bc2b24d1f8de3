/* prefetch_check (key vol-async-prefetch): every refusal names the key and the stack, and the async connector in the
 * stack with the in-rank h5py loader is accepted. No HDF5 file is opened: the stack is given as vol_probe fills it. */
#include "prefetch.h"
#include <stdio.h>
#include <string.h>

static int failures = 0, cases = 0;

static vol_t stack_of(const char *a, const char *b)
{
    vol_t v;
    memset(&v, 0, sizeof v);
    v.layer = 1;
    snprintf(v.names[v.n++], sizeof v.names[0], "%s", a);
    if (b)
        snprintf(v.names[v.n++], sizeof v.names[0], "%s", b);
    snprintf(v.stack, sizeof v.stack, b ? "%s > %s" : "%s", a, b);
    return v;
}

/* expect NULL: accepted; else every '|'-separated word must be in the message */
static void check(const char *name, int nset, char **sets, vol_t v, const char *expect)
{
    config_t c;
    layout_t L;
    char err[CFG_ERRLEN] = "";
    cases++;
    if (config_load(&c, NULL, nset, sets, err)) {
        failures++;
        fprintf(stderr, "FAIL %s: config: %s\n", name, err);
        return;
    }
    layout_init(&L, &c);
    int rc = prefetch_check(&c, &L, &v, err, sizeof err);
    layout_free(&L);
    if (!expect) {
        if (rc) {
            failures++;
            fprintf(stderr, "FAIL %s: refused: %s\n", name, err);
        }
        return;
    }
    if (!rc) {
        failures++;
        fprintf(stderr, "FAIL %s: accepted, expected '%s'\n", name, expect);
        return;
    }
    char words[256];
    snprintf(words, sizeof words, "%s", expect);
    for (char *w = strtok(words, "|"); w; w = strtok(NULL, "|"))
        if (!strstr(err, w)) {
            failures++;
            fprintf(stderr, "FAIL %s: '%s' not in: %s\n", name, w, err);
        }
}

int main(void)
{
    vol_t native = stack_of("native", NULL), pass = stack_of("pass_through", "native");
    vol_t async = stack_of("async", "native");
    char *off[] = {"train=true", "read-threads=0"};
    char *on[] = {"train=true", "read-threads=0", "vol-async-prefetch=true"};
    char *rt[] = {"train=true", "read-threads=2", "vol-async-prefetch=true"};
    char *tf[] = {"train=true", "read-threads=0", "framework=tensorflow", "data-loader=tensorflow",
                  "vol-async-prefetch=true"};
    char *whole[] = {"train=true", "read-threads=0", "dlio-version=3.0.2", "vol-async-prefetch=true"};
    char *mpio[] = {"train=true", "read-threads=0", "collective-data=true", "vol-async-prefetch=true"};
    check("key off, native", 2, off, native, NULL);
    check("key on, native", 3, on, native, "key 'vol-async-prefetch'|async VOL connector|stack in use is 'native'");
    check("key on, pass-through", 3, on, pass, "'vol-async-prefetch'|'pass_through > native'");
    check("key on, async", 3, on, async, NULL);
    check("reader processes", 3, rt, async, "'vol-async-prefetch'|read-threads 0|'async > native'");
    check("TensorFlow loader", 5, tf, async, "'vol-async-prefetch'|TensorFlow|'async > native'");
    check("whole-file reads (DLIO 3.x)", 4, whole, async, "'vol-async-prefetch'|whole files|'async > native'");
    check("MPI-IO", 4, mpio, async, "'vol-async-prefetch'|MPI-IO|'async > native'");
    printf("%d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
