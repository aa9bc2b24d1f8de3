/* --help: the usage text and the options table, the accepted/checked/refused DLIO keys and the release-specific keys. */
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

/* Words separated by ", " into lines of at most 116 characters. */
static void print_list(const char *title, const char *const *items, size_t n)
{
    size_t col = (size_t)printf("%s", title);
    for (size_t i = 0; i < n; i++) {
        size_t w = strlen(items[i]) + (i + 1 < n ? 1 : 0);
        if (col + 1 + w > 116)
            col = (size_t)printf("\n ");
        col += (size_t)printf(" %s%s", items[i], i + 1 < n ? "," : "");
    }
    printf("\n");
}

void config_print_help(const char *prog)
{
    printf("usage: mpirun -np N %s [--config FILE [--entry N]] [--set KEY=VALUE]... [--KEY [VALUE]]... [--log-vfd]\n"
           "                  [--dry-run [--ranks N]]\n"
           "       %s --dlio-entries [--set dlio-version=V]\n"
           "       %s sizing|runs ...   (installed by `make install`: the accelerator search, the run store)\n\n"
           "Replays DLIO Benchmark's HDF5 dataset generation, training and evaluation reads without ML libraries.\n\n"
           "  --config FILE   h5bench JSON (a \"dlio\" benchmark entry or a bare object of its keys) or a DLIO\n"
           "                  workload YAML (dataset/reader/train/evaluation/workflow/output sections; kernel-only\n"
           "                  keys under an `h5dlio:` section)\n"
           "  --set KEY=VALUE override a key (h5bench name or its underscore spelling, DLIO dotted path, or\n"
           "                  h5dlio.<name>); repeatable\n"
           "  --entry N       a JSON file with several dlio benchmarks: run item N (1-based) of `benchmarks` as\n"
           "                  h5bench's runner does (`directory` required, put in front of data-folder)\n"
           "  --KEY VALUE     h5bench's runner form (PR #124, binary also installed as h5bench_dlio): KEY a name of\n"
           "                  the table below, a yes/no key bare (--train); --output-data-folder DIR = output-folder\n"
           "  --log-vfd       same as --set log-vfd=true\n"
           "  --dry-run       validate the configuration, print it resolved as JSON, do no I/O\n"
           "  --ranks N       with --dry-run: validate for N ranks (default: the ranks it runs with)\n"
           "  --core-config   MLPerf Storage's core-config-v1 hash and class of the configuration, and whether the\n"
           "                  DLIO revision its entry replays is accepted (output.json's comparability; JSON)\n"
           "  --dlio-entries  the kernel's DLIO release entries and release-specific keys as JSON; with\n"
           "                  --set dlio-version=V also the entry V selects and the key names it reads\n"
           "  --version       kernel version, git revision, HDF5 version and features\n"
           "  --help          this text\n\n"
           "Exit status: 0 success, 2 bad input (config, data folder, dataset), 1 runtime failure.\n\n",
           prog, prog, prog);
    printf("%-24s %-34s %-10s %-10s %s\n", "KEY", "DLIO YAML KEY", "DEFAULT", "DLIO-YAML", "MEANING");
    for (size_t i = 0; i < NOPTS; i++) {
        const char *y = OPTS[i].yaml ? OPTS[i].yaml : "-";
        for (size_t k = NDLIO_KEYS; k-- > 0;) /* the newest release's name */
            if (!strcmp(DLIO_KEYS[k].opt, OPTS[i].name)) {
                y = DLIO_KEYS[k].yaml;
                break;
            }
        printf("%-24s %-34s %-10s %-10s %s\n", OPTS[i].name, y, OPTS[i].def_h5, OPTS[i].def_dlio, OPTS[i].help);
    }
    printf("\nDEFAULT applies to h5bench JSON and to runs without --config; DLIO-YAML to a DLIO workload YAML.\n");
    /* the DLIO keys of KNOWN[], by what the parser does with them */
    const char *ignored[NKNOWN], *checked[NKNOWN], *refused[NKNOWN];
    char pairs[NKNOWN][160];
    size_t ni = 0, nc = 0, nr = 0;
    for (size_t i = 0; i < NKNOWN; i++) {
        const known_t *k = &KNOWN[i];
        if (!k->allowed)
            ignored[ni++] = k->path;
        else if (*k->allowed) {
            snprintf(pairs[nc], sizeof pairs[nc], "%s=%s", k->path, k->allowed);
            checked[nc] = pairs[nc];
            nc++;
        } else
            refused[nr++] = k->path;
    }
    print_list("Accepted DLIO keys with no I/O effect (each with its sub-keys):", ignored, ni);
    print_list("Checked DLIO keys (the value the kernel emulates; '|': either):", checked, nc);
    print_list("Refused DLIO keys (not emulated):", refused, nr);
    printf("\nDLIO keys that depend on the release (read by DLIO in [since, until), ignored with a warning otherwise;\n"
           "dlio-version selects the release, entries: %s):\n",
           dlio_entry_list());
    for (size_t k = 0; k < NDLIO_KEYS; k++)
        printf("  %-36s -> %-22s [%s, %s)\n", DLIO_KEYS[k].yaml, DLIO_KEYS[k].opt,
               DLIO_KEYS[k].since ? DLIO_KEYS[k].since : "-", DLIO_KEYS[k].until ? DLIO_KEYS[k].until : "-");
}
