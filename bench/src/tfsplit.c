/* DLIO 2.0.0's TensorFlow path: which reader thread holds which of a rank's positions (tfsplit.h). Its own module so
 * that both the validator (config_check.c) and the loader use it without an include circle. */
#include "tfsplit.h"

tf_split_t tf_split(int64_t total, int nranks, int64_t read_threads)
{
    tf_split_t s;
    s.spp = (total + nranks - 1) / nranks;
    s.nt = read_threads > 0 ? read_threads : 1; /* utils/config.py:319-321; tf_data_loader.py:70-74 */
    s.spt = s.spp / s.nt;
    return s;
}

int64_t tf_thread_of(const tf_split_t *s, int64_t k) { return (k / s->spt) % s->nt; }

int64_t tf_thread_len(const tf_split_t *s, int64_t t)
{
    int64_t n = t < s->nt ? s->spt : 0;
    for (int64_t k = s->spt * s->nt; k < s->spp; k++) /* the remainder (< nt positions) wraps to threads 0, 1, .. */
        n += tf_thread_of(s, k) == t;
    return n;
}

int64_t tf_batches(const tf_split_t *s, int64_t batch)
{
    int64_t b = 0;
    for (int64_t t = 0; t < s->nt; t++) b += (tf_thread_len(s, t) + batch - 1) / batch;
    return b;
}
