/* MLCommons DLIO 3.x's machine-sized readers (entries with auto_read_threads, dlio.h): a read_threads of 1 becomes
 * min(max(1, CPUs // ranks per node), max(1, DLIO_MAX_AUTO_THREADS (default 8))) reader processes when that is > 1
 * (f6796ed utils/config.py:853-876, derive_configurations). The inputs: the node's online CPUs as CPython 3.12's
 * os.cpu_count() reads them (sysconf(_SC_NPROCESSORS_ONLN)), the ranks per node as DLIOMPI counts them
 * (utils/utility.py:245-271, :323-338) and the environment cap, read by every rank. */
#ifndef H5DLIO_AUTOREAD_H
#define H5DLIO_AUTOREAD_H
#include "config.h"
#include <stddef.h>
#include <stdint.h>

/* DLIO's formula on planted inputs (cap: the variable's value as int() reads it, 8 when unset): the effective count */
int64_t autoread_formula(int64_t asked, int64_t cpus, int64_t ranks_per_node, int64_t cap);
/* Before the reader processes are forked (no MPI yet): reads the cap (a 3.x entry reads it whatever read_threads is,
 * as DLIO's int() does; a value int() refuses is exit 2 naming the variable) and the CPU count (key cpu-count, else
 * sysconf), records them in c->rt_auto and returns how many reader processes to fork: the most any ranks-per-node
 * count can give (ranks per node >= 1), trimmed after MPI_Init. -1: bad input (err). */
int64_t autoread_begin(config_t *c, char *err, size_t errlen);
/* After MPI_Init, before anything reads read_threads: the ranks per node (key ranks-per-node; dry_ranks > 0: a
 * --dry-run of that many ranks on one node; else MPI_Comm_split_type shared, counted as DLIO counts it), then
 * c->read_threads = the effective count. */
void autoread_end(config_t *c, int dry_ranks);
/* output.json's "read_threads_auto" object (caller frees), or NULL when the entry does not auto-size */
char *autoread_json(const config_t *c);
/* the human summary's line (buf), or "" */
void autoread_line(const config_t *c, char *buf, size_t n);
#endif
