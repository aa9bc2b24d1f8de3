#ifndef H5DLIO_TFSPLIT_H
#define H5DLIO_TFSPLIT_H
#include <stdint.h>

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
