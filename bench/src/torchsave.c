/* torch.save's container for DLIO's checkpoint states. Written from what torch 2.x writes (the reference venv's
 * torch, observed record by record: the pickle through pickletools, the container through zipfile, the write calls
 * through a Python file object that logs them): see torchsave.h and docs/fidelity-checkpoints.md. */
#define _GNU_SOURCE
#include "torchsave.h"
#include "util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

void ts_init(ts_state_t *s)
{
    memset(s, 0, sizeof *s);
    s->cap = 8;
    s->n = xcalloc((size_t)s->cap, sizeof *s->n, "a checkpoint state");
    s->n[0] = (ts_node_t){.parent = -1, .is_dict = 1};
    s->nn = 1;
}

void ts_free(ts_state_t *s)
{
    free(s->n);
    memset(s, 0, sizeof *s);
}

static const struct {
    const char *name, *storage; /* DLIO's name; the storage class torch's pickle names (measured, torch 2.x) */
    int size;
} DTYPES[TS_NDTYPES] = {
    [TS_INT8] = {"int8", "torch\nCharStorage\n", 1},  [TS_UINT8] = {"uint8", "torch\nByteStorage\n", 1},
    [TS_FP16] = {"fp16", "torch\nHalfStorage\n", 2},  [TS_BF16] = {"bf16", "torch\nBFloat16Storage\n", 2},
    [TS_FP32] = {"fp32", "torch\nFloatStorage\n", 4}, [TS_FP64] = {"fp64", "torch\nDoubleStorage\n", 8},
};

int ts_dtype_parse(const char *name)
{
    for (int i = 0; i < TS_NDTYPES; i++)
        if (!strcmp(name, DTYPES[i].name))
            return i;
    return -1;
}
const char *ts_dtype_name(int dtype) { return DTYPES[dtype].name; }
int ts_dtype_size(int dtype) { return DTYPES[dtype].size; }

static int add(ts_state_t *s, int parent, const char *key, int literal, int is_dict, int64_t numel, int dtype)
{
    if (s->nn == s->cap)
        s->n = xrealloc(s->n, (size_t)(s->cap *= 2) * sizeof *s->n, "a checkpoint state");
    ts_node_t *n = &s->n[s->nn];
    *n = (ts_node_t){.parent = parent, .key_literal = literal, .is_dict = is_dict, .numel = numel, .dtype = dtype};
    snprintf(n->key, sizeof n->key, "%s", key);
    return s->nn++;
}

int ts_dict(ts_state_t *s, int parent, const char *key, int literal) { return add(s, parent, key, literal, 1, 0, 0); }

void ts_tensor(ts_state_t *s, int parent, const char *key, int literal, int64_t numel)
{
    add(s, parent, key, literal, 0, numel, TS_INT8);
}

void ts_tensor_dt(ts_state_t *s, int parent, const char *key, int literal, int64_t numel, int dtype)
{
    add(s, parent, key, literal, 0, numel, dtype);
}

int ts_empty(const ts_state_t *s) { return s->nn == 1; }

/* ---------- the pickle (protocol 2, as torch.save's pickler writes it) ---------- */

typedef struct {
    uint8_t *b;
    size_t len, cap;
} bytes_t;

static void put(bytes_t *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        while (o->len + n > o->cap) o->cap = o->cap ? o->cap * 2 : 1024;
        o->b = xrealloc(o->b, o->cap, "a checkpoint pickle");
    }
    memcpy(o->b + o->len, p, n);
    o->len += n;
}
static void put1(bytes_t *o, uint8_t c) { put(o, &c, 1); }
static void put_le(bytes_t *o, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) put1(o, (uint8_t)(v >> (8 * i)));
}

typedef struct {
    bytes_t out;
    uint32_t memo;                                /* next memo index */
    int64_t storage_str, cpu_str, rebuild, odict; /* memo index of each shared object, or -1 */
    int64_t storage_cls[TS_NDTYPES];              /* one GLOBAL per storage class, then BINGETs */
    int64_t literal_memo[64];                     /* per node: memo index of its literal key, or -1 */
    char literal_key[64][40];
    int nliteral;
    int64_t next_storage; /* storage keys '0', '1', ... in first-use order */
} pickler_t;

/* BINPUT / LONG_BINPUT: remember the object just written */
static int64_t memoize(pickler_t *p)
{
    uint32_t i = p->memo++;
    if (i < 256)
        put1(&p->out, 'q'), put1(&p->out, (uint8_t)i);
    else
        put1(&p->out, 'r'), put_le(&p->out, i, 4);
    return i;
}

/* BINGET / LONG_BINGET */
static void memo_get(pickler_t *p, int64_t i)
{
    if (i < 256)
        put1(&p->out, 'h'), put1(&p->out, (uint8_t)i);
    else
        put1(&p->out, 'j'), put_le(&p->out, (uint64_t)i, 4);
}

/* BINUNICODE + BINPUT (a str written for the first time) */
static int64_t put_str(pickler_t *p, const char *s)
{
    size_t n = strlen(s);
    put1(&p->out, 'X');
    put_le(&p->out, n, 4);
    put(&p->out, s, n);
    return memoize(p);
}

/* a str object shared by the whole file (memo slot *slot) */
static void put_shared_str(pickler_t *p, int64_t *slot, const char *s)
{
    if (*slot >= 0)
        memo_get(p, *slot);
    else
        *slot = put_str(p, s);
}

/* GLOBAL 'module\nname\n' + BINPUT, or BINGET once written */
static void put_global(pickler_t *p, int64_t *slot, const char *modname)
{
    if (*slot >= 0) {
        memo_get(p, *slot);
        return;
    }
    put1(&p->out, 'c');
    put(&p->out, modname, strlen(modname));
    *slot = memoize(p);
}

/* Python's pickle of an int at protocol 2: BININT1, BININT2, BININT, else LONG1 (little-endian two's complement) */
static void put_int(pickler_t *p, int64_t v)
{
    if (v >= 0 && v < 256)
        put1(&p->out, 'K'), put1(&p->out, (uint8_t)v);
    else if (v >= 0 && v < 65536)
        put1(&p->out, 'M'), put_le(&p->out, (uint64_t)v, 2);
    else if (v >= INT32_MIN && v <= INT32_MAX)
        put1(&p->out, 'J'), put_le(&p->out, (uint64_t)(uint32_t)v, 4);
    else {
        int n = 1;
        while (n < 8 && !(v >> (8 * n - 1) == 0 || v >> (8 * n - 1) == -1)) n++;
        put1(&p->out, 0x8a), put1(&p->out, (uint8_t)n), put_le(&p->out, (uint64_t)v, n);
    }
}

/* the key of node k: a literal key is one object per spelling (memoized once); str(index) keys are new objects */
static void put_key(pickler_t *p, const ts_node_t *n)
{
    if (!n->key_literal) {
        put_str(p, n->key);
        return;
    }
    for (int i = 0; i < p->nliteral; i++)
        if (!strcmp(p->literal_key[i], n->key)) {
            memo_get(p, p->literal_memo[i]);
            return;
        }
    int64_t m = put_str(p, n->key);
    if (p->nliteral < 64) {
        snprintf(p->literal_key[p->nliteral], sizeof p->literal_key[0], "%s", n->key);
        p->literal_memo[p->nliteral++] = m;
    }
}

/* a 1-D tensor: torch._utils._rebuild_tensor_v2((persistent storage id), 0, (numel,), (1,), False,
 * OrderedDict()), the storage id being ('storage', torch.<Dtype>Storage, '<key>', 'cpu', numel) */
static void put_tensor(pickler_t *p, int64_t numel, int dtype)
{
    char key[24];
    snprintf(key, sizeof key, "%lld", (long long)p->next_storage++);
    put_global(p, &p->rebuild, "torch._utils\n_rebuild_tensor_v2\n");
    put1(&p->out, '(');
    put1(&p->out, '(');
    put_shared_str(p, &p->storage_str, "storage");
    put_global(p, &p->storage_cls[dtype], DTYPES[dtype].storage);
    put_str(p, key);
    put_shared_str(p, &p->cpu_str, "cpu");
    put_int(p, numel);
    put1(&p->out, 't');
    memoize(p);
    put1(&p->out, 'Q'); /* BINPERSID */
    put_int(p, 0);      /* storage offset */
    put_int(p, numel);
    put1(&p->out, 0x85); /* TUPLE1: size */
    memoize(p);
    put_int(p, 1);
    put1(&p->out, 0x85); /* TUPLE1: stride */
    memoize(p);
    put1(&p->out, 0x89); /* NEWFALSE: requires_grad */
    put_global(p, &p->odict, "collections\nOrderedDict\n");
    put1(&p->out, ')');
    put1(&p->out, 'R');
    memoize(p);
    put1(&p->out, 't');
    memoize(p);
    put1(&p->out, 'R');
    memoize(p);
}

static void put_value(pickler_t *p, const ts_state_t *s, int k);

/* EMPTY_DICT + BINPUT, then its items: one item with SETITEM, more in MARK ... SETITEMS batches of 1000 (CPython's
 * batch_dict_exact) */
static void put_dict(pickler_t *p, const ts_state_t *s, int d)
{
    put1(&p->out, '}');
    memoize(p);
    int items = 0;
    for (int k = 0; k < s->nn; k++) items += s->n[k].parent == d && k != d;
    if (items == 0)
        return;
    if (items == 1) {
        for (int k = 1; k < s->nn; k++)
            if (s->n[k].parent == d)
                put_key(p, &s->n[k]), put_value(p, s, k);
        put1(&p->out, 's');
        return;
    }
    int k = 1, i;
    do {
        i = 0;
        put1(&p->out, '(');
        for (; k < s->nn && i < 1000; k++)
            if (s->n[k].parent == d)
                put_key(p, &s->n[k]), put_value(p, s, k), i++;
        put1(&p->out, 'u');
    } while (i == 1000);
}

static void put_value(pickler_t *p, const ts_state_t *s, int k)
{
    if (s->n[k].is_dict)
        put_dict(p, s, k);
    else
        put_tensor(p, s->n[k].numel, s->n[k].dtype);
}

static bytes_t pickle_state(const ts_state_t *s)
{
    pickler_t p = {.storage_str = -1, .cpu_str = -1, .rebuild = -1, .odict = -1};
    for (int i = 0; i < TS_NDTYPES; i++) p.storage_cls[i] = -1;
    put1(&p.out, 0x80), put1(&p.out, 2); /* PROTO 2 */
    put_dict(&p, s, 0);
    put1(&p.out, '.');
    return p.out;
}

/* ---------- the records and the zip container ---------- */

typedef struct {
    char name[64];
    const uint8_t *data; /* NULL: a tensor's `size` bytes */
    int64_t size;
    int dtype; /* a tensor's */
} record_t;

#define ALIGN 64           /* torch's kFieldAlignment */
#define U32MAX 0xFFFFFFFFu /* miniz switches a field to zip64 at >= MZ_UINT32_MAX */

/* tensors of dict d in the order put_dict writes them (depth first, items in insertion order) */
static void collect(const ts_state_t *s, int d, int *order, int *t)
{
    for (int k = d + 1; k < s->nn; k++)
        if (s->n[k].parent == d) {
            if (s->n[k].is_dict)
                collect(s, k, order, t);
            else
                order[(*t)++] = k;
        }
}

/* The records of torch.save's archive, in the order written: the pickle, format and alignment markers, byte
 * order, one per storage, the archive version, the serialization id. Returns the count; *pkl holds the pickle. */
static int records(const ts_state_t *s, bytes_t *pkl, record_t **out)
{
    static const uint8_t serial[41] = "0000000000000000000000000000000000000000";
    *pkl = pickle_state(s);
    int ntensor = 0;
    for (int k = 0; k < s->nn; k++) ntensor += !s->n[k].is_dict;
    record_t *r = xcalloc((size_t)ntensor + 6, sizeof *r, "checkpoint records");
    int n = 0;
    r[n++] = (record_t){"archive/data.pkl", pkl->b, (int64_t)pkl->len, 0};
    r[n++] = (record_t){"archive/.format_version", (const uint8_t *)"1", 1, 0};
    r[n++] = (record_t){"archive/.storage_alignment", (const uint8_t *)"64", 2, 0};
    r[n++] = (record_t){"archive/byteorder", (const uint8_t *)"little", 6, 0};
    /* storages in the order the pickler meets them */
    int *order = xcalloc((size_t)s->nn, sizeof *order, "checkpoint records"), t = 0;
    collect(s, 0, order, &t);
    for (int i = 0; i < t; i++) {
        const ts_node_t *T = &s->n[order[i]];
        r[n] = (record_t){.data = NULL, .size = T->numel * DTYPES[T->dtype].size, .dtype = T->dtype};
        snprintf(r[n].name, sizeof r[n].name, "archive/data/%d", i);
        n++;
    }
    free(order);
    r[n++] = (record_t){"archive/version", (const uint8_t *)"3\n", 2, 0};
    r[n++] = (record_t){"archive/.data/serialization_id", serial, 40, 0};
    *out = r;
    return n;
}

/* Sizes of one record's parts at archive offset ofs */
typedef struct {
    int zip64_extra; /* bytes of the zip64 extended-information field in the local header (0: none) */
    int pad;         /* 'Z' bytes after the FB field header */
    int desc;        /* data descriptor bytes */
} rec_layout_t;

static rec_layout_t rec_layout(const record_t *r, int64_t ofs)
{
    rec_layout_t L = {0};
    int64_t start = ofs + 30 + (int64_t)strlen(r->name) + 4;
    if ((uint64_t)r->size >= U32MAX || (uint64_t)ofs >= U32MAX) {
        L.zip64_extra = 4 + ((uint64_t)r->size >= U32MAX ? 16 : 0) + ((uint64_t)ofs >= U32MAX ? 8 : 0);
        start += L.zip64_extra;
    }
    L.pad = (int)((ALIGN - start % ALIGN) % ALIGN);
    L.desc = L.zip64_extra ? 24 : 16; /* 64-bit sizes whenever the record has a zip64 field (measured) */
    return L;
}

/* central directory entry size (zip64 field for each value that does not fit 32 bits) */
static int cd_extra(const record_t *r, int64_t ofs)
{
    int n = ((uint64_t)r->size >= U32MAX ? 16 : 0) + ((uint64_t)ofs >= U32MAX ? 8 : 0);
    return n ? 4 + n : 0;
}

int64_t ts_file_size(const ts_state_t *s)
{
    bytes_t pkl = {0};
    record_t *r = NULL;
    int n = records(s, &pkl, &r);
    int64_t ofs = 0, cd = 0;
    for (int i = 0; i < n; i++) {
        rec_layout_t L = rec_layout(&r[i], ofs);
        cd += 46 + (int64_t)strlen(r[i].name) + cd_extra(&r[i], ofs);
        ofs += 30 + (int64_t)strlen(r[i].name) + L.zip64_extra + 4 + L.pad + r[i].size + L.desc;
    }
    free(r), free(pkl.b);
    return ofs + cd + 56 + 20 + 22;
}

/* ---------- CPython's BufferedWriter (Modules/_io/bufferedio.c _io__Buffered_write_impl) ---------- */

typedef struct {
    int fd;
    uint8_t *buf;
    size_t cap, pos;
    ts_io_t *io;
} pyfile_t;

static ssize_t raw_write(pyfile_t *f, const uint8_t *p, size_t n)
{
    ssize_t r;
    if (f->io->mut_split && n > 1) { /* MUTANT ckpt-split: this write's first half, as a call of its own */
        f->io->mut_split = 0;
        n /= 2;
    }
    do r = write(f->fd, p, n);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return -1;
    f->io->writes++;
    f->io->bytes += r;
    return r;
}

static int py_flush(pyfile_t *f)
{
    size_t off = 0;
    while (off < f->pos) {
        ssize_t r = raw_write(f, f->buf + off, f->pos - off);
        if (r < 0)
            return -1;
        off += (size_t)r;
    }
    f->pos = 0;
    return 0;
}

/* fits: buffered; else the buffer is flushed, then write(2) until what is left fits the buffer, which keeps it */
static int py_write(pyfile_t *f, const void *data, size_t n)
{
    const uint8_t *p = data;
    if (n <= f->cap - f->pos) {
        memcpy(f->buf + f->pos, p, n);
        f->pos += n;
        return 0;
    }
    if (py_flush(f))
        return -1;
    size_t done = 0;
    while (n - done > f->cap) {
        ssize_t r = raw_write(f, p + done, n - done);
        if (r < 0)
            return -1;
        done += (size_t)r;
    }
    memcpy(f->buf, p + done, n - done);
    f->pos = n - done;
    return 0;
}

/* ---------- writing ---------- */

static void le16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void le32(uint8_t *p, uint32_t v) { le16(p, v & 0xFFFF), le16(p + 2, v >> 16); }
static void le64(uint8_t *p, uint64_t v) { le32(p, (uint32_t)v), le32(p + 4, (uint32_t)(v >> 32)); }

/* CRC-32 of n bytes repeating the block blk of B bytes: the whole blocks by doubling with crc32_combine (O(log n)),
 * then the block's first n % B bytes. A record shorter than the block is only its first n bytes: the block's own
 * CRC is not computed for it (a llama layer file holds ~200 small tensors: 4 MiB of CRC each made a save ~10x
 * slower than torch.save) */
static uint32_t crc_periodic(const uint8_t *blk, int64_t B, int64_t n)
{
    uLong acc = crc32(0L, Z_NULL, 0);
    if (n < B)
        return (uint32_t)crc32(acc, blk, (uInt)n);
    uLong bc = crc32(0L, blk, (uInt)B);
    int64_t blen = B;
    for (int64_t m = n / B; m; m >>= 1) {
        if (m & 1)
            acc = crc32_combine(acc, bc, (z_off_t)blen);
        bc = crc32_combine(bc, bc, (z_off_t)blen);
        blen *= 2;
    }
    return (uint32_t)crc32(acc, blk, (uInt)(n % B));
}

/* ---------- the periodic view: N contiguous bytes backed by one memfd block of PBLOCK bytes ---------- */

#define PBLOCK ((int64_t)4 << 20)
#define PVIEW_MAX_MAPS 32768 /* well under vm.max_map_count's default 65530 */

typedef struct {
    uint8_t *base, *block; /* the view; the block itself (for the CRCs) */
    size_t len;            /* of the view (a multiple of PBLOCK) */
    int fd;
} pview_t;

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* one element of the pattern: torch.ones, or a draw of torch.rand ([0, 1) for floating dtypes) / torch.randint
 * (int8: [-128, 128), uint8: [0, 256)) as pytorch_checkpointing.py:64-76 (392621b) makes them */
static void put_elem(uint8_t *p, int dtype, int fill, uint64_t *rng)
{
    uint64_t u = fill == TS_RANDOM ? splitmix(rng) : 0;
    float f = fill == TS_RANDOM ? (float)(u >> 40) * (1.0f / 16777216.0f) : 1.0f;
    uint32_t fb;
    memcpy(&fb, &f, 4);
    switch (dtype) {
    case TS_INT8:
    case TS_UINT8: p[0] = fill == TS_RANDOM ? (uint8_t)u : 1; break;
    case TS_FP16: { /* [0, 1]: exponent 15 + e, truncated mantissa (subnormals flushed) */
        int e = (int)((fb >> 23) & 0xff) - 127 + 15;
        uint16_t h = e <= 0 ? 0 : (uint16_t)((e << 10) | ((fb >> 13) & 0x3ff));
        memcpy(p, &h, 2);
        break;
    }
    case TS_BF16: {
        uint16_t h = (uint16_t)(fb >> 16);
        memcpy(p, &h, 2);
        break;
    }
    case TS_FP32: memcpy(p, &fb, 4); break;
    default: {
        double d = fill == TS_RANDOM ? (double)(u >> 11) * (1.0 / 9007199254740992.0) : 1.0;
        memcpy(p, &d, 8);
    }
    }
}

void ts_pattern(uint8_t *buf, size_t n, int dtype, int fill)
{
    uint64_t rng = 0x5EEDull * (uint64_t)(dtype + 1);
    size_t es = (size_t)DTYPES[dtype].size;
    if (fill == TS_ZEROS)
        memset(buf, 0, n);
    else
        for (size_t o = 0; o + es <= n; o += es) put_elem(buf + o, dtype, fill, &rng);
}

/* A view of at least len bytes whose every PBLOCK bytes are the same block (the dtype's pattern). writable: reads
 * land in it (their bytes overwrite the shared block). Returns 0, or -1 with errno set. */
static int pview_open(pview_t *v, int64_t len, int dtype, int fill, int writable)
{
    memset(v, 0, sizeof *v);
    v->fd = -1;
    int64_t maps = len <= 0 ? 1 : (len + PBLOCK - 1) / PBLOCK;
    if (maps > PVIEW_MAX_MAPS) {
        errno = EFBIG;
        return -1;
    }
    v->len = (size_t)(maps * PBLOCK);
    v->fd = memfd_create("h5dlio-checkpoint", MFD_CLOEXEC);
    if (v->fd < 0 || ftruncate(v->fd, PBLOCK) != 0)
        return -1;
    v->block = mmap(NULL, (size_t)PBLOCK, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
    if (v->block == MAP_FAILED)
        return v->block = NULL, -1;
    ts_pattern(v->block, (size_t)PBLOCK, dtype, fill);
    v->base = mmap(NULL, v->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (v->base == MAP_FAILED)
        return v->base = NULL, -1;
    for (int64_t i = 0; i < maps; i++)
        if (mmap(v->base + i * PBLOCK, (size_t)PBLOCK, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED | MAP_FIXED,
                 v->fd, 0) == MAP_FAILED)
            return -1;
    return 0;
}

static void pview_close(pview_t *v)
{
    int saved = errno;
    if (v->base)
        munmap(v->base, v->len);
    if (v->block)
        munmap(v->block, (size_t)PBLOCK);
    if (v->fd >= 0)
        close(v->fd);
    memset(v, 0, sizeof *v);
    v->fd = -1;
    errno = saved;
}

typedef struct {
    uint32_t crc;
    int64_t ofs;
} written_t;

int ts_save(const ts_state_t *s, int fd, size_t bufsize, ts_io_t *io)
{
    return ts_save_fill(s, fd, bufsize, TS_ZEROS, io);
}

/* The zip's central directory: one entry per record (w: where each record's local header is, its CRC). */
static void central_directory(bytes_t *cd, const record_t *r, const written_t *w, int n)
{
    for (int i = 0; i < n; i++) {
        const record_t *R = &r[i];
        size_t nl = strlen(R->name);
        int ex = cd_extra(R, w[i].ofs);
        uint8_t e[46] = {'P', 'K', 1, 2}, x[20];
        le16(e + 8, 0x0808);
        le32(e + 16, w[i].crc);
        le32(e + 20, (uint64_t)R->size >= U32MAX ? U32MAX : (uint32_t)R->size);
        le32(e + 24, (uint64_t)R->size >= U32MAX ? U32MAX : (uint32_t)R->size);
        le16(e + 28, (uint32_t)nl);
        le16(e + 30, (uint32_t)ex);
        le32(e + 42, (uint64_t)w[i].ofs >= U32MAX ? U32MAX : (uint32_t)w[i].ofs);
        put(cd, e, 46);
        put(cd, R->name, nl);
        if (ex) {
            uint8_t *q = x + 4;
            le16(x, 1), le16(x + 2, (uint32_t)(ex - 4));
            if ((uint64_t)R->size >= U32MAX)
                le64(q, (uint64_t)R->size), le64(q + 8, (uint64_t)R->size), q += 16;
            if ((uint64_t)w[i].ofs >= U32MAX)
                le64(q, (uint64_t)w[i].ofs);
            put(cd, x, (size_t)ex);
        }
    }
}

/* After the central directory: the zip64 end record, its locator and the end record; then the buffer flushed.
 * ofs: where the central directory starts. */
static int write_end(pyfile_t *f, const bytes_t *cd, int n, int64_t ofs, int mut_short)
{
    uint8_t e64[56] = {'P', 'K', 6, 6}, loc[20] = {'P', 'K', 6, 7}, end[22] = {'P', 'K', 5, 6};
    le64(e64 + 4, 44), le16(e64 + 12, 0x031e), le16(e64 + 14, 0x002d);
    le64(e64 + 24, (uint64_t)n), le64(e64 + 32, (uint64_t)n), le64(e64 + 40, cd->len), le64(e64 + 48, (uint64_t)ofs);
    le64(loc + 8, (uint64_t)ofs + cd->len), le32(loc + 16, 1);
    le16(end + 8, (uint32_t)n), le16(end + 10, (uint32_t)n);
    le32(end + 12, cd->len >= U32MAX ? U32MAX : (uint32_t)cd->len);
    le32(end + 16, (uint64_t)ofs >= U32MAX ? U32MAX : (uint32_t)ofs);
    if (py_write(f, cd->b, cd->len) || py_write(f, e64, 56) || py_write(f, loc, 20) ||
        py_write(f, end, mut_short ? 21 : 22) || /* MUTANT ckpt-short: the end record's last byte not written */
        py_flush(f))
        return -1;
    return 0;
}

int ts_save_fill(const ts_state_t *s, int fd, size_t bufsize, int fill, ts_io_t *io)
{
    bytes_t pkl = {0};
    record_t *r = NULL;
    int n = records(s, &pkl, &r), rc = -1;
    int64_t most = 65536, per[TS_NDTYPES] = {0};
    for (int i = 0; i < n; i++)
        if (!r[i].data) {
            most = r[i].size > most ? r[i].size : most;
            per[r[i].dtype] = r[i].size > per[r[i].dtype] ? r[i].size : per[r[i].dtype];
        }
    pview_t v[TS_NDTYPES];
    for (int d = 0; d < TS_NDTYPES; d++) v[d] = (pview_t){.fd = -1};
    /* zeros: read-only anonymous pages, every page the kernel's shared zero page, whatever the size */
    uint8_t *zeros = fill == TS_ZEROS
                         ? mmap(NULL, (size_t)most, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                         : NULL;
    written_t *w = xcalloc((size_t)n, sizeof *w, "checkpoint records");
    pyfile_t f = {.fd = fd, .buf = xmalloc(bufsize, "the checkpoint write buffer"), .cap = bufsize, .io = io};
    bytes_t cd = {0};
    if (zeros == MAP_FAILED)
        goto out;
    for (int d = 0; d < TS_NDTYPES && fill != TS_ZEROS; d++)
        if (per[d] && pview_open(&v[d], per[d], d, fill, 0) != 0)
            goto out;
    int64_t ofs = 0;
    for (int i = 0; i < n; i++) {
        const record_t *R = &r[i];
        rec_layout_t L = rec_layout(R, ofs);
        size_t nl = strlen(R->name);
        uint8_t h[30] = {'P', 'K', 3, 4}, z64[28], fb[4 + ALIGN], d[24] = {'P', 'K', 7, 8};
        le16(h + 6, 0x0808); /* data descriptor follows; UTF-8 names */
        le16(h + 26, (uint32_t)nl);
        le16(h + 28, (uint32_t)(L.zip64_extra + 4 + L.pad));
        w[i].ofs = ofs;
        const uint8_t *src = R->data ? R->data : fill == TS_ZEROS ? zeros : v[R->dtype].base;
        w[i].crc = R->data            ? (uint32_t)crc32(crc32(0L, Z_NULL, 0), R->data, (uInt)R->size)
                   : fill == TS_ZEROS ? crc_periodic(zeros, 65536, R->size)
                                      : crc_periodic(v[R->dtype].block, PBLOCK, R->size);
        if (L.zip64_extra) {
            le16(z64, 1), le16(z64 + 2, (uint32_t)(L.zip64_extra - 4));
            uint8_t *q = z64 + 4;
            /* the local field holds the size and a compressed size of 0 (miniz writes it before the data) */
            if ((uint64_t)R->size >= U32MAX)
                le64(q, (uint64_t)R->size), le64(q + 8, 0), q += 16;
            if ((uint64_t)ofs >= U32MAX)
                le64(q, (uint64_t)ofs);
        }
        fb[0] = 'F', fb[1] = 'B';
        le16(fb + 2, (uint32_t)L.pad);
        memset(fb + 4, 'Z', (size_t)L.pad);
        le32(d + 4, w[i].crc);
        if (L.zip64_extra)
            le64(d + 8, (uint64_t)R->size), le64(d + 16, (uint64_t)R->size);
        else
            le32(d + 8, (uint32_t)R->size), le32(d + 12, (uint32_t)R->size);
        if (py_write(&f, h, 30) || py_write(&f, R->name, nl) ||
            (L.zip64_extra && py_write(&f, z64, (size_t)L.zip64_extra)) || py_write(&f, fb, 4 + (size_t)L.pad) ||
            py_write(&f, src, (size_t)R->size) || py_write(&f, d, (size_t)L.desc))
            goto out;
        ofs += 30 + (int64_t)nl + L.zip64_extra + 4 + L.pad + R->size + L.desc;
    }
    /* the central directory, one write; then the zip64 end record, its locator and the end record */
    central_directory(&cd, r, w, n);
    if (write_end(&f, &cd, n, ofs, io->mut_short))
        goto out;
    rc = 0;
out:;
    int saved = errno;
    if (zeros && zeros != MAP_FAILED)
        munmap(zeros, (size_t)most);
    for (int d = 0; d < TS_NDTYPES; d++) pview_close(&v[d]);
    free(f.buf), free(w), free(cd.b), free(r), free(pkl.b);
    errno = saved;
    return rc;
}

/* ---------- torch.load's reads: CPython's BufferedReader (Modules/_io/bufferedio.c, 3.11) ---------- */

typedef struct {
    int fd;
    uint8_t *buf;
    int64_t cap, pos, read_end, raw_pos, abs_pos; /* read_end, raw_pos: -1 when unknown, as CPython keeps them */
    ts_io_t *io;
} pyreader_t;

static int64_t rd_raw_read(pyreader_t *r, uint8_t *p, int64_t n)
{
    ssize_t k;
    do k = read(r->fd, p, (size_t)n);
    while (k < 0 && errno == EINTR);
    if (k < 0)
        return -1;
    r->io->reads++;
    r->io->rbytes += k;
    r->abs_pos += k;
    return k;
}
static int64_t rd_readahead(const pyreader_t *r) { return r->read_end != -1 ? r->read_end - r->pos : 0; }
static int64_t rd_raw_offset(const pyreader_t *r)
{
    return r->raw_pos >= 0 && r->read_end != -1 ? r->raw_pos - r->pos : 0;
}

/* _bufferedreader_fill_buffer: read(2) of what is left of the buffer after read_end */
static int64_t rd_fill(pyreader_t *r)
{
    int64_t start = r->read_end != -1 ? r->read_end : 0, n = rd_raw_read(r, r->buf + start, r->cap - start);
    if (n <= 0)
        return n;
    r->read_end = r->raw_pos = start + n;
    return n;
}

/* buffered_tell: always asks the raw file (lseek SEEK_CUR) */
static int rd_tell(pyreader_t *r)
{
    off_t p = lseek(r->fd, 0, SEEK_CUR);
    return p < 0 ? -1 : (r->abs_pos = p, 0);
}

/* _io__Buffered_seek_impl: inside the unread part of the buffer (or back within what was read of it) only the
 * position moves; otherwise lseek and the buffer is dropped */
static int rd_seek(pyreader_t *r, int64_t target, int whence)
{
    if (whence == SEEK_SET) {
        int64_t avail = rd_readahead(r);
        if (avail > 0) {
            int64_t off = target - (r->abs_pos - rd_raw_offset(r));
            if (off >= -r->pos && off <= avail) {
                r->pos += off;
                return 0;
            }
        }
    }
    off_t p = lseek(r->fd, (off_t)target, whence);
    if (p < 0)
        return -1;
    r->abs_pos = p, r->raw_pos = -1, r->read_end = -1;
    return 0;
}

/* _buffered_readinto_generic (readinto, not readinto1); read(n) on an empty buffer does the same calls */
static int rd_readinto(pyreader_t *r, uint8_t *dst, int64_t len)
{
    int64_t n = rd_readahead(r), written = 0;
    if (n > 0) {
        if (n >= len) {
            memcpy(dst, r->buf + r->pos, (size_t)len);
            r->pos += len;
            return 0;
        }
        memcpy(dst, r->buf + r->pos, (size_t)n);
        r->pos += n;
        written = n;
    }
    r->read_end = -1, r->pos = 0;
    for (int64_t remaining = len - written; remaining > 0; written += n, remaining -= n) {
        if (remaining > r->cap)
            n = rd_raw_read(r, dst + written, remaining);
        else {
            n = rd_fill(r);
            if (n > 0) {
                n = n > remaining ? remaining : n;
                memcpy(dst + written, r->buf + r->pos, (size_t)n);
                r->pos += n;
                continue;
            }
        }
        if (n < 0)
            return -1;
        if (n == 0) { /* end of file before len bytes: the file is shorter than torch expects */
            errno = EIO;
            return -1;
        }
    }
    return 0;
}

int ts_load(const ts_state_t *s, int fd, int64_t file_size, size_t bufsize, ts_io_t *io)
{
    bytes_t pkl = {0};
    record_t *r = NULL;
    int n = records(s, &pkl, &r), rc = -1;
    int64_t *ofs = xcalloc((size_t)n, sizeof *ofs, "checkpoint records"),
            *dofs = xcalloc((size_t)n, sizeof *dofs, "checkpoint records");
    int64_t at = 0, cdlen = 0, most = 4096;
    for (int i = 0; i < n; i++) {
        rec_layout_t L = rec_layout(&r[i], at);
        int64_t nl = (int64_t)strlen(r[i].name);
        ofs[i] = at, dofs[i] = at + 30 + nl + L.zip64_extra + 4 + L.pad;
        cdlen += 46 + nl + cd_extra(&r[i], at);
        at = dofs[i] + r[i].size + L.desc;
        most = r[i].size > most ? r[i].size : most;
    }
    int64_t S = at + cdlen + 56 + 20 + 22;
    most = cdlen > most ? cdlen : most;
    pyreader_t rd = {.fd = fd,
                     .buf = xmalloc(bufsize, "the checkpoint read buffer"),
                     .cap = (int64_t)bufsize,
                     .read_end = -1,
                     .raw_pos = -1,
                     .io = io};
    pview_t v;
    if (file_size != S) {
        errno = EINVAL;
        goto out0;
    }
    if (pview_open(&v, most, TS_INT8, TS_ZEROS, 1) != 0)
        goto out;
    uint8_t *dst = v.base;
    (void)isatty(fd); /* open(): buffering decision (ioctl TCGETS), then BufferedReader's init tells */
    if (rd_tell(&rd))
        goto out;
    /* torch/serialization.py: _is_zipfile (tell, read(4), seek back); torch.load's tell; the C++ BufferAdapter
     * (tell, seek end, tell, seek start); miniz: read(0, 8), the last 4096 bytes, the end record, the zip64 locator
     * and end record, the central directory */
    if (rd_tell(&rd) || rd_readinto(&rd, dst, 4) || rd_seek(&rd, 0, SEEK_SET) || rd_tell(&rd) || rd_tell(&rd) ||
        rd_seek(&rd, 0, SEEK_END) || rd_tell(&rd) || rd_seek(&rd, 0, SEEK_SET) || rd_seek(&rd, 0, SEEK_SET) ||
        rd_readinto(&rd, dst, 8) || rd_seek(&rd, S > 4096 ? S - 4096 : 0, SEEK_SET) ||
        rd_readinto(&rd, dst, S > 4096 ? 4096 : S) || rd_seek(&rd, S - 22, SEEK_SET) || rd_readinto(&rd, dst, 22) ||
        rd_seek(&rd, S - 42, SEEK_SET) || rd_readinto(&rd, dst, 20) || rd_seek(&rd, S - 98, SEEK_SET) ||
        rd_readinto(&rd, dst, 56) || rd_seek(&rd, at, SEEK_SET) || rd_readinto(&rd, dst, cdlen))
        goto out;
    /* then each record torch asks for: its local header, then its bytes. Records (records()): 0 data.pkl,
     * 1 .format_version, 2 .storage_alignment, 3 byteorder, 4.. the storages, n-2 version, n-1 serialization_id;
     * asked: serialization_id, version, .format_version, byteorder, .storage_alignment, data.pkl, the storages as
     * the unpickler meets them */
    int head[6] = {n - 1, n - 2, 1, 3, 2, 0};
    for (int q = 0; q < n; q++) {
        int i = q < 6 ? head[q] : q - 2;
        if (rd_seek(&rd, ofs[i], SEEK_SET) || rd_readinto(&rd, dst, 30) || rd_seek(&rd, dofs[i], SEEK_SET) ||
            rd_readinto(&rd, dst, r[i].size))
            goto out;
    }
    rc = 0;
out:
    pview_close(&v);
out0:;
    int saved = errno;
    free(rd.buf), free(ofs), free(dofs), free(r), free(pkl.b);
    errno = saved;
    return rc;
}
