/* The training/evaluation loop with DLIO's step structure and its per-epoch statistics. */
#ifndef H5DLIO_RUN_H
#define H5DLIO_RUN_H
#include "reader.h"
#include "sampler.h"
#include <stdio.h>

typedef struct {
    int64_t steps, samples, prefetched_unused; /* samples: consumed by steps; prefetched_unused: read, not used */
    io_acc_t io;
    double compute_s;     /* measured emulated compute (all steps) */
    double compute_s_au;  /* measured compute of steps 2.. (DLIO's AU numerator) */
    double proc0_s;       /* first step's load + compute (excluded from AU) */
    double load_s;        /* time waiting for batches */
    double start, end;    /* phase start/end on this rank (DLIO's start_block/end_block, start_eval/end_eval) */
} epoch_stats_t;

typedef struct {
    const config_t *cfg;
    const layout_t *L;
    int rank, nranks;
    sample_reader_t reader; /* read-threads = 0 */
    pool_t *pool;           /* read-threads > 0 */
    sampler_t sampler[2];
    nprand_t compute_rng;   /* compute/eval-time jitter: its own stream */
    FILE *samples_log;      /* record-samples */
    int64_t reads_done;     /* fault-skip-read bookkeeping */
} runner_t;

void runner_init(runner_t *R, const config_t *c, const layout_t *L, int rank, int nranks, pool_t *pool,
                 uint32_t random_seed);
void runner_free(runner_t *R);
/* Steps of one phase per epoch on this rank (what DLIO's loop does given its break conditions). */
int64_t runner_planned_steps(const config_t *c, const dlio_entry_t *e, int phase, int64_t batches_available,
                             int nranks);
void run_train_epoch(runner_t *R, int64_t epoch, epoch_stats_t *st);
void run_eval_epoch(runner_t *R, int64_t epoch, epoch_stats_t *st);
#endif
