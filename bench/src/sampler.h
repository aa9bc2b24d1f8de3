/* Sample order per rank and epoch.
 * dlio:    DLIO 2.0.0's PyTorch dlio_sampler: rank r owns [r*ceil(T/R), (r+1)*ceil(T/R)) (clamped at T, where
 *          DLIO itself raises IndexError), shuffled in place each epoch after np.random.seed(seed) (so the
 *          permutation compounds epoch after epoch); batches drop the incomplete tail.
 * h5bench: the thesis kernel with its bugs fixed: one global permutation (own stream; reseeded with seed+epoch
 *          when seed-change-epoch), rank r reads [r*floor(T/R), (r+1)*floor(T/R)) plus tail samples R*q+r, R*q+r+R,..;
 *          the last partial batch is processed. */
#ifndef H5DLIO_SAMPLER_H
#define H5DLIO_SAMPLER_H
#include "nprand.h"
#include <stdint.h>

typedef struct {
    int mode, shuffle, seed_change_epoch;
    int64_t total, rank, nranks;
    uint32_t seed;
    int64_t *list;   /* persistent list the shuffle is applied to */
    int64_t nlist;
    int64_t *out;    /* this epoch's order for this rank */
    int64_t nout;
    int64_t main_part; /* h5bench: samples in the main (barriered) part; dlio: nout */
    nprand_t rng;
} sampler_t;

/* random_seed: used for shuffle=random (the same value on every rank). */
void sampler_init(sampler_t *s, int mode, int shuffle, int seed_change_epoch, uint32_t seed, uint32_t random_seed,
                  int64_t total, int rank, int nranks);
/* Advance to epoch (1-based) and return this rank's order (s->out, s->nout). */
void sampler_epoch(sampler_t *s, int64_t epoch);
void sampler_free(sampler_t *s);

/* DLIO 2.0.0's TensorFlow path (utils/config.py:317-349 build_sample_map_iter; data_loader/tf_data_loader.py). A rank
 * takes spp = ceil(T/R) positions k = 0..spp-1 (not clamped at T: files are indexed modulo their count, so no
 * IndexError here); position k goes to reader thread (k / (spp / nt)) % nt (:323, :342). */
typedef struct {
    int64_t spp, spt, nt; /* samples per rank, per thread (spp / nt), threads (read_threads, 0 counts as 1) */
} tf_split_t;
tf_split_t tf_split(int64_t total, int nranks, int64_t read_threads);
int64_t tf_thread_of(const tf_split_t *s, int64_t k);
/* How many positions thread t holds, and the batches all threads yield (each thread pads its last batch,
 * reader/reader_handler.py:96-99, so a thread of n samples yields ceil(n / batch) batches). spt must be > 0. */
int64_t tf_thread_len(const tf_split_t *s, int64_t t);
int64_t tf_batches(const tf_split_t *s, int64_t batch);
#endif
