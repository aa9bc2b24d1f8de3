/* Error handling, timing and small helpers shared by the kernel. */
#ifndef H5DLIO_UTIL_H
#define H5DLIO_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>
#include <hdf5.h>

#define EXIT_BADINPUT 2
#define EXIT_RUNTIME 1

/* The process's error context: everything die() and the signal handlers need, and nothing else. One per process;
 * the layers above fill it in (main: rank, MPI up; generation: the partial file; a reader process: its hook). This
 * layer knows nothing above it. */
typedef struct {
    int rank;   /* MPI rank, for messages only (-1 before MPI_Init) */
    int mpi_up; /* MPI is initialized: die() ends the whole job with MPI_Abort */
    /* A file this process is writing and created (generation: its temporary name, or its final name when written
     * in place; a checkpoint's temporary name): die() and the signal handlers remove it before ending the job. */
    const char *partial;
    /* Called by die() before the process ends (a reader process reports the failure to its rank). NULL: none. */
    void (*on_fatal)(void *arg, int code, const char *msg);
    void *on_fatal_arg;
} err_ctx_t;
err_ctx_t *err_ctx(void);
/* SIGTERM/SIGINT/SIGHUP (mpirun ending a job, Ctrl-C): remove the partial file, then die of the signal as before. */
void cleanup_on_signals(void);

/* Print "h5dlio: rank R: error: message" and end the whole job with the code (MPI_Abort when MPI is up). */
_Noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Every MPI call goes through this: on failure it names the call, the MPI error text, file:line and rank. */
#define MPI_CHECK(call)                                                                                                \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        if (rc_ != MPI_SUCCESS) {                                                                                      \
            char es_[MPI_MAX_ERROR_STRING];                                                                            \
            int el_ = 0;                                                                                               \
            MPI_Error_string(rc_, es_, &el_);                                                                          \
            die(EXIT_RUNTIME, "%s failed: %s (%s:%d)", #call, es_, __FILE__, __LINE__);                                \
        }                                                                                                              \
    } while (0)

/* Every HDF5 call whose failure matters goes through H5_CHECK(call, what, code): a negative hid_t/herr_t/int, or a
 * size_t of 0 (H5Tget_size), is a failure; it names the call, HDF5's error text, `what` (the file or object at
 * fault), file:line and the rank, and ends the job with exit status `code`: EXIT_RUNTIME, or EXIT_BADINPUT when the
 * input is at fault (a missing, foreign or truncated file). Evaluates to the call's result. */
_Noreturn void h5_fail(int code, const char *call, const char *what, const char *file, int line);
static inline int h5_failed_size(size_t r) { return r == 0; }
static inline int h5_failed_signed(int64_t r) { return r < 0; }
#define H5_CHECK(call, what, code)                                                                                     \
    ({                                                                                                                 \
        __typeof__(call) r_ = (call);                                                                                  \
        if (_Generic(r_, size_t : h5_failed_size, default : h5_failed_signed)(r_))                                     \
            h5_fail((code), #call, (what), __FILE__, __LINE__);                                                        \
        r_;                                                                                                            \
    })

/* malloc/calloc/realloc that end the job naming what was being allocated (never NULL). */
void *xmalloc(size_t size, const char *what);
void *xcalloc(size_t n, size_t size, const char *what);
void *xrealloc(void *p, size_t size, const char *what);

static inline double now(void) { return MPI_Wtime(); }
/* IOR's clock alignment (its wall_clock_delta), collective: after a barrier rank 0's now() is broadcast and each rank
 * returns its own now() minus it. Stamps minus the offset compare across ranks (MPI_Wtime need not be global). */
double clock_offset(void);
/* Rank 0 found bad input (msg non-empty) or not: every rank learns it; if bad, rank 0 prints it once and every rank
 * leaves with status 2 after MPI_Finalize (nobody is left waiting, no MPI_Abort noise). msg must be CHECK_MSG long. */
#define CHECK_MSG 8192
void agree_or_exit(char *msg, int rank);
/* The same when any rank may have found something: the lowest such rank's msg is the job's. */
void agree_any_or_exit(char *msg, int rank);
/* Sleep for t seconds (t <= 0: no sleep); returns the measured seconds slept. */
double emulate(double t);
/* mkdir -p; returns 1 if this call created the last component, 0 if it existed, -1 on error (errno). */
int mkdir_p(const char *path);
/* Fill buf with bytes in [0, 254] from a fast generator seeded by seed. */
void fill_random(uint8_t *buf, size_t n, uint64_t seed);
/* Write a whole file atomically (temp + rename). Returns 0 or -1 (errno). */
int write_atomic(const char *path, const char *data, size_t len);

/* Growable string for building outputs once, as data. */
typedef struct {
    char *s;
    size_t len, cap;
} sb_t;
void sb_printf(sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_json_str(sb_t *b, const char *s); /* quoted, escaped */
#endif
