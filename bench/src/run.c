#include "run.h"
#include "trace.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

void runner_init(runner_t *R, const config_t *c, const layout_t *L, int rank, int nranks, pool_t *pool,
                 uint32_t random_seed)
{
    memset(R, 0, sizeof *R);
    R->cfg = c;
    R->L = L;
    R->rank = rank;
    R->nranks = nranks;
    R->pool = pool;
    if (!pool || pool->n == 0)
        sample_reader_init(&R->reader, c, L, (uint32_t)(c->random_seed * 7919u + (uint64_t)rank * 131u));
    int shuffle = L->dlio->sampler_shuffles || c->ordering == ORDER_H5BENCH ? c->sample_shuffle : SHUFFLE_OFF;
    for (int ph = 0; ph < 2; ph++) {
        int64_t total = layout_files_used(c, L->dlio, ph, nranks) * c->num_samples_per_file;
        sampler_init(&R->sampler[ph], c->ordering, shuffle, c->seed_change_epoch, (uint32_t)c->random_seed,
                     random_seed + (uint32_t)rank, total, rank, nranks);
    }
    nprand_seed(&R->compute_rng, (uint32_t)(c->random_seed * 104729u + (uint64_t)rank));
}

void runner_free(runner_t *R)
{
    if (!R->pool || R->pool->n == 0)
        sample_reader_close(&R->reader);
    sampler_free(&R->sampler[0]);
    sampler_free(&R->sampler[1]);
    if (R->samples_log)
        fclose(R->samples_log);
}

int64_t runner_planned_steps(const config_t *c, const dlio_entry_t *e, int phase, int64_t batches, int nranks)
{
    int64_t spf = c->num_samples_per_file;
    /* 2.0.0 checks the cap after a step, so at least one step runs; later releases check it first (none may run) */
    int64_t floor_steps = e->cap_checked_on_fetch ? 0 : 1;
    if (phase == PH_TRAIN) {
        /* DLIO _train: break when overall_step >= max_steps or == total_training_steps (2.0.0: after a step;
         * >= 2.0.1: overall_step > max_steps or > total_training_steps when the batch arrives) */
        int64_t cap = layout_files_used(c, e, PH_TRAIN, nranks) * spf / c->batch_size / nranks;
        if (c->total_training_steps > 0 && c->total_training_steps < cap)
            cap = c->total_training_steps;
        if (cap < floor_steps)
            cap = floor_steps;
        return batches < cap ? batches : cap;
    }
    /* DLIO _eval: break when step > floor(samples/batch_eval/ranks) (2.0.0: after a step; >= 2.0.1: before) */
    int64_t cap = layout_files_used(c, e, PH_EVAL, nranks) * spf / c->batch_size_eval / nranks;
    if (cap < floor_steps)
        cap = floor_steps;
    return batches < cap ? batches : cap;
}

static void log_batch(runner_t *R, int phase, int64_t epoch, int64_t step, const int64_t *idx, int64_t n,
                      const char *use)
{
    if (!R->samples_log)
        return;
    for (int64_t i = 0; i < n; i++)
        fprintf(R->samples_log, "%s,%lld,%lld,%lld,%lld,%lld,%s\n", phase == PH_TRAIN ? "train" : "eval",
                (long long)epoch, (long long)step, (long long)idx[i], (long long)(idx[i] / R->cfg->num_samples_per_file),
                (long long)(idx[i] % R->cfg->num_samples_per_file), use);
}

/* Hand batch b to its reader process; fault-skip-read (negative controls) drops one sample on rank 0. */
static void send_batch(runner_t *R, int phase, int64_t b, const int64_t *idx, int64_t n)
{
    const config_t *c = R->cfg;
    int W = R->pool->n;
    if (c->fault_skip_read > 0 && R->rank == 0 && R->reads_done < c->fault_skip_read &&
        R->reads_done + n >= c->fault_skip_read) {
        int64_t skip = c->fault_skip_read - R->reads_done - 1, m = 0;
        int64_t tmp[n > 1 ? n - 1 : 1];
        for (int64_t i = 0; i < n; i++)
            if (i != skip)
                tmp[m++] = idx[i];
        R->reads_done += n;
        pool_send(R->pool, (int)(b % W), phase, b, tmp, m);
        return;
    }
    R->reads_done += n;
    pool_send(R->pool, (int)(b % W), phase, b, idx, n);
}

/* One phase of one epoch: the batches of this rank in order, loaded in the rank or by the reader processes
 * (PyTorch: batch k to worker k % W, prefetch_factor x W batches in flight, one more sent per batch consumed),
 * then emulated compute, then (training) a barrier. */
static void run_phase(runner_t *R, int phase, int64_t epoch, epoch_stats_t *st)
{
    const config_t *c = R->cfg;
    memset(st, 0, sizeof *st);
    void *tr_epoch = trace_begin(phase == PH_TRAIN ? "train_epoch" : "eval_epoch");
    trace_int(tr_epoch, "epoch", epoch);
    st->start = now();
    sampler_t *s = &R->sampler[phase];
    sampler_epoch(s, epoch);
    int64_t bs = phase == PH_TRAIN ? c->batch_size : c->batch_size_eval;
    int64_t nfull = s->nout / bs;
    int h5b = c->ordering == ORDER_H5BENCH;
    int64_t batches = h5b ? (s->nout + bs - 1) / bs : nfull; /* h5bench keeps the partial tail batch */
    int64_t main_batches = h5b ? s->main_part / bs : batches;
    int64_t steps = runner_planned_steps(c, R->L->dlio, phase, batches, R->nranks);
    if (h5b) /* the thesis kernel reads everything; total-training-steps still caps training */
        steps = phase == PH_TRAIN && c->total_training_steps > 0 && c->total_training_steps < batches
                    ? c->total_training_steps : batches;
    /* DLIO >= 2.0.1 checks the cap when the next batch arrives: that batch is loaded, then the loop breaks */
    int64_t fetched = !h5b && R->L->dlio->cap_checked_on_fetch && steps < batches ? steps + 1 : steps;
    double ctime = phase == PH_TRAIN ? c->computation_time : c->eval_time;
    double cstd = phase == PH_TRAIN ? c->computation_time_stdev : c->eval_time_stdev;
    int W = R->pool ? R->pool->n : 0;
    int64_t issued = 0, window = 0;
    if (W > 0) {
        int64_t pf = c->prefetch_size > 0 ? (c->prefetch_size + W - 1) / W : 2;
        window = pf * W;
        for (; issued < batches && issued < window; issued++) {
            int64_t n = issued * bs + bs <= s->nout ? bs : s->nout - issued * bs;
            send_batch(R, phase, issued, s->out + issued * bs, n);
        }
    }
    double t0 = now();
    for (int64_t k = 0; k < fetched; k++) {
        int64_t n = k * bs + bs <= s->nout ? bs : s->nout - k * bs;
        const int64_t *idx = s->out + k * bs;
        void *tr_step = trace_begin(phase == PH_TRAIN ? "step" : "eval_step");
        trace_int(tr_step, "step", k + 1);
        void *tr_load = trace_begin("load_batch");
        if (W > 0) {
            pool_recv(R->pool, (int)(k % W), k, &st->io);
            if (issued < batches) {
                int64_t m = issued * bs + bs <= s->nout ? bs : s->nout - issued * bs;
                send_batch(R, phase, issued, s->out + issued * bs, m);
                issued++;
            }
        } else {
            for (int64_t i = 0; i < n; i++) {
                if (c->fault_skip_read > 0 && R->rank == 0 && ++R->reads_done == c->fault_skip_read)
                    continue; /* deliberate divergence, for negative controls only */
                sample_reader_read(&R->reader, phase, idx[i], &st->io);
            }
        }
        trace_end(tr_load);
        double t_loaded = now();
        st->load_s += t_loaded - t0;
        if (k == steps) { /* fetched past the cap: read, not used */
            trace_end(tr_step);
            log_batch(R, phase, epoch, k + 1, idx, n, "fetched");
            st->prefetched_unused += n;
            break;
        }
        log_batch(R, phase, epoch, k + 1, idx, n, "step");
        double want = cstd > 0 ? nprand_normal(&R->compute_rng, ctime, cstd) : ctime;
        void *tr_compute = trace_begin("compute");
        double got = emulate(want);
        trace_end(tr_compute);
        st->compute_s += got;
        if (k == 0)
            st->proc0_s = now() - t0;
        else
            st->compute_s_au += got;
        st->steps++;
        st->samples += n;
        if (phase == PH_TRAIN && (!h5b || k < main_batches))
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        trace_end(tr_step);
        t0 = now();
    }
    st->end = now();
    trace_end(tr_epoch);
    /* batches prefetched by the reader processes but not consumed: they were read (as PyTorch's workers do) */
    for (int64_t k = fetched; k < issued; k++) {
        io_acc_t extra = {0};
        pool_recv(R->pool, (int)(k % W), k, &extra);
        int64_t n = k * bs + bs <= s->nout ? bs : s->nout - k * bs;
        log_batch(R, phase, epoch, k + 1, s->out + k * bs, n, "prefetched");
        st->prefetched_unused += n;
        st->io.bytes += extra.bytes;
        st->io.opens += extra.opens;
        st->io.reads += extra.reads;
        st->io.meta_s += extra.meta_s;
        st->io.read_s += extra.read_s;
        st->io.pre_s += extra.pre_s;
    }
}

void run_train_epoch(runner_t *R, int64_t epoch, epoch_stats_t *st)
{
    run_phase(R, PH_TRAIN, epoch, st);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* DLIO: barrier after the training loop */
}

void run_eval_epoch(runner_t *R, int64_t epoch, epoch_stats_t *st)
{
    run_phase(R, PH_EVAL, epoch, st);
}
