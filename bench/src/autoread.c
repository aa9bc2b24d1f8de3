/* MLCommons DLIO 3.x's machine-sized readers: see autoread.h. DLIO f6796ed, utils/config.py:853-876
 * (derive_configurations, after the sample counts; nothing before it reads read_threads but the required_samples
 * product, which nothing reads), then validate() (:398-450) and the loader (torch_data_loader.py:740-779: workers,
 * prefetch_factor = ceil(prefetch_size / read_threads)) see the effective count; derive_configurations runs again
 * with the file lists, where the count is no longer 1 (or is the same 1): the same value. */
#include "autoread.h"
#include "util.h"
#include <ctype.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP_VAR "DLIO_MAX_AUTO_THREADS"

int64_t autoread_formula(int64_t asked, int64_t cpus, int64_t ranks_per_node, int64_t cap)
{
    int64_t max_auto = cap > 1 ? cap : 1;
    if (asked != 1)
        return asked;
    int64_t per_rank = (cpus > 0 ? cpus : 1) / (ranks_per_node > 1 ? ranks_per_node : 1);
    if (per_rank < 1)
        per_rank = 1;
    int64_t n = per_rank < max_auto ? per_rank : max_auto;
    return n > 1 ? n : asked;
}

/* int(s) as CPython reads a decimal string: surrounding whitespace, a sign, digits with single underscores between
 * them; saturated at +-INT64_MAX. 0: parsed. */
static int py_int(const char *s, int64_t *out)
{
    while (isspace((unsigned char)*s)) s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    int64_t v = 0;
    for (; isdigit((unsigned char)*s) || *s == '_'; s++) {
        if (*s == '_') {
            if (!isdigit((unsigned char)s[1]))
                return -1;
            continue;
        }
        int d = *s - '0';
        v = v > (INT64_MAX - d) / 10 ? INT64_MAX : v * 10 + d;
    }
    while (isspace((unsigned char)*s)) s++;
    if (*s)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

int64_t autoread_begin(config_t *c, char *err, size_t errlen)
{
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    memset(&c->rt_auto, 0, sizeof c->rt_auto);
    if (!e || !e->auto_read_threads)
        return c->read_threads;
    c->rt_auto.on = 1;
    c->rt_auto.asked = c->read_threads;
    const char *v = getenv(CAP_VAR);
    c->rt_auto.cap = 8;
    snprintf(c->rt_auto.cap_from, sizeof c->rt_auto.cap_from, "default (%s unset)", CAP_VAR);
    if (v) {
        if (py_int(v, &c->rt_auto.cap) != 0) {
            snprintf(err, errlen,
                     "environment variable %s: '%.64s' is not an integer (DLIO 3.x's int() raises "
                     "ValueError: utils/config.py:862)",
                     CAP_VAR, v);
            return -1;
        }
        snprintf(c->rt_auto.cap_from, sizeof c->rt_auto.cap_from, "%s", CAP_VAR);
    }
    if (c->cpu_count > 0) {
        c->rt_auto.cpus = c->cpu_count;
        snprintf(c->rt_auto.cpus_from, sizeof c->rt_auto.cpus_from, "key cpu-count");
    } else {
        long n = sysconf(_SC_NPROCESSORS_ONLN); /* CPython 3.12 os.cpu_count(); `or 1` when unknown */
        c->rt_auto.cpus = n > 0 ? n : 1;
        snprintf(c->rt_auto.cpus_from, sizeof c->rt_auto.cpus_from, "sysconf");
    }
    /* the most readers any ranks-per-node count gives: 1 rank per node */
    c->rt_auto.forked = autoread_formula(c->read_threads, c->rt_auto.cpus, 1, c->rt_auto.cap);
    return c->rt_auto.forked;
}

/* DLIOMPI.initialize (utils/utility.py:245-271): each node's leader (local rank 0) gives its local size, in world
 * rank order (the leaders' Split keyed by world rank); node idx owns world ranks [offset_idx, offset_idx + ppn_idx)
 * (block placement assumed, as DLIO assumes it) and ranks_per_node() is ppn of the node so found (:323-338). */
static int64_t mpi_ranks_per_node(void)
{
    int rank, size, lrank, lsize;
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_rank(node, &lrank));
    MPI_CHECK(MPI_Comm_size(node, &lsize));
    MPI_CHECK(MPI_Comm_free(&node));
    int mine = lrank == 0 ? lsize : 0;
    int *all = xcalloc((size_t)size, sizeof *all, "the ranks per node");
    MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    int64_t off = 0, rpn = lsize;
    for (int i = 0; i < size; i++) {
        if (!all[i])
            continue;
        if (rank >= off && rank < off + all[i]) {
            rpn = all[i];
            break;
        }
        off += all[i];
    }
    free(all);
    return rpn;
}

void autoread_end(config_t *c, int dry_ranks)
{
    if (!c->rt_auto.on)
        return;
    if (c->ranks_per_node > 0) {
        c->rt_auto.rpn = c->ranks_per_node;
        snprintf(c->rt_auto.rpn_from, sizeof c->rt_auto.rpn_from, "key ranks-per-node");
    } else if (dry_ranks > 0) {
        c->rt_auto.rpn = dry_ranks;
        snprintf(c->rt_auto.rpn_from, sizeof c->rt_auto.rpn_from, "--dry-run --ranks (one node)");
    } else {
        c->rt_auto.rpn = mpi_ranks_per_node();
        snprintf(c->rt_auto.rpn_from, sizeof c->rt_auto.rpn_from, "MPI_COMM_TYPE_SHARED");
    }
    c->read_threads = autoread_formula(c->rt_auto.asked, c->rt_auto.cpus, c->rt_auto.rpn, c->rt_auto.cap);
    c->rt_auto.applied = c->read_threads != c->rt_auto.asked;
}

char *autoread_json(const config_t *c)
{
    if (!c->rt_auto.on)
        return NULL;
    sb_t b = {0};
    sb_printf(&b, "{\"asked\": %lld, \"effective\": %lld, \"applied\": %s, \"cpu_count\": %lld, \"cpu_count_from\": ",
              (long long)c->rt_auto.asked, (long long)c->read_threads, c->rt_auto.applied ? "true" : "false",
              (long long)c->rt_auto.cpus);
    sb_json_str(&b, c->rt_auto.cpus_from);
    sb_printf(&b, ", \"ranks_per_node\": %lld, \"ranks_per_node_from\": ", (long long)c->rt_auto.rpn);
    sb_json_str(&b, c->rt_auto.rpn_from);
    sb_printf(&b, ", \"cap\": %lld, \"cap_from\": ", (long long)c->rt_auto.cap);
    sb_json_str(&b, c->rt_auto.cap_from);
    sb_printf(&b, ", \"rule\": ");
    sb_json_str(&b, "DLIO 3.x utils/config.py:853-876: read_threads 1 -> min(max(1, cpu_count // ranks_per_node), "
                    "max(1, cap)) when > 1");
    sb_printf(&b, "}");
    return b.s;
}

void autoread_line(const config_t *c, char *buf, size_t n)
{
    *buf = 0;
    if (!c->rt_auto.on)
        return;
    snprintf(buf, n,
             "  readers   %lld per rank: DLIO 3.x sizes read_threads %lld by the machine (%s): min(%lld CPUs // %lld "
             "ranks per node, cap %lld (%s))",
             (long long)c->read_threads, (long long)c->rt_auto.asked,
             c->rt_auto.asked != 1 ? "not 1: kept"
             : c->rt_auto.applied  ? "applied"
                                   : "1: kept",
             (long long)c->rt_auto.cpus, (long long)c->rt_auto.rpn, (long long)c->rt_auto.cap, c->rt_auto.cap_from);
}
