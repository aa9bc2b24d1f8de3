/* numpy legacy RandomState, re-implemented from the published algorithms:
 * MT19937 (Matsumoto & Nishimura, init_genrand seeding), numpy's legacy_gauss (Marsaglia polar method, one
 * value cached), random_interval (mask rejection) and the Fisher-Yates walk of RandomState.shuffle. */
#include "nprand.h"
#include <math.h>

#define MT_N 624
#define MT_M 397

void nprand_seed(nprand_t *r, uint32_t seed)
{
    r->mt[0] = seed;
    for (int i = 1; i < MT_N; i++) r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->pos = MT_N;
    r->has_gauss = 0;
    r->gauss = 0.0;
}

static void mt_generate(nprand_t *r)
{
    static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
    uint32_t y;
    int k;
    for (k = 0; k < MT_N - MT_M; k++) {
        y = (r->mt[k] & 0x80000000u) | (r->mt[k + 1] & 0x7fffffffu);
        r->mt[k] = r->mt[k + MT_M] ^ (y >> 1) ^ mag01[y & 1u];
    }
    for (; k < MT_N - 1; k++) {
        y = (r->mt[k] & 0x80000000u) | (r->mt[k + 1] & 0x7fffffffu);
        r->mt[k] = r->mt[k + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1u];
    }
    y = (r->mt[MT_N - 1] & 0x80000000u) | (r->mt[0] & 0x7fffffffu);
    r->mt[MT_N - 1] = r->mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1u];
    r->pos = 0;
}

uint32_t nprand_u32(nprand_t *r)
{
    if (r->pos >= MT_N)
        mt_generate(r);
    uint32_t y = r->mt[r->pos++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

uint64_t nprand_u64(nprand_t *r)
{
    uint64_t hi = nprand_u32(r);
    return (hi << 32) | nprand_u32(r);
}

double nprand_double(nprand_t *r)
{
    int32_t a = (int32_t)(nprand_u32(r) >> 5), b = (int32_t)(nprand_u32(r) >> 6);
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

double nprand_gauss(nprand_t *r)
{
    if (r->has_gauss) {
        double t = r->gauss;
        r->has_gauss = 0;
        r->gauss = 0.0;
        return t;
    }
    double f, x1, x2, r2;
    do {
        x1 = 2.0 * nprand_double(r) - 1.0;
        x2 = 2.0 * nprand_double(r) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    f = sqrt(-2.0 * log(r2) / r2);
    r->gauss = f * x1;
    r->has_gauss = 1;
    return f * x2;
}

double nprand_normal(nprand_t *r, double loc, double scale) { return loc + scale * nprand_gauss(r); }

uint64_t nprand_interval(nprand_t *r, uint64_t max)
{
    if (max == 0)
        return 0;
    uint64_t mask = max, value;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    if (max <= 0xffffffffull) {
        while ((value = (nprand_u32(r) & mask)) > max)
            ;
    } else {
        while ((value = (nprand_u64(r) & mask)) > max)
            ;
    }
    return value;
}

void nprand_shuffle_i64(nprand_t *r, int64_t *x, size_t n)
{
    for (size_t i = n > 0 ? n - 1 : 0; i >= 1; i--) {
        size_t j = (size_t)nprand_interval(r, i);
        int64_t t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}
