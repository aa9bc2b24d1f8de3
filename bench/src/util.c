#define _GNU_SOURCE
#include "util.h"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static err_ctx_t ctx = {.rank = -1};

err_ctx_t *err_ctx(void) { return &ctx; }

void die(int code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ctx.rank >= 0)
        fprintf(stderr, "h5dlio: rank %d: error: %s\n", ctx.rank, msg);
    else
        fprintf(stderr, "h5dlio: error: %s\n", msg);
    fflush(stderr);
    if (ctx.partial)
        unlink(ctx.partial);
    if (ctx.on_fatal)
        ctx.on_fatal(ctx.on_fatal_arg, code, msg);
    if (ctx.mpi_up)
        MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code);
}

void *xmalloc(size_t size, const char *what)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        die(EXIT_RUNTIME, "out of memory for %s (%zu bytes)", what, size);
    return p;
}

void *xcalloc(size_t n, size_t size, const char *what)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die(EXIT_RUNTIME, "out of memory for %s (%zu x %zu bytes)", what, n, size);
    return p;
}

void *xrealloc(void *p, size_t size, const char *what)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        die(EXIT_RUNTIME, "out of memory for %s (%zu bytes)", what, size);
    return q;
}

/* The top of HDF5's error stack (what failed) and its bottom (why: e.g. the errno text of a failed write). */
typedef struct {
    char top[512], cause[512];
} h5err_t;

static void on_signal(int sig)
{
    if (ctx.partial)
        unlink(ctx.partial); /* async-signal-safe, like everything here: no stdio */
    char msg[96] = "h5dlio: rank ", num[16];
    size_t n = strlen(msg);
    for (int v = ctx.rank < 0 ? 0 : ctx.rank, k = 0, first = 1; first || v; first = 0, v /= 10)
        num[k++] = (char)('0' + v % 10), num[k] = 0;
    for (size_t k = strlen(num); k > 0; k--) msg[n++] = num[k - 1];
    const char *tail = sig == SIGINT    ? ": interrupted (SIGINT)\n"
                       : sig == SIGTERM ? ": terminated (SIGTERM)\n"
                                        : ": hung up (SIGHUP)\n";
    memcpy(msg + n, tail, strlen(tail) + 1);
    if (ctx.mpi_up && write(STDERR_FILENO, msg, strlen(msg)) < 0) { /* ranks only (reader processes: mpi_up 0) */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void cleanup_on_signals(void)
{
    int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) /* keep an inherited SIG_IGN */
            sigaction(sigs[i], &sa, NULL);
    }
}

static herr_t err_walk(unsigned n, const H5E_error2_t *e, void *data)
{
    h5err_t *h = data;
    if (!e->desc)
        return 0;
    if (n == 0)
        snprintf(h->top, sizeof h->top, "%s (in %s)", e->desc, e->func_name ? e->func_name : "?");
    else
        snprintf(h->cause, sizeof h->cause, "%s", e->desc);
    for (char *c = n == 0 ? h->top : h->cause; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' '; /* one-line messages (HDF5's write errors embed ctime()'s newline) */
    return 0;
}

void h5_fail(int code, const char *call, const char *what, const char *file, int line)
{
    int e = errno;
    h5err_t h = {"no HDF5 error detail", ""};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, err_walk, &h);
    /* HDF5 does not always carry the system's reason (a file deleted under a reader can give "can't retrieve stat
     * info for file"): when `what` is a path that is not there, say so */
    char gone[160] = "";
    struct stat st;
    if (what && strchr(what, '/') && stat(what, &st) != 0)
        snprintf(gone, sizeof gone, " (the file: %s)", strerror(errno));
    errno = e;
    die(code, "%s: %s failed: %s%s%s%s [%s:%d]", what ? what : "?", call, h.top, *h.cause ? "; cause: " : "", h.cause,
        gone, file, line);
}

void agree_or_exit(char *msg, int rank)
{
    MPI_CHECK(MPI_Bcast(msg, CHECK_MSG, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (!*msg)
        return;
    if (rank == 0)
        fprintf(stderr, "h5dlio: error: %s\n", msg);
    MPI_Finalize();
    exit(EXIT_BADINPUT);
}

void agree_any_or_exit(char *msg, int rank)
{
    int mine = *msg ? rank : INT_MAX, first = INT_MAX;
    MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first == INT_MAX)
        return;
    MPI_CHECK(MPI_Bcast(msg, CHECK_MSG, MPI_CHAR, first, MPI_COMM_WORLD));
    if (rank == 0)
        fprintf(stderr, "h5dlio: error: %s\n", msg);
    MPI_Finalize();
    exit(EXIT_BADINPUT);
}

double clock_offset(void)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double mine = now(), root = mine;
    MPI_CHECK(MPI_Bcast(&root, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    return mine - root;
}

double emulate(double t)
{
    if (!(t > 0))
        return 0.0;
    double t0 = now();
    struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
    return now() - t0;
}

int mkdir_p(const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) == 0)
        return 1;
    if (errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

void fill_random(uint8_t *buf, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    size_t i = 0;
    while (i < n) {
        s ^= s << 13; /* xorshift64 */
        s ^= s >> 7;
        s ^= s << 17;
        uint64_t v = s;
        for (int k = 0; k < 8 && i < n; k++, i++, v >>= 8) buf[i] = (uint8_t)(((v & 0xff) * 255u) >> 8);
    }
}

int write_atomic(const char *path, const char *data, size_t len)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    int bad = (w != len) | (fflush(f) != 0) | (fsync(fileno(f)) != 0);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

void sb_printf(sb_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->len + (size_t)n + 1) * 2;
        b->s = xrealloc(b->s, cap, "building an output");
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sb_json_str(sb_t *b, const char *s)
{
    sb_printf(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            sb_printf(b, "\\%c", ch);
        else if (ch < 0x20)
            sb_printf(b, "\\u%04x", ch);
        else
            sb_printf(b, "%c", ch);
    }
    sb_printf(b, "\"");
}
