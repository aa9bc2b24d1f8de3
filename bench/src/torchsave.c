/* torch.save's container for DLIO's checkpoint states. Written from what torch 2.x writes (the reference venv's
 * torch, observed record by record: the pickle through pickletools, the container through zipfile, the write calls
 * through a Python file object that logs them): see torchsave.h and docs/fidelity.md "Checkpoints". */
#define _GNU_SOURCE
#include "torchsave.h"
#include "util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static int add(ts_state_t *s, int parent, const char *key, int literal, int is_dict, int64_t numel)
{
    if (s->nn == s->cap)
        s->n = xrealloc(s->n, (size_t)(s->cap *= 2) * sizeof *s->n, "a checkpoint state");
    ts_node_t *n = &s->n[s->nn];
    *n = (ts_node_t){.parent = parent, .key_literal = literal, .is_dict = is_dict, .numel = numel};
    snprintf(n->key, sizeof n->key, "%s", key);
    return s->nn++;
}

int ts_dict(ts_state_t *s, int parent, const char *key, int literal) { return add(s, parent, key, literal, 1, 0); }

void ts_tensor(ts_state_t *s, int parent, const char *key, int literal, int64_t numel)
{
    add(s, parent, key, literal, 0, numel);
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
    uint32_t memo;                                   /* next memo index */
    int64_t storage_str, cpu_str, rebuild, storage_cls, odict; /* memo index of each shared object, or -1 */
    int64_t literal_memo[64];                        /* per node: memo index of its literal key, or -1 */
    char literal_key[64][40];
    int nliteral;
    int64_t next_storage;                            /* storage keys '0', '1', ... in first-use order */
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

/* a 1-D int8 tensor: torch._utils._rebuild_tensor_v2((persistent storage id), 0, (numel,), (1,), False,
 * OrderedDict()), the storage id being ('storage', torch.CharStorage, '<key>', 'cpu', numel) */
static void put_tensor(pickler_t *p, int64_t numel)
{
    char key[24];
    snprintf(key, sizeof key, "%lld", (long long)p->next_storage++);
    put_global(p, &p->rebuild, "torch._utils\n_rebuild_tensor_v2\n");
    put1(&p->out, '(');
    put1(&p->out, '(');
    put_shared_str(p, &p->storage_str, "storage");
    put_global(p, &p->storage_cls, "torch\nCharStorage\n");
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
            if (s->n[k].parent == d) put_key(p, &s->n[k]), put_value(p, s, k);
        put1(&p->out, 's');
        return;
    }
    int k = 1, i;
    do {
        i = 0;
        put1(&p->out, '(');
        for (; k < s->nn && i < 1000; k++)
            if (s->n[k].parent == d) put_key(p, &s->n[k]), put_value(p, s, k), i++;
        put1(&p->out, 'u');
    } while (i == 1000);
}

static void put_value(pickler_t *p, const ts_state_t *s, int k)
{
    if (s->n[k].is_dict)
        put_dict(p, s, k);
    else
        put_tensor(p, s->n[k].numel);
}

static bytes_t pickle_state(const ts_state_t *s)
{
    pickler_t p = {.storage_str = -1, .cpu_str = -1, .rebuild = -1, .storage_cls = -1, .odict = -1};
    put1(&p.out, 0x80), put1(&p.out, 2); /* PROTO 2 */
    put_dict(&p, s, 0);
    put1(&p.out, '.');
    return p.out;
}

/* ---------- the records and the zip container ---------- */

typedef struct {
    char name[64];
    const uint8_t *data; /* NULL: `size` zero bytes (a tensor) */
    int64_t size;
} record_t;

#define ALIGN 64                 /* torch's kFieldAlignment */
#define U32MAX 0xFFFFFFFFu        /* miniz switches a field to zip64 at >= MZ_UINT32_MAX */

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
    r[n++] = (record_t){"archive/data.pkl", pkl->b, (int64_t)pkl->len};
    r[n++] = (record_t){"archive/.format_version", (const uint8_t *)"1", 1};
    r[n++] = (record_t){"archive/.storage_alignment", (const uint8_t *)"64", 2};
    r[n++] = (record_t){"archive/byteorder", (const uint8_t *)"little", 6};
    /* storages in the order the pickler meets them */
    int *order = xcalloc((size_t)s->nn, sizeof *order, "checkpoint records"), t = 0;
    collect(s, 0, order, &t);
    for (int i = 0; i < t; i++) {
        r[n] = (record_t){.data = NULL, .size = s->n[order[i]].numel};
        snprintf(r[n].name, sizeof r[n].name, "archive/data/%d", i);
        n++;
    }
    free(order);
    r[n++] = (record_t){"archive/version", (const uint8_t *)"3\n", 2};
    r[n++] = (record_t){"archive/.data/serialization_id", serial, 40};
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

/* CRC-32 of n zero bytes, by doubling a 64 KiB block with crc32_combine (O(log n), not O(n)) */
static uint32_t crc_zeros(int64_t n, const uint8_t *zeros)
{
    const int64_t B = 65536;
    uLong crc = crc32(0L, Z_NULL, 0), blk = crc32(0L, zeros, (uInt)B);
    int64_t blen = B;
    crc = crc32(crc, zeros, (uInt)(n % B));
    for (int64_t m = n / B; m; m >>= 1) {
        if (m & 1)
            crc = crc32_combine(crc, blk, (z_off_t)blen);
        blk = crc32_combine(blk, blk, (z_off_t)blen);
        blen *= 2;
    }
    return (uint32_t)crc;
}

typedef struct {
    uint32_t crc;
    int64_t ofs;
} written_t;

int ts_save(const ts_state_t *s, int fd, size_t bufsize, ts_io_t *io)
{
    bytes_t pkl = {0};
    record_t *r = NULL;
    int n = records(s, &pkl, &r), rc = -1;
    int64_t most = 65536;
    for (int i = 0; i < n; i++)
        if (!r[i].data && r[i].size > most) most = r[i].size;
    /* read-only anonymous pages: every page is the kernel's shared zero page, whatever the size */
    uint8_t *zeros = mmap(NULL, (size_t)most, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    written_t *w = xcalloc((size_t)n, sizeof *w, "checkpoint records");
    pyfile_t f = {.fd = fd, .buf = xmalloc(bufsize, "the checkpoint write buffer"), .cap = bufsize, .io = io};
    bytes_t cd = {0};
    if (zeros == MAP_FAILED)
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
        w[i].crc = R->data ? (uint32_t)crc32(crc32(0L, Z_NULL, 0), R->data, (uInt)R->size) : crc_zeros(R->size, zeros);
        if (L.zip64_extra) {
            le16(z64, 1), le16(z64 + 2, (uint32_t)(L.zip64_extra - 4));
            uint8_t *q = z64 + 4;
            /* the local field holds the size and a compressed size of 0 (miniz writes it before the data) */
            if ((uint64_t)R->size >= U32MAX) le64(q, (uint64_t)R->size), le64(q + 8, 0), q += 16;
            if ((uint64_t)ofs >= U32MAX) le64(q, (uint64_t)ofs);
        }
        fb[0] = 'F', fb[1] = 'B';
        le16(fb + 2, (uint32_t)L.pad);
        memset(fb + 4, 'Z', (size_t)L.pad);
        le32(d + 4, w[i].crc);
        if (L.zip64_extra)
            le64(d + 8, (uint64_t)R->size), le64(d + 16, (uint64_t)R->size);
        else
            le32(d + 8, (uint32_t)R->size), le32(d + 12, (uint32_t)R->size);
        if (py_write(&f, h, 30) || py_write(&f, R->name, nl) || (L.zip64_extra && py_write(&f, z64, (size_t)L.zip64_extra)) ||
            py_write(&f, fb, 4 + (size_t)L.pad) || py_write(&f, R->data ? R->data : zeros, (size_t)R->size) ||
            py_write(&f, d, (size_t)L.desc))
            goto out;
        ofs += 30 + (int64_t)nl + L.zip64_extra + 4 + L.pad + R->size + L.desc;
    }
    /* the central directory, one write; then the zip64 end record, its locator and the end record */
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
        put(&cd, e, 46);
        put(&cd, R->name, nl);
        if (ex) {
            uint8_t *q = x + 4;
            le16(x, 1), le16(x + 2, (uint32_t)(ex - 4));
            if ((uint64_t)R->size >= U32MAX) le64(q, (uint64_t)R->size), le64(q + 8, (uint64_t)R->size), q += 16;
            if ((uint64_t)w[i].ofs >= U32MAX) le64(q, (uint64_t)w[i].ofs);
            put(&cd, x, (size_t)ex);
        }
    }
    uint8_t e64[56] = {'P', 'K', 6, 6}, loc[20] = {'P', 'K', 6, 7}, end[22] = {'P', 'K', 5, 6};
    le64(e64 + 4, 44), le16(e64 + 12, 0x031e), le16(e64 + 14, 0x002d);
    le64(e64 + 24, (uint64_t)n), le64(e64 + 32, (uint64_t)n), le64(e64 + 40, cd.len), le64(e64 + 48, (uint64_t)ofs);
    le64(loc + 8, (uint64_t)ofs + cd.len), le32(loc + 16, 1);
    le16(end + 8, (uint32_t)n), le16(end + 10, (uint32_t)n);
    le32(end + 12, cd.len >= U32MAX ? U32MAX : (uint32_t)cd.len);
    le32(end + 16, (uint64_t)ofs >= U32MAX ? U32MAX : (uint32_t)ofs);
    if (py_write(&f, cd.b, cd.len) || py_write(&f, e64, 56) || py_write(&f, loc, 20) || py_write(&f, end, 22) ||
        py_flush(&f))
        goto out;
    rc = 0;
out:;
    int saved = errno;
    if (zeros != MAP_FAILED)
        munmap(zeros, (size_t)most);
    free(f.buf), free(w), free(cd.b), free(r), free(pkl.b);
    errno = saved;
    return rc;
}
