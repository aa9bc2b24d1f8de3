/* numpy's legacy RandomState (MT19937), bit-exact for the calls DLIO makes:
 *   np.random.seed(s), np.random.shuffle(x), np.random.normal(loc, scale, n), np.random.randint(...).
 * Each purpose of the kernel owns one nprand_t: there is no global stream. */
#ifndef H5DLIO_NPRAND_H
#define H5DLIO_NPRAND_H
#include <stdint.h>
#include <stddef.h>

typedef struct {
    uint32_t mt[624];
    int pos;
    int has_gauss;
    double gauss;
} nprand_t;

void nprand_seed(nprand_t *r, uint32_t seed); /* np.random.seed(seed) */
uint32_t nprand_u32(nprand_t *r);             /* genrand_int32 */
uint64_t nprand_u64(nprand_t *r);             /* two draws, high word first */
double nprand_double(nprand_t *r);            /* random_sample(): 53-bit */
double nprand_gauss(nprand_t *r);             /* legacy polar Box-Muller with caching */
double nprand_normal(nprand_t *r, double loc, double scale);
uint64_t nprand_interval(nprand_t *r, uint64_t max);        /* uniform in [0, max], masked rejection */
void nprand_shuffle_i64(nprand_t *r, int64_t *x, size_t n); /* np.random.shuffle on a 1-d sequence */
#endif
