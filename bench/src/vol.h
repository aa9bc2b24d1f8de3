/* The HDF5 VOL connector stack: chosen from HDF5's own variables (HDF5_VOL_CONNECTOR, HDF5_PLUGIN_PATH) or the
 * vol-connector key, then asked of HDF5 itself, so the results name the stack every file was opened through and a
 * connector HDF5 cannot load ends the job (exit 2) instead of HDF5's silent fall-back to native. */
#ifndef H5DLIO_VOL_H
#define H5DLIO_VOL_H
#include "config.h"

#define VOL_DEPTH 8 /* connectors in a stack, at most */

typedef struct {
    int layer;                  /* this HDF5 has a VOL layer the kernel uses (>= 1.14) */
    int h5_failed;              /* HDF5 failed to start on some rank (vol_probe): its state is not to be trusted */
    char requested[1024];       /* what was asked (messages only; never reported as the stack) */
    const char *source;         /* "key 'vol-connector'" | "HDF5_VOL_CONNECTOR" | "none" */
    int n;                      /* connectors in the stack, top first (0 without a VOL layer) */
    char names[VOL_DEPTH][64];  /* HDF5's names of them ("pass_through", "native") */
    char info[2048];            /* the top connector's info as HDF5 serializes it ("" for native) */
    char stack[VOL_DEPTH * 68]; /* names joined with " > ": "pass_through > native" */
} vol_t;

/* Before MPI_Init and before any HDF5 call or fork (reader processes inherit the environment): the key becomes
 * HDF5_VOL_CONNECTOR (and an h5bench `vol.path` HDF5_PLUGIN_PATH) unless the environment already names another one.
 * Returns 0, or -1 with a one-line message naming the variable and the key. */
int vol_select(vol_t *v, const config_t *c, char *err);
/* Collective, after MPI_Init, before any other HDF5 call: initializes HDF5 and asks it which connector stack a file
 * access property list of the kernel's file driver carries; every rank must get one and the same. On failure, one
 * rank says why (naming the connector and where it came from) and it returns -1 on every rank (the caller ends the
 * job with status 2). */
int vol_probe(vol_t *v, const config_t *c, int rank);
/* The stack as a JSON object (for the summary). Caller frees. */
char *vol_json(const vol_t *v);
#endif
