/* h5dlio-limits: the two limits the kernel's per-sample open rate is measured against (make bench, section scale;
 * docs/performance.md). Over a list of files, one line each, every rank takes the files i with i % ranks == rank,
 * in order, and per file:
 *   --mode posix  open(2), read(2) the whole file in 1 MiB calls, close(2): the file system's own rate;
 *   --mode hdf5   H5Fopen (sec2, h5py's libver bounds and alignment), H5Dopen of --dataset, H5Dread of the whole dataset, H5Dclose, H5Fclose: what
 *                 HDF5 itself costs per file (its metadata reads), which DLIO pays too, with nothing around it.
 * Rank 0 prints one JSON object: files, bytes, wall (first barrier to last), and the ranks' summed open, read and
 * close times. Bad input exits 2 naming it; an I/O failure exits 1 naming the file and rank. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHUNK = 1 << 20 };

typedef struct {
    double open_s, read_s, close_s;
    long long files, bytes;
} tally_t;

static int rank_;
static hid_t
    fapl_; /* what h5py.File() sets, as the kernel and DLIO open: libver (earliest, latest), alignment (1, 1) */

static void die(int code, const char *what, const char *name)
{
    fprintf(stderr, "h5dlio-limits: rank %d: %s: %s\n", rank_, what, name);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

static void posix_one(const char *path, char *buf, tally_t *t)
{
    double t0 = MPI_Wtime();
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die(1, strerror(errno), path);
    double t1 = MPI_Wtime();
    ssize_t n;
    while ((n = read(fd, buf, CHUNK)) > 0) t->bytes += n;
    if (n < 0)
        die(1, strerror(errno), path);
    double t2 = MPI_Wtime();
    close(fd);
    double t3 = MPI_Wtime();
    t->open_s += t1 - t0, t->read_s += t2 - t1, t->close_s += t3 - t2;
}

static void hdf5_one(const char *path, const char *dset, char **buf, size_t *cap, tally_t *t)
{
    double t0 = MPI_Wtime();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl_);
    if (f < 0)
        die(1, "H5Fopen failed", path);
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    if (d < 0)
        die(1, "H5Dopen failed (no such dataset?)", path);
    hid_t type = H5Dget_type(d);
    hid_t space = H5Dget_space(d);
    size_t bytes = H5Tget_size(type) * (size_t)H5Sget_simple_extent_npoints(space);
    double t1 = MPI_Wtime();
    if (bytes > *cap) {
        free(*buf);
        *buf = malloc(bytes), *cap = bytes;
        if (!*buf)
            die(1, "out of memory for a dataset of", path);
    }
    if (H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, *buf) < 0)
        die(1, "H5Dread failed", path);
    double t2 = MPI_Wtime();
    H5Sclose(space), H5Tclose(type), H5Dclose(d), H5Fclose(f);
    double t3 = MPI_Wtime();
    t->bytes += (long long)bytes;
    t->open_s += t1 - t0, t->read_s += t2 - t1, t->close_s += t3 - t2;
}

static void usage(void)
{
    fprintf(stderr, "usage: h5dlio-limits --mode posix|hdf5 --list FILE [--dataset NAME (hdf5; default records)]\n");
}

static void run_list(FILE *in, int hdf5, const char *dset, int ranks, tally_t *t)
{
    char path[4096], *buf = malloc(CHUNK), *hbuf = NULL;
    size_t cap = 0;
    if (!buf)
        die(1, "out of memory", "read buffer");
    for (long long i = 0; fgets(path, sizeof path, in); i++) {
        path[strcspn(path, "\n")] = 0;
        if (!path[0] || i % ranks != rank_)
            continue;
        if (hdf5)
            hdf5_one(path, dset, &hbuf, &cap, t);
        else
            posix_one(path, buf, t);
        t->files++;
    }
    free(buf), free(hbuf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures are reported by die(), naming the file */
    const char *mode = NULL, *list = NULL, *dset = "records";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mode"))
            mode = argv[i + 1];
        else if (!strcmp(argv[i], "--list"))
            list = argv[i + 1];
        else if (!strcmp(argv[i], "--dataset"))
            dset = argv[i + 1];
        else
            usage(), die(2, "unknown option", argv[i]);
    }
    if (argc % 2 == 0)
        usage(), die(2, "option without a value", argv[argc - 1]);
    if (!mode || (strcmp(mode, "posix") && strcmp(mode, "hdf5")))
        usage(), die(2, "--mode must be posix or hdf5", mode ? mode : "(unset)");
    if (!list)
        usage(), die(2, "--list is required", "(unset)");
    fapl_ = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl_, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
    H5Pset_alignment(fapl_, 1, 1);
    FILE *in = fopen(list, "r");
    if (!in)
        die(2, strerror(errno), list);
    tally_t t = {0}, sum;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    run_list(in, !strcmp(mode, "hdf5"), dset, ranks, &t);
    MPI_Barrier(MPI_COMM_WORLD);
    double wall = MPI_Wtime() - t0;
    fclose(in);
    MPI_Reduce(&t.open_s, &sum.open_s, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t.files, &sum.files, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank_ == 0)
        printf(
            "{\"mode\": \"%s\", \"ranks\": %d, \"files\": %lld, \"bytes\": %lld, \"wall_s\": %.9f, \"open_s\": %.9f, "
            "\"read_s\": %.9f, \"close_s\": %.9f}\n",
            mode, ranks, sum.files, sum.bytes, wall, sum.open_s, sum.read_s, sum.close_s);
    MPI_Finalize();
    return 0;
}
