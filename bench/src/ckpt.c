/* DLIO's checkpoints: 2.0.0's (checkpointing/base_checkpointing.py, pytorch_checkpointing.py; main.py:274-302),
 * 2.0.0-52's, MLPerf Storage v2.0's DLIO (392621b: transformer-sized states, one folder per checkpoint, the
 * checkpoint-only workflow writing N then reading N) and 3.x's (f6796ed: the states and files of 2.0.0-52, each file
 * streamed as its raw byte count by SimpleStreamingCheckpointing, or, where mlpstorage_py imports as in MLPerf
 * Storage v3.0, by mlpstorage's StreamingCheckpointing). The entry's checkpoint_rules and checkpoint_stream choose. */
#define _GNU_SOURCE
#include "ckpt.h"
#include "mutate.h"
#include "trace.h"
#include "util.h"
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <time.h>
#include <mpi.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* DLIO 3.x pytorch_checkpointing.py:130-131 chunk_size=32 MiB (simple_streaming_checkpointing.py:280: max(1 MiB, it)) */
#define STREAM_CHUNK ((size_t)32 << 20)
/* MLPerf v3.0's stream (mlpstorage's StreamingCheckpointing): pytorch_checkpointing.py:136 num_parallel_readers=4;
 * StreamingCheckpointing.__init__ read_chunk_size = chunk_size * 4 (not given by DLIO) */
#define MLPS_READERS 4
#define MLPS_READ_CHUNK (4 * STREAM_CHUNK)

/* optimization_groups given in the config (both rule sets, base_checkpointing.py:43-50 at 2.0.0, :141-149 at
 * 2.0.0-52): {str(i): {"a": T(g), "b": T(g)} for g > 0, "combined": T(sum of g > 0)}, int8 */
static void given_optimizer_groups(ckpt_t *k)
{
    const config_t *c = k->cfg;
    int64_t total = 0;
    for (int i = 0; i < c->n_optimization_groups; i++) {
        int64_t g = c->optimization_groups[i];
        if (g <= 0)
            continue;
        char key[24];
        snprintf(key, sizeof key, "%d", i);
        int d = ts_dict(&k->optimizer, 0, key, 0);
        ts_tensor(&k->optimizer, d, "a", 1, g);
        ts_tensor(&k->optimizer, d, "b", 1, g);
        total += g;
    }
    ts_tensor(&k->optimizer, 0, "combined", 1, total);
}

/* base_checkpointing.py:35-56 (2.0.0): the checkpointing rank builds
 *   model_state        {"a": T(model_size)}                                    if model_size > 0
 *   optimization_state {str(i): {"a": T(g), "b": T(g)} for g > 0, "combined": T(sum of g > 0)}  if groups given
 *   layer_state        {str(i): T(p) for p > 0}                                  if layer_parameters given
 * T(n): torch.randint(high=1, size=(n,), dtype=torch.int8) (pytorch_checkpointing.py:134-135): n zero bytes. */
static void build_states(ckpt_t *k)
{
    const config_t *c = k->cfg;
    ts_init(&k->model), ts_init(&k->optimizer), ts_init(&k->layer);
    if (c->model_size > 0)
        ts_tensor(&k->model, 0, "a", 1, c->model_size);
    if (c->n_optimization_groups > 0) {
        given_optimizer_groups(k);
    }
    for (int i = 0; i < c->n_layer_parameters; i++)
        if (c->layer_parameters[i] > 0) {
            char key[24];
            snprintf(key, sizeof key, "%d", i);
            ts_tensor(&k->layer, 0, key, 0, c->layer_parameters[i]);
        }
}

/* ---------- DLIO 2.0.0-52's rules (392621b checkpointing/base_checkpointing.py; line numbers of that file) ---------- */

/* :284-302 get_num_parameters */
static int64_t num_parameters(const config_t *c)
{
    if (c->num_layers <= 0)
        return 0;
    int64_t h = c->hidden_size, dim_kv = h / c->num_attention_heads * c->num_kv_heads, emb = c->vocab_size * h;
    int64_t per_layer = h + h * (h + 2 * dim_kv) + h * h + h + c->ffn_hidden_size * 2 * h + c->ffn_hidden_size * h;
    return emb + per_layer * c->num_layers + h + emb;
}

/* :304-329 get_layer_parameters (computed, layer_parameters not given): the tensor sizes of layer `l` */
static int layer_parameters(const ckpt_t *k, int64_t l, int64_t out[6])
{
    const config_t *c = k->cfg;
    int64_t h = c->hidden_size, tp = c->tensor_parallelism, dim_kv = h / c->num_attention_heads * c->num_kv_heads;
    int64_t shard = c->zero_stage < 3 ? 1 : k->dp, L = c->num_layers, f = c->ffn_hidden_size;
    if (l == 0 || l == L + 1) /* embedding, lm_head */
        return out[0] = h * c->vocab_size / tp / shard, 1;
    if (l == L + 2) /* the final norm's weight */
        return out[0] = h / shard, 1;
    out[0] = h / shard, out[1] = h * (h + 2 * dim_kv) / tp / shard, out[2] = h * h / tp / shard;
    out[3] = h / shard, out[4] = h * 2 * f / tp / shard, out[5] = h * f / tp / shard;
    return 6;
}

/* :360-382 get_layer_index (layer_parameters not predefined): this pipeline stage's layers, 0 and L+1, L+2 included
 * at the ends */
static void layer_index(ckpt_t *k)
{
    const config_t *c = k->cfg;
    int64_t pr = k->pp_rank, pp = c->pipeline_parallelism, per = c->num_layers / pp, rem = c->num_layers % pp;
    if (pr < rem)
        k->start_layer = pr * (per + 1) + 1, k->end_layer = k->start_layer + per;
    else
        k->start_layer = rem * (per + 1) + (pr - rem) * per + 1, k->end_layer = k->start_layer + per - 1;
    if (pr == pp - 1)
        k->end_layer = c->num_layers + 2;
    if (pr == 0)
        k->start_layer = 0;
}

/* the tensors of layer l (:330-338 get_layer_state: str(index) keys, the model datatype) under dict d of s */
static void add_layer(const ckpt_t *k, ts_state_t *s, int d, int64_t l)
{
    int64_t p[6];
    int n = layer_parameters(k, l, p), dt = ts_dtype_parse(k->cfg->model_datatype);
    for (int i = 0; i < n; i++)
        if (p[i] > 0) {
            char key[24];
            snprintf(key, sizeof key, "%d", i);
            ts_tensor_dt(s, d, key, 0, p[i], dt);
        }
}

/* :56-160: ranks, then the states of the rank that checkpoints */
static void build_states2(ckpt_t *k)
{
    const config_t *c = k->cfg;
    k->mp = c->pipeline_parallelism * c->tensor_parallelism;
    k->dp = c->data_parallelism < 0 ? k->nranks / k->mp : c->data_parallelism; /* :58-63 (subset: as given) */
    k->pp_rank = (k->rank / c->tensor_parallelism) % c->pipeline_parallelism;  /* :64-67 */
    k->dp_rank = k->rank / k->mp, k->mp_rank = k->rank % k->mp;
    /* :93-97: ZeRO 0: the ranks past the first model-parallel group checkpoint nothing */
    k->writer = c->zero_stage != 0 || k->rank < k->mp;
    /* pytorch_checkpointing.py:64-76: torch.rand / torch.randint, or torch.ones */
    k->fill = c->checkpoint_randomize_tensor ? TS_RANDOM : TS_ONES;
    ts_init(&k->model), ts_init(&k->optimizer), ts_init(&k->layer);
    if (!k->writer)
        return;
    layer_index(k);
    /* :120-134: the layer states, unless ZeRO 1 on a rank of data-parallel rank > 0 */
    if (c->num_layers > 0 && !(c->zero_stage == 1 && k->dp_rank != 0)) {
        int64_t nl = k->end_layer - k->start_layer + 1;
        k->layers = xcalloc((size_t)nl, sizeof *k->layers, "the checkpoint layers");
        for (int64_t l = k->start_layer; l <= k->end_layer; l++) {
            char key[24];
            snprintf(key, sizeof key, "%lld", (long long)l);
            add_layer(k, &k->layer, ts_dict(&k->layer, 0, key, 0), l);
            ts_init(&k->layers[l - k->start_layer]);
            add_layer(k, &k->layers[l - k->start_layer], 0, l);
        }
    }
    /* :136-154, :340-358 get_optimization_groups */
    if (c->n_optimization_groups > 0) { /* given: {'a', 'b'} int8 per group and 'combined', as 2.0.0 */
        given_optimizer_groups(k);
    } else if (c->num_layers > 0) {
        int64_t np = num_parameters(c) / (c->zero_stage > 0 ? k->dp * k->mp : k->mp), h5 = c->hidden_size * 5;
        int64_t g[6] = {np, h5, np, h5, np, h5};
        int dt = ts_dtype_parse(c->optimizer_datatype);
        for (int i = 0; i < 6 && np > 0; i++)
            if (g[i] > 0) {
                char key[24];
                snprintf(key, sizeof key, "%d", i);
                ts_tensor_dt(&k->optimizer, 0, key, 0, g[i], dt);
            }
    }
    /* :158-160: a model state for models that are not transformers (int8, get_tensor's default) */
    if (c->model_size > 0 && strcmp(c->model_type, "transformer"))
        ts_tensor(&k->model, 0, "a", 1, c->model_size);
}

void ckpt_init(ckpt_t *k, const config_t *c, int rank, int nranks)
{
    memset(k, 0, sizeof *k);
    k->cfg = c, k->rank = rank, k->nranks = nranks;
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    k->rules = e ? e->checkpoint_rules : 1;
    k->mlps = e && e->checkpoint_stream && !strcmp(e->checkpoint_stream, "mlpstorage_streaming");
    k->rng = 0x6a09e667f3bcc909ULL ^ ((uint64_t)rank << 32); /* mlps_save's random bytes: one stream per rank */
    k->hdf5 = !strcmp(c->checkpoint_format, "hdf5");
    if (k->hdf5)
        h5ck_init(&k->h5, c, rank, nranks);
    if (k->rules >= 2) { /* 3.x: base_checkpointing.py:47-179 (f6796ed), the same ranks and states */
        if (mkdir_p(c->checkpoint_folder) < 0) /* :70 create_namespace(exist_ok=True), every rank */
            die(EXIT_BADINPUT, "key 'checkpoint-folder': cannot create '%s': %s", c->checkpoint_folder,
                strerror(errno));
        build_states2(k);
        return;
    }
    /* base_checkpointing.py:34-37: rank_zero -> rank 0 writes; all_ranks -> every rank */
    k->writer = c->checkpoint_type == CKPT_ALL_RANKS || rank == 0;
    if (mkdir_p(c->checkpoint_folder) < 0) /* storage/file_storage.py create_namespace: makedirs(exist_ok=True) */
        die(EXIT_BADINPUT, "key 'checkpoint-folder': cannot create '%s': %s", c->checkpoint_folder, strerror(errno));
    if (k->writer)
        build_states(k);
}

void ckpt_free(ckpt_t *k)
{
    if (k->writer || k->rules >= 2)
        ts_free(&k->model), ts_free(&k->optimizer), ts_free(&k->layer);
    if (k->zeros)
        munmap(k->zeros, STREAM_CHUNK);
    free(k->rbuf), free(k->pybuf), free(k->rnd);
    if (k->rread)
        munmap(k->rread, MLPS_READ_CHUNK);
    if (k->layers)
        for (int64_t l = 0; l <= k->end_layer - k->start_layer; l++) ts_free(&k->layers[l]);
    free(k->layers);
    free(k->ev);
    if (k->hdf5)
        h5ck_free(&k->h5);
    memset(k, 0, sizeof *k);
}

int ckpt_after_step(const config_t *c, int64_t step)
{
    /* main.py:274-283: next_checkpoint_step starts at steps_between_checkpoints each epoch (main.py:335) and grows
     * by it after each checkpoint: checkpoints after steps s, 2s, ... (s > 0; s = 0 never matches a step >= 1) */
    return c->checkpoint && c->steps_between_checkpoints > 0 && step % c->steps_between_checkpoints == 0;
}

int ckpt_after_epoch(const config_t *c, int64_t epoch)
{
    /* main.py:296-301, 327: next_checkpoint_epoch starts at checkpoint_after_epoch and grows by
     * epochs_between_checkpoints after each checkpoint (0 or less: it never moves, one checkpoint) */
    int64_t a = c->checkpoint_after_epoch, b = c->epochs_between_checkpoints;
    return c->checkpoint && c->steps_between_checkpoints < 0 &&
           (epoch == a || (b > 0 && epoch > a && (epoch - a) % b == 0));
}

/* A checkpoint file is written as <name>.partial.<pid> (never over another run's checkpoint: exit 2), opened
 * with `mode`; the partial name is removed (die() and the signal handlers) if the kernel dies before close_partial
 * renames it */
static int open_partial(ckpt_t *k, const char *name, char *tmp, size_t len, mode_t mode)
{
    snprintf(tmp, len, "%s.partial.%d", name, (int)getpid());
    if (!k->cfg->overwrite && access(name, F_OK) == 0)
        die(EXIT_BADINPUT,
            "key 'checkpoint-folder': %s exists (another run's checkpoint?): remove it, use another folder, or set "
            "overwrite=true to replace it",
            name);
    err_ctx()->partial = tmp;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        die(EXIT_RUNTIME, "checkpoint %s: open: %s", tmp, strerror(errno));
    return fd;
}

/* The file's fsync when `sync` (both 3.x streams fsync every file; 2.0's torch.save with checkpoint-fsync), close,
 * the rename to its name. MUTANTS ckpt-fsync (a second fsync), fsync-dropped (no fsync, though counted: as a no-op
 * fsync preloaded ahead of the C library would), ckpt-stray (a stray file in the folder): `m`, rank 0's first
 * checkpoint file. */
static void close_partial(ckpt_t *k, int fd, const char *tmp, const char *name, int m, int sync, ckpt_event_t *ev)
{
    if (sync) {
        if (m != MUT_FSYNC_DROP && fsync(fd) != 0)
            die(EXIT_RUNTIME, "checkpoint %s: fsync: %s", tmp, strerror(errno));
        ev->fsyncs++;
    }
    if (m == MUT_CKPT_FSYNC && fsync(fd) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: fsync: %s", tmp, strerror(errno));
    if (close(fd) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: close: %s", tmp, strerror(errno));
    if (rename(tmp, name) != 0)
        die(EXIT_RUNTIME, "checkpoint: rename %s -> %s: %s", tmp, name, strerror(errno));
    err_ctx()->partial = NULL;
    if (m == MUT_CKPT_STRAY) {
        char stray[4600];
        snprintf(stray, sizeof stray, "%s/h5dlio-mutant.stray", k->cfg->checkpoint_folder);
        if (write_atomic(stray, "x", 1) != 0)
            die(EXIT_RUNTIME, "%s: %s", stray, strerror(errno));
    }
    k->mutated |= m != MUT_NONE;
}

/* pytorch_checkpointing.py:137-141: open(name, "wb") and torch.save(state, f). Written under <name>.partial.<pid>
 * and renamed when whole, so a checkpoint under its final name is always complete (a failure removes the partial
 * file; a killed rank leaves it under the partial name only). */
static void save_file(ckpt_t *k, const ts_state_t *s, const char *name, ckpt_event_t *ev)
{
    char tmp[4700];
    void *tr = trace_begin("save_state");
    int fd = open_partial(k, name, tmp, sizeof tmp, 0666);
    struct stat st;
    /* CPython's open(): the buffer is st_blksize when it is > 1, else io.DEFAULT_BUFFER_SIZE (8192) */
    size_t bufsize = fstat(fd, &st) == 0 && st.st_blksize > 1 ? (size_t)st.st_blksize : 8192;
    (void)lseek(fd, 0, SEEK_CUR); /* BufferedWriter asks the position at open, as Python's open does */
    ts_io_t io = {0};
    /* MUTANTS ckpt-* (mutate.h): rank 0's first checkpoint file */
    const int m = k->rank == 0 && !k->mutated ? k->cfg->mutant : MUT_NONE;
    io.mut_split = m == MUT_CKPT_SPLIT, io.mut_short = m == MUT_CKPT_SHORT;
    if ((k->rules == 2 ? ts_save_fill(s, fd, bufsize, k->fill, &io) : ts_save(s, fd, bufsize, &io)) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: write failed after %lld of %lld bytes: %s", tmp, (long long)io.bytes,
            (long long)ts_file_size(s), strerror(errno));
    /* pytorch_checkpointing.py:136-137 (392621b): os.fsync(f.fileno()) after torch.save, before the close; DLIO
     * 2.0.0-52 never gets there (its checkpoint.fsync lands in another attribute): the kernel key checkpoint-fsync.
     * fsync-dropped is a 3.x stream's mutant: not applied here. */
    close_partial(k, fd, tmp, name, m == MUT_FSYNC_DROP ? MUT_NONE : m, k->rules == 2 && k->cfg->checkpoint_fsync, ev);
    k->mutated |= m != MUT_NONE;
    trace_end(tr);
    ev->files++;
    ev->bytes += io.bytes;
    ev->writes += io.writes;
}

/* ---------- DLIO 3.x's (f6796ed) file I/O: pytorch_checkpointing.py:231-253 save_state/load_state stream
 * _compute_state_bytes(state) (:40-50, the raw bytes of every tensor: elements x datatype size, no container) through
 * _get_streaming() (:90-138): mlpstorage_py's StreamingCheckpointing when importable, else (the replay here)
 * simple_streaming_checkpointing.py's SimpleStreamingCheckpointing(chunk_size=32 MiB) (:279-282). ---------- */

static int64_t raw_bytes(const ts_state_t *s) /* pytorch_checkpointing.py:40-50 _compute_state_bytes */
{
    int64_t b = 0;
    for (int i = 0; i < s->nn; i++)
        if (!s->n[i].is_dict)
            b += s->n[i].numel * ts_dtype_size(s->n[i].dtype);
    return b;
}

/* one write(2) loop as CPython's BufferedWriter makes it: a partial write is continued by another call */
static int write_full(int fd, const uint8_t *p, size_t n, ts_io_t *io)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        io->writes++, io->bytes += w, p += w, n -= (size_t)w;
    }
    return 0;
}

/* simple_streaming_checkpointing.py:291-306 save: makedirs(parent), open(path, "wb"), write zero chunks of
 * min(remaining, 32 MiB) (a chunk above the buffer goes to write(2) whole, the last one below it at flush: one call
 * each), flush, os.fsync always (the checkpoint.fsync key is not consulted: it lands in args.checkpoint_sync,
 * utils/config.py:1767-1768), close. The zeros come from one read-only mapping of one chunk. */
static void stream_save(ckpt_t *k, const ts_state_t *s, const char *name, ckpt_event_t *ev)
{
    int64_t total = raw_bytes(s);
    if (total <= 0) /* pytorch_checkpointing.py:239-241: a warning, no file */
        return;
    char tmp[4700];
    if (!k->zeros) {
        k->zeros = mmap(NULL, STREAM_CHUNK, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (k->zeros == MAP_FAILED)
            k->zeros = NULL,
            die(EXIT_RUNTIME, "checkpoint: cannot map %zu bytes of zeros: %s", STREAM_CHUNK, strerror(errno));
    }
    void *tr = trace_begin("save_state");
    int fd = open_partial(k, name, tmp, sizeof tmp, 0666);
    struct stat st; /* CPython's open(): fstat (the buffer size), the position asked */
    (void)fstat(fd, &st);
    (void)lseek(fd, 0, SEEK_CUR);
    /* MUTANTS ckpt-* (mutate.h): rank 0's first checkpoint file */
    const int m = k->rank == 0 && !k->mutated ? k->cfg->mutant : MUT_NONE;
    ts_io_t io = {0};
    int64_t left = m == MUT_CKPT_SHORT ? total - 1 : total;
    for (int first = 1; left > 0; first = 0) {
        size_t n = left < (int64_t)STREAM_CHUNK ? (size_t)left : STREAM_CHUNK;
        size_t cut = first && m == MUT_CKPT_SPLIT && n > 1 ? n / 2 : 0; /* MUTANT ckpt-split: two calls */
        if ((cut && write_full(fd, k->zeros, cut, &io)) || write_full(fd, k->zeros + cut, n - cut, &io))
            die(EXIT_RUNTIME, "checkpoint %s: write failed after %lld of %lld bytes: %s", tmp, (long long)io.bytes,
                (long long)total, strerror(errno));
        left -= (int64_t)n;
    }
    close_partial(k, fd, tmp, name, m, 1, ev); /* simple_streaming_checkpointing.py:305-306: fsync, close */
    trace_end(tr);
    ev->files++, ev->bytes += io.bytes, ev->writes += io.writes;
}

static ssize_t read_once(int fd, void *p, size_t n, ts_io_t *io)
{
    ssize_t r;
    while ((r = read(fd, p, n)) < 0 && errno == EINTR)
        ;
    if (r >= 0)
        io->reads++, io->rbytes += r;
    return r;
}

/* f.read(n) on CPython 3.12's BufferedReader (Modules/_io/bufferedio.c _bufferedreader_read_generic): what the buffer
 * holds (*avail bytes) first; then read(2) straight into the result in whole buffers (n rounded down to a multiple of
 * the buffer size); then, for the rest, buffer fills (read(2) of buffer-size minus what the buffer holds) until n is
 * met, the surplus kept for the next call. Returns the bytes delivered (fewer: end of file), -1 on error. */
static int64_t py_read(ckpt_t *k, int fd, int64_t n, int64_t *avail, ts_io_t *io)
{
    if (n <= *avail)
        return *avail -= n, n;
    int64_t got = *avail, rem = n - *avail, bs = (int64_t)k->pybuf_len;
    *avail = 0;
    while (rem > 0) {
        int64_t r = (bs & (bs - 1)) == 0 ? rem & ~(bs - 1) : bs * (rem / bs);
        if (r == 0)
            break;
        ssize_t g = read_once(fd, k->rbuf, (size_t)r, io);
        if (g <= 0)
            return g < 0 ? -1 : got;
        rem -= g, got += g;
    }
    int64_t pos = 0, end = 0;
    while (rem > 0 && end < bs) {
        ssize_t g = read_once(fd, k->pybuf + end, (size_t)(bs - end), io);
        if (g <= 0)
            return g < 0 ? -1 : got;
        end += g;
        int64_t use = end - pos < rem ? end - pos : rem;
        pos += use, got += use, rem -= use;
    }
    *avail = end - pos;
    return got;
}

/* simple_streaming_checkpointing.py:308-322 load: open(path, "rb"), f.read(min(remaining, 32 MiB)) until the state's
 * byte count is read (an empty read: IOError "ended early"); the data is dropped */
static void stream_load(ckpt_t *k, const ts_state_t *s, const char *name, ckpt_event_t *ev)
{
    int64_t total = raw_bytes(s);
    if (total <= 0) /* pytorch_checkpointing.py:248-251 */
        return;
    void *tr = trace_begin("load_state");
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die(EXIT_RUNTIME, "checkpoint %s: open: %s", name, strerror(errno));
    struct stat st; /* CPython's open(): fstat (buffer size st_blksize when > 1, else 8192), the position asked */
    if (fstat(fd, &st) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: fstat: %s", name, strerror(errno));
    (void)lseek(fd, 0, SEEK_CUR);
    size_t bs = st.st_blksize > 1 ? (size_t)st.st_blksize : 8192;
    if (!k->rbuf)
        k->rbuf = xcalloc(1, STREAM_CHUNK, "the checkpoint read chunk");
    if (k->pybuf_len != bs)
        free(k->pybuf), k->pybuf = xcalloc(1, bs, "the checkpoint read buffer"), k->pybuf_len = bs;
    ts_io_t io = {0};
    int64_t left = total, avail = 0;
    while (left > 0) {
        int64_t n = left < (int64_t)STREAM_CHUNK ? left : (int64_t)STREAM_CHUNK, g = py_read(k, fd, n, &avail, &io);
        if (g < 0)
            die(EXIT_RUNTIME, "checkpoint %s: read failed after %lld bytes: %s", name, (long long)io.rbytes,
                strerror(errno));
        if (g == 0)
            die(EXIT_RUNTIME,
                "checkpoint %s: the file ended early: %lld of the model's %lld bytes left to read "
                "(simple_streaming_checkpointing.py:317-321 raises IOError)",
                name, (long long)left, (long long)total);
        left -= g;
    }
    if (close(fd) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: close: %s", name, strerror(errno));
    trace_end(tr);
    ev->files++, ev->bytes += io.rbytes, ev->writes += io.reads;
}

/* ---------- MLPerf Storage v3.0's stream: mlcommons/storage mlpstorage_py/checkpointing/streaming_checkpoint.py
 * (3e5a631) StreamingCheckpointing, which DLIO 3.x's _get_streaming() builds when mlpstorage_py imports
 * (pytorch_checkpointing.py:114-137: chunk_size 32 MiB, num_buffers 4, use_dgen, backend 'file', fadvise_mode
 * 'dontneed', num_parallel_readers 4; read_chunk_size left at its default, 4 x chunk_size). ---------- */

/* n random bytes into k->rnd (splitmix64, continued across chunks and files: never a repeated chunk) */
static void random_fill(ckpt_t *k, size_t n)
{
    uint64_t x = k->rng, *p = (uint64_t *)k->rnd;
    for (size_t i = 0; i < (n + 7) / 8; i++) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        p[i] = z ^ (z >> 31);
    }
    k->rng = x;
}

/* StreamingCheckpointing.save as its writer process (multiprocessing forkserver) makes the calls, through
 * storage_writers/file_writer.py FileStorageWriter: os.open(path, O_WRONLY|O_CREAT|O_TRUNC, 0o644) (the folder made
 * with makedirs(exist_ok)); per chunk of min(remaining, 32 MiB) (_run_producer) one os.write of it (write_chunk) and
 * posix_fadvise(its offset, its length, DONTNEED); close(): os.fsync, os.close. DLIO's bytes are dgen-py's
 * (dedup_ratio 1, compress_ratio 1: random, never repeated); the kernel's are its own random bytes, fresh for every
 * chunk, from one 32 MiB buffer: the same sizes and calls, not the same bytes. One process makes them here. */
static void mlps_save(ckpt_t *k, const ts_state_t *s, const char *name, ckpt_event_t *ev)
{
    int64_t total = raw_bytes(s);
    if (total <= 0) /* pytorch_checkpointing.py:239-241: a warning, no file */
        return;
    if (!k->rnd)
        k->rnd = xmalloc(STREAM_CHUNK, "the checkpoint's random chunk");
    void *tr = trace_begin("save_state");
    char tmp[4700];
    int fd = open_partial(k, name, tmp, sizeof tmp, 0644);
    const int m = k->rank == 0 && !k->mutated ? k->cfg->mutant : MUT_NONE; /* MUTANTS ckpt-* (mutate.h) */
    ts_io_t io = {0};
    int64_t left = m == MUT_CKPT_SHORT ? total - 1 : total;
    for (int first = 1; left > 0; first = 0) {
        size_t n = left < (int64_t)STREAM_CHUNK ? (size_t)left : STREAM_CHUNK;
        size_t cut = first && m == MUT_CKPT_SPLIT && n > 1 ? n / 2 : 0; /* MUTANT ckpt-split: two calls */
        off_t at = (off_t)io.bytes;
        random_fill(k, n);
        if ((cut && write_full(fd, k->rnd, cut, &io)) || write_full(fd, k->rnd + cut, n - cut, &io))
            die(EXIT_RUNTIME, "checkpoint %s: write failed after %lld of %lld bytes: %s", tmp, (long long)io.bytes,
                (long long)total, strerror(errno));
        if (m != MUT_FADVISE_DROP) /* MUTANT fadvise-dropped: none of the file's DONTNEED calls */
            (void)posix_fadvise(fd, at, (off_t)n, POSIX_FADV_DONTNEED); /* errors ignored, as there */
        left -= (int64_t)n;
    }
    close_partial(k, fd, tmp, name, m, 1, ev);
    trace_end(tr);
    ev->files++, ev->bytes += io.bytes, ev->writes += io.writes;
}

/* One reader's block [start, end) of a checkpoint file, read by one thread */
typedef struct {
    int fd, err;
    int64_t start, end, reads, bytes, at; /* at: the offset of a failed or empty read (err 0: the file ended) */
    uint8_t *buf;
    pthread_t th;
} mlps_block_t;

/* StreamingCheckpointing.load's _read_block (no stream_block on FileStorageReader): os.pread(fd, min(128 MiB,
 * left), off) (read_chunk, storage_readers/file_reader.py) and posix_fadvise(off, got, DONTNEED) until the block is
 * read; 0 bytes raises RuntimeError there, stops here */
static void *mlps_read_block(void *arg)
{
    mlps_block_t *b = arg;
    for (int64_t off = b->start; off < b->end;) {
        size_t n = b->end - off < (int64_t)MLPS_READ_CHUNK ? (size_t)(b->end - off) : MLPS_READ_CHUNK;
        ssize_t r;
        while ((r = pread(b->fd, b->buf, n, (off_t)off)) < 0 && errno == EINTR)
            ;
        if (r <= 0) {
            b->err = r < 0 ? errno : 0, b->at = off;
            return NULL;
        }
        b->reads++, b->bytes += r;
        (void)posix_fadvise(b->fd, (off_t)off, (off_t)r, POSIX_FADV_DONTNEED);
        off += r;
    }
    b->at = -1;
    return NULL;
}

/* StreamingCheckpointing.load: the file cut into blocks of ceil(size / 4) bytes (at most 4); one FileStorageReader
 * per block made first (os.open O_RDONLY, posix_fadvise(0, 0, RANDOM)), then one thread per block
 * (ThreadPoolExecutor), then each closed. The threads pread into one shared mapping of 128 MiB whose contents are
 * never looked at (DLIO: a fresh bytes object per read, dropped): at most 128 MiB resident, whatever the file. */
static void mlps_load(ckpt_t *k, const ts_state_t *s, const char *name, ckpt_event_t *ev)
{
    int64_t total = raw_bytes(s);
    if (total <= 0) /* pytorch_checkpointing.py:248-251 */
        return;
    if (!k->rread) {
        k->rread =
            mmap(NULL, MLPS_READ_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (k->rread == MAP_FAILED)
            k->rread = NULL,
            die(EXIT_RUNTIME, "checkpoint: cannot map the %zu-byte read buffer: %s", MLPS_READ_CHUNK, strerror(errno));
    }
    void *tr = trace_begin("load_state");
    int64_t bs = (total + MLPS_READERS - 1) / MLPS_READERS;
    mlps_block_t b[MLPS_READERS];
    int n = 0;
    for (int64_t pos = 0; pos < total && n < MLPS_READERS; pos += bs, n++) {
        b[n] = (mlps_block_t){.start = pos, .end = pos + bs < total ? pos + bs : total, .buf = k->rread};
        if ((b[n].fd = open(name, O_RDONLY | O_CLOEXEC)) < 0)
            die(EXIT_RUNTIME, "checkpoint %s: open: %s", name, strerror(errno));
        (void)posix_fadvise(b[n].fd, 0, 0, POSIX_FADV_RANDOM);
    }
    for (int i = 0; i < n; i++)
        if ((errno = pthread_create(&b[i].th, NULL, mlps_read_block, &b[i])) != 0)
            die(EXIT_RUNTIME, "checkpoint %s: cannot start reader thread %d: %s", name, i, strerror(errno));
    for (int i = 0; i < n; i++) pthread_join(b[i].th, NULL);
    for (int i = 0; i < n; i++) {
        if (b[i].at >= 0)
            die(EXIT_RUNTIME, "checkpoint %s: reader %d: %s at offset %lld (the model's %lld bytes)", name, i,
                b[i].err ? strerror(b[i].err) : "the file ended early", (long long)b[i].at, (long long)total);
        if (close(b[i].fd) != 0)
            die(EXIT_RUNTIME, "checkpoint %s: close: %s", name, strerror(errno));
        ev->bytes += b[i].bytes, ev->writes += b[i].reads;
    }
    trace_end(tr);
    ev->files++;
}

static void load_file(ckpt_t *k, const ts_state_t *s, const char *name, ckpt_event_t *ev);

/* A state DLIO saves to file `name` (torch.save; a load: torch.load), or, checkpoint-format hdf5, a group of this
 * checkpoint's HDF5 file: `group`, or the file's name without its folder and .pt */
static void put_state(ckpt_t *k, const ts_state_t *s, const char *name, const char *group, ckpt_event_t *ev)
{
    if (!k->hdf5 && k->rules == 3 && k->mlps) {
        (ev->load ? mlps_load : mlps_save)(k, s, name, ev);
        return;
    }
    if (!k->hdf5 && k->rules == 3) {
        (ev->load ? stream_load : stream_save)(k, s, name, ev);
        return;
    }
    if (!k->hdf5) {
        (ev->load ? load_file : save_file)(k, s, name, ev);
        return;
    }
    char g[100];
    const char *b = strrchr(name, '/');
    snprintf(g, sizeof g, "%s", group ? group : b ? b + 1 : name);
    size_t n = strlen(g);
    if (n > 3 && !strcmp(g + n - 3, ".pt"))
        g[n - 3] = 0;
    h5ck_add(&k->h5, s, g);
}

/* The HDF5 file of a checkpoint: per rank, or (checkpoint-mpiio, checkpoint-subfiling) one for every rank; the states
 * put since the last call written (load: read back), counted in ev. Every rank calls it. */
static void h5_file(ckpt_t *k, ckpt_event_t *ev)
{
    char path[4600];
    const char *f = k->cfg->checkpoint_folder;
    long long e = (long long)ev->epoch, s = (long long)ev->step;
    if (k->rules >= 2 && k->h5.shared)
        snprintf(path, sizeof path, "%s/global_epoch%lld_step%lld/checkpoint.h5", f, e, s);
    else if (k->rules >= 2)
        snprintf(path, sizeof path, "%s/global_epoch%lld_step%lld/checkpoint-%d.h5", f, e, s, k->rank);
    else if (k->h5.shared)
        snprintf(path, sizeof path, "%s/checkpoint-%lld-%lld.h5", f, e, s);
    else
        snprintf(path, sizeof path, "%s/checkpoint-%lld-%lld-%d.h5", f, e, s, k->rank);
    void *tr = trace_begin(ev->load ? "load_state" : "save_state");
    h5ck_io_t io = {0};
    if (ev->load)
        h5ck_read(&k->h5, path, &io);
    else
        h5ck_write(&k->h5, path, k->rules == 2 ? k->fill : TS_ZEROS, &io); /* 3.x: zeros */
    trace_end(tr);
    ev->files += io.files, ev->bytes += io.bytes, ev->writes += io.calls, ev->fsyncs += io.fsyncs;
}

/* A checkpoint (load: its read-back) begins: logged as one event, traced as one region, timed from now */
static ckpt_event_t *new_event(ckpt_t *k, int64_t epoch, int64_t step, int load, void **tr)
{
    if (k->nev == k->cap)
        k->ev = xrealloc(k->ev, (size_t)(k->cap = k->cap ? 2 * k->cap : 8) * sizeof *k->ev, "the checkpoint log");
    ckpt_event_t *ev = &k->ev[k->nev++];
    *ev = (ckpt_event_t){.epoch = epoch, .step = step, .load = load};
    *tr = trace_begin(load ? "checkpoint_load" : "checkpoint");
    trace_int(*tr, "epoch", epoch);
    trace_int(*tr, "step", step);
    ev->start = now();
    return ev;
}

/* :389-390: the folder of one checkpoint, made by every rank (create_node(exist_ok=True)) */
static void ckpt_dir(const ckpt_t *k, int64_t epoch, int64_t step, char *dir, size_t len)
{
    snprintf(dir, len, "%s/global_epoch%lld_step%lld", k->cfg->checkpoint_folder, (long long)epoch, (long long)step);
    if (mkdir_p(dir) < 0)
        die(EXIT_RUNTIME, "checkpoint: cannot create %s: %s", dir, strerror(errno));
}

/* :385-418 save_checkpoint */
static void save2(ckpt_t *k, ckpt_event_t *ev)
{
    const config_t *c = k->cfg;
    char dir[4300], name[4600];
    ckpt_dir(k, ev->epoch, ev->step, dir, sizeof dir);
    if (!k->writer)
        return;
    long long dp = (long long)k->dp_rank, mp = (long long)k->mp_rank;
    if (!ts_empty(&k->model)) {
        snprintf(name, sizeof name, "%s/model_states-%d.pt", dir, k->rank);
        put_state(k, &k->model, name, NULL, ev);
    }
    if (!ts_empty(&k->layer)) {
        if (c->zero_stage > 0 && c->zero_stage < 3) { /* :397-405: data-parallel rank 0 saves the model */
            if (k->dp_rank == 0 && c->num_layers > 0) {
                if (c->pipeline_parallelism > 1)
                    for (int64_t l = k->start_layer; l <= k->end_layer; l++) {
                        snprintf(name, sizeof name, "%s/layer_%lld-model_%lld_model_states.pt", dir, (long long)l, mp);
                        put_state(k, &k->layers[l - k->start_layer], name, NULL, ev);
                    }
                else {
                    snprintf(name, sizeof name, "%s/model_%lld_model_states.pt", dir, mp);
                    put_state(k, &k->layer, name, NULL, ev);
                }
            }
        } else { /* :406-408: sharded over the data-parallel ranks */
            snprintf(name, sizeof name, "%s/zero_pp_rank_%lld_mp_rank_%lld_model_states.pt", dir, dp, mp);
            put_state(k, &k->layer, name, NULL, ev);
        }
    }
    if (!ts_empty(&k->optimizer)) {
        snprintf(name, sizeof name, "%s/zero_pp_rank_%lld_mp_rank_%lld_optim_states.pt", dir, dp, mp);
        put_state(k, &k->optimizer, name, NULL, ev);
    }
}

/* pytorch_checkpointing.py:139-145 load_state: torch.load(name) */
static void load_file(ckpt_t *k, const ts_state_t *s, const char *name, ckpt_event_t *ev)
{
    (void)k;
    void *tr = trace_begin("load_state");
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die(EXIT_RUNTIME, "checkpoint %s: open: %s", name, strerror(errno));
    struct stat st; /* CPython's open(): one fstat (buffer size st_blksize) */
    if (fstat(fd, &st) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: fstat: %s", name, strerror(errno));
    size_t bufsize = st.st_blksize > 1 ? (size_t)st.st_blksize : 8192;
    ts_io_t io = {0};
    if (ts_load(s, fd, (int64_t)st.st_size, bufsize, &io) != 0) {
        if (errno == EINVAL)
            die(EXIT_RUNTIME,
                "checkpoint %s: %lld bytes, but this model's torch.save writes %lld: not this model's "
                "checkpoint",
                name, (long long)st.st_size, (long long)ts_file_size(s));
        die(EXIT_RUNTIME, "checkpoint %s: read failed after %lld bytes: %s", name, (long long)io.rbytes,
            strerror(errno));
    }
    if (close(fd) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: close: %s", name, strerror(errno));
    trace_end(tr);
    ev->files++;
    ev->bytes += io.rbytes;
    ev->writes += io.reads;
}

/* :420-460 load_checkpoint (the shapes it raises on are refused by the configuration check) */
void ckpt_load(ckpt_t *k, int64_t epoch, int64_t step)
{
    const config_t *c = k->cfg;
    void *tr;
    ckpt_event_t *ev = new_event(k, epoch, step, 1, &tr);
    char dir[4300], name[4600];
    ckpt_dir(k, epoch, step, dir, sizeof dir);
    long long dp = (long long)k->dp_rank, mp = (long long)k->mp_rank;
    if (k->writer && k->rules == 3 && !ts_empty(&k->model)) { /* 3.x base_checkpointing.py:433-434 */
        snprintf(name, sizeof name, "%s/model_states-%d.pt", dir, k->rank);
        put_state(k, &k->model, name, NULL, ev);
    }
    if (k->writer && !ts_empty(&k->layer)) {
        if (c->zero_stage > 0 && c->zero_stage < 3 && c->pipeline_parallelism == 1) { /* 3.x :445-446 (2.0.0-52:
                                                                                        * refused, TypeError) */
            if (k->dp_rank == 0 && c->num_layers > 0) {
                snprintf(name, sizeof name, "%s/model_%lld_model_states.pt", dir, mp);
                put_state(k, &k->layer, name, NULL, ev);
            }
        } else if (c->zero_stage > 0 && c->zero_stage < 3) {
            if (k->dp_rank == 0 && c->num_layers > 0)
                for (int64_t l = k->start_layer; l <= k->end_layer; l++) {
                    snprintf(name, sizeof name, "%s/layer_%lld-model_%lld_model_states.pt", dir, (long long)l, mp);
                    put_state(k, &k->layers[l - k->start_layer], name, NULL, ev);
                }
        } else {
            snprintf(name, sizeof name, "%s/zero_pp_rank_%lld_mp_rank_%lld_model_states.pt", dir, dp, mp);
            put_state(k, &k->layer, name, NULL, ev);
        }
    }
    if (k->writer && !ts_empty(&k->optimizer)) {
        snprintf(name, sizeof name, "%s/zero_pp_rank_%lld_mp_rank_%lld_optim_states.pt", dir, dp, mp);
        put_state(k, &k->optimizer, name, NULL, ev);
    }
    if (k->hdf5)
        h5_file(k, ev);
    ev->end = now();
    trace_end(tr);
}

/* utility.py:367-392 sleep(): abs(t) seconds (the default -1 sleeps 1 s) */
static void sleep_abs(double t)
{
    t = fabs(t);
    struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
    while (t > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* main.py:257-310 (392621b) _checkpoint: compute(time_between_checkpoints), barrier, save (epoch 1, steps 1..N),
 * barrier if rank_sync; the folder must hold at least N entries to read; then the same with loads */
void ckpt_only_run(ckpt_t *k)
{
    const config_t *c = k->cfg;
    for (int64_t i = 0; i < c->num_checkpoints_write; i++) {
        sleep_abs(c->time_between_checkpoints);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        ckpt_save(k, 1, i + 1);
        if (c->checkpoint_rank_sync)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (c->num_checkpoints_read > 0) { /* main.py:264-266: len(os.listdir(checkpoint_folder)) */
        int64_t entries = 0;
        DIR *d = opendir(c->checkpoint_folder);
        if (!d)
            die(EXIT_RUNTIME, "key 'checkpoint-folder': cannot list %s: %s", c->checkpoint_folder, strerror(errno));
        for (struct dirent *de; (de = readdir(d));) entries += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        if (entries < c->num_checkpoints_read)
            die(EXIT_BADINPUT, "key 'num-checkpoints-read': %lld checkpoints to read, %s holds %lld entries",
                (long long)c->num_checkpoints_read, c->checkpoint_folder, (long long)entries);
    }
    for (int64_t i = 0; i < c->num_checkpoints_read; i++) {
        sleep_abs(c->time_between_checkpoints);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        ckpt_load(k, 1, i + 1);
        if (c->checkpoint_rank_sync)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

void ckpt_save(ckpt_t *k, int64_t epoch, int64_t step)
{
    const config_t *c = k->cfg;
    void *tr;
    ckpt_event_t *ev = new_event(k, epoch, step, 0, &tr);
    if (k->rules >= 2)
        save2(k, ev);
    else if (k->writer) {
        char name[4600];
        const char *f = c->checkpoint_folder;
        long long e = (long long)epoch, s = (long long)step;
        /* base_checkpointing.py:70-86 (2.0.0): model, optimizer, then the layers (ranks r % pipeline_parallelism
         * == 0; num_layers files, plus tensor_parallelism more when it is > 1), each a whole state */
        if (!ts_empty(&k->model)) {
            snprintf(name, sizeof name, "%s/model-%lld-%lld-%d.pt", f, e, s, k->rank);
            put_state(k, &k->model, name, "model", ev);
        }
        if (!ts_empty(&k->optimizer)) {
            snprintf(name, sizeof name, "%s/optimizer-%lld-%lld-%d.pt", f, e, s, k->rank);
            put_state(k, &k->optimizer, name, "optimizer", ev);
        }
        if (k->rank % c->pipeline_parallelism == 0 && !ts_empty(&k->layer) && c->num_layers > 0) {
            int64_t layers = c->num_layers + (c->tensor_parallelism > 1 ? c->tensor_parallelism : 0);
            for (int64_t l = 0; l < layers; l++) {
                char g[40];
                snprintf(name, sizeof name, "%s/layer-%lld-%lld-%lld-%d.pt", f, (long long)l, e, s, k->rank);
                snprintf(g, sizeof g, "layer-%lld", (long long)l);
                put_state(k, &k->layer, name, g, ev);
            }
        }
    }
    if (k->hdf5)
        h5_file(k, ev);
    ev->end = now();
    trace_end(tr);
}
