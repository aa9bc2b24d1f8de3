#include "run.h"
#include "mutate.h"
#include "tfsplit.h"
#include "trace.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

/* Trace region names per read phase (DFTracer) */
static const struct {
    const char *epoch, *step;
} TRACE_NAMES[NPHASES] = {[PH_TRAIN] = {"train_epoch", "step"}, [PH_EVAL] = {"eval_epoch", "eval_step"}};

/* Samples in batch k of an epoch (the last batch may be partial: h5bench ordering keeps it; the TF path's threads pad
 * their last batch with the resized image, which reads nothing). */
static int64_t batch_len(const epoch_plan_t *P, int64_t k)
{
    if (P->blen)
        return P->blen[k];
    return k * P->bs + P->bs <= P->nout ? P->bs : P->nout - k * P->bs;
}

static const int64_t *batch_of(const epoch_plan_t *P, int64_t k)
{
    return P->order + (P->boff ? P->boff[k] : k * P->bs);
}

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

/* MUTANT swap-rank-slices (mutate.h): ranks 0 and 1 take each other's slice of the sampler (3.x: of the shard) */
static int mutant_slice(const config_t *c, int rank, int nranks)
{
    return c->mutant == MUT_SWAP_SLICES && nranks > 1 && rank < 2 ? 1 - rank : rank;
}

/* MUTANTS (mutate.h) that change what a loader reads for batch k of rank 0's first training epoch: the samples to
 * read, in R->mut (or the plan's batch itself); *n: how many. Every loader reads through it. */
static const int64_t *read_batch(runner_t *R, const epoch_plan_t *P, int64_t k, int64_t *n)
{
    const int64_t *idx = batch_of(P, k);
    const int m = R->cfg->mutant;
    *n = batch_len(P, k);
    if (!m || R->rank != 0 || P->phase != PH_TRAIN || P->epoch != 1)
        return idx;
    if (m == MUT_SWAP_BATCHES && k < 2 && P->batches >= 2) {
        *n = batch_len(P, 1 - k);
        return batch_of(P, 1 - k);
    }
    int pad = m == MUT_TF_PADDING && P->bflags && (P->bflags[k] & TF_LAST);
    if (!pad &&
        !(k == 1 && (m == MUT_SKIP_READ || m == MUT_EXTRA_READ || m == MUT_SWAP_SAMPLES || m == MUT_WRONG_FILE)))
        return idx;
    int64_t len = *n;
    R->mut = xrealloc(R->mut, ((size_t)len + 1) * sizeof *R->mut, "a mutated batch");
    memcpy(R->mut, idx, (size_t)len * sizeof *idx);
    if (m == MUT_SKIP_READ && len > 0)
        memmove(R->mut, R->mut + 1, (size_t)(len - 1) * sizeof *idx), *n = len - 1;
    else if ((m == MUT_EXTRA_READ || pad) && len > 0)
        R->mut[len] = R->mut[0], *n = len + 1;
    else if (m == MUT_SWAP_SAMPLES && len > 1)
        R->mut[0] = idx[1], R->mut[1] = idx[0];
    else if (m == MUT_WRONG_FILE && len > 0) /* the same sample of the next file */
        R->mut[0] = (idx[0] + R->cfg->num_samples_per_file) % R->sampler[P->phase].total;
    return R->mut;
}

const int64_t *runner_batch(runner_t *R, const epoch_plan_t *P, int64_t k, int64_t *n, int64_t *skip)
{
    const int64_t *idx = read_batch(R, P, k, n);
    *skip = fault_skip(R, *n);
    return idx;
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
    R->reader.mut_armed = R->rank == 0;
}

static void in_rank_close(runner_t *R) { sample_reader_close(&R->reader); }

static void in_rank_load(runner_t *R, epoch_plan_t *P, int64_t k, io_acc_t *acc)
{
    int64_t n;
    const int64_t *idx = read_batch(R, P, k, &n);
    int64_t skip = fault_skip(R, n);
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
    int64_t k = P->issued++, n;
    const int64_t *idx = read_batch(R, P, k, &n);
    pool_send(R->pool, (int)(k % R->pool->n), P->phase, k, idx, n, fault_skip(R, n));
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

/* batches the workers read ahead but no step used: they were read (as PyTorch's workers read them); the TF path's
 * batch k belongs to its reader thread's process */
static void pool_finish_epoch(runner_t *R, epoch_plan_t *P, epoch_stats_t *st)
{
    for (int64_t k = P->fetched; k < P->issued; k++) {
        pool_recv(R->pool, P->bthr ? P->bthr[k] : (int)(k % R->pool->n), k, &st->io);
        log_batch(R, P, k, "prefetched");
        st->prefetched_unused += batch_len(P, k);
    }
}

static const loader_ops_t LOADER_POOL = {
    .name = "reader-processes", .start = pool_start_epoch, .load = pool_load, .finish = pool_finish_epoch};

/* DLIO 2.0.0's TF path, read-threads = 0: tf.data still runs one reader thread (tf_data_loader.py:70-74); the rank
 * plays it: one generator's open-file map across its batches (reader/reader_handler.py:80-109) */
static void tf_in_rank_load(runner_t *R, epoch_plan_t *P, int64_t k, io_acc_t *acc)
{
    int64_t n;
    const int64_t *idx = read_batch(R, P, k, &n);
    int64_t skip = fault_skip(R, n);
    if (P->bflags[k] & TF_FIRST)
        tf_thread_begin(&R->reader, config_phase(R->cfg, P->phase).num_files);
    for (int64_t i = 0; i < n; i++)
        if (i != skip)
            tf_thread_read(&R->reader, P->phase, idx[i], acc);
    if (P->bflags[k] & TF_LAST)
        tf_thread_end(&R->reader, acc);
}

static const loader_ops_t LOADER_TF_IN_RANK = {.name = "tf-in-rank",
                                               .open = in_rank_open,
                                               .close = in_rank_close,
                                               .start = nothing,
                                               .load = tf_in_rank_load,
                                               .finish = nothing_left};

/* read-threads = N > 0: tf.data's N reader threads (interleave, cycle_length = num_parallel_calls = N,
 * tf_data_loader.py:84-91), one reader process each, forked before MPI_Init: thread t's batches go to process t, in
 * order, so each keeps its generator's open-file map. tf.data's threads read ahead of the steps (prefetch_size
 * batches, :92-93, plus the interleave's buffers); the kernel keeps prefetch_size + N batches in flight. Across
 * threads the order of reads is not deterministic, in DLIO as here; every batch is read (config_check.c refuses shapes
 * where steps end before the batches do). */
static void tf_pool_hand_out(runner_t *R, epoch_plan_t *P)
{
    int64_t k = P->issued++, n;
    const int64_t *idx = read_batch(R, P, k, &n);
    pool_send_tf(R->pool, P->bthr[k], P->phase, k, idx, n, fault_skip(R, n), P->bflags[k],
                 config_phase(R->cfg, P->phase).num_files);
}

static void tf_pool_start(runner_t *R, epoch_plan_t *P)
{
    int64_t window = R->cfg->prefetch_size + R->pool->n;
    while (P->issued < P->batches && P->issued < window) tf_pool_hand_out(R, P);
}

static void tf_pool_load(runner_t *R, epoch_plan_t *P, int64_t k, io_acc_t *acc)
{
    pool_recv(R->pool, P->bthr[k], k, acc);
    if (P->issued < P->batches)
        tf_pool_hand_out(R, P);
}

static const loader_ops_t LOADER_TF_POOL = {
    .name = "tf-reader-threads", .start = tf_pool_start, .load = tf_pool_load, .finish = pool_finish_epoch};

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
        int64_t steps =
            runner_planned_steps(R->cfg, R->L->dlio, P->phase, end > start ? (end - start) / P->bs : 0, R->nranks);
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

/* DLIO 2.0.0's TF path. reconfigure(epoch) (utils/config.py:368-380, called before epoch 1 and after each epoch,
 * main.py:330, :349): with file_shuffle, np.random.seed(seed [+ epoch with seed_change_epoch]) then shuffle
 * file_list_train in place (it compounds, epoch after epoch); build_sample_map_iter (:317-349): the rank's positions
 * arange(r*spp, (r+1)*spp), shuffled after np.random.seed(seed [+ epoch]) when sample_shuffle is not off; position k
 * reads file_list[f] with f = r * ((F // R) % F) for k = 0 but (k // spf) % F for every later k (:337-348: the rank
 * offset is lost after the first sample, so every rank reads the first files), sample sample_list[k] % spf, in reader
 * thread (k // spt) % nt. Each thread yields batches of its samples in order, the last one padded without reads
 * (reader_handler.py:96-99); tf.data's interleave yields them round-robin over the threads (thread 0's first batch,
 * thread 1's first, ..., then each second batch; a thread with none left is skipped). */
static void plan_tf(const runner_t *Rc, epoch_plan_t *P)
{
    runner_t *R = (runner_t *)Rc; /* the plan lives in the runner's TF buffers */
    const config_t *c = R->cfg;
    const int64_t F = config_phase(c, P->phase).num_files, spf = c->num_samples_per_file, bs = P->bs;
    tf_split_t sp = tf_split(F * spf, R->nranks, c->read_threads);
    uint32_t seed = (uint32_t)(c->seed_change_epoch ? R->seed + P->epoch : R->seed);
    int64_t *files = R->tf.files[P->phase];
    /* reconfigure(epoch) before the epoch's training: one seeding, the training list then the evaluation list
     * (utils/config.py:368-376); the epoch's evaluation reads that evaluation list */
    if (P->phase == PH_TRAIN && c->file_shuffle != SHUFFLE_OFF) {
        nprand_seed(&R->tf.rng, seed);
        nprand_shuffle_i64(&R->tf.rng, R->tf.files[PH_TRAIN], (size_t)F);
        nprand_shuffle_i64(&R->tf.rng, R->tf.files[PH_EVAL], (size_t)c->num_files_eval);
    }
    for (int64_t k = 0; k < sp.spp; k++) R->tf.list[k] = (int64_t)R->rank * sp.spp + k;
    if (c->sample_shuffle != SHUFFLE_OFF) {
        nprand_seed(&R->tf.rng, seed);
        nprand_shuffle_i64(&R->tf.rng, R->tf.list, (size_t)sp.spp);
    }
    /* each thread's samples, in position order, one after the other in tf.order */
    int64_t start[257] = {0}, fill[256] = {0};
    for (int64_t t = 0; t < sp.nt; t++) start[t + 1] = start[t] + tf_thread_len(&sp, t);
    int64_t fpr = (F / R->nranks) % F, f = (int64_t)R->rank * fpr;
    for (int64_t k = 0; k < sp.spp; k++) {
        int64_t t = tf_thread_of(&sp, k);
        R->tf.order[start[t] + fill[t]++] = files[f] * spf + R->tf.list[k] % spf;
        f = ((k + 1) / spf) % F;
    }
    int64_t nb = 0;
    for (int64_t j = 0, more = 1; more; j++) {
        more = 0;
        for (int64_t t = 0; t < sp.nt; t++) {
            int64_t n = start[t + 1] - start[t], nbt = (n + bs - 1) / bs;
            if (j >= nbt)
                continue;
            more = 1;
            R->tf.boff[nb] = start[t] + j * bs;
            R->tf.blen[nb] = j * bs + bs <= n ? bs : n - j * bs;
            R->tf.bthr[nb] = (int32_t)t;
            R->tf.bflags[nb] = (uint8_t)((j == 0 ? TF_FIRST : 0) | (j == nbt - 1 ? TF_LAST : 0));
            nb++;
        }
    }
    P->order = R->tf.order;
    P->nout = sp.spp;
    P->boff = R->tf.boff;
    P->blen = R->tf.blen;
    P->bthr = R->tf.bthr;
    P->bflags = R->tf.bflags;
    P->batches = nb;
    /* main.py:287 the break after max_steps or total_training_steps (evaluation: :239 after `total`); config_check.c
     * made sure no batch is left over, and every rank has spp positions: the same steps everywhere, each training step
     * followed by the barrier (main.py:273; evaluation steps have none) */
    P->steps = runner_planned_steps(c, R->L->dlio, P->phase, P->batches, R->nranks);
    if (P->steps != P->batches)
        die(EXIT_BADINPUT, "TF loader: %lld batches but %lld steps (config validation should have refused this)",
            (long long)P->batches, (long long)P->steps);
    P->fetched = P->steps;
    P->barriered = P->phase == PH_TRAIN ? P->steps : 0;
}

/* MLCommons DLIO 3.x (file_sharding "round_robin"). The rank's files: the initial round-robin listing trimmed to
 * floor(N/R) (main.py:260-278, :483-484), resharded by every reconfigure(epoch) up to this epoch when file_reshuffle
 * applies: reader.file_shuffle given, whatever its value (utils/config.py:1137-1138, :1671-1672; shard.c). Its samples in order: dlio_sampler yields range(allreduce_min(local
 * samples)) unshuffled (data_loader/torch_data_loader.py:548-549, :582-584) and sample i is file list[i // spf],
 * index i % spf (utils/config.py:75-79: the VirtualIndexMap's permutation is never consulted by read_index).
 * Steps: max_steps = training_steps (main.py:607), the minimum over ranks of ceil(local/batch) (utils/config.py:759-762)
 * or, after a reshard, of floor(local/batch) (:1121-1122); the loader drops the last partial batch, every rank
 * holds floor(N/R) files: floor(local/batch) steps, or total_training_steps; the cap is checked when a batch
 * arrives (main.py:619), so one more batch is fetched below the loader's end; a barrier after every step (:631). */
static void shard_to(runner_t *R, int64_t epoch)
{
    const config_t *c = R->cfg;
    /* MUTANT no-shuffle (mutate.h): no reshard, every epoch reads the initial round-robin lists */
    int reshuffle = R->L->dlio->file_reshuffle && c->file_shuffle_given && c->mutant != MUT_NO_SHUFFLE;
    while (R->shard.epoch < epoch) {
        /* R->seed: the workload's seed (MUTANT rank-seed: + 1 on the last rank; MUTANT epoch-seed: + 1 for the
         * reshard to epoch 2, which 3.x's pre-warm after epoch 1 already reads) */
        uint32_t seed = (uint32_t)(R->seed + (c->mutant == MUT_EPOCH_SEED && R->shard.epoch + 1 == 2));
        if (reshuffle)
            shard_reshuffle(&R->shard, R->shard.epoch + 1, seed, c->seed_change_epoch);
        else
            R->shard.epoch++;
    }
}

static void plan_round_robin(const runner_t *Rc, epoch_plan_t *P)
{
    runner_t *R = (runner_t *)Rc; /* the plan lives in the runner's shard */
    const config_t *c = R->cfg;
    /* read-threads 0: the loader's reader lives in the rank and keeps the index map of the reconfigure made before
     * the loader (epoch 1, main.py:699-701) for every epoch and pre-warm: TorchDataset.__init__ calls worker_init(-1)
     * (data_loader/torch_data_loader.py:174-175), whose pickle.loads(serial_args) makes a copy the configuration
     * singleton (utils/config.py:308-313) and the reader's map (reader/reader_handler.py:48); reconfigure and
     * refresh_args (main.py:802-808) reach only workers spawned later (measured with strace: rank 0 reads epoch 1's
     * files in both epochs and all three pre-warms). With reader processes every iterator spawns workers that load
     * the refreshed arguments: each epoch's and pre-warm's own lists. */
    shard_to(R, c->read_threads > 0 ? P->epoch : 1);
    const int64_t spf = c->num_samples_per_file, n = R->shard.per_rank * spf;
    const int64_t *files = shard_list(&R->shard, mutant_slice(c, R->rank, R->nranks));
    for (int64_t k = 0; k < n; k++) R->rr_order[k] = files[k / spf] * spf + k % spf;
    P->order = R->rr_order;
    P->nout = n;
    P->batches = n / P->bs;
    P->steps =
        c->total_training_steps > 0 && c->total_training_steps < P->batches ? c->total_training_steps : P->batches;
    P->fetched = P->steps < P->batches ? P->steps + 1 : P->steps;
    P->barriered = P->steps;
}

static const ordering_ops_t ORDERING_ROUND_ROBIN = {.name = "round-robin", .plan = plan_round_robin};
static const ordering_ops_t ORDERING_DLIO = {.name = "dlio", .plan = plan_dlio};
static const ordering_ops_t ORDERING_TF = {.name = "tf", .plan = plan_tf};
static const ordering_ops_t ORDERING_H5BENCH = {.name = "h5bench", .plan = plan_h5bench};

/* ---------- the runner ---------- */

void runner_init(runner_t *R, const config_t *c, const layout_t *L, int rank, int nranks, pool_t *pool,
                 const loader_ops_t *loader, uint32_t random_seed)
{
    memset(R, 0, sizeof *R);
    R->cfg = c;
    R->L = L;
    R->rank = rank;
    R->nranks = nranks;
    /* MUTANT rank-seed (mutate.h): the last rank shuffles with another seed */
    R->seed = c->random_seed + (c->mutant == MUT_RANK_SEED && rank == nranks - 1);
    R->pool = pool && pool->n > 0 ? pool : NULL;
    int tf = c->data_loader == LOADER_TENSORFLOW;
    R->loader = tf ? (R->pool ? &LOADER_TF_POOL : &LOADER_TF_IN_RANK) : R->pool ? &LOADER_POOL : &LOADER_IN_RANK;
    if (loader) /* key vol-async-prefetch: prefetch.c's explicit async reads (prefetch_check allowed only in-rank h5py) */
        R->loader = loader;
    R->ordering = tf ? &ORDERING_TF : c->ordering == ORDER_H5BENCH ? &ORDERING_H5BENCH : &ORDERING_DLIO;
    if (!tf && c->ordering == ORDER_DLIO && strcmp(L->dlio->file_sharding, "round_robin") == 0) {
        R->ordering = &ORDERING_ROUND_ROBIN;
        shard_init(&R->shard, c->num_files_train, nranks, c->skip_listing ? 0 : c->num_subfolders_train);
        R->rr_order = xcalloc((size_t)(R->shard.per_rank * c->num_samples_per_file) + 1, sizeof *R->rr_order,
                              "the rank's sample order");
    }
    if (tf) { /* sized for the larger phase */
        tf_split_t sp = {0};
        for (int ph = 0; ph < NPHASES; ph++) {
            int64_t F = config_phase(c, ph).num_files;
            tf_split_t s = tf_split((F > 0 ? F : 1) * c->num_samples_per_file, nranks, c->read_threads);
            if (s.spp > sp.spp)
                sp = s;
            R->tf.files[ph] = xcalloc((size_t)(F > 0 ? F : 1), sizeof *R->tf.files[ph], "the TF file list");
            for (int64_t i = 0; i < F; i++) R->tf.files[ph][i] = i;
        }
        R->tf.list = xcalloc((size_t)sp.spp + 1, sizeof *R->tf.list, "the TF sample list");
        R->tf.order = xcalloc((size_t)sp.spp + 1, sizeof *R->tf.order, "the TF sample list");
        R->tf.boff = xcalloc((size_t)sp.spp + 1, sizeof *R->tf.boff, "the TF batches");
        R->tf.blen = xcalloc((size_t)sp.spp + 1, sizeof *R->tf.blen, "the TF batches");
        R->tf.bthr = xcalloc((size_t)sp.spp + 1, sizeof *R->tf.bthr, "the TF batches");
        R->tf.bflags = xcalloc((size_t)sp.spp + 1, sizeof *R->tf.bflags, "the TF batches");
    }
    if (R->loader->open)
        R->loader->open(R);
    int shuffle = L->dlio->sampler_shuffles || c->ordering == ORDER_H5BENCH ? c->sample_shuffle : SHUFFLE_OFF;
    if (c->mutant == MUT_NO_SHUFFLE) /* MUTANT no-shuffle (mutate.h) */
        shuffle = SHUFFLE_OFF;
    int slice = mutant_slice(c, rank, nranks);
    for (int ph = 0; ph < NPHASES; ph++) {
        int64_t total = config_files_used(c, L->dlio, ph, nranks) * c->num_samples_per_file;
        sampler_init(&R->sampler[ph], c->ordering, shuffle, c->seed_change_epoch, (uint32_t)R->seed,
                     random_seed + (uint32_t)rank, total, slice, nranks);
    }
    nprand_seed(&R->compute_rng, (uint32_t)(c->random_seed * 104729u + (uint64_t)rank));
}

void runner_free(runner_t *R)
{
    if (R->loader->close)
        R->loader->close(R);
    for (int ph = 0; ph < NPHASES; ph++) sampler_free(&R->sampler[ph]);
    free(R->tf.files[PH_TRAIN]);
    free(R->tf.files[PH_EVAL]);
    free(R->tf.list);
    free(R->tf.order);
    free(R->tf.boff);
    free(R->tf.blen);
    free(R->tf.bthr);
    free(R->tf.bflags);
    free(R->rr_order);
    free(R->mut);
    shard_free(&R->shard);
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
    if (R->cfg->mutant == MUT_COMPUTE_SKIP && R->rank == 0 && P->phase == PH_TRAIN && P->epoch == 1 && k == 1)
        want = 0; /* MUTANT skip-compute */
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
    /* MUTANT epoch-seed (mutate.h): the training shuffle of epoch 2 seeded with random_seed + 1 */
    s->seed = (uint32_t)(R->seed + (R->cfg->mutant == MUT_EPOCH_SEED && phase == PH_TRAIN && epoch == 2));
    sampler_epoch(s, epoch);
    epoch_plan_t P = {
        .phase = phase, .epoch = epoch, .order = s->out, .nout = s->nout, .bs = config_phase(R->cfg, phase).batch_size};
    R->ordering->plan(R, &P);
    /* MUTANT eval-step-dropped (mutate.h): rank 0's last evaluation step of epoch 1 is neither read nor taken */
    if (R->cfg->mutant == MUT_EVAL_STEP && R->rank == 0 && phase == PH_EVAL && epoch == 1 && P.steps > 0)
        P.batches = P.fetched = P.steps = P.steps - 1;
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

/* MLCommons DLIO 3.x (prewarm): next(iter(loader)) on the training loader before epoch 1 (main.py:705-717, after
 * reconfigure(1), :699) and at the end of every epoch after reconfigure(epoch + 1) (:802-820), the last included:
 * the first batch of that epoch's plan is read, then a barrier (:719; the next epoch starts with barriers, :787).
 * DLIO's reader processes are handed prefetch_factor x workers batches when the iterator starts and stop when it is
 * deleted: with workers, the batches besides the first that are read before the shutdown depend on timing; the
 * kernel reads the first batch only (as DLIO does with read_threads 0). */
void run_prewarm(runner_t *R, int64_t epoch)
{
    void *tr = trace_begin("prewarm");
    trace_int(tr, "epoch", epoch);
    epoch_plan_t P = {.phase = PH_TRAIN, .epoch = epoch, .bs = R->cfg->batch_size};
    R->ordering->plan(R, &P);
    /* MUTANT prewarm-dropped (mutate.h): rank 0 reads nothing in the pre-warm before epoch 1 */
    if (P.batches > 0 && !(R->cfg->mutant == MUT_PREWARM_DROP && R->rank == 0 && epoch == 1)) {
        /* next(iter(loader)), then del (main.py:705-716, :809-820): torch's iterator queues prefetch_factor x W
         * batches at once, batch k to worker k % W (prefetch_factor = ceil(prefetch_size / W), 2 when that is 0:
         * data_loader/torch_data_loader.py:741-752). Worker 0 reads batch 0 and has taken its next index before the
         * main process has received batch 0 and deleted the iterator, so it reads its whole share: batches 0, W, ...,
         * (prefetch_factor - 1) W (measured: every pre-warm at read_threads 1 read 2 batches, strace). In the rank
         * (read_threads 0) batch 0 only. The other workers' batches depend on how far each spawned worker got: not
         * read here (the model's prefetch bound). */
        int64_t W = R->pool ? R->pool->n : 0, c = R->cfg->prefetch_size;
        int64_t share = W ? (c > 0 ? (c + W - 1) / W : 2) : 1, step = W ? W : 1;
        for (int64_t j = 0; j < share && j * step < P.batches; j++) {
            int64_t b = j * step;
            if (R->pool) { /* to worker 0 (b % W == 0), answered in turn, as its queue is */
                int64_t n;
                const int64_t *idx = read_batch(R, &P, b, &n);
                pool_send(R->pool, 0, P.phase, b, idx, n, fault_skip(R, n));
                pool_recv(R->pool, 0, b, &R->prewarm.io);
            } else {
                R->loader->load(R, &P, b, &R->prewarm.io);
            }
            log_batch(R, &P, b, "prewarm");
            R->prewarm.samples += batch_len(&P, b);
        }
        R->prewarm.n++;
    }
    trace_end(tr);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}
