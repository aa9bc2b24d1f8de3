#include "run.h"
#include "trace.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

/* Trace region names per read phase (DFTracer) */
static const struct {
    const char *epoch, *step;
} TRACE_NAMES[NPHASES] = {[PH_TRAIN] = {"train_epoch", "step"}, [PH_EVAL] = {"eval_epoch", "eval_step"}};

/* Samples in batch k of an epoch (the last batch may be partial: h5bench ordering keeps it). */
static int64_t batch_len(const epoch_plan_t *P, int64_t k)
{
    return k * P->bs + P->bs <= P->nout ? P->bs : P->nout - k * P->bs;
}

static const int64_t *batch_of(const epoch_plan_t *P, int64_t k) { return P->order + k * P->bs; }

/* fault-skip-read (negative controls only: a deliberate divergence): rank 0 drops its N-th sample read. Called once
 * per batch handed to a loader; returns the position in the batch of the sample to drop, or -1. */
static int64_t fault_skip(runner_t *R, int64_t n)
{
    int64_t f = R->cfg->fault_skip_read;
    if (f <= 0 || R->rank != 0)
        return -1;
    int64_t skip = R->reads_done < f && R->reads_done + n >= f ? f - R->reads_done - 1 : -1;
    R->reads_done += n;
    return skip;
}

static void log_batch(runner_t *R, const epoch_plan_t *P, int64_t k, const char *use)
{
    if (!R->samples_log)
        return;
    const int64_t *idx = batch_of(P, k), spf = R->cfg->num_samples_per_file;
    for (int64_t i = 0, n = batch_len(P, k); i < n; i++)
        fprintf(R->samples_log, "%s,%lld,%lld,%lld,%lld,%lld,%s\n", config_phase(R->cfg, P->phase).name,
                (long long)P->epoch, (long long)(k + 1), (long long)idx[i], (long long)(idx[i] / spf),
                (long long)(idx[i] % spf), use);
}

/* ---------- loaders ---------- */

/* read-threads = 0: the rank opens, reads and closes every sample of a batch itself */
static void in_rank_open(runner_t *R)
{
    sample_reader_init(&R->reader, R->cfg, R->L, (uint32_t)(R->cfg->random_seed * 7919u + (uint64_t)R->rank * 131u));
}

static void in_rank_close(runner_t *R) { sample_reader_close(&R->reader); }

static void in_rank_load(runner_t *R, epoch_plan_t *P, int64_t k, io_acc_t *acc)
{
    const int64_t *idx = batch_of(P, k);
    int64_t n = batch_len(P, k), skip = fault_skip(R, n);
    for (int64_t i = 0; i < n; i++)
        if (i != skip)
            sample_reader_read(&R->reader, P->phase, idx[i], acc);
}

static void nothing(runner_t *R, epoch_plan_t *P) { (void)R, (void)P; }

static void nothing_left(runner_t *R, epoch_plan_t *P, epoch_stats_t *st) { (void)R, (void)P, (void)st; }

static const loader_ops_t LOADER_IN_RANK = {.name = "in-rank",
                                            .open = in_rank_open,
                                            .close = in_rank_close,
                                            .start = nothing,
                                            .load = in_rank_load,
                                            .finish = nothing_left};

/* read-threads > 0: PyTorch's DataLoader workers. Batch k goes to worker k % W, prefetch_factor x W batches are in
 * flight, one more is handed out per batch consumed. */
static void pool_hand_out(runner_t *R, epoch_plan_t *P)
{
    int64_t k = P->issued++, n = batch_len(P, k);
    pool_send(R->pool, (int)(k % R->pool->n), P->phase, k, batch_of(P, k), n, fault_skip(R, n));
}

static void pool_start_epoch(runner_t *R, epoch_plan_t *P)
{
    int64_t W = R->pool->n, c = R->cfg->prefetch_size;
    int64_t window = (c > 0 ? (c + W - 1) / W : 2) * W;
    while (P->issued < P->batches && P->issued < window) pool_hand_out(R, P);
}

static void pool_load(runner_t *R, epoch_plan_t *P, int64_t k, io_acc_t *acc)
{
    pool_recv(R->pool, (int)(k % R->pool->n), k, acc);
    if (P->issued < P->batches)
        pool_hand_out(R, P);
}

/* batches the workers read ahead but no step used: they were read (as PyTorch's workers read them) */
static void pool_finish_epoch(runner_t *R, epoch_plan_t *P, epoch_stats_t *st)
{
    for (int64_t k = P->fetched; k < P->issued; k++) {
        pool_recv(R->pool, (int)(k % R->pool->n), k, &st->io);
        log_batch(R, P, k, "prefetched");
        st->prefetched_unused += batch_len(P, k);
    }
}

static const loader_ops_t LOADER_POOL = {
    .name = "reader-processes", .start = pool_start_epoch, .load = pool_load, .finish = pool_finish_epoch};

/* ---------- orderings ---------- */

int64_t runner_planned_steps(const config_t *c, const dlio_entry_t *e, int phase, int64_t batches, int nranks)
{
    /* DLIO _train: break when overall_step >= max_steps or == total_training_steps (2.0.0: after a step;
     * >= 2.0.1: overall_step > max_steps or > total_training_steps when the batch arrives). DLIO _eval: break when
     * step > floor(samples/batch_eval/ranks) (2.0.0: after a step; >= 2.0.1: before). */
    int64_t cap =
        config_files_used(c, e, phase, nranks) * c->num_samples_per_file / config_phase(c, phase).batch_size / nranks;
    if (phase == PH_TRAIN && c->total_training_steps > 0 && c->total_training_steps < cap)
        cap = c->total_training_steps;
    /* 2.0.0 checks the cap after a step, so at least one step runs; later releases check it first (none may run) */
    if (cap < (e->cap_checked_on_fetch ? 0 : 1))
        cap = e->cap_checked_on_fetch ? 0 : 1;
    return batches < cap ? batches : cap;
}

/* the step cap of DLIO's loop (max_steps, total_training_steps) regardless of the batches this rank has */
static int64_t cap_of(const runner_t *R, const epoch_plan_t *P)
{
    return runner_planned_steps(R->cfg, R->L->dlio, P->phase, INT64_MAX, R->nranks);
}

/* The fewest steps any rank takes in this phase: every rank knows each rank's slice of DLIO's sampler (r*ceil(T/R)
 * clamped at T), so no communication is needed. Equal to every rank's steps whenever T is a multiple of R. */
static int64_t fewest_rank_steps(const runner_t *R, const epoch_plan_t *P)
{
    const int64_t total = R->sampler[P->phase].total, spp = (total + R->nranks - 1) / R->nranks;
    int64_t fewest = -1;
    for (int r = 0; r < R->nranks; r++) {
        int64_t start = (int64_t)r * spp, end = start + spp < total ? start + spp : total;
        int64_t steps = runner_planned_steps(R->cfg, R->L->dlio, P->phase, end > start ? (end - start) / P->bs : 0,
                                             R->nranks);
        if (fewest < 0 || steps < fewest)
            fewest = steps;
    }
    return fewest < 0 ? 0 : fewest;
}

/* DLIO: full batches only (drop_last); DLIO's break rules; a barrier after every training step that every rank
 * takes. Where T is not a multiple of R the ranks' step counts differ (DLIO 2.0.0 raises IndexError there, later
 * releases clamp and let their per-step barriers pair up with other barriers): the kernel barriers only the steps
 * every rank takes, so it never waits forever. */
static void plan_dlio(const runner_t *R, epoch_plan_t *P)
{
    const dlio_entry_t *e = R->L->dlio;
    P->batches = P->nout / P->bs;
    P->steps = runner_planned_steps(R->cfg, e, P->phase, P->batches, R->nranks);
    /* DLIO >= 2.0.1 checks the cap when the next batch arrives: that batch is loaded, then the loop breaks */
    P->fetched = e->cap_checked_on_fetch && P->steps < P->batches ? P->steps + 1 : P->steps;
    P->barriered = P->phase == PH_TRAIN ? fewest_rank_steps(R, P) : 0;
}

/* h5bench (the thesis kernel): the partial tail batch is kept, everything is read (total-training-steps still caps
 * training); barriers only in the main part, which every rank has */
static void plan_h5bench(const runner_t *R, epoch_plan_t *P)
{
    const config_t *c = R->cfg;
    P->batches = (P->nout + P->bs - 1) / P->bs;
    P->steps = P->phase == PH_TRAIN && c->total_training_steps > 0 && c->total_training_steps < P->batches
                   ? c->total_training_steps
                   : P->batches;
    P->fetched = P->steps;
    P->barriered = P->phase == PH_TRAIN ? R->sampler[P->phase].main_part / P->bs : 0;
}

static const ordering_ops_t ORDERING_DLIO = {.name = "dlio", .plan = plan_dlio};
static const ordering_ops_t ORDERING_H5BENCH = {.name = "h5bench", .plan = plan_h5bench};

/* ---------- the runner ---------- */

void runner_init(runner_t *R, const config_t *c, const layout_t *L, int rank, int nranks, pool_t *pool,
                 uint32_t random_seed)
{
    memset(R, 0, sizeof *R);
    R->cfg = c;
    R->L = L;
    R->rank = rank;
    R->nranks = nranks;
    R->pool = pool && pool->n > 0 ? pool : NULL;
    R->loader = R->pool ? &LOADER_POOL : &LOADER_IN_RANK;
    R->ordering = c->ordering == ORDER_H5BENCH ? &ORDERING_H5BENCH : &ORDERING_DLIO;
    if (R->loader->open)
        R->loader->open(R);
    int shuffle = L->dlio->sampler_shuffles || c->ordering == ORDER_H5BENCH ? c->sample_shuffle : SHUFFLE_OFF;
    for (int ph = 0; ph < NPHASES; ph++) {
        int64_t total = config_files_used(c, L->dlio, ph, nranks) * c->num_samples_per_file;
        sampler_init(&R->sampler[ph], c->ordering, shuffle, c->seed_change_epoch, (uint32_t)c->random_seed,
                     random_seed + (uint32_t)rank, total, rank, nranks);
    }
    nprand_seed(&R->compute_rng, (uint32_t)(c->random_seed * 104729u + (uint64_t)rank));
}

void runner_free(runner_t *R)
{
    if (R->loader->close)
        R->loader->close(R);
    for (int ph = 0; ph < NPHASES; ph++) sampler_free(&R->sampler[ph]);
}

/* Step k: load its batch; unless it is the batch fetched past the cap, emulated compute and (training) a barrier.
 * *t0: when waiting for this batch began. */
static void run_step(runner_t *R, epoch_plan_t *P, int64_t k, epoch_stats_t *st, double *t0)
{
    const phase_cfg_t pc = config_phase(R->cfg, P->phase);
    void *tr_step = trace_begin(TRACE_NAMES[P->phase].step);
    trace_int(tr_step, "step", k + 1);
    void *tr_load = trace_begin("load_batch");
    R->loader->load(R, P, k, &st->io);
    trace_end(tr_load);
    st->load_s += now() - *t0;
    if (k == P->steps) { /* fetched past the cap: read, not used */
        trace_end(tr_step);
        log_batch(R, P, k, "fetched");
        st->prefetched_unused += batch_len(P, k);
        return;
    }
    log_batch(R, P, k, "step");
    double want = pc.compute_time_stdev > 0 ? nprand_normal(&R->compute_rng, pc.compute_time, pc.compute_time_stdev)
                                            : pc.compute_time;
    void *tr_compute = trace_begin("compute");
    double got = emulate(want);
    trace_end(tr_compute);
    st->compute_s += got;
    if (k == 0)
        st->proc0_s = now() - *t0;
    else
        st->compute_s_au += got;
    st->steps++;
    st->samples += batch_len(P, k);
    if (k < P->barriered)
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    /* DLIO 2.0.0 main.py:274-283: after the step's barrier, before the step-cap test */
    if (R->ckpt && P->phase == PH_TRAIN && ckpt_after_step(R->cfg, k + 1))
        ckpt_save(R->ckpt, P->epoch, k + 1);
    trace_end(tr_step);
    *t0 = now();
}

void run_read_phase(runner_t *R, int phase, int64_t epoch, epoch_stats_t *st)
{
    memset(st, 0, sizeof *st);
    void *tr_epoch = trace_begin(TRACE_NAMES[phase].epoch);
    trace_int(tr_epoch, "epoch", epoch);
    st->start = now();
    sampler_t *s = &R->sampler[phase];
    sampler_epoch(s, epoch);
    epoch_plan_t P = {
        .phase = phase, .epoch = epoch, .order = s->out, .nout = s->nout, .bs = config_phase(R->cfg, phase).batch_size};
    R->ordering->plan(R, &P);
    R->loader->start(R, &P);
    double t0 = now();
    for (int64_t k = 0; k < P.fetched; k++) run_step(R, &P, k, st, &t0);
    st->end = now();
    trace_end(tr_epoch);
    R->loader->finish(R, &P, st);
    if (phase == PH_TRAIN) {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* DLIO: barrier after the training loop */
        /* DLIO 2.0.0 _train returns overall_step: the step the cap stopped it at, or one past the last batch when
         * the loader ran out first (main.py:285-292) */
        R->last_step = P.steps < P.batches || P.steps == cap_of(R, &P) ? P.steps : P.steps + 1;
    }
}
