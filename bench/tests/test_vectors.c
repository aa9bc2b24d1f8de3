/* The kernel's numpy-compatible RNG, DLIO dimension draws and DLIO sampler against vectors numpy produced
 * (bench/tests/vectors, regenerated and checked by tests/test_vectors.py). Usage: test_vectors VECTOR_DIR */
#include "config.h"
#include "layout.h"
#include "nprand.h"
#include "sampler.h"
#include "shard.h"
#include "dlio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0, checks = 0;
#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

static FILE *open_vec(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", p);
        exit(2);
    }
    return f;
}

static void test_seed_state(const char *dir)
{
    FILE *f = open_vec(dir, "seed_state.txt");
    unsigned long long seed;
    int pos, lines = 0;
    while (fscanf(f, "%llu %d", &seed, &pos) == 2) {
        nprand_t r;
        nprand_seed(&r, (uint32_t)seed);
        EXPECT(pos == r.pos, "seed %llu: pos %d vs %d", seed, r.pos, pos);
        for (int i = 0; i < 624; i++) {
            unsigned long long w;
            if (fscanf(f, "%llu", &w) != 1)
                exit(2);
            if (w != r.mt[i]) {
                EXPECT(0, "seed %llu: state word %d: %u vs numpy %llu", seed, i, r.mt[i], w);
                break;
            }
        }
        lines++;
    }
    EXPECT(lines == 7, "seed_state.txt: %d lines", lines);
    fclose(f);
}

static void test_random_sample(const char *dir)
{
    FILE *f = open_vec(dir, "random_sample.txt");
    unsigned long long seed;
    int n, lines = 0;
    while (fscanf(f, "%llu %d", &seed, &n) == 2) {
        nprand_t r;
        nprand_seed(&r, (uint32_t)seed);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            double want;
            if (fscanf(f, "%lf", &want) != 1)
                exit(2);
            double got = nprand_double(&r);
            if (got != want && !bad++)
                EXPECT(0, "seed %llu draw %d: %.17g vs numpy %.17g", seed, i, got, want);
        }
        checks++;
        lines++;
    }
    EXPECT(lines == 7, "random_sample.txt: %d lines", lines);
    fclose(f);
}

static void test_normal(const char *dir)
{
    FILE *f = open_vec(dir, "normal.txt");
    unsigned long long seed;
    double loc, scale;
    int n, lines = 0;
    while (fscanf(f, "%llu %lf %lf %d", &seed, &loc, &scale, &n) == 4) {
        nprand_t r;
        nprand_seed(&r, (uint32_t)seed);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            double want;
            if (fscanf(f, "%lf", &want) != 1)
                exit(2);
            double got = nprand_normal(&r, loc, scale);
            if (got != want && !bad++)
                EXPECT(0, "normal seed %llu #%d: %.17g vs numpy %.17g", seed, i, got, want);
        }
        checks++;
        lines++;
    }
    EXPECT(lines == 4, "normal.txt: %d lines", lines);
    fclose(f);
}

static void test_dims(const char *dir)
{
    FILE *f = open_vec(dir, "dlio_dims.txt");
    long long rl, rls, ntr, nev;
    int lines = 0;
    while (fscanf(f, "%lld %lld %lld %lld", &rl, &rls, &ntr, &nev) == 4) {
        config_t c;
        char err[CFG_ERRLEN];
        char *sets[1] = {"dlio-version=2.0.0"};
        if (config_load(&c, NULL, 1, sets, err))
            exit(2);
        c.record_length = rl;
        c.record_length_stdev = rls;
        c.num_files_train = ntr;
        c.num_files_eval = nev;
        layout_t L;
        layout_init(&L, &c);
        int bad = 0;
        for (long long k = 0; k < 2 * (ntr + nev); k++) {
            long long want;
            if (fscanf(f, "%lld", &want) != 1)
                exit(2);
            int ph = k / 2 < ntr ? PH_TRAIN : PH_EVAL;
            int64_t i = ph == PH_TRAIN ? k / 2 : k / 2 - ntr, d1, d2;
            layout_dims(&L, ph, i, &d1, &d2);
            int64_t got = k % 2 ? d2 : d1;
            if (got != want && !bad++)
                EXPECT(0, "dims rl=%lld stdev=%lld #%lld: %lld vs DLIO %lld", rl, rls, k, (long long)got, want);
        }
        checks++;
        layout_free(&L);
        lines++;
    }
    EXPECT(lines == 4, "dlio_dims.txt: %d lines", lines);
    fclose(f);
}

static void test_sampler(const char *dir)
{
    FILE *f = open_vec(dir, "dlio_sampler.txt");
    long long total, ranks, rank, seed, epoch, n;
    int lines = 0;
    sampler_t s;
    int have = 0;
    long long cur[3] = {-1, -1, -1};
    while (fscanf(f, "%lld %lld %lld %lld %lld %lld", &total, &ranks, &rank, &seed, &epoch, &n) == 6) {
        if (!have || cur[0] != total || cur[1] != ranks || cur[2] != rank || epoch == 1) {
            if (have)
                sampler_free(&s);
            sampler_init(&s, ORDER_DLIO, SHUFFLE_SEED, 0, (uint32_t)seed, 0, total, (int)rank, (int)ranks);
            have = 1;
            cur[0] = total, cur[1] = ranks, cur[2] = rank;
        }
        sampler_epoch(&s, epoch);
        EXPECT(s.nout == n, "sampler T=%lld R=%lld r=%lld e=%lld: %lld samples vs %lld", total, ranks, rank, epoch,
               (long long)s.nout, n);
        int bad = 0;
        for (long long i = 0; i < n; i++) {
            long long want;
            if (fscanf(f, "%lld", &want) != 1)
                exit(2);
            if (i < s.nout && s.out[i] != want && !bad++)
                EXPECT(0, "sampler T=%lld R=%lld r=%lld e=%lld pos %lld: %lld vs DLIO %lld", total, ranks, rank, epoch,
                       i, (long long)s.out[i], want);
        }
        checks++;
        lines++;
    }
    if (have)
        sampler_free(&s);
    EXPECT(lines > 40, "dlio_sampler.txt: %d lines", lines);
    fclose(f);
}

/* MLCommons DLIO 3.x's round-robin listing and per-epoch reshard (shard.c) against DLIO's code run with numpy */
static void test_dlio3_reshard(const char *dir)
{
    FILE *f = open_vec(dir, "dlio3_reshard.txt");
    long long nf, ranks, seed, sce, epoch, rank, n;
    int lines = 0;
    shard_t s;
    int have = 0;
    long long cur[4] = {-1, -1, -1, -1};
    while (fscanf(f, "%lld %lld %lld %lld %lld %lld %lld", &nf, &ranks, &seed, &sce, &epoch, &rank, &n) == 7) {
        if (!have || cur[0] != nf || cur[1] != ranks || cur[2] != seed || cur[3] != sce) {
            if (have)
                shard_free(&s);
            shard_init(&s, nf, (int)ranks, 0);
            have = 1;
            cur[0] = nf, cur[1] = ranks, cur[2] = seed, cur[3] = sce;
        }
        if (s.epoch < epoch)
            shard_reshuffle(&s, epoch, (uint32_t)seed, (int)sce);
        EXPECT(s.per_rank == n, "reshard N=%lld R=%lld: %lld files per rank vs DLIO %lld", nf, ranks,
               (long long)s.per_rank, n);
        const int64_t *l = shard_list(&s, (int)rank);
        int bad = 0;
        for (long long i = 0; i < n; i++) {
            long long want;
            if (fscanf(f, "%lld", &want) != 1)
                exit(2);
            if (i < s.per_rank && l[i] != want && !bad++)
                EXPECT(0, "reshard N=%lld R=%lld seed=%lld e=%lld rank %lld pos %lld: file %lld vs DLIO %lld", nf,
                       ranks, seed, epoch, rank, i, (long long)l[i], want);
        }
        checks++;
        lines++;
    }
    if (have)
        shard_free(&s);
    EXPECT(lines >= 20, "dlio3_reshard.txt: %d lines", lines);
    fclose(f);
}

/* MLCommons DLIO 3.x's per-rank generation seeds (layout_ranks with the 3.0.2 entry) */
static void test_dlio3_dims(const char *dir)
{
    FILE *f = open_vec(dir, "dlio3_dims.txt");
    long long rl, rls, ntrain, neval, ranks;
    int lines = 0;
    while (fscanf(f, "%lld %lld %lld %lld %lld", &rl, &rls, &ntrain, &neval, &ranks) == 5) {
        config_t c;
        memset(&c, 0, sizeof c);
        c.record_length = rl;
        c.record_length_stdev = rls;
        c.num_files_train = ntrain;
        c.num_files_eval = neval;
        c.num_dset_per_record = 1;
        snprintf(c.dlio_entry, sizeof c.dlio_entry, "3.0.2");
        layout_t L;
        layout_init(&L, &c);
        layout_ranks(&L, (int)ranks);
        int bad = 0;
        for (long long i = 0; i < ntrain + neval; i++) {
            long long w1, w2;
            int64_t d1, d2;
            if (fscanf(f, "%lld %lld", &w1, &w2) != 2)
                exit(2);
            layout_dims(&L, i < ntrain ? PH_TRAIN : PH_EVAL, i < ntrain ? i : i - ntrain, &d1, &d2);
            if ((d1 != w1 || d2 != w2) && !bad++)
                EXPECT(0, "3.x dims rl=%lld R=%lld file %lld: %lld x %lld vs DLIO %lld x %lld", rl, ranks, i,
                       (long long)d1, (long long)d2, w1, w2);
        }
        layout_free(&L);
        checks++;
        lines++;
    }
    EXPECT(lines == 3, "dlio3_dims.txt: %d lines", lines);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTOR_DIR\n", argv[0]);
        return 2;
    }
    test_seed_state(argv[1]);
    test_random_sample(argv[1]);
    test_normal(argv[1]);
    test_dims(argv[1]);
    test_sampler(argv[1]);
    test_dlio3_reshard(argv[1]);
    test_dlio3_dims(argv[1]);
    printf("test_vectors: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
