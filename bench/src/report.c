#include "report.h"
#include "util.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef H5DLIO_VERSION
#define H5DLIO_VERSION "0.0.0"
#endif
#ifndef H5DLIO_GIT
#define H5DLIO_GIT "unknown"
#endif

enum { F_STEPS, F_SAMPLES, F_PREFETCH, F_BYTES, F_OPENS, F_READS, F_META, F_READ, F_PRE, F_COMPUTE, F_LOAD,
       F_OBSERVED, F_AU, F_THR, NF };

static void to_vec(const config_t *c, int phase, const epoch_stats_t *s, double *v)
{
    int64_t bs = phase == PH_TRAIN ? c->batch_size : c->batch_size_eval;
    double dur = s->end - s->start;
    v[F_STEPS] = (double)s->steps;
    v[F_SAMPLES] = (double)s->samples;
    v[F_PREFETCH] = (double)s->prefetched_unused;
    v[F_BYTES] = (double)s->io.bytes;
    v[F_OPENS] = (double)s->io.opens;
    v[F_READS] = (double)s->io.reads;
    v[F_META] = s->io.meta_s;
    v[F_READ] = s->io.read_s;
    v[F_PRE] = s->io.pre_s;
    v[F_COMPUTE] = s->compute_s;
    v[F_LOAD] = s->load_s;
    v[F_OBSERVED] = dur;
    /* DLIO statscounter: AU = sum(compute[1:]) / (end - start - proc[0]); throughput = steps / (end - start) * bs.
     * The compute times are measured sleeps here, not the requested values DLIO records. */
    double denom = dur - s->proc0_s;
    v[F_AU] = s->compute_s_au > 0 && denom > 0 ? s->compute_s_au / denom * 100.0 : 0.0;
    v[F_THR] = dur > 0 ? (double)s->steps / dur * (double)bs : 0.0;
}

typedef struct {
    double sum[NF], mean[NF], max[NF], min[NF];
} agg_t;

static agg_t aggregate(const double *all, int nranks, int nrec, int rec)
{
    agg_t a;
    for (int f = 0; f < NF; f++) {
        a.sum[f] = 0;
        a.max[f] = -INFINITY;
        a.min[f] = INFINITY;
        for (int r = 0; r < nranks; r++) {
            double x = all[((size_t)r * nrec + rec) * NF + f];
            a.sum[f] += x;
            a.max[f] = x > a.max[f] ? x : a.max[f];
            a.min[f] = x < a.min[f] ? x : a.min[f];
        }
        a.mean[f] = a.sum[f] / nranks;
    }
    return a;
}

static double mean_of(const double *x, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return n ? s / (double)n : 0.0;
}

static double std_of(const double *x, int64_t n) /* population, as np.std */
{
    double m = mean_of(x, n), s = 0;
    for (int64_t i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m);
    return n ? sqrt(s / (double)n) : 0.0;
}

#define MIB (1024.0 * 1024.0)

typedef struct {
    int64_t n;
    agg_t *a;
    double *au, *thr, *size_rank, *raw_rate, *obs_rate;
} phase_t;

static void phase_build(phase_t *p, const double *all, int nranks, int nrec, int first, int64_t n)
{
    p->n = n;
    p->a = calloc((size_t)n + 1, sizeof *p->a);
    p->au = calloc((size_t)n + 1, sizeof(double));
    p->thr = calloc((size_t)n + 1, sizeof(double));
    p->size_rank = calloc((size_t)n + 1, sizeof(double));
    p->raw_rate = calloc((size_t)n + 1, sizeof(double));
    p->obs_rate = calloc((size_t)n + 1, sizeof(double));
    for (int64_t e = 0; e < n; e++) {
        agg_t a = aggregate(all, nranks, nrec, first + (int)e);
        p->a[e] = a;
        p->au[e] = a.mean[F_AU];      /* allreduce(au) / size */
        p->thr[e] = a.sum[F_THR];     /* allreduce(throughput): summed over ranks */
        p->size_rank[e] = a.mean[F_BYTES];
        p->raw_rate[e] = a.mean[F_READ] > 0 ? a.mean[F_BYTES] / a.mean[F_READ] : 0.0;
        double busy = a.max[F_OBSERVED] - a.mean[F_COMPUTE];
        p->obs_rate[e] = busy > 0 ? a.mean[F_BYTES] / busy : 0.0;
    }
}

static void phase_free(phase_t *p)
{
    free(p->a);
    free(p->au);
    free(p->thr);
    free(p->size_rank);
    free(p->raw_rate);
    free(p->obs_rate);
}

/* CSV cell holding one value per epoch, quoted, with a matching quoted unit list */
static void csv_list(sb_t *b, const char *name, const phase_t *p, double (*get)(const phase_t *, int64_t), double scale,
                     const char *unit)
{
    sb_printf(b, "%s, \"", name);
    for (int64_t e = 0; e < p->n; e++) sb_printf(b, "%s%.3f", e ? ", " : "", get(p, e) * scale);
    sb_printf(b, "\", \"");
    for (int64_t e = 0; e < p->n; e++) sb_printf(b, "%s%s", e ? ", " : "", unit);
    sb_printf(b, "\"\n");
}
static double g_compute(const phase_t *p, int64_t e) { return p->a[e].mean[F_COMPUTE]; }
static double g_meta(const phase_t *p, int64_t e) { return p->a[e].mean[F_META]; }
static double g_read(const phase_t *p, int64_t e) { return p->a[e].mean[F_READ]; }
static double g_raw_rate(const phase_t *p, int64_t e) { return p->raw_rate[e]; }
static double g_obs(const phase_t *p, int64_t e) { return p->a[e].max[F_OBSERVED]; }
static double g_obs_rate(const phase_t *p, int64_t e) { return p->obs_rate[e]; }
static double g_thr(const phase_t *p, int64_t e) { return p->thr[e]; }
static double g_au(const phase_t *p, int64_t e) { return p->au[e]; }

static double sum_get(const phase_t *p, double (*get)(const phase_t *, int64_t))
{
    double s = 0;
    for (int64_t e = 0; e < p->n; e++) s += get(p, e);
    return s;
}

static void csv_phase(sb_t *b, const char *ph, const phase_t *p, int64_t record_length)
{
    char k[128];
    if (!p->n) return;
    double total = 0, per_rank = 0;
    for (int64_t e = 0; e < p->n; e++) total += p->a[e].sum[F_BYTES], per_rank += p->size_rank[e];
    total /= (double)p->n;
    per_rank /= (double)p->n;
#define ROW(name) (snprintf(k, sizeof k, "%s %s", ph, name), k)
    sb_printf(b, "%s, %.3f, MiB\n", ROW("total size"), total / MIB);
    sb_printf(b, "%s, %.3f, MiB\n", ROW("size per rank"), per_rank / MIB);
    csv_list(b, ROW("emulated compute time per epoch"), p, g_compute, 1, "s");
    sb_printf(b, "%s, %.3f, s\n", ROW("emulated compute time"), sum_get(p, g_compute));
    csv_list(b, ROW("metadata time per epoch"), p, g_meta, 1, "s");
    sb_printf(b, "%s, %.3f, s\n", ROW("metadata time"), sum_get(p, g_meta));
    csv_list(b, ROW("raw read time per epoch"), p, g_read, 1, "s");
    sb_printf(b, "%s, %.3f, s\n", ROW("total raw read time"), sum_get(p, g_read));
    csv_list(b, ROW("raw read rate per epoch"), p, g_raw_rate, 1 / MIB, "MiB/s");
    sb_printf(b, "%s, %.3f, MiB/s\n", ROW("avg raw read rate"), mean_of(p->raw_rate, p->n) / MIB);
    csv_list(b, ROW("observed time per epoch"), p, g_obs, 1, "s");
    sb_printf(b, "%s, %.3f, s\n", ROW("observed time"), sum_get(p, g_obs));
    csv_list(b, ROW("observed rate per epoch"), p, g_obs_rate, 1 / MIB, "MiB/s");
    sb_printf(b, "%s, %.3f, MiB/s\n", ROW("avg observed rate"), mean_of(p->obs_rate, p->n) / MIB);
    csv_list(b, ROW("throughput samples per second per epoch"), p, g_thr, 1, "samples/s");
    sb_printf(b, "%s, %.3f, samples/s\n", ROW("throughput avg samples per second"), mean_of(p->thr, p->n));
    sb_printf(b, "%s, %.3f, samples/s\n", ROW("throughput stdev samples per second"), std_of(p->thr, p->n));
    sb_printf(b, "%s, %.3f, MiB/s\n", ROW("io avg"), mean_of(p->thr, p->n) * (double)record_length / MIB);
    sb_printf(b, "%s, %.3f, MiB/s\n", ROW("io stdev"), std_of(p->thr, p->n) * (double)record_length / MIB);
    csv_list(b, ROW("au per epoch"), p, g_au, 1, "%");
    sb_printf(b, "%s, %.3f, %%\n", ROW("au avg"), mean_of(p->au, p->n));
    sb_printf(b, "%s, %.3f, %%\n", ROW("au stdev"), std_of(p->au, p->n));
#undef ROW
}

static void json_phase(sb_t *b, const char *name, const phase_t *p, const int64_t *epochs, const config_t *c)
{
    sb_printf(b, ",\n  \"%s\": {\"epochs\": [", name);
    for (int64_t e = 0; e < p->n; e++) {
        const agg_t *a = &p->a[e];
        sb_printf(b, "%s\n    {\"epoch\": %lld, \"steps_per_rank_min\": %.0f, \"steps_per_rank_max\": %.0f, "
                     "\"samples\": %.0f, \"samples_prefetched_unused\": %.0f, \"bytes\": %.0f, \"opens\": %.0f, "
                     "\"reads\": %.0f, \"bytes_per_rank_mean\": %.17g, \"observed_s\": %.9g, "
                     "\"compute_s_rank_mean\": %.9g, \"metadata_s_rank_mean\": %.9g, \"raw_read_s_rank_mean\": %.9g, "
                     "\"preprocess_s_rank_mean\": %.9g, \"load_wait_s_rank_mean\": %.9g, "
                     "\"raw_read_rate_bytes_per_s\": %.9g, \"observed_rate_bytes_per_s\": %.9g, "
                     "\"au_percent\": %.9g, \"throughput_samples_per_s\": %.9g}",
                  e ? "," : "", (long long)epochs[e], a->min[F_STEPS], a->max[F_STEPS], a->sum[F_SAMPLES],
                  a->sum[F_PREFETCH], a->sum[F_BYTES], a->sum[F_OPENS], a->sum[F_READS], a->mean[F_BYTES],
                  a->max[F_OBSERVED], a->mean[F_COMPUTE], a->mean[F_META], a->mean[F_READ], a->mean[F_PRE],
                  a->mean[F_LOAD], p->raw_rate[e], p->obs_rate[e], p->au[e], p->thr[e]);
    }
    double thr = mean_of(p->thr, p->n), thr_sd = std_of(p->thr, p->n);
    double au = mean_of(p->au, p->n);
    sb_printf(b, "],\n    \"au_mean_percent\": %.9g, \"au_stdev_percent\": %.9g, \"au_meets_expectation\": %s, "
                 "\"throughput_mean_samples_per_s\": %.9g, \"throughput_stdev_samples_per_s\": %.9g, "
                 "\"io_mean_bytes_per_s\": %.9g, \"io_stdev_bytes_per_s\": %.9g, "
                 "\"dlio_io_mean_MB_per_s\": %.9g, \"dlio_io_stdev_MB_per_s\": %.9g}",
              au, std_of(p->au, p->n), au >= c->au * 100.0 ? "true" : "false", thr, thr_sd,
              thr * (double)c->record_length, thr_sd * (double)c->record_length, thr * (double)c->record_length / MIB,
              thr_sd * (double)c->record_length / MIB);
}

static int write_out(const config_t *c, const char *suffix, const sb_t *b)
{
    char path[4600];
    snprintf(path, sizeof path, "%s/%s%s", c->output_folder, c->output_csv_name, suffix);
    if (write_atomic(path, b->s ? b->s : "", b->len) != 0) {
        fprintf(stderr, "h5dlio: rank 0: error: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int report_write(const results_t *r)
{
    const config_t *c = r->cfg;
    int nrec = (int)(r->nepochs + r->neval);
    double *mine = calloc((size_t)nrec * NF + 1, sizeof(double));
    for (int64_t e = 0; e < r->nepochs; e++) to_vec(c, PH_TRAIN, &r->train[e], mine + e * NF);
    for (int64_t k = 0; k < r->neval; k++) to_vec(c, PH_EVAL, &r->eval[k], mine + (r->nepochs + k) * NF);
    double *all = r->rank == 0 ? calloc((size_t)nrec * NF * r->nranks + 1, sizeof(double)) : NULL;
    MPI_CHECK(MPI_Gather(mine, nrec * NF, MPI_DOUBLE, all, nrec * NF, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    double gen[3] = {0, 0, 0}, gen_sum[3] = {0, 0, 0};
    if (r->did_gen) {
        gen[0] = (double)r->gen->files;
        gen[1] = (double)r->gen->bytes;
        gen[2] = r->gen->seconds;
    }
    MPI_CHECK(MPI_Reduce(gen, gen_sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(gen + 2, gen_sum + 2, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    free(mine);
    if (r->rank != 0)
        return 0;

    phase_t tr, ev;
    phase_build(&tr, all, r->nranks, nrec, 0, r->nepochs);
    phase_build(&ev, all, r->nranks, nrec, (int)r->nepochs, r->neval);
    int64_t *tr_epochs = calloc((size_t)r->nepochs + 1, sizeof *tr_epochs);
    for (int64_t e = 0; e < r->nepochs; e++) tr_epochs[e] = e + 1;

    /* CSV, h5bench's "metric, value, unit" rows, fixed units per row */
    sb_t csv = {0};
    const char *yn[2] = {"NO", "YES"};
    sb_printf(&csv, "metric, value, unit\noperation, dlio,\nranks, %d,\nread threads, %lld,\nsubfiling, %s,\n"
                    "chunking, %s,\ncollective meta, %s,\ncollective data, %s,\n",
              r->nranks, (long long)c->read_threads, yn[!!c->subfiling], yn[!!c->chunking], yn[!!c->collective_meta],
              yn[!!c->collective_data]);
    if (r->did_gen) {
        sb_printf(&csv, "generate files, %.0f,\ngenerate total size, %.3f, MiB\ngenerate time, %.3f, s\n"
                        "generate rate, %.3f, MiB/s\n", gen_sum[0], gen_sum[1] / MIB, gen_sum[2],
                  gen_sum[2] > 0 ? gen_sum[1] / gen_sum[2] / MIB : 0.0);
    }
    csv_phase(&csv, "train", &tr, c->record_length);
    csv_phase(&csv, "eval", &ev, c->record_length);

    /* JSON summary: SI base units; DLIO's metrics under their own names */
    sb_t js = {0};
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    char mpiver[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int ml = 0;
    MPI_Get_library_version(mpiver, &ml);
    char *nl = strchr(mpiver, '\n');
    if (nl) *nl = 0;
    char *cj = config_to_json(c);
    sb_printf(&js, "{\n  \"h5dlio_version\": \"%s\", \"git_revision\": \"%s\", \"hdf5_version\": \"%d.%d.%d\", "
                   "\"mpi_library\": ", H5DLIO_VERSION, H5DLIO_GIT, H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
    sb_json_str(&js, mpiver);
    sb_printf(&js, ", \"host\": ");
    sb_json_str(&js, host);
    sb_printf(&js, ",\n  \"ranks\": %d, \"read_threads\": %lld, \"wall_s\": %.9g,\n  \"config\": %s", r->nranks,
              (long long)c->read_threads, r->wall_s, cj);
    free(cj);
    if (r->did_gen)
        sb_printf(&js, ",\n  \"generate\": {\"files\": %.0f, \"bytes\": %.0f, \"seconds\": %.9g, "
                       "\"bandwidth_bytes_per_s\": %.9g}", gen_sum[0], gen_sum[1], gen_sum[2],
                  gen_sum[2] > 0 ? gen_sum[1] / gen_sum[2] : 0.0);
    if (tr.n) json_phase(&js, "train", &tr, tr_epochs, c);
    if (ev.n) json_phase(&js, "eval", &ev, r->eval_epoch, c);
    sb_printf(&js, "\n}\n");

    int rc = 0;
    rc |= write_out(c, ".csv", &csv);
    rc |= write_out(c, ".json", &js);
    if (c->output_ranks_data) {
        sb_t rk = {0};
        sb_printf(&rk, "rank,phase,epoch,steps,samples,samples_prefetched_unused,bytes,opens,reads,metadata_s,"
                       "raw_read_s,preprocess_s,compute_s,load_wait_s,observed_s,au_percent,throughput_samples_per_s\n");
        for (int q = 0; q < r->nranks; q++)
            for (int k = 0; k < nrec; k++) {
                const double *v = all + ((size_t)q * nrec + k) * NF;
                int tr_rec = k < r->nepochs;
                sb_printf(&rk, "%d,%s,%lld,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", q,
                          tr_rec ? "train" : "eval", (long long)(tr_rec ? k + 1 : r->eval_epoch[k - r->nepochs]),
                          v[F_STEPS], v[F_SAMPLES], v[F_PREFETCH], v[F_BYTES], v[F_OPENS], v[F_READS], v[F_META],
                          v[F_READ], v[F_PRE], v[F_COMPUTE], v[F_LOAD], v[F_OBSERVED], v[F_AU], v[F_THR]);
            }
        rc |= write_out(c, ".ranks.csv", &rk);
        free(rk.s);
    }
    if (!c->quiet) {
        printf("h5dlio: %d ranks, %lld read threads, HDF5 %d.%d.%d, %.3f s wall\n", r->nranks,
               (long long)c->read_threads, H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, r->wall_s);
        if (r->did_gen)
            printf("  generate  %6.0f files  %10.3f MiB  %8.3f s  %10.3f MiB/s\n", gen_sum[0], gen_sum[1] / MIB,
                   gen_sum[2], gen_sum[2] > 0 ? gen_sum[1] / gen_sum[2] / MIB : 0.0);
        const phase_t *ps[2] = {&tr, &ev};
        const char *pn[2] = {"train", "eval"};
        for (int k = 0; k < 2; k++) {
            const phase_t *p = ps[k];
            if (!p->n) continue;
            double opens = 0, bytes = 0;
            for (int64_t e = 0; e < p->n; e++) opens += p->a[e].sum[F_OPENS], bytes += p->a[e].sum[F_BYTES];
            printf("  %-5s     %lld epochs  %.0f opens  %.3f MiB  observed %.3f s  AU %.2f%%  %.3f samples/s  "
                   "%.3f MiB/s (DLIO io)\n", pn[k], (long long)p->n, opens, bytes / MIB, sum_get(p, g_obs),
                   mean_of(p->au, p->n), mean_of(p->thr, p->n),
                   mean_of(p->thr, p->n) * (double)c->record_length / MIB);
        }
        printf("  results: %s/%s.csv, %s/%s.json\n", c->output_folder, c->output_csv_name, c->output_folder,
               c->output_csv_name);
        fflush(stdout);
    }
    free(csv.s);
    free(js.s);
    free(tr_epochs);
    phase_free(&tr);
    phase_free(&ev);
    free(all);
    return rc;
}
