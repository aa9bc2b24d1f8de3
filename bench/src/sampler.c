#include "sampler.h"
#include "config.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

void sampler_init(sampler_t *s, int mode, int shuffle, int seed_change_epoch, uint32_t seed, uint32_t random_seed,
                  int64_t total, int rank, int nranks)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->shuffle = shuffle;
    s->seed_change_epoch = seed_change_epoch;
    s->seed = seed;
    s->total = total;
    s->rank = rank;
    s->nranks = nranks;
    int64_t start = 0, end = total;
    if (mode == ORDER_DLIO) {
        int64_t spp = (total + nranks - 1) / nranks;
        start = (int64_t)rank * spp;
        end = start + spp < total ? start + spp : total;
        if (start > end)
            start = end;
    }
    s->nlist = end - start;
    s->list = malloc((size_t)(s->nlist + 1) * sizeof *s->list);
    s->out = malloc((size_t)(s->nlist + 1) * sizeof *s->out);
    if (!s->list || !s->out)
        die(EXIT_RUNTIME, "out of memory for %lld sample indices", (long long)s->nlist);
    for (int64_t i = 0; i < s->nlist; i++) s->list[i] = start + i;
    nprand_seed(&s->rng, shuffle == SHUFFLE_RANDOM ? random_seed : seed);
}

void sampler_epoch(sampler_t *s, int64_t epoch)
{
    if (s->shuffle != SHUFFLE_OFF) {
        if (s->shuffle == SHUFFLE_SEED) {
            if (s->mode == ORDER_DLIO)
                nprand_seed(&s->rng, s->seed); /* np.random.seed(self.seed) at every __iter__ */
            else if (s->seed_change_epoch)
                nprand_seed(&s->rng, (uint32_t)(s->seed + (uint64_t)epoch));
        }
        nprand_shuffle_i64(&s->rng, s->list, (size_t)s->nlist);
    }
    if (s->mode == ORDER_DLIO) {
        memcpy(s->out, s->list, (size_t)s->nlist * sizeof *s->out);
        s->nout = s->main_part = s->nlist;
        return;
    }
    int64_t q = s->total / s->nranks, n = 0;
    for (int64_t i = s->rank * q; i < (s->rank + 1) * q; i++) s->out[n++] = s->list[i];
    s->main_part = n;
    for (int64_t i = s->nranks * q + s->rank; i < s->total; i += s->nranks) s->out[n++] = s->list[i];
    s->nout = n;
}

void sampler_free(sampler_t *s)
{
    free(s->list);
    free(s->out);
    s->list = s->out = NULL;
}
