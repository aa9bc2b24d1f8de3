/* Every output is written from the tables below: FIELDS (one rank's values of one epoch), METRICS (an epoch's values
 * combined over ranks) and the views of them each output shows (CSV rows, JSON phase summary, stdout summary). A new
 * metric is one line in METRICS and one line in each view that shows it. */
#include "coreconfig.h"
#include "report.h"
#include "autoread.h"
#include "gen.h"
#include "prefetch.h"
#include "mutate.h"
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

#define MIB (1024.0 * 1024.0)

/* bytes / seconds, NAN (no value) when seconds <= 0: the one definition of a rate */
static double rate(double bytes, double seconds) { return seconds > 0 ? bytes / seconds : NAN; }

/* ---------- per rank: one epoch of one read phase ---------- */
// clang-format off: a table, kept as written
enum field {
    F_STEPS,
    F_SAMPLES,
    F_PREFETCH,
    F_BYTES,
    F_OPENS,
    F_READS,
    F_META,
    F_READ,
    F_PRE,
    F_COMPUTE,
    F_LOAD,
    F_OBSERVED,
    F_AU,
    F_THR,
    F_THR3,
    F_PROC0,
    F_COMPUTE_AU,
    F_RAW_RATE,
    F_OBS_RATE,
    F_START,
    F_END,
    NF
};
// clang-format on

typedef struct {
    const epoch_stats_t *s;
    int64_t bs;    /* the phase's batch size */
    double offset; /* clock_offset(): start/end on rank 0's clock */
} field_src_t;

static double fv_au(const field_src_t *x)
{
    /* DLIO statscounter: AU = sum(compute[1:]) / (end - start - proc[0]). The compute times are measured sleeps
     * here, not the requested values DLIO records. */
    double denom = x->s->end - x->s->start - x->s->proc0_s;
    return x->s->compute_s_au > 0 && denom > 0 ? x->s->compute_s_au / denom * 100.0 : 0.0;
}
static double fv_thr(const field_src_t *x) /* DLIO: throughput = steps / (end - start) * batch size */
{
    double dur = x->s->end - x->s->start;
    return dur > 0 ? (double)x->s->steps / dur * (double)x->bs : 0.0;
}
/* DLIO 3.x (utils/statscounter.py:440-467): throughput over the metric window, the first step excluded
 * (metric_exclude_start_steps 1, exclude_end 0: utils/config.py:142-143): (steps - 1) / (end - start - proc[0]) x
 * batch; 0 when the window is empty or its time is not positive */
static double fv_thr3(const field_src_t *x)
{
    double denom = x->s->end - x->s->start - x->s->proc0_s;
    return x->s->steps > 1 && denom > 0 ? (double)(x->s->steps - 1) / denom * (double)x->bs : 0.0;
}
static double fv_proc0(const field_src_t *x) { return x->s->proc0_s; }
static double fv_compute_au(const field_src_t *x) { return x->s->compute_s_au; }
static double fv_steps(const field_src_t *x) { return (double)x->s->steps; }
static double fv_samples(const field_src_t *x) { return (double)x->s->samples; }
static double fv_prefetch(const field_src_t *x) { return (double)x->s->prefetched_unused; }
static double fv_bytes(const field_src_t *x) { return (double)x->s->io.bytes; }
static double fv_opens(const field_src_t *x) { return (double)x->s->io.opens; }
static double fv_reads(const field_src_t *x) { return (double)x->s->io.reads; }
static double fv_meta(const field_src_t *x) { return x->s->io.meta_s; }
static double fv_read(const field_src_t *x) { return x->s->io.read_s; }
static double fv_pre(const field_src_t *x) { return x->s->io.pre_s; }
static double fv_compute(const field_src_t *x) { return x->s->compute_s; }
static double fv_load(const field_src_t *x) { return x->s->load_s; }
static double fv_observed(const field_src_t *x) { return x->s->end - x->s->start; }
static double fv_raw_rate(const field_src_t *x) { return rate(fv_bytes(x), fv_read(x)); }
static double fv_obs_rate(const field_src_t *x)
{
    return rate(fv_bytes(x), fv_observed(x) - fv_compute(x) - fv_pre(x));
}
static double fv_start(const field_src_t *x) { return x->s->start - x->offset; }
static double fv_end(const field_src_t *x) { return x->s->end - x->offset; }

/* column: the per-rank CSV column (NULL: not written); fmt: its format (NAN: an empty cell) */
static const struct {
    const char *column, *fmt;
    double (*get)(const field_src_t *);
} FIELDS[NF] = {
    [F_STEPS] = {"steps", "%.0f", fv_steps},
    [F_SAMPLES] = {"samples", "%.0f", fv_samples},
    [F_PREFETCH] = {"samples_prefetched_unused", "%.0f", fv_prefetch},
    [F_BYTES] = {"bytes", "%.0f", fv_bytes},
    [F_OPENS] = {"opens", "%.0f", fv_opens},
    [F_READS] = {"reads", "%.0f", fv_reads},
    [F_META] = {"metadata_s", "%.9g", fv_meta},
    [F_READ] = {"raw_read_s", "%.9g", fv_read},
    [F_PRE] = {"preprocess_s", "%.9g", fv_pre},
    [F_COMPUTE] = {"compute_s", "%.9g", fv_compute},
    [F_LOAD] = {"load_wait_s", "%.9g", fv_load},
    [F_OBSERVED] = {"observed_s", "%.9g", fv_observed},
    [F_AU] = {"au_percent", "%.9g", fv_au},
    [F_THR] = {"throughput_samples_per_s", "%.9g", fv_thr},
    [F_THR3] = {NULL, NULL, fv_thr3}, /* the "mlperf" block only */
    [F_PROC0] = {NULL, NULL, fv_proc0},
    [F_COMPUTE_AU] = {NULL, NULL, fv_compute_au},
    [F_RAW_RATE] = {"raw_read_rate_bytes_per_s", "%.9g", fv_raw_rate}, /* bytes / raw_read_s */
    [F_OBS_RATE] = {"observed_rate_bytes_per_s", "%.9g", fv_obs_rate}, /* bytes / (observed - compute - pre) */
    [F_START] = {NULL, NULL, fv_start},
    [F_END] = {NULL, NULL, fv_end},
};

/* ---------- per epoch: the ranks' values combined ---------- */
// clang-format off: a table, kept as written
enum metric {
    M_STEPS_MIN,
    M_STEPS_MAX,
    M_SAMPLES,
    M_PREFETCH,
    M_BYTES,
    M_OPENS,
    M_READS,
    M_BYTES_MEAN,
    M_OBSERVED,
    M_COMPUTE,
    M_META,
    M_READ,
    M_PRE,
    M_LOAD,
    M_RAW_RATE,
    M_OBS_RATE,
    M_AU,
    M_THR,
    NM
};
// clang-format on
/* how ranks combine: SPAN is IOR's phase time, the latest end (MAX) minus the earliest start (MIN) on one clock;
 * RATE is metric num / (metric den - metric minus), 0 when that is <= 0 */
enum combine { SUM, MEAN, MIN, MAX, SPAN, RATE };

static const struct {
    const char *json, *fmt; /* key in output.json's epochs[] and its format */
    enum combine how;
    int field;           /* SUM/MEAN/MIN/MAX: the rank field combined */
    int num, den, minus; /* RATE: metrics (minus -1: none) */
} METRICS[NM] = {
    [M_STEPS_MIN] = {"steps_per_rank_min", "%.0f", MIN, F_STEPS},
    [M_STEPS_MAX] = {"steps_per_rank_max", "%.0f", MAX, F_STEPS},
    [M_SAMPLES] = {"samples", "%.0f", SUM, F_SAMPLES},
    [M_PREFETCH] = {"samples_prefetched_unused", "%.0f", SUM, F_PREFETCH},
    [M_BYTES] = {"bytes", "%.0f", SUM, F_BYTES},
    [M_OPENS] = {"opens", "%.0f", SUM, F_OPENS},
    [M_READS] = {"reads", "%.0f", SUM, F_READS},
    [M_BYTES_MEAN] = {"bytes_per_rank_mean", "%.17g", MEAN, F_BYTES},
    [M_OBSERVED] = {"observed_s", "%.9g", SPAN},
    [M_COMPUTE] = {"compute_s_rank_mean", "%.9g", MEAN, F_COMPUTE},
    [M_META] = {"metadata_s_rank_mean", "%.9g", MEAN, F_META},
    [M_READ] = {"raw_read_s_rank_mean", "%.9g", MEAN, F_READ},
    [M_PRE] = {"preprocess_s_rank_mean", "%.9g", MEAN, F_PRE},
    [M_LOAD] = {"load_wait_s_rank_mean", "%.9g", MEAN, F_LOAD},
    [M_RAW_RATE] = {"raw_read_rate_bytes_per_s", "%.9g", RATE, .num = M_BYTES_MEAN, .den = M_READ, .minus = -1},
    [M_OBS_RATE] = {"observed_rate_bytes_per_s", "%.9g", RATE, .num = M_BYTES_MEAN, .den = M_OBSERVED,
                    .minus = M_COMPUTE},
    [M_AU] = {"au_percent", "%.9g", MEAN, F_AU},                /* DLIO: allreduce(au) / size */
    [M_THR] = {"throughput_samples_per_s", "%.9g", SUM, F_THR}, /* DLIO: allreduce(throughput), summed */
};

/* ---------- views: what each output shows ---------- */
/* over: how a phase's epochs reduce to the shown value (LIST: one value per epoch); scale: what it is multiplied
 * by (RL: record-length, IO: record-length / MiB) */
enum over { LIST, SUM_E, MEAN_E, STD_E };
enum scale { ONE, PER_MIB, RL, IO };
typedef struct {
    const char *name;
    int metric;
    enum over over;
    enum scale scale;
    const char *unit; /* CSV: the row's unit; JSON: NULL, or "bool-au": mean >= the au expectation */
} view_t;

/* CSV, h5bench's "metric, value, unit" rows (each prefixed with the phase name), one fixed unit per row */
// clang-format off: a table, kept as written
static const view_t CSV_ROWS[] = {
    {"total size", M_BYTES, MEAN_E, PER_MIB, "MiB"},
    {"size per rank", M_BYTES_MEAN, MEAN_E, PER_MIB, "MiB"},
    {"emulated compute time per epoch", M_COMPUTE, LIST, ONE, "s"},
    {"emulated compute time", M_COMPUTE, SUM_E, ONE, "s"},
    {"metadata time per epoch", M_META, LIST, ONE, "s"},
    {"metadata time", M_META, SUM_E, ONE, "s"},
    {"raw read time per epoch", M_READ, LIST, ONE, "s"},
    {"total raw read time", M_READ, SUM_E, ONE, "s"},
    {"raw read rate per epoch", M_RAW_RATE, LIST, PER_MIB, "MiB/s"},
    {"avg raw read rate", M_RAW_RATE, MEAN_E, PER_MIB, "MiB/s"},
    {"observed time per epoch", M_OBSERVED, LIST, ONE, "s"},
    {"observed time", M_OBSERVED, SUM_E, ONE, "s"},
    {"observed rate per epoch", M_OBS_RATE, LIST, PER_MIB, "MiB/s"},
    {"avg observed rate", M_OBS_RATE, MEAN_E, PER_MIB, "MiB/s"},
    {"throughput samples per second per epoch", M_THR, LIST, ONE, "samples/s"},
    {"throughput avg samples per second", M_THR, MEAN_E, ONE, "samples/s"},
    {"throughput stdev samples per second", M_THR, STD_E, ONE, "samples/s"},
    {"io avg", M_THR, MEAN_E, IO, "MiB/s"},
    {"io stdev", M_THR, STD_E, IO, "MiB/s"},
    {"au per epoch", M_AU, LIST, ONE, "%"},
    {"au avg", M_AU, MEAN_E, ONE, "%"},
    {"au stdev", M_AU, STD_E, ONE, "%"},
};
// clang-format on

/* JSON, after a phase's epochs[]: DLIO's metrics under DLIO's names */
// clang-format off: a table, kept as written
static const view_t JSON_PHASE[] = {
    {"au_mean_percent", M_AU, MEAN_E, ONE, NULL},
    {"au_stdev_percent", M_AU, STD_E, ONE, NULL},
    {"au_meets_expectation", M_AU, MEAN_E, ONE, "bool-au"},
    {"throughput_mean_samples_per_s", M_THR, MEAN_E, ONE, NULL},
    {"throughput_stdev_samples_per_s", M_THR, STD_E, ONE, NULL},
    {"io_mean_bytes_per_s", M_THR, MEAN_E, RL, NULL},
    {"io_stdev_bytes_per_s", M_THR, STD_E, RL, NULL},
    {"dlio_io_mean_MB_per_s", M_THR, MEAN_E, IO, NULL},
    {"dlio_io_stdev_MB_per_s", M_THR, STD_E, IO, NULL},
};
// clang-format on

/* stdout, one line per phase: name holds the printf format of the value */
// clang-format off: a table, kept as written
static const view_t STDOUT_PHASE[] = {
    {"  %.0f opens", M_OPENS, SUM_E, ONE, NULL},         {"  %.3f MiB", M_BYTES, SUM_E, PER_MIB, NULL},
    {"  observed %.3f s", M_OBSERVED, SUM_E, ONE, NULL}, {"  AU %.2f%%", M_AU, MEAN_E, ONE, NULL},
    {"  %.3f samples/s", M_THR, MEAN_E, ONE, NULL},      {"  %.3f MiB/s (DLIO io)", M_THR, MEAN_E, IO, NULL},
};
// clang-format on

/* ---------- the generation: one row per value, each view's spelling of it ---------- */
/* CSV: h5bench's "metric, value, unit" row (value / csv_scale); JSON: the key under "generate", SI units; stdout:
 * the format of its part of the "generate" line (value / out_scale). The values: files, bytes, seconds (IOR's span,
 * gather_gen), bytes per second. */
enum { GM_FILES, GM_BYTES, GM_SECONDS, GM_RATE, NGM };
static const struct {
    const char *csv, *csv_fmt, *csv_unit;
    double csv_scale;
    const char *json, *json_fmt, *out_fmt;
    double out_scale;
} GEN_METRICS[NGM] = {
    [GM_FILES] = {"generate files", "%.0f", "", 1.0, "files", "%.0f", "  generate  %6.0f files", 1.0},
    [GM_BYTES] = {"generate total size", "%.3f", " MiB", MIB, "bytes", "%.0f", "  %10.3f MiB", MIB},
    [GM_SECONDS] = {"generate time", "%.3f", " s", 1.0, "seconds", "%.9g", "  %8.3f s", 1.0},
    [GM_RATE] = {"generate rate", "%.3f", " MiB/s", MIB, "bandwidth_bytes_per_s", "%.9g", "  %10.3f MiB/s", MIB},
};

/* JSON, per phase with output-ranks-data: each rank's fields summed over the phase's epochs, rates from the sums */
static const int RANK_SUMS[] = {F_BYTES, F_READ, F_OBSERVED, F_COMPUTE, F_PRE, F_META};

/* ---------- building ---------- */
typedef struct {
    const char *name;     /* "train" | "eval" */
    int64_t n;            /* epochs */
    const int64_t *epoch; /* epoch numbers */
    double (*m)[NM];      /* m[e][metric] */
    const double *rows;   /* this phase's first record of rank 0 in the gathered fields */
    int nranks, nrec;     /* ranks; records per rank */
} phase_t;

/* a field of rank q, epoch e of a phase */
static double fld(const phase_t *p, int q, int64_t e, int f) { return p->rows[((size_t)q * p->nrec + e) * NF + f]; }

static void combine(phase_t *p)
{
    for (int64_t e = 0; e < p->n; e++)
        for (int k = 0; k < NM; k++) {
            double v = 0, lo = INFINITY, hi = -INFINITY, first = INFINITY, last = -INFINITY;
            for (int q = 0; q < p->nranks; q++) {
                double x = fld(p, q, e, METRICS[k].field);
                v += x, lo = x < lo ? x : lo, hi = x > hi ? x : hi;
                first = fld(p, q, e, F_START) < first ? fld(p, q, e, F_START) : first;
                last = fld(p, q, e, F_END) > last ? fld(p, q, e, F_END) : last;
            }
            switch (METRICS[k].how) {
            case SUM: break;
            case MEAN: v /= p->nranks; break;
            case MIN: v = lo; break;
            case MAX: v = hi; break;
            case SPAN: v = last - first; break;
            case RATE: {
                double den = p->m[e][METRICS[k].den] - (METRICS[k].minus >= 0 ? p->m[e][METRICS[k].minus] : 0.0);
                v = den > 0 ? p->m[e][METRICS[k].num] / den : 0.0; /* metrics before it in the table */
                break;
            }
            }
            p->m[e][k] = v;
        }
}

static double scale_of(enum scale s, const config_t *c)
{
    return s == PER_MIB ? 1 / MIB : s == RL ? (double)c->record_length : s == IO ? (double)c->record_length / MIB : 1;
}

/* a view's value: its metric reduced over the phase's epochs (population stdev, as np.std), then scaled */
static double value(const phase_t *p, const view_t *v, const config_t *c)
{
    double s = 0, m, d = 0;
    for (int64_t e = 0; e < p->n; e++) s += p->m[e][v->metric];
    m = p->n ? s / (double)p->n : 0.0;
    for (int64_t e = 0; e < p->n; e++) d += (p->m[e][v->metric] - m) * (p->m[e][v->metric] - m);
    double x = v->over == SUM_E ? s : v->over == MEAN_E ? m : p->n ? sqrt(d / (double)p->n) : 0.0;
    return x * scale_of(v->scale, c);
}

static void csv_phase(sb_t *b, const phase_t *p, const config_t *c)
{
    for (size_t i = 0; p->n && i < sizeof CSV_ROWS / sizeof CSV_ROWS[0]; i++) {
        const view_t *v = &CSV_ROWS[i];
        if (v->over != LIST) {
            sb_printf(b, "%s %s, %.3f, %s\n", p->name, v->name, value(p, v, c), v->unit);
            continue;
        }
        sb_printf(b, "%s %s, \"", p->name, v->name);
        for (int64_t e = 0; e < p->n; e++)
            sb_printf(b, "%s%.3f", e ? ", " : "", p->m[e][v->metric] * scale_of(v->scale, c));
        sb_printf(b, "\", \"");
        for (int64_t e = 0; e < p->n; e++) sb_printf(b, "%s%s", e ? ", " : "", v->unit);
        sb_printf(b, "\"\n");
    }
}

static void json_num(sb_t *b, const char *fmt, double x)
{
    if (isnan(x))
        sb_printf(b, "null");
    else
        sb_printf(b, fmt, x);
}

/* Each rank's inputs of DLIO's AU and throughput per epoch (utils/statscounter.py compute_metrics_train), so that a
 * reader recomputes them (profiles/timing.py check_metrics): steps, the epoch's span, the first step's load+compute
 * (proc[0]), the emulated compute of every step and of the steps after the first */
static void json_input_rows(sb_t *b, const phase_t *p)
{
    for (int q = 0; q < p->nranks; q++)
        for (int64_t e = 0; e < p->n; e++)
            sb_printf(b,
                      "%s{\"rank\": %d, \"epoch\": %lld, \"steps\": %.0f, \"span_s\": %.9g, \"first_step_s\": %.9g, "
                      "\"compute_s\": %.9g, \"compute_after_first_s\": %.9g}",
                      q || e ? ", " : "", q, (long long)p->epoch[e], fld(p, q, e, F_STEPS),
                      fld(p, q, e, F_END) - fld(p, q, e, F_START), fld(p, q, e, F_PROC0), fld(p, q, e, F_COMPUTE),
                      fld(p, q, e, F_COMPUTE_AU));
}

static void json_inputs(sb_t *b, const phase_t *p)
{
    sb_printf(b, ",\n    \"inputs\": [");
    json_input_rows(b, p);
    sb_printf(b, "]");
}

static void json_phase(sb_t *b, const phase_t *p, const config_t *c, int ranks_data)
{
    sb_printf(b, ",\n  \"%s\": {\"epochs\": [", p->name);
    for (int64_t e = 0; e < p->n; e++) {
        sb_printf(b, "%s\n    {\"epoch\": %lld", e ? "," : "", (long long)p->epoch[e]);
        for (int k = 0; k < NM; k++) {
            sb_printf(b, ", \"%s\": ", METRICS[k].json);
            sb_printf(b, METRICS[k].fmt, p->m[e][k]);
        }
        sb_printf(b, "}");
    }
    sb_printf(b, "],\n    ");
    for (size_t i = 0; i < sizeof JSON_PHASE / sizeof JSON_PHASE[0]; i++) {
        const view_t *v = &JSON_PHASE[i];
        double x = value(p, v, c);
        sb_printf(b, "%s\"%s\": ", i ? ", " : "", v->name);
        if (v->unit) /* bool-au */
            sb_printf(b, "%s", x >= c->au * 100.0 ? "true" : "false");
        else
            sb_printf(b, "%.9g", x);
    }
    json_inputs(b, p);
    if (ranks_data) {
        sb_printf(b, ",\n    \"ranks\": [");
        for (int q = 0; q < p->nranks; q++) {
            double sum[NF] = {0};
            for (size_t i = 0; i < sizeof RANK_SUMS / sizeof RANK_SUMS[0]; i++)
                for (int64_t e = 0; e < p->n; e++) sum[RANK_SUMS[i]] += fld(p, q, e, RANK_SUMS[i]);
            sb_printf(b, "%s\n      {\"rank\": %d, \"epochs\": %lld", q ? "," : "", q, (long long)p->n);
            for (size_t i = 0; i < sizeof RANK_SUMS / sizeof RANK_SUMS[0]; i++) {
                sb_printf(b, ", \"%s\": ", FIELDS[RANK_SUMS[i]].column);
                sb_printf(b, FIELDS[RANK_SUMS[i]].fmt, sum[RANK_SUMS[i]]);
            }
            sb_printf(b, ", \"raw_read_rate_bytes_per_s\": ");
            json_num(b, "%.9g", rate(sum[F_BYTES], sum[F_READ]));
            sb_printf(b, ", \"observed_rate_bytes_per_s\": ");
            json_num(b, "%.9g", rate(sum[F_BYTES], sum[F_OBSERVED] - sum[F_COMPUTE] - sum[F_PRE]));
            sb_printf(b, "}");
        }
        sb_printf(b, "]");
    }
    sb_printf(b, "}");
}

static void ranks_csv(sb_t *b, const phase_t *ps, int nranks)
{
    sb_printf(b, "rank,phase,epoch");
    for (int f = 0; f < NF; f++)
        if (FIELDS[f].column)
            sb_printf(b, ",%s", FIELDS[f].column);
    sb_printf(b, "\n");
    for (int q = 0; q < nranks; q++)
        for (int k = 0; k < NPHASES; k++) {
            const phase_t *p = &ps[k];
            for (int64_t e = 0; e < p->n; e++) {
                sb_printf(b, "%d,%s,%lld", q, p->name, (long long)p->epoch[e]);
                for (int f = 0; f < NF; f++) {
                    if (!FIELDS[f].column)
                        continue;
                    sb_printf(b, ",");
                    if (!isnan(fld(p, q, e, f)))
                        sb_printf(b, FIELDS[f].fmt, fld(p, q, e, f));
                }
                sb_printf(b, "\n");
            }
        }
}

/* ---------- generation ---------- */
enum { G_FILES, G_BYTES, G_START, G_END, NG };

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

/* provenance.json in the output folder, beside output.json: MLPerf Storage's stamp of the run (coreconfig.h) */
static int write_provenance(const config_t *c)
{
    char path[4600], *p = coreconfig_provenance(c);
    snprintf(path, sizeof path, "%s/provenance.json", c->output_folder);
    int rc = write_atomic(path, p, strlen(p));
    if (rc != 0)
        fprintf(stderr, "h5dlio: rank 0: error: cannot write %s: %s\n", path, strerror(errno));
    free(p);
    return rc ? -1 : 0;
}

/* generation over ranks: files and bytes summed; seconds = IOR's span (latest end - earliest start) */
static void gather_gen(const results_t *r, double *files, double *bytes, double *seconds)
{
    double mine[NG] = {0}, sum[2] = {0, 0}, first = 0, last = 0;
    if (r->did_gen) {
        mine[G_FILES] = (double)r->gen->files;
        mine[G_BYTES] = (double)r->gen->bytes;
        mine[G_START] = r->gen->start - r->clock_offset;
        mine[G_END] = r->gen->end - r->clock_offset;
    }
    MPI_CHECK(MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(mine + G_START, &first, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(mine + G_END, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    *files = sum[0], *bytes = sum[1], *seconds = last - first;
}

/* DLIO 3.x's loader pre-warms (run_prewarm): pre-warms, samples, opens, reads and bytes summed over ranks; all zero
 * for entries without them */
enum { W_N, W_SAMPLES, W_OPENS, W_READS, W_BYTES, NW };
static void gather_prewarm(const results_t *r, double out[NW])
{
    double mine[NW] = {0};
    if (r->runner) {
        mine[W_N] = (double)r->runner->prewarm.n;
        mine[W_SAMPLES] = (double)r->runner->prewarm.samples;
        mine[W_OPENS] = (double)r->runner->prewarm.io.opens;
        mine[W_READS] = (double)r->runner->prewarm.io.reads;
        mine[W_BYTES] = (double)r->runner->prewarm.io.bytes;
    }
    MPI_CHECK(MPI_Reduce(mine, out, NW, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
}

/* ---------- checkpoints ---------- */
enum { C_FILES, C_BYTES, C_WRITES, C_START, C_END, NC };

typedef struct {
    int64_t n;        /* checkpoints (every rank takes part in each) */
    double *all;      /* rank 0: all[(q * n + i) * NC + field] */
    double (*sum)[4]; /* per checkpoint: files, bytes, writes, seconds (IOR's span over the writing ranks) */
} ckpt_res_t;

/* collective; rank 0 gets every rank's values of every checkpoint */
static void gather_ckpt(const results_t *r, ckpt_res_t *out)
{
    memset(out, 0, sizeof *out);
    if (!r->ckpt)
        return;
    const ckpt_t *k = r->ckpt;
    out->n = k->nev;
    double *mine = xcalloc((size_t)(k->nev ? k->nev : 1) * NC, sizeof(double), "the checkpoint results");
    for (int64_t i = 0; i < k->nev; i++) {
        const ckpt_event_t *e = &k->ev[i];
        double *m = mine + i * NC;
        m[C_FILES] = (double)e->files, m[C_BYTES] = (double)e->bytes, m[C_WRITES] = (double)e->writes;
        m[C_START] = e->start - r->clock_offset, m[C_END] = e->end - r->clock_offset;
    }
    if (r->rank == 0)
        out->all = xcalloc((size_t)(k->nev ? k->nev : 1) * NC * (size_t)r->nranks, sizeof(double), "the results");
    MPI_CHECK(
        MPI_Gather(mine, (int)(k->nev * NC), MPI_DOUBLE, out->all, (int)(k->nev * NC), MPI_DOUBLE, 0, MPI_COMM_WORLD));
    free(mine);
    if (r->rank != 0)
        return;
    out->sum = xcalloc((size_t)(k->nev ? k->nev : 1), sizeof *out->sum, "the checkpoint results");
    for (int64_t i = 0; i < k->nev; i++) {
        double first = INFINITY, last = -INFINITY;
        for (int q = 0; q < r->nranks; q++) {
            const double *m = out->all + ((size_t)q * (size_t)k->nev + (size_t)i) * NC;
            for (int f = 0; f < 3; f++) out->sum[i][f] += m[f];
            if (m[C_FILES] > 0 || m[C_BYTES] > 0) /* it wrote (a shared HDF5 file: rank 0 counts the file) */
                first = m[C_START] < first ? m[C_START] : first, last = m[C_END] > last ? m[C_END] : last;
        }
        out->sum[i][3] = last > first ? last - first : 0.0;
    }
}

static void ckpt_res_free(ckpt_res_t *c) { free(c->all), free(c->sum); }

/* torch (torch.save files, POSIX calls as CPython makes them), stream (DLIO 3.x: raw bytes, SimpleStreamingCheckpointing)
 * or hdf5 (ckpth5.c, through an HDF5 file driver) */
static const char *ckpt_format(const ckpt_t *k) { return k->hdf5 ? "hdf5" : k->rules == 3 ? "stream" : "torch"; }
static const char *ckpt_driver(const ckpt_t *k) { return k->hdf5 ? h5ck_driver(&k->h5) : "posix"; }

static void csv_ckpt(sb_t *b, const ckpt_res_t *k, const ckpt_t *mine)
{
    double files = 0, bytes = 0, rates = 0;
    for (int64_t i = 0; i < k->n; i++) files += k->sum[i][0], bytes += k->sum[i][1];
    sb_printf(b, "checkpoint format, %s,\ncheckpoint driver, %s,\n", ckpt_format(mine), ckpt_driver(mine));
    sb_printf(b, "checkpoints, %lld,\ncheckpoint files, %.0f,\ncheckpoint total size, %.3f, MiB\n", (long long)k->n,
              files, bytes / MIB);
    if (k->n) { /* save (torch.save) or load (torch.load, DLIO 2.0.0-52's checkpoint-only reads) */
        sb_printf(b, "checkpoint kind per checkpoint, \"");
        for (int64_t i = 0; i < k->n; i++) sb_printf(b, "%s%s", i ? ", " : "", mine->ev[i].load ? "load" : "save");
        sb_printf(b, "\",\n");
    }
    const char *rows[2] = {"checkpoint time per checkpoint", "checkpoint rate per checkpoint"};
    for (int row = 0; row < 2 && k->n; row++) {
        sb_printf(b, "%s, \"", rows[row]);
        for (int64_t i = 0; i < k->n; i++) {
            double x = row ? rate(k->sum[i][1], k->sum[i][3]) / MIB : k->sum[i][3];
            sb_printf(b, "%s%.3f", i ? ", " : "", isnan(x) ? 0.0 : x);
        }
        sb_printf(b, "\", \"");
        for (int64_t i = 0; i < k->n; i++) sb_printf(b, "%s%s", i ? ", " : "", row ? "MiB/s" : "s");
        sb_printf(b, "\"\n");
    }
    for (int64_t i = 0; i < k->n; i++) {
        double x = rate(k->sum[i][1], k->sum[i][3]);
        rates += isnan(x) ? 0.0 : x;
    }
    if (k->n)
        sb_printf(b, "avg checkpoint rate, %.3f, MiB/s\n", rates / (double)k->n / MIB);
}

static void json_ckpt(sb_t *b, const ckpt_res_t *k, const ckpt_t *mine, int nranks, int ranks_data)
{
    sb_printf(b, ",\n  \"checkpoint\": {\"format\": \"%s\", \"driver\": \"%s\", \"checkpoints\": [", ckpt_format(mine),
              ckpt_driver(mine));
    for (int64_t i = 0; i < k->n; i++) {
        sb_printf(b,
                  "%s\n    {\"kind\": \"%s\", \"epoch\": %lld, \"step\": %lld, \"files\": %.0f, \"bytes\": %.0f, "
                  "\"%s\": %.0f, \"seconds\": %.9g, \"bandwidth_bytes_per_s\": ",
                  i ? "," : "", mine->ev[i].load ? "load" : "save", (long long)mine->ev[i].epoch,
                  (long long)mine->ev[i].step, k->sum[i][0], k->sum[i][1], mine->ev[i].load ? "reads" : "writes",
                  k->sum[i][2], k->sum[i][3]);
        json_num(b, "%.9g", rate(k->sum[i][1], k->sum[i][3]));
        if (ranks_data) {
            sb_printf(b, ", \"ranks\": [");
            for (int q = 0; q < nranks; q++) {
                const double *m = k->all + ((size_t)q * (size_t)k->n + (size_t)i) * NC;
                sb_printf(b,
                          "%s{\"rank\": %d, \"files\": %.0f, \"bytes\": %.0f, \"writes\": %.0f, \"seconds\": %.9g, "
                          "\"bandwidth_bytes_per_s\": ",
                          q ? ", " : "", q, m[C_FILES], m[C_BYTES], m[C_WRITES], m[C_END] - m[C_START]);
                json_num(b, "%.9g", m[C_FILES] > 0 || m[C_BYTES] > 0 ? rate(m[C_BYTES], m[C_END] - m[C_START]) : NAN);
                sb_printf(b, "}");
            }
            sb_printf(b, "]");
        }
        sb_printf(b, "}");
    }
    double files = 0, bytes = 0, secs = 0;
    for (int64_t i = 0; i < k->n; i++) files += k->sum[i][0], bytes += k->sum[i][1], secs += k->sum[i][3];
    sb_printf(b, "],\n    \"files\": %.0f, \"bytes\": %.0f, \"seconds\": %.9g, \"bandwidth_bytes_per_s\": ", files,
              bytes, secs);
    json_num(b, "%.9g", rate(bytes, secs));
    sb_printf(b, "}");
}

/* What MLPerf Storage would report for a checkpoint-only launch of DLIO 3.x (rules 3), computed as DLIO computes it
 * (utils/statscounter.py:160-187, :368-400): per checkpoint, rank 0's duration from its start (after the barrier,
 * main.py:567-568) to its end; throughput = checkpoint_size (the states' bytes summed over ranks, GiB:
 * base_checkpointing.py:163-170) / duration; the mean and (population) stdev over the saves, and over the loads. The
 * gap between the phases (MLPerf: the read phase starts within 30 s of the write phase's end): in one launch, the
 * write phase's end (the last save on any rank) to the read phase's start (the first load on any rank); a read-only
 * launch: its own start to its first load (the launcher's start-up not included: a lower bound). Not a submission. */
static void json_mlperf(sb_t *b, const results_t *r, const ckpt_res_t *k)
{
    const ckpt_t *mine = r->ckpt;
    double size = 0, wend = -INFINITY, rstart = INFINITY, t0 = r->t_start - r->clock_offset;
    double st[2][3] = {{0}}; /* per kind: n, sum of throughputs, sum of their squares */
    double du[2][2] = {{0}}; /* per kind: sum of durations, of their squares */
    for (int64_t i = 0; i < k->n && size == 0; i++) size = k->sum[i][1];
    size /= 1024.0 * 1024.0 * 1024.0;
    for (int64_t i = 0; i < k->n; i++) {
        int load = mine->ev[i].load;
        const double *m0 = k->all + (size_t)i * NC; /* rank 0 */
        double d = m0[C_END] - m0[C_START], tp = d > 0 ? size / d : 0;
        st[load][0]++, st[load][1] += tp, st[load][2] += tp * tp, du[load][0] += d, du[load][1] += d * d;
        for (int q = 0; q < r->nranks; q++) {
            const double *m = k->all + ((size_t)q * (size_t)k->n + (size_t)i) * NC;
            if (!load && m[C_END] > wend)
                wend = m[C_END];
            if (load && m[C_START] < rstart)
                rstart = m[C_START];
        }
    }
    sb_printf(b,
              ",\n  \"mlperf\": {\"note\": \"what MLPerf Storage v3.0 would compute from this run "
              "(DLIO 3.x statscounter); not a submission\", \"checkpoint_size_GiB\": %.9g",
              size);
    const char *kind[2] = {"save", "load"};
    for (int l = 0; l < 2; l++) {
        double n = st[l][0];
        if (!n)
            continue;
        double mt = st[l][1] / n, md = du[l][0] / n;
        sb_printf(b,
                  ", \"%s_checkpoint_io_mean_GiB_per_second\": %.9g, \"%s_checkpoint_io_stdev_GiB_per_second\": "
                  "%.9g, \"%s_checkpoint_duration_mean_seconds\": %.9g, \"%s_checkpoint_duration_stdev_seconds\": %.9g",
                  kind[l], mt, kind[l], sqrt(fmax(0, st[l][2] / n - mt * mt)), kind[l], md, kind[l],
                  sqrt(fmax(0, du[l][1] / n - md * md)));
    }
    double gap = st[1][0] ? (st[0][0] ? rstart - wend : rstart - t0) : NAN;
    sb_printf(b, ", \"phase_gap_kind\": \"%s\", \"phase_gap_seconds\": ",
              !st[1][0]  ? "no read phase"
              : st[0][0] ? "write end to read start, one launch"
                         : "launch start to read start (a lower bound)");
    json_num(b, "%.9g", gap);
    sb_printf(b, ", \"phase_gap_rule_seconds\": 30, \"phase_gap_within_rule\": %s}",
              isnan(gap)  ? "null"
              : gap <= 30 ? "true"
                          : "false");
}

/* What MLPerf Storage would report for a training launch of DLIO 3.x, computed as DLIO 3.x computes its summary.json
 * (utils/statscounter.py): per rank and epoch AU = compute of steps 2.. / (end - start - proc[0]) and throughput =
 * (steps - 1) / (end - start - proc[0]) x batch (:440-470, the first step excluded: config.py:142-143; one block per
 * epoch, :266-277); per epoch AU = the ranks' mean, throughput = their sum (:190-191); then the mean and population
 * stdev over the epochs, MB/s = samples/s x record_length / 2^20 (:194-205), AU met = mean >= au x 100 (:196-199).
 * The dataset rule is mlpstorage's (mlcommons/storage mlpstorage/submission_checker/checks/training_checks.py,
 * recalculate_dataset_size: HOST_MEMORY_MULTIPLIER 5, MIN_STEPS_PER_EPOCH 500): the files must reach
 * max(max(500, files x samples // (batch x ranks)) x batch x ranks, hosts x host memory x 5 GiB / record_length)
 * samples / samples per file. Not a submission. */
static void json_mlperf_train(sb_t *b, const phase_t *p, const config_t *c, double nhosts, double mem_gib)
{
    double au_s = 0, au_q = 0, th_s = 0, th_q = 0, n = (double)p->n;
    sb_printf(b, ",\n  \"mlperf\": {\"note\": \"what MLPerf Storage v3.0 would compute from this run (DLIO 3.x "
                 "statscounter, the first step excluded; mlpstorage's dataset-size rule); not a submission\", "
                 "\"train_au_percentage\": [");
    for (int64_t e = 0; e < p->n; e++) {
        double au = 0, th = 0;
        for (int q = 0; q < p->nranks; q++) au += fld(p, q, e, F_AU), th += fld(p, q, e, F_THR3);
        au /= p->nranks;
        au_s += au, au_q += au * au, th_s += th, th_q += th * th;
        sb_printf(b, "%s%.9g", e ? ", " : "", au);
    }
    sb_printf(b, "], \"train_throughput_samples_per_second\": [");
    for (int64_t e = 0; e < p->n; e++) {
        double th = 0;
        for (int q = 0; q < p->nranks; q++) th += fld(p, q, e, F_THR3);
        sb_printf(b, "%s%.9g", e ? ", " : "", th);
    }
    double am = n > 0 ? au_s / n : NAN, tm = n > 0 ? th_s / n : NAN;
    double asd = n > 0 ? sqrt(fmax(0, au_q / n - am * am)) : NAN, tsd = n > 0 ? sqrt(fmax(0, th_q / n - tm * tm)) : NAN;
    double rl = (double)c->record_length;
    sb_printf(b, "], \"train_au_mean_percentage\": ");
    json_num(b, "%.9g", am);
    sb_printf(b, ", \"train_au_stdev_percentage\": ");
    json_num(b, "%.9g", asd);
    sb_printf(b, ", \"train_au_expectation_percentage\": %.9g, \"train_au_meet_expectation\": %s", c->au * 100.0,
              isnan(am)             ? "null"
              : am >= c->au * 100.0 ? "\"success\""
                                    : "\"fail\"");
    sb_printf(b, ", \"train_throughput_mean_samples_per_second\": ");
    json_num(b, "%.9g", tm);
    sb_printf(b, ", \"train_throughput_stdev_samples_per_second\": ");
    json_num(b, "%.9g", tsd);
    sb_printf(b, ", \"train_io_mean_MB_per_second\": ");
    json_num(b, "%.9g", tm * rl / MIB);
    sb_printf(b, ", \"train_io_stdev_MB_per_second\": ");
    json_num(b, "%.9g", tsd * rl / MIB);
    double spf = (double)c->num_samples_per_file, bs = (double)c->batch_size, acc = (double)p->nranks;
    double files = (double)c->num_files_train;
    double steps = fmax(500.0, floor(files * spf / (bs * acc)));
    double by_steps = steps * bs * acc, by_mem = nhosts * mem_gib * 5.0 * 1024.0 * 1024.0 * 1024.0 / rl;
    double need = (isnan(by_mem) ? by_steps : fmax(by_steps, by_mem)) / spf;
    sb_printf(b,
              ",\n    \"dataset_rule\": {\"num_files_train\": %.0f, \"num_hosts\": %.0f, \"host_memory_GB\": ", files,
              nhosts);
    json_num(b, "%.9g", mem_gib);
    sb_printf(b, ", \"steps_per_epoch\": %.0f, \"min_files_by_steps\": %.9g, \"min_files_by_memory\": ",
              floor(files * spf / (bs * acc)), by_steps / spf);
    json_num(b, "%.9g", by_mem / spf);
    sb_printf(b, ", \"min_files\": %.9g, \"min_size_GiB\": %.9g, \"met\": %s},\n    \"inputs\": [", need,
              need * spf * rl / (1024.0 * 1024.0 * 1024.0), files >= need ? "true" : "false");
    /* each rank's inputs of the formulas above, so that they can be recomputed (tests/test_mlperf_train.py) */
    json_input_rows(b, p);
    sb_printf(b, "], \"batch_size\": %lld, \"record_length\": %.0f}", (long long)c->batch_size, rl);
}

/* The generation's rows in the three views (g: GEN_METRICS' values) */
/* How the files were written: in place, as DLIO (the default), or under a temporary name renamed when whole */
static const char *gen_mode(const config_t *c)
{
    return c->generation_atomic_rename && !c->subfiling ? "atomic_rename" : "in_place";
}

static void csv_gen(sb_t *b, const double g[NGM], const config_t *c)
{
    for (int k = 0; k < NGM; k++) {
        sb_printf(b, "%s, ", GEN_METRICS[k].csv);
        sb_printf(b, GEN_METRICS[k].csv_fmt, g[k] / GEN_METRICS[k].csv_scale);
        sb_printf(b, ",%s\n", GEN_METRICS[k].csv_unit);
    }
    sb_printf(b, "generate mode, %s,\n", gen_mode(c));
}

static void json_gen(sb_t *b, const double g[NGM], const config_t *c)
{
    sb_printf(b, ",\n  \"generate\": {");
    for (int k = 0; k < NGM; k++) {
        sb_printf(b, "%s\"%s\": ", k ? ", " : "", GEN_METRICS[k].json);
        sb_printf(b, GEN_METRICS[k].json_fmt, g[k]);
    }
    char rp[4600];
    snprintf(rp, sizeof rp, "%s/%s", c->data_folder, GEN_RECORD);
    sb_printf(b, ", \"mode\": \"%s\", \"record\": ", gen_mode(c));
    sb_json_str(b, rp);
    sb_printf(b, "}");
}

static void stdout_gen(const double g[NGM], const config_t *c)
{
    for (int k = 0; k < NGM; k++) printf(GEN_METRICS[k].out_fmt, g[k] / GEN_METRICS[k].out_scale);
    printf("  (%s)\n", !strcmp(gen_mode(c), "in_place") ? "written in place" : "atomic rename");
}

/* Collective: every rank's FIELDS of every epoch record, gathered on rank 0 (NULL elsewhere); *records: records per
 * rank */
static double *gather_fields(const results_t *r, int *records)
{
    const config_t *c = r->cfg;
    int nrec = 0;
    for (int k = 0; k < NPHASES; k++) nrec += (int)r->read[k].n;
    double *mine = xcalloc((size_t)nrec * NF, sizeof(double), "the per-rank results");
    for (int k = 0, i = 0; k < NPHASES; k++)
        for (int64_t e = 0; e < r->read[k].n; e++, i++) {
            field_src_t x = {&r->read[k].st[e], config_phase(c, k).batch_size, r->clock_offset};
            for (int f = 0; f < NF; f++) mine[(size_t)i * NF + f] = FIELDS[f].get(&x);
        }
    double *all = r->rank == 0 ? xcalloc((size_t)nrec * NF * (size_t)r->nranks, sizeof(double), "the results") : NULL;
    MPI_CHECK(MPI_Gather(mine, nrec * NF, MPI_DOUBLE, all, nrec * NF, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    free(mine);
    *records = nrec;
    return all;
}

/* output.csv's first rows: the job (ranks, read threads, the HDF5 modes, the VOL stack HDF5 reports) */
static void csv_header(sb_t *csv, const results_t *r)
{
    const config_t *c = r->cfg;
    const char *yn[2] = {"NO", "YES"};
    sb_printf(csv,
              "metric, value, unit\noperation, dlio,\nranks, %d,\nread threads, %lld,\nsubfiling, %s,\n"
              "chunking, %s,\ncollective meta, %s,\ncollective data, %s,\n",
              r->nranks, (long long)c->read_threads, yn[!!c->subfiling], yn[!!c->chunking], yn[!!c->collective_meta],
              yn[!!c->collective_data]);
    sb_printf(csv, "vol connector, \"%s\",\n", r->vol->stack); /* HDF5's answer (vol_probe), not the request */
}

/* The job's nodes as DLIO sees them: the ranks that share memory (MPI_COMM_TYPE_SHARED) are one node, and the rank of
 * each in that communicator its local rank (DLIO 2.0.0 utils/utility.py:137-141; 3.x utils/utility.py:245-248). The
 * local rank 0 of each node gives the node's memory: psutil's total memory, i.e. /proc/meminfo's MemTotal, in GiB
 * (2.0.0 utils/statscounter.py:93-97 host_memory_GB[node]; 3.x :97-103). Rank 0 gets every rank's hostname and local
 * rank (NULL on the others): output.json's "nodes" and the summary's nodes line. */
typedef struct {
    double nhosts;  /* DLIO 3.x's num_hosts: the local rank 0s */
    double mem_gib; /* this rank's MemTotal in GiB, NAN where there is no /proc/meminfo */
    char *names;    /* rank 0: nranks x NODE_NAME bytes, each rank's gethostname */
    int *local;     /* rank 0: each rank's local rank */
    double *mem;    /* rank 0: each rank's mem_gib */
} nodes_t;
#define NODE_NAME 64

/* Collective. */
static nodes_t gather_nodes(const results_t *r)
{
    nodes_t nodes = {0}, *n = &nodes;
    MPI_Comm node;
    int lr = 0;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_rank(node, &lr));
    MPI_CHECK(MPI_Comm_free(&node));
    double one = lr == 0, kb = NAN;
    MPI_CHECK(MPI_Allreduce(&one, &n->nhosts, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    n->mem_gib = kb / (1024.0 * 1024.0);
    char host[NODE_NAME] = "unknown";
    gethostname(host, sizeof host - 1);
    host[NODE_NAME - 1] = 0;
    int root = r->rank == 0;
    size_t nr = (size_t)r->nranks;
    n->names = root ? xcalloc(nr, NODE_NAME, "the ranks' hostnames") : NULL;
    n->local = root ? xcalloc(nr, sizeof *n->local, "the ranks' local ranks") : NULL;
    n->mem = root ? xcalloc(nr, sizeof *n->mem, "the ranks' memory") : NULL;
    MPI_CHECK(MPI_Gather(host, NODE_NAME, MPI_CHAR, n->names, NODE_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Gather(&lr, 1, MPI_INT, n->local, 1, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Gather(&n->mem_gib, 1, MPI_DOUBLE, n->mem, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    return nodes;
}

static void nodes_free(nodes_t *n)
{
    free(n->names);
    free(n->local);
    free(n->mem);
}

/* output.json's "nodes" (rank 0): each rank's host and local rank, then each node in the order of its local rank 0:
 * its host, its ranks, the rank that is its local rank 0, and that rank's memory (what DLIO's summary lists per node) */
static void json_nodes(sb_t *b, const nodes_t *n, int nranks)
{
    sb_printf(b, ",\n  \"nodes\": {\"count\": %.0f, \"rank_host\": [", n->nhosts);
    for (int q = 0; q < nranks; q++) {
        sb_printf(b, "%s", q ? ", " : "");
        sb_json_str(b, n->names + (size_t)q * NODE_NAME);
    }
    sb_printf(b, "], \"local_rank\": [");
    for (int q = 0; q < nranks; q++) sb_printf(b, "%s%d", q ? ", " : "", n->local[q]);
    sb_printf(b, "], \"per_node\": [");
    for (int q = 0, k = 0; q < nranks; q++) {
        if (n->local[q] != 0)
            continue;
        const char *h = n->names + (size_t)q * NODE_NAME;
        sb_printf(b, "%s{\"host\": ", k++ ? ", " : "");
        sb_json_str(b, h);
        sb_printf(b, ", \"local_rank_0\": %d, \"ranks\": [", q);
        for (int p = 0, m = 0; p < nranks; p++)
            if (!strcmp(h, n->names + (size_t)p * NODE_NAME))
                sb_printf(b, "%s%d", m++ ? ", " : "", p);
        sb_printf(b, "], \"host_memory_GiB\": ");
        json_num(b, "%.9g", n->mem[q]);
        sb_printf(b, "}");
    }
    sb_printf(b, "]}");
}

/* The summary's nodes line: "nodes: 2 (h5dlio-n1: rank 0; h5dlio-n2: rank 1)", the ranks of each node in a list */
static void print_nodes(const nodes_t *n, int nranks)
{
    printf("  nodes     %.0f (", n->nhosts);
    for (int q = 0, k = 0; q < nranks; q++) {
        if (n->local[q] != 0)
            continue;
        const char *h = n->names + (size_t)q * NODE_NAME;
        printf("%s%s: rank", k++ ? "; " : "", h);
        for (int p = 0, m = 0; p < nranks; p++)
            if (!strcmp(h, n->names + (size_t)p * NODE_NAME))
                printf("%s %d", m++ ? "," : "", p);
    }
    printf(")\n");
}

/* The human summary on stdout: a line for the job, its nodes, the generation, each phase, the prefetcher (pf_line,
 * NULL: none) and the checkpoints; where the results are. */
static void print_summary(const results_t *r, const nodes_t *nodes, const phase_t *ps, const double gen[NGM],
                          const char *pf_line, const ckpt_res_t *ck)
{
    const config_t *c = r->cfg;
    printf("h5dlio: %d ranks, %lld read threads, HDF5 %d.%d.%d, VOL %s, %.3f s wall\n", r->nranks,
           (long long)c->read_threads, H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, r->vol->stack, r->wall_s);
    print_nodes(nodes, r->nranks);
    char rl[512];
    autoread_line(c, rl, sizeof rl);
    if (*rl)
        printf("%s\n", rl);
    if (r->did_gen)
        stdout_gen(gen, c);
    for (int k = 0; k < NPHASES; k++) {
        if (!ps[k].n)
            continue;
        printf("  %-5s     %lld epochs", ps[k].name, (long long)ps[k].n);
        for (size_t i = 0; i < sizeof STDOUT_PHASE / sizeof STDOUT_PHASE[0]; i++)
            printf(STDOUT_PHASE[i].name, value(&ps[k], &STDOUT_PHASE[i], c));
        printf("\n");
    }
    if (pf_line)
        printf("%s\n", pf_line);
    for (int load = 0; r->ckpt && load < 2; load++) {
        double files = 0, bytes = 0, secs = 0;
        int64_t n = 0;
        for (int64_t i = 0; i < ck->n; i++)
            if (r->ckpt->ev[i].load == load)
                n++, files += ck->sum[i][0], bytes += ck->sum[i][1], secs += ck->sum[i][3];
        if (n || !load)
            printf("  checkpoint %lld %s (%s, %s)  %.0f files  %.3f MiB  %.3f s  %.3f MiB/s\n", (long long)n,
                   load ? "loads" : "saves", ckpt_format(r->ckpt), ckpt_driver(r->ckpt), files, bytes / MIB, secs,
                   secs > 0 ? bytes / secs / MIB : 0.0);
    }
    if (r->ckpt && r->ckpt->rules == 3 && !c->train)
        printf("  MLPerf (not a submission): see \"mlperf\" in %s/%s.json (checkpoint throughput as DLIO 3.x "
               "reports it, the gap between the phases against 30 s)\n",
               c->output_folder, c->output_csv_name);
    printf("  results: %s/%s.csv, %s/%s.json\n", c->output_folder, c->output_csv_name, c->output_folder,
           c->output_csv_name);
    fflush(stdout);
}

/* output.json's header: versions, MPI library, a mutant first, the VOL stack, host, ranks, wall time, the resolved
 * configuration, the nodes */
static void json_header(sb_t *js, const results_t *r, const nodes_t *nodes)
{
    const config_t *c = r->cfg;
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    char mpiver[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int ml = 0;
    MPI_CHECK(MPI_Get_library_version(mpiver, &ml));
    char *nl = strchr(mpiver, '\n');
    if (nl)
        *nl = 0;
    char *cj = config_to_json(c);
    sb_printf(js,
              "{\n  \"h5dlio_version\": \"%s\", \"git_revision\": \"%s\", \"hdf5_version\": \"%d.%d.%d\", "
              "\"mpi_library\": ",
              H5DLIO_VERSION, H5DLIO_GIT, H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
    sb_json_str(js, mpiver);
    if (c->mutant) { /* first, in the header: a mutated run is never mistaken for a measurement */
        sb_printf(js, ", \"mutant\": ");
        sb_json_str(js, MUTANTS[c->mutant].name);
    }
    char *vj = vol_json(r->vol);
    sb_printf(js, ", \"vol\": %s", vj);
    free(vj);
    sb_printf(js, ", \"host\": ");
    sb_json_str(js, host);
    sb_printf(js, ",\n  \"ranks\": %d, \"read_threads\": %lld, ", r->nranks, (long long)c->read_threads);
    char *aj = autoread_json(c); /* DLIO 3.x entries only: how read_threads was sized (autoread.c) */
    if (aj)
        sb_printf(js, "\"read_threads_auto\": %s, ", aj);
    free(aj);
    sb_printf(js, "\"wall_s\": %.9g,\n  \"config\": %s", r->wall_s, cj);
    free(cj);
    char *cc = coreconfig_json(c); /* MLPerf Storage's core-config hash, class, DLIO acceptance (coreconfig.h) */
    sb_printf(js, ",\n  \"comparability\": %s", cc);
    free(cc);
    json_nodes(js, nodes, r->nranks);
}

int report_write(const results_t *r)
{
    const config_t *c = r->cfg;
    int nrec = 0;
    double *all = gather_fields(r, &nrec);
    double gfiles, gbytes, gsec;
    gather_gen(r, &gfiles, &gbytes, &gsec);
    double pw[NW] = {0};
    gather_prewarm(r, pw);
    ckpt_res_t ck;
    gather_ckpt(r, &ck);
    nodes_t nodes = gather_nodes(r); /* collective */
    char pf_line[512];
    char *pf = r->runner ? prefetch_report(r->runner, pf_line, sizeof pf_line) : NULL; /* collective */
    if (r->rank != 0)
        return 0;

    phase_t ps[NPHASES];
    for (int k = 0, first = 0; k < NPHASES; first += (int)r->read[k].n, k++) {
        ps[k] = (phase_t){
            config_phase(c, k).name, r->read[k].n, r->read[k].epoch, NULL, all + (size_t)first * NF, r->nranks, nrec};
        ps[k].m = xcalloc((size_t)ps[k].n, sizeof *ps[k].m, "the epoch results");
        combine(&ps[k]);
    }
    double gen[NGM] = {
        [GM_FILES] = gfiles, [GM_BYTES] = gbytes, [GM_SECONDS] = gsec, [GM_RATE] = gsec > 0 ? gbytes / gsec : 0.0};

    /* CSV, h5bench's "metric, value, unit" rows, fixed units per row */
    sb_t csv = {0};
    csv_header(&csv, r);
    if (r->did_gen)
        csv_gen(&csv, gen, c);
    for (int k = 0; k < NPHASES; k++) csv_phase(&csv, &ps[k], c);
    if (r->ckpt)
        csv_ckpt(&csv, &ck, r->ckpt);

    /* JSON summary: SI base units; DLIO's metrics under their own names */
    sb_t js = {0};
    json_header(&js, r, &nodes);
    if (r->did_gen)
        json_gen(&js, gen, c);
    for (int k = 0; k < NPHASES; k++)
        if (ps[k].n)
            json_phase(&js, &ps[k], c, c->output_ranks_data);
    if (r->ckpt)
        json_ckpt(&js, &ck, r->ckpt, r->nranks, c->output_ranks_data);
    if (r->ckpt && r->ckpt->rules == 3 && !c->train)
        json_mlperf(&js, r, &ck);
    const dlio_entry_t *de = dlio_entry(c->dlio_entry);
    if (c->train && ps[PH_TRAIN].n && de && de->checkpoint_rules == 3)
        json_mlperf_train(&js, &ps[PH_TRAIN], c, nodes.nhosts, nodes.mem_gib);
    if (pw[W_N] > 0)
        sb_printf(&js,
                  ",\n  \"prewarm\": {\"prewarms\": %.0f, \"samples\": %.0f, \"opens\": %.0f, \"reads\": %.0f, "
                  "\"bytes\": %.0f}",
                  pw[W_N], pw[W_SAMPLES], pw[W_OPENS], pw[W_READS], pw[W_BYTES]);
    if (pf)
        sb_printf(&js, ",\n  \"async_prefetch\": %s", pf);
    sb_printf(&js, "\n}\n");

    int rc = 0;
    rc |= write_out(c, ".csv", &csv);
    rc |= write_out(c, ".json", &js) | write_provenance(c); /* provenance.json beside output.json */
    if (c->output_ranks_data) {
        sb_t rk = {0};
        ranks_csv(&rk, ps, r->nranks);
        rc |= write_out(c, ".ranks.csv", &rk);
        free(rk.s);
    }
    if (!c->quiet)
        print_summary(r, &nodes, ps, gen, pf ? pf_line : NULL, &ck);
    nodes_free(&nodes);
    free(pf);
    free(csv.s);
    free(js.s);
    for (int k = 0; k < NPHASES; k++) free(ps[k].m);
    free(all);
    ckpt_res_free(&ck);
    return rc;
}
