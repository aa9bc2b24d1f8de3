#include "shard.h"
#include "nprand.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

int64_t shard_listing_file(int64_t p, int64_t nfiles, int64_t S)
{
    if (S <= 1)
        return p;
    /* sub-folder k holds ceil((N - k) / S) files: k, k+S, ... */
    int64_t q = nfiles / S, r = nfiles % S, k, before;
    if (p < r * (q + 1))
        k = p / (q + 1), before = k * (q + 1);
    else
        k = r + (p - r * (q + 1)) / q, before = r * (q + 1) + (k - r) * q;
    return k + (p - before) * S;
}

void shard_init(shard_t *s, int64_t nfiles, int nranks, int64_t subfolders)
{
    memset(s, 0, sizeof *s);
    s->nranks = nranks;
    s->per_rank = nfiles / nranks; /* main.py:478-484: my_files[:effective // comm_size] */
    size_t n = (size_t)(s->per_rank * nranks) + 1;
    s->lists = xcalloc(n, sizeof *s->lists, "the ranks' file lists");
    s->tmp = xcalloc(n, sizeof *s->tmp, "the ranks' file lists");
    for (int q = 0; q < nranks; q++) /* _filter_round_robin: position i goes to rank i % R, in listing order */
        for (int64_t k = 0; k < s->per_rank; k++)
            s->lists[(int64_t)q * s->per_rank + k] = shard_listing_file((int64_t)q + k * nranks, nfiles, subfolders);
}

void shard_reshuffle(shard_t *s, int64_t epoch, uint32_t seed, int seed_change_epoch)
{
    const int R = s->nranks;
    const int64_t n = s->per_rank;
    nprand_t rng;
    /* every sender's np.random.shuffle(paths) after the same seed: lists of equal length get the same permutation,
     * applied to each sender's own list */
    for (int q = 0; q < R; q++) {
        nprand_seed(&rng, seed_change_epoch ? (uint32_t)(seed + (uint64_t)epoch) : seed);
        nprand_shuffle_i64(&rng, s->lists + (int64_t)q * n, (size_t)n);
    }
    /* receiver d's new shard: for each sender q in rank order, the sender's positions i with (i + q) % R == d */
    for (int d = 0; d < R; d++) {
        int64_t *out = s->tmp + (int64_t)d * n, m = 0;
        for (int q = 0; q < R; q++)
            for (int64_t i = 0; i < n; i++)
                if ((i + q) % R == d)
                    out[m++] = s->lists[(int64_t)q * n + i];
        if (m != n)
            die(EXIT_RUNTIME, "reshard: rank %d received %lld files, not %lld", d, (long long)m, (long long)n);
        nprand_seed(&rng, (uint32_t)(seed + (uint64_t)epoch + 31u * (uint64_t)d));
        nprand_shuffle_i64(&rng, out, (size_t)n);
    }
    int64_t *t = s->lists;
    s->lists = s->tmp;
    s->tmp = t;
    s->epoch = epoch;
}

void shard_free(shard_t *s)
{
    free(s->lists);
    free(s->tmp);
    memset(s, 0, sizeof *s);
}
