/* The training/evaluation loop with DLIO's step structure and its per-epoch statistics. What varies is chosen once,
 * in runner_init, behind two small tables: the loader (the rank reads, or its reader processes do) and the ordering
 * (DLIO's sampler and break rules, or the thesis kernel's). */
#ifndef H5DLIO_RUN_H
#define H5DLIO_RUN_H
#include "ckpt.h"
#include "reader.h"
#include "sampler.h"
#include "shard.h"
#include <stdio.h>

typedef struct {
    int64_t steps, samples, prefetched_unused; /* samples: consumed by steps; prefetched_unused: read, not used */
    io_acc_t io;
    double compute_s;    /* measured emulated compute (all steps) */
    double compute_s_au; /* measured compute of steps 2.. (DLIO's AU numerator) */
    double proc0_s;      /* first step's load + compute (excluded from AU) */
    double load_s;       /* time waiting for batches */
    double start, end;   /* phase start/end on this rank (DLIO's start_block/end_block, start_eval/end_eval) */
} epoch_stats_t;

/* The epochs one read phase ran on this rank: their statistics and the epoch each ran in. */
typedef struct {
    epoch_stats_t *st;
    int64_t *epoch;
    int64_t n;
} phase_log_t;

/* One phase's epoch as the ordering plans it (plan) and the loader serves it (issued). */
typedef struct {
    int phase;
    int64_t epoch;
    const int64_t *order; /* this rank's samples in read order */
    int64_t nout, bs;     /* how many; batch size */
    int64_t batches;      /* batches the loader may read */
    int64_t steps;        /* steps taken (each: a batch, compute) */
    int64_t fetched;      /* batches loaded in the loop: steps, or one more when the cap is checked on fetch */
    int64_t barriered;    /* the first `barriered` steps end with a barrier */
    int64_t issued;       /* reader processes: batches handed out so far */
    /* DLIO 2.0.0's TF path: batches of unequal length from several reader threads, in the order tf.data's
     * interleave yields them; NULL for the other orderings (batch k = order[k*bs, k*bs + bs)) */
    const int64_t *boff, *blen; /* batch k = order[boff[k], boff[k] + blen[k]) */
    const int32_t *bthr;        /* the reader thread that reads it */
    const uint8_t *bflags;      /* TF_FIRST | TF_LAST of that thread */
} epoch_plan_t;

typedef struct runner runner_t;

/* Who reads the batches. start: before the first step; load: batch k into acc; finish: after the loop (batches
 * read ahead but not used are read all the same and counted apart). open/close: NULL when nothing to set up. */
typedef struct {
    const char *name;
    void (*open)(runner_t *R);
    void (*close)(runner_t *R);
    void (*start)(runner_t *R, epoch_plan_t *P);
    void (*load)(runner_t *R, epoch_plan_t *P, int64_t k, io_acc_t *acc);
    void (*finish)(runner_t *R, epoch_plan_t *P, epoch_stats_t *st);
} loader_ops_t;

/* Which batches an epoch has and how many steps it takes (P->nout and P->bs are set). */
typedef struct {
    const char *name;
    void (*plan)(const runner_t *R, epoch_plan_t *P);
} ordering_ops_t;

struct runner {
    const config_t *cfg;
    const layout_t *L;
    int rank, nranks;
    const loader_ops_t *loader;
    const ordering_ops_t *ordering;
    sample_reader_t reader; /* in-rank loader */
    pool_t *pool;           /* reader-process loader */
    sampler_t sampler[NPHASES];
    nprand_t compute_rng;  /* compute/eval-time jitter: its own stream */
    FILE *samples_log;     /* record-samples */
    ckpt_t *ckpt;          /* checkpointing: DLIO's checkpoints after training steps (NULL: none) */
    int64_t last_step;     /* DLIO's overall_step when the last training loop ended (its epoch checkpoint's step) */
    int64_t reads_done;    /* fault-skip-read bookkeeping */
    int64_t seed;          /* random_seed (another one on one rank: MUTANT rank-seed) */
    int64_t *mut;          /* a mutated batch (mutate.h; NULL: no mutant) */
    struct {               /* DLIO 2.0.0's TF path (ordering "tf"): the epoch's plan, and the persistent file list */
        int64_t *files[2]; /* file_list_train, file_list_eval: shuffled in place, train then eval from one seeding,
                            * at every epoch with file_shuffle (compounds; utils/config.py:368-376) */
        int64_t *list, *order, *boff, *blen;
        int32_t *bthr;
        uint8_t *bflags;
        nprand_t rng; /* numpy's global stream, reseeded as DLIO's reconfigure reseeds it */
    } tf;
    shard_t shard;             /* DLIO 3.x (ordering round-robin): every rank's file list, as of shard.epoch */
    int64_t *rr_order;         /* the rank's samples of the planned epoch */
    struct prefetch *prefetch; /* key vol-async-prefetch: the async loader's statistics (prefetch.c), kept past
                                * runner_free for the report: prefetch_free */
    struct {                   /* DLIO 3.x's loader pre-warms (run_prewarm): reads outside the epochs */
        io_acc_t io;
        int64_t samples, n;
    } prewarm;
};

/* Batch k as every loader reads it (the mutants of read_batch applied; *skip: fault-skip-read's position or -1).
 * For loaders outside run.c (prefetch.c). */
const int64_t *runner_batch(runner_t *R, const epoch_plan_t *P, int64_t k, int64_t *n, int64_t *skip);
/* pool: the reader processes (read-threads > 0), or NULL: the rank reads. loader: a loader from outside run.c that
 * replaces the configured one (main.c: prefetch.h's LOADER_ASYNC_PREFETCH for key vol-async-prefetch), or NULL. It
 * is passed in, not named here: run.c depends on no loader module (tests/test_sources.py: no symbol circle). */
void runner_init(runner_t *R, const config_t *c, const layout_t *L, int rank, int nranks, pool_t *pool,
                 const loader_ops_t *loader, uint32_t random_seed);
void runner_free(runner_t *R);
/* Steps of one phase per epoch on this rank (what DLIO's loop does given its break conditions). */
int64_t runner_planned_steps(const config_t *c, const dlio_entry_t *e, int phase, int64_t batches_available,
                             int nranks);
/* One epoch of a read phase: the batches of this rank in order, each followed by emulated compute and (training) a
 * barrier. */
void run_read_phase(runner_t *R, int phase, int64_t epoch, epoch_stats_t *st);
/* DLIO 3.x's loader pre-warm of epoch `epoch` (entries with prewarm): its first batch read, then a barrier. */
void run_prewarm(runner_t *R, int64_t epoch);
#endif
