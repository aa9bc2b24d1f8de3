/* Error handling, timing and small helpers shared by the kernel. */
#ifndef H5DLIO_UTIL_H
#define H5DLIO_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>
#include <hdf5.h>

#define EXIT_BADINPUT 2
#define EXIT_RUNTIME 1

extern int g_rank; /* this process's MPI rank, for messages only (-1 before MPI_Init) */
extern int g_mpi_up;
/* A file this process is writing under a temporary name (generation): die() removes it before ending the job,
 * so a failed generation leaves neither a file that looks whole nor a partial one taking space. NULL: none. */
extern const char *g_partial;
/* SIGTERM/SIGINT/SIGHUP (mpirun ending a job, Ctrl-C): remove g_partial, then die of the signal as before. */
void cleanup_on_signals(void);

/* Print "h5dlio: rank R: message" and end the whole job with the code (MPI_Abort when MPI is up). */
_Noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Every MPI call goes through this: on failure it names the call, the MPI error text, file:line and rank. */
#define MPI_CHECK(call)                                                                                        \
    do {                                                                                                       \
        int rc_ = (call);                                                                                      \
        if (rc_ != MPI_SUCCESS) {                                                                              \
            char es_[MPI_MAX_ERROR_STRING];                                                                    \
            int el_ = 0;                                                                                       \
            MPI_Error_string(rc_, es_, &el_);                                                                  \
            die(EXIT_RUNTIME, "%s failed: %s (%s:%d)", #call, es_, __FILE__, __LINE__);                       \
        }                                                                                                      \
    } while (0)

/* HDF5 calls returning hid_t or herr_t: negative is failure. what names the file/object at fault. */
void h5_fail(int code, const char *call, const char *what, const char *file, int line) __attribute__((noreturn));
#define H5_CHECK(call, what)                                                                                   \
    ({                                                                                                         \
        __typeof__(call) r_ = (call);                                                                          \
        if (r_ < 0)                                                                                            \
            h5_fail(EXIT_RUNTIME, #call, (what), __FILE__, __LINE__);                                          \
        r_;                                                                                                    \
    })
/* Same, but a failure is the input's fault (missing/foreign file): exit status 2. */
#define H5_CHECK_INPUT(call, what)                                                                             \
    ({                                                                                                         \
        __typeof__(call) r_ = (call);                                                                          \
        if (r_ < 0)                                                                                            \
            h5_fail(EXIT_BADINPUT, #call, (what), __FILE__, __LINE__);                                         \
        r_;                                                                                                    \
    })

static inline double now(void) { return MPI_Wtime(); }
/* Rank 0 found bad input (msg non-empty) or not: every rank learns it; if bad, rank 0 prints it once and every rank
 * leaves with status 2 after MPI_Finalize (nobody is left waiting, no MPI_Abort noise). msg must be CHECK_MSG long. */
#define CHECK_MSG 8192
void agree_or_exit(char *msg, int rank);
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
