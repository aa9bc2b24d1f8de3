/* Explicit asynchronous reads through vol-async (prefetch.h). The synchronous in-rank reader (reader.c read_h5py)
 * opens a sample's file, opens each records dataset, reads the sample's hyperslab, closes the dataset, closes the
 * file. This loader makes the same calls in their _async form, into the event set of the batch, and waits for the
 * set when a step asks for the batch. The dimensions come from the layout (layout_dims: what the generator wrote and
 * check_dataset found), not from H5Dget_space: a "get" on a dataset still being opened would block until the open
 * ran (vol-async), which is the wait this loader exists to move. */
#include "prefetch.h"
#include "mutate.h"
#include "trace.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

#if H5_VERSION_GE(1, 14, 0)
#include <H5ESpublic.h>

enum { SLOTS = 2 }; /* the batch a step consumes and the one read behind its compute */

typedef struct {
    hid_t es;      /* the batch's event set (H5I_INVALID_HID: nothing in flight) */
    hid_t closes;  /* the batch's file closes: their own event set, waited for first (wait_for says why) */
    int64_t batch; /* which batch of the epoch */
    int phase;
    uint8_t *buf; /* the batch's sample buffers, owned until the wait */
    size_t bufsize;
    io_acc_t acc;     /* what was issued: opens, reads, bytes; issue time as metadata */
    double issued_at; /* when the last call of the batch returned */
    int64_t samples;
} slot_t;

/* per phase, on this rank */
typedef struct {
    double batches, samples, issue_s, window_s, wait_s;
} pf_stats_t;
enum { PF_BATCHES, PF_SAMPLES, PF_ISSUE, PF_WINDOW, PF_WAIT, PF_N };

struct prefetch {
    slot_t slot[SLOTS];
    pf_stats_t st[NPHASES];
    int64_t mut_reads; /* MUTANT async-lost-read: rank 0's issued sample reads so far */
};

static slot_t *slot_of(runner_t *R, int64_t k) { return &R->prefetch->slot[k % SLOTS]; }

/* Issue the reads of one sample into the batch's event set; buf: where its records go. */
static void issue_sample(runner_t *R, slot_t *s, int64_t g, uint8_t *buf)
{
    const config_t *c = R->cfg;
    const int64_t spf = c->num_samples_per_file, file = g / spf, sample = g % spf;
    char path[4600];
    layout_path(R->L, s->phase, file, path, sizeof path);
    int64_t d1, d2;
    layout_dims(R->L, s->phase, file, &d1, &d2);
    void *tr = trace_begin("read_sample_async");
    trace_int(tr, "file", file);
    trace_int(tr, "sample", sample);
    hid_t f = H5_CHECK(H5Fopen_async(path, H5F_ACC_RDONLY, R->reader.fapl, s->es), path, EXIT_BADINPUT);
    hsize_t dims[3] = {(hsize_t)spf, (hsize_t)d1, (hsize_t)d2};
    hsize_t start[3] = {(hsize_t)sample, 0, 0}, count[3] = {1, (hsize_t)d1, (hsize_t)d2};
    const int64_t nds = R->L->dlio->indexed_records ? c->num_dset_per_record : 1;
    for (int64_t k = 0; k < nds; k++) {
        char dname[300];
        layout_records_name(R->L, k, dname, sizeof dname);
        hid_t ds = H5_CHECK(H5Dopen_async(f, dname, H5P_DEFAULT, s->es), path, EXIT_BADINPUT);
        hid_t fs = H5_CHECK(H5Screate_simple(3, dims, NULL), path, EXIT_RUNTIME);
        H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), path, EXIT_RUNTIME);
        hid_t ms = H5_CHECK(H5Screate_simple(2, count + 1, NULL), path, EXIT_RUNTIME); /* like h5py: (d1, d2) */
        /* MUTANT async-lost-read (mutate.h): rank 0's 2nd issued read never reaches the event set, though it is
         * counted as the synchronous reader counts it */
        int lost = c->mutant == MUT_ASYNC_LOST_READ && R->rank == 0 && ++R->prefetch->mut_reads == 2;
        if (!lost)
            H5_CHECK(H5Dread_async(ds, H5T_NATIVE_UINT8, ms, fs, R->reader.dxpl, buf + (size_t)(k * d1 * d2), s->es),
                     path, EXIT_BADINPUT);
        H5_CHECK(H5Sclose(ms), path, EXIT_RUNTIME);
        H5_CHECK(H5Sclose(fs), path, EXIT_RUNTIME);
        H5_CHECK(H5Dclose_async(ds, s->es), path, EXIT_RUNTIME);
        s->acc.bytes += d1 * d2;
        s->acc.reads += 1;
    }
    H5_CHECK(H5Fclose_async(f, s->closes), path, EXIT_RUNTIME);
    s->acc.opens += 1;
    trace_end(tr);
}

/* Batch k of the plan into its slot's event set (the samples the synchronous loader would read: runner_batch). */
static void issue(runner_t *R, epoch_plan_t *P, int64_t k)
{
    slot_t *s = slot_of(R, k);
    if (s->es != H5I_INVALID_HID)
        die(EXIT_RUNTIME, "async prefetch: batch %lld issued while batch %lld is still in flight", (long long)k,
            (long long)s->batch);
    void *tr = trace_begin("prefetch_issue");
    trace_int(tr, "step", k + 1);
    double t0 = now();
    int64_t n, skip;
    const int64_t *idx = runner_batch(R, P, k, &n, &skip);
    const config_t *c = R->cfg;
    size_t per = 0; /* the largest sample of the batch, all its records */
    for (int64_t i = 0; i < n; i++) {
        int64_t d1, d2;
        layout_dims(R->L, P->phase, idx[i] / c->num_samples_per_file, &d1, &d2);
        size_t b = (size_t)(d1 * d2 * (R->L->dlio->indexed_records ? c->num_dset_per_record : 1));
        per = b > per ? b : per;
    }
    if (per * (size_t)n > s->bufsize) {
        free(s->buf);
        s->bufsize = per * (size_t)n;
        s->buf = xmalloc(s->bufsize, "an async batch buffer");
    }
    memset(&s->acc, 0, sizeof s->acc);
    s->es = H5_CHECK(H5EScreate(), "an event set", EXIT_RUNTIME);
    s->closes = H5_CHECK(H5EScreate(), "an event set", EXIT_RUNTIME);
    s->batch = k;
    s->phase = P->phase;
    s->samples = 0;
    for (int64_t i = 0; i < n; i++)
        if (i != skip)
            issue_sample(R, s, idx[i], s->buf + per * (size_t)i), s->samples++;
    s->issued_at = now();
    s->acc.meta_s += s->issued_at - t0;
    trace_end(tr);
}

/* Wait for one of a batch's event sets and close it; a failed or unfinished operation ends the job. */
static void wait_set(runner_t *R, slot_t *s, hid_t es, const char *what)
{
    size_t in_progress = 0;
    hbool_t failed = 0;
    H5_CHECK(H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed), "waiting for an async batch", EXIT_RUNTIME);
    if (failed || in_progress) {
        size_t nerr = 0;
        H5ESget_err_count(es, &nerr);
        die(EXIT_RUNTIME,
            "async prefetch: batch %lld of the %s phase: %zu %s failed, %zu in progress (the HDF5 error stack above "
            "names the file)",
            (long long)s->batch, config_phase(R->cfg, s->phase).name, nerr, what, in_progress);
    }
    H5_CHECK(H5ESclose(es), "an event set", EXIT_RUNTIME);
}

/* Wait for batch k; its counts into acc, once every operation of its event sets has succeeded.
 * The file closes are waited for first, in their own set. vol-async 1.8.1 frees every other task of a file when the
 * file's close completes in its background thread (src/h5_async_vol.c:2078-2110, free_file_async_resources_fn, called
 * by async_file_close_fn at :14887; only the close task lives until its request is freed). With the closes in the
 * batch's one set, H5ESwait could be waiting on a read's task (H5VL_async_request_wait, :23420-23520: on the task's
 * Argobots eventual) while the background thread completed the file's close and freed it: a use after free that
 * crashed this loader inside H5ESwait on CI (stop 41; vol-async issue #51 reports the same crash path). Once the
 * closes are waited for, every task of the batch has completed (a close runs after the file's operations) and the
 * reads' set is waited for as vol-async expects after a close (its freed tasks read as done). The calls are issued
 * in the same order as before: the same I/O. */
static void wait_for(runner_t *R, int64_t k, io_acc_t *acc)
{
    slot_t *s = slot_of(R, k);
    if (s->es == H5I_INVALID_HID || s->batch != k)
        die(EXIT_RUNTIME, "async prefetch: batch %lld was never issued", (long long)k);
    void *tr = trace_begin("prefetch_wait");
    trace_int(tr, "step", k + 1);
    double t0 = now();
    wait_set(R, s, s->closes, "file close(s)");
    wait_set(R, s, s->es, "operation(s)");
    s->closes = s->es = H5I_INVALID_HID;
    double t1 = now();
    trace_end(tr);
    s->acc.read_s += t1 - t0; /* the wait: the part of the reads the step did not hide */
    io_acc_add(acc, &s->acc);
    pf_stats_t *st = &R->prefetch->st[s->phase];
    st->batches += 1;
    st->samples += (double)s->samples;
    st->issue_s += s->acc.meta_s;
    st->window_s += t0 - s->issued_at;
    st->wait_s += t1 - t0;
    /* DLIO's preprocess, per sample, once its data is there (reader.c does it after each synchronous read) */
    const config_t *c = R->cfg;
    for (int64_t i = 0; i < s->samples && (c->preprocess_time > 0 || c->preprocess_time_stdev > 0); i++)
        acc->pre_s += emulate(c->preprocess_time_stdev > 0
                                  ? nprand_normal(&R->reader.pre_rng, c->preprocess_time, c->preprocess_time_stdev)
                                  : c->preprocess_time);
}

static void pf_open(runner_t *R)
{
    sample_reader_init(&R->reader, R->cfg, R->L, (uint32_t)(R->cfg->random_seed * 7919u + (uint64_t)R->rank * 131u));
    R->prefetch = xcalloc(1, sizeof *R->prefetch, "the async prefetch state");
    for (int i = 0; i < SLOTS; i++) R->prefetch->slot[i].es = R->prefetch->slot[i].closes = H5I_INVALID_HID;
}

static void pf_close(runner_t *R)
{
    for (int i = 0; i < SLOTS; i++) {
        slot_t *s = &R->prefetch->slot[i];
        if (s->es != H5I_INVALID_HID) { /* cannot happen: every issued batch is waited for in its epoch */
            io_acc_t lost = {0};
            wait_for(R, s->batch, &lost);
        }
        free(s->buf);
    }
    sample_reader_close(&R->reader);
    /* the statistics stay for the report; the runner frees the handle */
}

/* the epoch's first batch: nothing to hide it behind (DLIO's first step waits for its batch too) */
static void pf_start(runner_t *R, epoch_plan_t *P)
{
    if (P->fetched > 0)
        issue(R, P, 0);
}

/* step k: its batch, then batch k + 1 behind the step's compute; only batches a step fetches (as the synchronous
 * loader reads them), so nothing is read that it would not read */
static void pf_load(runner_t *R, epoch_plan_t *P, int64_t k, io_acc_t *acc)
{
    wait_for(R, k, acc);
    if (k + 1 < P->fetched)
        issue(R, P, k + 1);
}

static void pf_finish(runner_t *R, epoch_plan_t *P, epoch_stats_t *st)
{
    (void)P;
    for (int i = 0; i < SLOTS; i++)
        if (R->prefetch->slot[i].es != H5I_INVALID_HID)
            wait_for(R, R->prefetch->slot[i].batch, &st->io);
}

const loader_ops_t LOADER_ASYNC_PREFETCH = {.name = "async-prefetch",
                                            .open = pf_open,
                                            .close = pf_close,
                                            .start = pf_start,
                                            .load = pf_load,
                                            .finish = pf_finish};

static int has_async(const vol_t *v)
{
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->names[i], "async"))
            return 1;
    return 0;
}
#else
const loader_ops_t LOADER_ASYNC_PREFETCH = {.name = "async-prefetch"};
static int has_async(const vol_t *v) { return (void)v, 0; }
#endif

int prefetch_check(const config_t *c, const layout_t *L, const vol_t *v, char *err, size_t errlen)
{
    const char *why = NULL;
    if (!c->vol_async_prefetch)
        return 0;
    if (!has_async(v))
        why = "needs HDF5's async VOL connector in the stack (HDF5_VOL_CONNECTOR=\"async under_vol=0;under_info={}\" "
              "with HDF5_PLUGIN_PATH at vol-async, and a kernel built against a thread-safe HDF5 >= 1.14: make "
              "vol-deps; docs/vol.md)";
    else if (c->read_threads > 0)
        why = "reads in the rank (read-threads 0): with reader processes the rank reads nothing";
    else if (c->data_loader == LOADER_TENSORFLOW)
        why = "emulates the PyTorch loader's batches; the TensorFlow loader's reader threads keep files open across "
              "batches";
    else if (strcmp(L->dlio->sample_read, "h5py") != 0)
        why = "reads through HDF5 (h5py); this DLIO release reads whole files with POSIX calls";
    else if (c->subfiling || c->collective_data || c->collective_meta)
        why = "uses the kernel's sec2 or Log VFD reads; MPI-IO under async's background thread is not supported";
    if (!why)
        return 0;
    snprintf(err, errlen, "key 'vol-async-prefetch' %s; the VOL connector stack in use is '%s'", why,
             v->n ? v->stack : "none");
    return -1;
}

void prefetch_free(runner_t *R)
{
    free(R->prefetch);
    R->prefetch = NULL;
}

char *prefetch_report(const runner_t *R, char *line, size_t linelen)
{
    line[0] = 0;
    if (!R->cfg->vol_async_prefetch || !R->prefetch)
        return NULL;
#if H5_VERSION_GE(1, 14, 0)
    double mine[NPHASES * PF_N], sum[NPHASES * PF_N];
    for (int p = 0; p < NPHASES; p++) {
        const pf_stats_t *s = &R->prefetch->st[p];
        double v[PF_N] = {[PF_BATCHES] = s->batches,
                          [PF_SAMPLES] = s->samples,
                          [PF_ISSUE] = s->issue_s,
                          [PF_WINDOW] = s->window_s,
                          [PF_WAIT] = s->wait_s};
        memcpy(mine + p * PF_N, v, sizeof v);
    }
    MPI_CHECK(MPI_Reduce(mine, sum, NPHASES * PF_N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (R->rank != 0)
        return NULL;
    sb_t b = {0};
    sb_printf(&b, "{\"mode\": \"explicit\", \"batches_ahead\": 1");
    double n = R->nranks;
    for (int p = 0; p < NPHASES; p++) {
        const double *s = sum + p * PF_N;
        sb_printf(&b,
                  ", \"%s\": {\"batches\": %.0f, \"samples\": %.0f, \"issue_s_rank_mean\": %.9g, "
                  "\"window_s_rank_mean\": %.9g, \"wait_s_rank_mean\": %.9g}",
                  config_phase(R->cfg, p).name, s[PF_BATCHES], s[PF_SAMPLES], s[PF_ISSUE] / n, s[PF_WINDOW] / n,
                  s[PF_WAIT] / n);
    }
    sb_printf(&b, "}");
    const double *t = sum + PH_TRAIN * PF_N;
    snprintf(line, linelen,
             "  async     %.0f batches read one step ahead: %.3f s issuing, %.3f s of steps behind which they ran, "
             "%.3f s waited (rank means, training)",
             t[PF_BATCHES], t[PF_ISSUE] / n, t[PF_WINDOW] / n, t[PF_WAIT] / n);
    return b.s;
#else
    return NULL;
#endif
}
