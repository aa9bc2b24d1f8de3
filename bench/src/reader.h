/* Reading samples: one open/read/close per sample (DLIO's ON_DEMAND HDF5 reader), in the rank itself
 * (read-threads=0) or in reader processes forked before MPI_Init (read-threads>0, PyTorch worker semantics). */
#ifndef H5DLIO_READER_H
#define H5DLIO_READER_H
#include "layout.h"
#include "nprand.h"
#include <stdint.h>

typedef struct {
    double meta_s, read_s, pre_s; /* H5Fopen..select + closes; inside H5Dread; preprocess sleeps */
    int64_t bytes, opens, reads;
} io_acc_t;
/* The one place accumulators are summed (a batch's answer from a reader process, prefetched batches). */
void io_acc_add(io_acc_t *into, const io_acc_t *from);

typedef struct sample_reader sample_reader_t;
struct sample_reader {
    const config_t *cfg;
    const layout_t *L;
    /* how one sample is read, chosen once from the DLIO entry's sample_read: h5py (open, read the records, close) or
     * whole_file (Python's open().read() of the file) */
    void (*read_sample)(sample_reader_t *r, const char *path, int64_t sample, io_acc_t *acc);
    hid_t fapl, dxpl;
    uint8_t *buf;
    size_t bufsize;
    nprand_t pre_rng; /* preprocess-time jitter: its own stream */
    /* DLIO 2.0.0's TF reader thread (reader/reader_handler.py:80-109): its open_file_map, a dict in first-insertion
     * order (slot[file] = position in ofile/ohid, -1: never opened), and image_processed */
    int64_t *slot, *ofile, nopen, nslots, processed;
    hid_t *ohid;
    /* MUTANTS read-offset, extra-open, odirect-dropped, readv-size (mutate.h): the reader that may diverge (rank 0's
     * own, or its first reader process), its sample reads so far, and the mutant of this read (MUT_NONE: none) */
    int mut_armed, mut_now;
    int64_t mut_reads;
};

void sample_reader_init(sample_reader_t *r, const config_t *c, const layout_t *L, uint32_t stream_seed);
void sample_reader_close(sample_reader_t *r);
/* Read global sample g of a phase (read_sample: h5py or whole_file); then preprocess time. */
void sample_reader_read(sample_reader_t *r, int phase, int64_t g, io_acc_t *acc);

/* DLIO 2.0.0's TF path: one reader thread's generator over its list of samples (reader/reader_handler.py:80-109).
 * begin: a new reader (a new generator each epoch); read: sample g = file * samples-per-file + index: the file is
 * opened if not open and stays open (:90-91), one sample read (hdf5_reader.py:47), preprocess; after every
 * samples-per-file samples the thread has processed, the file just read is closed (:105-107, whether or not the
 * thread read all of its samples); end: the generator returns and its reader is freed, closing the files still open
 * in the order they first entered the map (h5py closes a File when it is freed). */
void tf_thread_begin(sample_reader_t *r, int64_t nfiles);
void tf_thread_read(sample_reader_t *r, int phase, int64_t g, io_acc_t *acc);
void tf_thread_end(sample_reader_t *r, io_acc_t *acc);

/* Reader processes. Forked before MPI_Init (no MPI in them); the rank sends batches, they read and answer. */
typedef struct {
    int n;
    int *fd;
    int *pid;
} pool_t;
void pool_fork(pool_t *p, const config_t *c, const layout_t *L, int n); /* before MPI_Init: n processes */
void pool_trim(pool_t *p, int n);     /* ends the processes past the first n (before pool_start) */
void pool_start(pool_t *p, int rank); /* after MPI_Init: tells workers the rank */
/* Hand batch `batch` (samples idx[0..n)) to a worker; skip: a position of idx not sent (fault injection) or -1. */
void pool_send(pool_t *p, int worker, int phase, int64_t batch, const int64_t *idx, int64_t n, int64_t skip);
/* The same for a TF reader thread's batch: flags TF_FIRST (a new generator: tf_thread_begin over nfiles) and TF_LAST
 * (its last batch: tf_thread_end after it). */
enum { TF_FIRST = 1, TF_LAST = 2 };
void pool_send_tf(pool_t *p, int worker, int phase, int64_t batch, const int64_t *idx, int64_t n, int64_t skip,
                  int flags, int64_t nfiles);
void pool_recv(pool_t *p, int worker, int64_t batch, io_acc_t *acc); /* waits for that worker's next answer */
void pool_stop(pool_t *p);
#endif
