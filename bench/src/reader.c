#define _GNU_SOURCE
#include "reader.h"
#include "mutate.h"
#include "trace.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_h5py(sample_reader_t *r, const char *path, int64_t sample, io_acc_t *acc);
static void read_whole_file(sample_reader_t *r, const char *path, int64_t sample, io_acc_t *acc);
static void read_odirect(sample_reader_t *r, const char *path, int64_t sample, io_acc_t *acc);

void sample_reader_init(sample_reader_t *r, const config_t *c, const layout_t *L, uint32_t stream_seed)
{
    memset(r, 0, sizeof *r);
    r->cfg = c;
    r->L = L;
    /* HDF5's first call in a reader process (it starts HDF5 itself, after the fork): checked, so a VOL connector it
     * cannot set up here ends the job instead of leaving this process on the native connector (vol.c) */
    H5_CHECK(H5open(), "HDF5's start in a reader process (HDF5_VOL_CONNECTOR, HDF5_PLUGIN_PATH)", EXIT_BADINPUT);
    const driver_t *d = driver_select(c, 0);
    r->fapl = d->fapl(c);
    r->dxpl = d->dxpl(c);
    r->read_sample = strcmp(L->dlio->sample_read, "whole_file") ? read_h5py
                     : c->odirect                               ? read_odirect
                                                                : read_whole_file;
    nprand_seed(&r->pre_rng, stream_seed);
}

void sample_reader_close(sample_reader_t *r)
{
    if (r->fapl > 0)
        H5_CHECK(H5Pclose(r->fapl), "the file access property list", EXIT_RUNTIME);
    if (r->dxpl > 0 && r->dxpl != H5P_DEFAULT)
        H5_CHECK(H5Pclose(r->dxpl), "the transfer property list", EXIT_RUNTIME);
    free(r->buf);
    free(r->slot);
    free(r->ofile);
    free(r->ohid);
    memset(r, 0, sizeof *r);
}

void io_acc_add(io_acc_t *into, const io_acc_t *from)
{
    into->meta_s += from->meta_s;
    into->read_s += from->read_s;
    into->pre_s += from->pre_s;
    into->bytes += from->bytes;
    into->opens += from->opens;
    into->reads += from->reads;
}

/* Read sample `sample` of one samples dataset of an open file (h5py: f[dname][sample]): open, select, read, close.
 * A dataset that is missing or not an (n, d1, d2) byte array is the input's fault (exit 2). */
static void read_dataset(sample_reader_t *r, hid_t f, const char *dname, int64_t sample, const char *path,
                         io_acc_t *acc)
{
    double t0 = now();
    hid_t ds = H5_CHECK(H5Dopen2(f, dname, H5P_DEFAULT), path, EXIT_BADINPUT);
    hid_t fs = H5_CHECK(H5Dget_space(ds), path, EXIT_RUNTIME);
    int nd = H5_CHECK(H5Sget_simple_extent_ndims(fs), path, EXIT_BADINPUT);
    hid_t ty = H5_CHECK(H5Dget_type(ds), path, EXIT_RUNTIME);
    size_t tsize = H5_CHECK(H5Tget_size(ty), path, EXIT_BADINPUT);
    H5_CHECK(H5Tclose(ty), path, EXIT_RUNTIME);
    if (nd != 3 || tsize != 1)
        die(EXIT_BADINPUT,
            "%s: dataset '%s' is not an (n, d1, d2) byte array (rank %d, element size %zu): not a "
            "DLIO dataset",
            path, dname, nd, tsize);
    hsize_t dims[3];
    H5_CHECK(H5Sget_simple_extent_dims(fs, dims, NULL), path, EXIT_BADINPUT);
    if ((int64_t)dims[0] <= sample)
        die(EXIT_BADINPUT, "%s: dataset '%s' has %llu samples, sample %lld requested (num-samples-per-file=%lld)", path,
            dname, (unsigned long long)dims[0], (long long)sample, (long long)r->cfg->num_samples_per_file);
    hsize_t start[3] = {(hsize_t)sample, 0, 0}, count[3] = {1, dims[1], dims[2]};
    if (r->mut_now == MUT_READ_OFFSET && dims[2] > 1) /* MUTANT read-offset */
        start[2] = 1, count[2] = dims[2] - 1;
    H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), path, EXIT_RUNTIME);
    hid_t ms = H5_CHECK(H5Screate_simple(2, count + 1, NULL), path, EXIT_RUNTIME); /* like h5py: dset[i] is (d1, d2) */
    size_t need = (size_t)(dims[1] * dims[2]);
    if (need > r->bufsize) {
        free(r->buf);
        r->buf = xmalloc(need, "a sample buffer");
        r->bufsize = need;
    }
    double t1 = now();
    H5_CHECK(H5Dread(ds, H5T_NATIVE_UINT8, ms, fs, r->dxpl, r->buf), path, EXIT_BADINPUT);
    double t2 = now();
    H5_CHECK(H5Sclose(ms), path, EXIT_RUNTIME);
    H5_CHECK(H5Sclose(fs), path, EXIT_RUNTIME);
    H5_CHECK(H5Dclose(ds), path, EXIT_RUNTIME);
    double t3 = now();
    acc->meta_s += (t1 - t0) + (t3 - t2);
    acc->read_s += t2 - t1;
    acc->bytes += (int64_t)need;
    acc->reads += 1;
}

/* DLIO <= 2.0.x (sample_read "h5py"): one h5py.File(path, 'r') per sample, reading the sample's records
 * (reader/hdf5_reader.py:47-48 at v2.0.1: records_0..records_{n-1} inside one open; 2.0.0 :47 'records'). */
static void read_h5py(sample_reader_t *r, const char *path, int64_t sample, io_acc_t *acc)
{
    const config_t *c = r->cfg;
    double t0 = now();
    hid_t f = H5_CHECK(H5Fopen(path, H5F_ACC_RDONLY, r->fapl), path, EXIT_BADINPUT);
    acc->meta_s += now() - t0;
    for (int64_t k = 0; k < (r->L->dlio->indexed_records ? c->num_dset_per_record : 1); k++) {
        char dname[300];
        layout_records_name(r->L, k, dname, sizeof dname);
        read_dataset(r, f, dname, sample, path, acc);
    }
    double t4 = now();
    H5_CHECK(H5Fclose(f), path, EXIT_RUNTIME);
    acc->meta_s += now() - t4;
    acc->opens += 1;
}

/* A POSIX-read sample's close and its accounting: opened at t0, read from t1 to t2, `bytes` read by one read
 * (CPython's readall or a readv); metadata time is the open and the close, read time the read. */
static void close_sample(int fd, const char *path, double t0, double t1, double t2, int64_t bytes, io_acc_t *acc)
{
    if (close(fd) != 0)
        die(EXIT_RUNTIME, "close %s: %s", path, strerror(errno));
    acc->meta_s += (t1 - t0) + (now() - t2);
    acc->read_s += t2 - t1;
    acc->bytes += bytes;
    acc->reads += 1;
    acc->opens += 1;
}

/* MLCommons DLIO 3.x (sample_read "whole_file"): reader/hdf5_reader.py:61-63 read_index ->
 * reader/_local_fs_iterable_mixin.py:348-359 _localfs_ensure_cached -> :150-153 `with open(path, 'rb') as fh:
 * len(fh.read())`, whatever the sample: no HDF5 call. The system calls are CPython 3.12's for that line (strace in
 * DLIO's venv): openat(O_RDONLY|O_CLOEXEC), fstat, ioctl(TCGETS) (isatty: the buffering choice), lseek(0, SEEK_CUR)
 * twice (the buffered reader's and the raw file's position), fstat (readall's size hint), read(size + 1) returning
 * size, read(1) returning 0 (end of file), close. */
static void read_whole_file(sample_reader_t *r, const char *path, int64_t sample, io_acc_t *acc)
{
    (void)sample;
    double t0 = now();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die(EXIT_BADINPUT, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0)
        die(EXIT_RUNTIME, "fstat %s: %s", path, strerror(errno));
    (void)isatty(fd);
    (void)lseek(fd, 0, SEEK_CUR);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    if (fstat(fd, &st) != 0)
        die(EXIT_RUNTIME, "fstat %s: %s", path, strerror(errno));
    size_t want = (size_t)(st.st_size - (pos > 0 ? pos : 0)) + 1, got = 0;
    if (want > r->bufsize) {
        free(r->buf);
        r->buf = xmalloc(want, "a whole-file buffer");
        r->bufsize = want;
    }
    double t1 = now();
    for (;;) {             /* FileIO.readall: read what is left of the buffer until read returns 0 */
        if (got == want) { /* the file grew: Python grows its buffer; the kernel's is the same size again */
            uint8_t *b = realloc(r->buf, want * 2);
            if (!b)
                die(EXIT_RUNTIME, "out of memory reading %s", path);
            r->buf = b, want *= 2, r->bufsize = want;
        }
        ssize_t n = read(fd, r->buf + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die(EXIT_RUNTIME, "read %s: %s", path, strerror(errno));
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close_sample(fd, path, t0, t1, now(), (int64_t)got, acc);
}

/* MLCommons DLIO 3.x with reader.odirect (npz): reader/reader_factory.py:94-96 NPZReaderODIRECT, whose open
 * (reader/npz_reader_odirect.py:43-48) is NPYReaderODirect.odirect_read (reader/npy_reader_odirect.py:49-69):
 * os.open(path, O_RDONLY | O_DIRECT) (CPython adds O_CLOEXEC), os.path.getsize(path) (a stat of the path), a buffer
 * aligned to 4096 bytes of the size rounded up to 4096, one os.readv(fd, [buffer]) that must return the file's size,
 * os.close. read_type on_demand (reader_handler.py:113-119): one such open per sample, closed after it. */
#define ODIRECT_ALIGN 4096
static void read_odirect(sample_reader_t *r, const char *path, int64_t sample, io_acc_t *acc)
{
    (void)sample;
    double t0 = now();
    /* MUTANT odirect-dropped: this one open without O_DIRECT (its readv then goes through the page cache) */
    int fd = open(path, O_RDONLY | (r->mut_now == MUT_ODIRECT_DROP ? 0 : O_DIRECT) | O_CLOEXEC);
    if (fd < 0)
        die(EXIT_BADINPUT, "cannot open %s with O_DIRECT (reader.odirect): %s", path, strerror(errno));
    struct stat st;
    if (stat(path, &st) != 0)
        die(EXIT_RUNTIME, "stat %s: %s", path, strerror(errno));
    size_t want = ((size_t)st.st_size + ODIRECT_ALIGN - 1) / ODIRECT_ALIGN * ODIRECT_ALIGN;
    if (r->mut_now == MUT_READV_SIZE) /* MUTANT readv-size: one aligned block more asked (the same bytes returned) */
        want += ODIRECT_ALIGN;
    if (want > r->bufsize || ((uintptr_t)r->buf % ODIRECT_ALIGN)) {
        free(r->buf);
        void *b = NULL;
        if (posix_memalign(&b, ODIRECT_ALIGN, want ? want : ODIRECT_ALIGN) != 0)
            die(EXIT_RUNTIME, "out of memory for an O_DIRECT buffer of %zu bytes (%s)", want, path);
        r->buf = b, r->bufsize = want;
    }
    struct iovec iov = {.iov_base = r->buf, .iov_len = want};
    double t1 = now();
    ssize_t n;
    do n = readv(fd, &iov, 1);
    while (n < 0 && errno == EINTR);
    double t2 = now();
    if (n < 0)
        die(EXIT_RUNTIME, "readv %s (O_DIRECT, %zu bytes): %s", path, want, strerror(errno));
    if (n != (ssize_t)st.st_size) /* npy_reader_odirect.py:62-63 raises IOError */
        die(EXIT_RUNTIME, "readv %s (O_DIRECT): %zd bytes, not the file's %lld", path, n, (long long)st.st_size);
    close_sample(fd, path, t0, t1, t2, (int64_t)n, acc);
}

/* MUTANTS read-offset, extra-open, odirect-dropped, readv-size (mutate.h): at the armed reader's 2nd sample read;
 * extra-open opens and closes the file once more here, read-offset shifts the read (read_dataset), odirect-dropped
 * and readv-size change its O_DIRECT open and readv (read_odirect). */
static void mutate_read(sample_reader_t *r, const char *path)
{
    const int m = r->cfg->mutant;
    r->mut_now = MUT_NONE;
    if (!r->mut_armed ||
        (m != MUT_READ_OFFSET && m != MUT_EXTRA_OPEN && m != MUT_ODIRECT_DROP && m != MUT_READV_SIZE) ||
        ++r->mut_reads != 2)
        return;
    r->mut_now = m;
    if (m == MUT_EXTRA_OPEN)
        H5_CHECK(H5Fclose(H5_CHECK(H5Fopen(path, H5F_ACC_RDONLY, r->fapl), path, EXIT_BADINPUT)), path, EXIT_RUNTIME);
}

void sample_reader_read(sample_reader_t *r, int phase, int64_t g, io_acc_t *acc)
{
    const config_t *c = r->cfg;
    int64_t file = g / c->num_samples_per_file, sample = g % c->num_samples_per_file;
    char path[4600];
    layout_path(r->L, phase, file, path, sizeof path);

    void *tr = trace_begin("read_sample");
    trace_int(tr, "file", file);
    trace_int(tr, "sample", sample);
    mutate_read(r, path);
    r->read_sample(r, path, sample, acc);
    trace_end(tr);
    if (c->preprocess_time > 0 || c->preprocess_time_stdev > 0) {
        double t = c->preprocess_time_stdev > 0
                       ? nprand_normal(&r->pre_rng, c->preprocess_time, c->preprocess_time_stdev)
                       : c->preprocess_time;
        acc->pre_s += emulate(t);
    }
}

/* ---------- DLIO 2.0.0's TF reader thread ---------- */
void tf_thread_begin(sample_reader_t *r, int64_t nfiles)
{
    if (nfiles > r->nslots) {
        free(r->slot);
        free(r->ofile);
        free(r->ohid);
        r->slot = xcalloc((size_t)nfiles, sizeof *r->slot, "the TF reader's open-file map");
        r->ofile = xcalloc((size_t)nfiles, sizeof *r->ofile, "the TF reader's open-file map");
        r->ohid = xcalloc((size_t)nfiles, sizeof *r->ohid, "the TF reader's open-file map");
        r->nslots = nfiles;
    }
    for (int64_t i = 0; i < r->nslots; i++) r->slot[i] = -1;
    r->nopen = 0;
    r->processed = 0;
}

static void tf_close(sample_reader_t *r, int64_t pos, io_acc_t *acc)
{
    double t0 = now();
    H5_CHECK(H5Fclose(r->ohid[pos]), "a data file", EXIT_RUNTIME);
    acc->meta_s += now() - t0;
    r->ohid[pos] = H5I_INVALID_HID; /* open_file_map[filename] = None: the key keeps its place */
}

void tf_thread_read(sample_reader_t *r, int phase, int64_t g, io_acc_t *acc)
{
    const config_t *c = r->cfg;
    int64_t file = g / c->num_samples_per_file, sample = g % c->num_samples_per_file;
    if (file < 0 || file >= r->nslots)
        die(EXIT_RUNTIME, "TF reader: file %lld outside the map of %lld files", (long long)file, (long long)r->nslots);
    char path[4600];
    layout_path(r->L, phase, file, path, sizeof path);
    void *tr = trace_begin("read_sample");
    trace_int(tr, "file", file);
    trace_int(tr, "sample", sample);
    mutate_read(r, path);
    int64_t pos = r->slot[file];
    if (pos < 0) {
        pos = r->slot[file] = r->nopen++;
        r->ofile[pos] = file;
        r->ohid[pos] = H5I_INVALID_HID;
    }
    if (r->ohid[pos] == H5I_INVALID_HID) { /* reader_handler.py:90-91 */
        double t0 = now();
        r->ohid[pos] = H5_CHECK(H5Fopen(path, H5F_ACC_RDONLY, r->fapl), path, EXIT_BADINPUT);
        acc->meta_s += now() - t0;
        acc->opens += 1;
    }
    char dname[300];
    layout_records_name(r->L, 0, dname, sizeof dname);
    read_dataset(r, r->ohid[pos], dname, sample, path, acc); /* hdf5_reader.py:47 */
    trace_end(tr);
    if (c->preprocess_time > 0 || c->preprocess_time_stdev > 0) {
        double t = c->preprocess_time_stdev > 0
                       ? nprand_normal(&r->pre_rng, c->preprocess_time, c->preprocess_time_stdev)
                       : c->preprocess_time;
        acc->pre_s += emulate(t);
    }
    if (++r->processed % c->num_samples_per_file == 0) /* reader_handler.py:105-107 */
        tf_close(r, pos, acc);
}

void tf_thread_end(sample_reader_t *r, io_acc_t *acc)
{
    for (int64_t i = 0; i < r->nopen; i++)
        if (r->ohid[i] != H5I_INVALID_HID)
            tf_close(r, i, acc);
    for (int64_t i = 0; i < r->nopen; i++) r->slot[r->ofile[i]] = -1;
    r->nopen = 0;
}

/* ---------- reader processes ---------- */
typedef struct {
    int32_t op; /* 1 = batch, 2 = start(rank), 3 = a TF reader thread's batch */
    int32_t phase;
    int64_t batch;
    int64_t n;
    int64_t flags;  /* op 3: TF_FIRST | TF_LAST */
    int64_t nfiles; /* op 3 with TF_FIRST: the files of the phase */
} req_t;

typedef struct {
    int64_t batch;
    int32_t status; /* 0 ok, else exit code */
    io_acc_t acc;
    char msg[1024];
} rep_t;

static int xfer(int fd, void *buf, size_t n, int writing)
{
    char *p = buf;
    while (n) {
        ssize_t k = writing ? write(fd, p, n) : read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* A reader process's state. Its errors must reach the rank, which ends the job with the message: the process
 * registers worker_report_failure as die()'s hook (util.h's error context), with this as its argument. */
typedef struct {
    int fd;        /* socket to the rank */
    int64_t batch; /* the batch being read (the report names it) */
} worker_t;

/* die() inside a reader process (MPI is not up there): report to the rank before the process exits */
static void worker_report_failure(void *arg, int code, const char *msg)
{
    const worker_t *w = arg;
    rep_t a;
    memset(&a, 0, sizeof a);
    a.batch = w->batch;
    a.status = code;
    snprintf(a.msg, sizeof a.msg, "%s", msg);
    xfer(w->fd, &a, sizeof a, 1);
}

static void worker_main(int fd, const config_t *c, const layout_t *L, int index)
{
    worker_t w = {fd, -1};
    err_ctx()->on_fatal = worker_report_failure;
    err_ctx()->on_fatal_arg = &w;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    req_t q;
    sample_reader_t r;
    int started = 0;
    int64_t *idx = NULL;
    size_t cap = 0;
    while (xfer(fd, &q, sizeof q, 0) == 0) {
        if (q.op == 2) {
            int rank = (int)q.batch;
            err_ctx()->rank = rank;
            void *tr = trace_begin("rank_info");
            trace_int(tr, "rank", rank);
            trace_int(tr, "reader_process", index);
            trace_end(tr);
            sample_reader_init(&r, c, L,
                               (uint32_t)(c->random_seed * 7919u + (uint64_t)rank * 131u + (uint64_t)index + 1));
            r.mut_armed = rank == 0 && index == 0;
            started = 1;
            continue;
        }
        if (!started || q.n < 0)
            _exit(EXIT_RUNTIME);
        if ((size_t)q.n > cap) {
            free(idx);
            idx = malloc((size_t)q.n * sizeof *idx);
            cap = (size_t)q.n;
            if (!idx)
                die(EXIT_RUNTIME, "out of memory for a batch of %lld sample indices", (long long)q.n);
        }
        if (xfer(fd, idx, (size_t)q.n * sizeof *idx, 0))
            break;
        rep_t a;
        memset(&a, 0, sizeof a);
        a.batch = w.batch = q.batch;
        if (q.op == 3 && (q.flags & TF_FIRST))
            tf_thread_begin(&r, q.nfiles);
        for (int64_t i = 0; i < q.n; i++)
            if (q.op == 3)
                tf_thread_read(&r, q.phase, idx[i], &a.acc);
            else
                sample_reader_read(&r, q.phase, idx[i], &a.acc);
        if (q.op == 3 && (q.flags & TF_LAST))
            tf_thread_end(&r, &a.acc);
        if (xfer(fd, &a, sizeof a, 1))
            break;
    }
    free(idx);
    _exit(0);
}

void pool_fork(pool_t *p, const config_t *c, const layout_t *L, int n)
{
    p->n = n;
    p->fd = xcalloc((size_t)p->n, sizeof *p->fd, "the reader process sockets");
    p->pid = xcalloc((size_t)p->n, sizeof *p->pid, "the reader process ids");
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < p->n; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
            die(EXIT_RUNTIME, "socketpair for reader process %d: %s", i, strerror(errno));
        pid_t pid = fork();
        if (pid < 0)
            die(EXIT_RUNTIME, "fork of reader process %d: %s", i, strerror(errno));
        if (pid == 0) {
            close(sv[0]);
            for (int j = 0; j < i; j++) close(p->fd[j]);
            worker_main(sv[1], c, L, i);
        }
        close(sv[1]);
        p->fd[i] = sv[0];
        p->pid[i] = pid;
    }
    signal(SIGPIPE, SIG_IGN);
}

/* A reader process that failed wrote its report, then exited: when the rank notices it is gone (a send fails),
 * the report may still be unread in the socket. End the job with that report (its file and cause) if there is one. */
static _Noreturn void worker_gone(pool_t *p, int w)
{
    rep_t a;
    while (xfer(p->fd[w], &a, sizeof a, 0) == 0)
        if (a.status)
            die(a.status, "reader process %d: %s", w, a.msg);
    die(EXIT_RUNTIME, "reader process %d (pid %d) is gone", w, p->pid[w]);
}

void pool_start(pool_t *p, int rank)
{
    for (int i = 0; i < p->n; i++) {
        req_t q = {2, 0, rank, 0, 0, 0};
        if (xfer(p->fd[i], &q, sizeof q, 1))
            die(EXIT_RUNTIME, "reader process %d (pid %d) is gone", i, p->pid[i]);
    }
}

static void send_req(pool_t *p, int w, req_t q, const int64_t *idx, int64_t n, int64_t skip);

void pool_send(pool_t *p, int w, int phase, int64_t batch, const int64_t *idx, int64_t n, int64_t skip)
{
    send_req(p, w, (req_t){1, phase, batch, n, 0, 0}, idx, n, skip);
}

void pool_send_tf(pool_t *p, int w, int phase, int64_t batch, const int64_t *idx, int64_t n, int64_t skip, int flags,
                  int64_t nfiles)
{
    send_req(p, w, (req_t){3, phase, batch, n, flags, nfiles}, idx, n, skip);
}

static void send_req(pool_t *p, int w, req_t q, const int64_t *idx, int64_t n, int64_t skip)
{
    int64_t cut = skip >= 0 && skip < n ? skip : n; /* idx[cut] is not sent */
    q.n = cut < n ? n - 1 : n;
    if (xfer(p->fd[w], &q, sizeof q, 1) || xfer(p->fd[w], (void *)idx, (size_t)cut * sizeof *idx, 1) ||
        (cut + 1 < n && xfer(p->fd[w], (void *)(idx + cut + 1), (size_t)(n - cut - 1) * sizeof *idx, 1)))
        worker_gone(p, w);
}

void pool_recv(pool_t *p, int w, int64_t batch, io_acc_t *acc)
{
    rep_t a;
    if (xfer(p->fd[w], &a, sizeof a, 0)) {
        int st = 0;
        waitpid(p->pid[w], &st, WNOHANG);
        die(EXIT_RUNTIME, "reader process %d (pid %d) died while reading batch %lld%s", w, p->pid[w], (long long)batch,
            WIFSIGNALED(st) ? " (killed by a signal)" : "");
    }
    if (a.status)
        die(a.status, "reader process %d: %s", w, a.msg);
    if (a.batch != batch)
        die(EXIT_RUNTIME, "reader process %d answered batch %lld, expected %lld", w, (long long)a.batch,
            (long long)batch);
    io_acc_add(acc, &a.acc);
}

/* A surplus reader process has read nothing: closing its socket ends it (worker_main's first read fails). */
void pool_trim(pool_t *p, int n)
{
    for (int i = n; i < p->n; i++) close(p->fd[i]);
    for (int i = n; i < p->n; i++) waitpid(p->pid[i], NULL, 0);
    p->n = n;
}

void pool_stop(pool_t *p)
{
    for (int i = 0; i < p->n; i++) close(p->fd[i]);
    for (int i = 0; i < p->n; i++) waitpid(p->pid[i], NULL, 0);
    free(p->fd);
    free(p->pid);
    p->n = 0;
}
