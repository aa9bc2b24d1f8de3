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
    int64_t *list; /* persistent list the shuffle is applied to */
    int64_t nlist;
    int64_t *out; /* this epoch's order for this rank */
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

#endif
