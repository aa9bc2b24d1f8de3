/* np.savez's npz files (npz.h). The layout, from numpy 2.x numpy/lib/_npyio_impl.py _savez (zipfile.ZipFile(file,
 * "w", ZIP_STORED, allowZip64=True); zipf.open(name, "w", force_zip64=True) per array; format.write_array), numpy/lib
 * /format.py _write_array_header/_wrap_header, and CPython 3.12 Lib/zipfile ZipInfo.FileHeader/_write_end_record;
 * measured against a file np.savez wrote in DLIO 3.x's venv (numpy 2.4.6, Python 3.12.1: tests/test_dlio3_npz.py). */
#define _GNU_SOURCE
#include "npz.h"
#include "pcg64.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define LOCAL_HDR 30 /* local file header, then the name and the zip64 extra field */
#define ZIP64_EXTRA 20
#define CENTRAL_HDR 46
#define END_RECORD 22
#define NAME_LEN 5 /* "x.npy", "y.npy" */
#define NPY_ALIGN 64
#define GROWTH_AXIS_MAX_DIGITS 21

/* The npy 1.0 header of an array: magic, version, header length, the dict numpy writes (keys sorted; shape's
 * tuple repr; GROWTH_AXIS_MAX_DIGITS minus the digits of shape[0] spaces), padded with spaces and a newline to a
 * multiple of 64 bytes. Returns its length (at most len). */
static size_t npy_header(char *out, size_t len, const char *descr, const int64_t *shape, int nd)
{
    char dict[256], tup[128];
    int t = 0;
    for (int i = 0; i < nd; i++)
        t += snprintf(tup + t, sizeof tup - (size_t)t, "%s%lld", i ? ", " : "", (long long)shape[i]);
    snprintf(tup + t, sizeof tup - (size_t)t, nd == 1 ? ",)" : ")");
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s, }", descr, tup);
    char first[32];
    int pad = GROWTH_AXIS_MAX_DIGITS - snprintf(first, sizeof first, "%lld", (long long)shape[0]);
    size_t hlen = (size_t)n + (size_t)(pad > 0 ? pad : 0) + 1; /* + '\n' */
    size_t padlen = NPY_ALIGN - ((8 + 2 + hlen) % NPY_ALIGN);  /* MAGIC_LEN (prefix + version) + '<H' */
    size_t total = 10 + hlen + padlen;
    if (total > len)
        die(EXIT_RUNTIME, "npy header of %zu bytes exceeds its buffer", total);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)((hlen + padlen) & 0xFF), out[9] = (char)((hlen + padlen) >> 8);
    memcpy(out + 10, dict, (size_t)n);
    memset(out + 10 + n, ' ', total - 11 - (size_t)n);
    out[total - 1] = '\n';
    return total;
}

static size_t x_header(char *out, size_t len, int64_t d1, int64_t d2, int64_t spf)
{
    int64_t shape[3] = {d1, d2, spf};
    return npy_header(out, len, "|u1", shape, 3);
}

static size_t y_header(char *out, size_t len, int64_t spf) { return npy_header(out, len, "<i8", &spf, 1); }

int64_t npz_file_size(int64_t d1, int64_t d2, int64_t spf)
{
    char h[512];
    int64_t x = (int64_t)x_header(h, sizeof h, d1, d2, spf) + d1 * d2 * spf;
    int64_t y = (int64_t)y_header(h, sizeof h, spf) + 8 * spf;
    return 2 * (LOCAL_HDR + NAME_LEN + ZIP64_EXTRA) + x + y + 2 * (CENTRAL_HDR + NAME_LEN) + END_RECORD;
}

static void le16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void le32(uint8_t *p, uint32_t v) { le16(p, v & 0xFFFF), le16(p + 2, v >> 16); }
static void le64(uint8_t *p, uint64_t v) { le32(p, (uint32_t)v), le32(p + 4, (uint32_t)(v >> 32)); }

/* ZipInfo.FileHeader(zip64=True): version 45, flags 0, STORED, 1980-01-01 00:00 (date 0x21), sizes 0xFFFFFFFF with
 * the real ones in the zip64 extra field (id 1, 16 bytes: file size, compressed size) */
static void local_header(uint8_t *h, const char *name, uint32_t crc, uint64_t size)
{
    memset(h, 0, LOCAL_HDR + NAME_LEN + ZIP64_EXTRA);
    le32(h, 0x04034b50);
    le16(h + 4, 45);
    le16(h + 12, 0x21);
    le32(h + 14, crc);
    le32(h + 18, 0xFFFFFFFF), le32(h + 22, 0xFFFFFFFF);
    le16(h + 26, NAME_LEN), le16(h + 28, ZIP64_EXTRA);
    memcpy(h + LOCAL_HDR, name, NAME_LEN);
    uint8_t *x = h + LOCAL_HDR + NAME_LEN;
    le16(x, 1), le16(x + 2, 16), le64(x + 4, size), le64(x + 12, size);
}

/* _write_end_record's central entry below ZIP64_LIMIT: made by 3.45 (Unix), needs 45, attributes 0o600 << 16 */
static void central_header(uint8_t *h, const char *name, uint32_t crc, uint32_t size, uint32_t offset)
{
    memset(h, 0, CENTRAL_HDR + NAME_LEN);
    le32(h, 0x02014b50);
    le16(h + 4, 0x032d), le16(h + 6, 45);
    le16(h + 14, 0x21);
    le32(h + 16, crc), le32(h + 20, size), le32(h + 24, size);
    le16(h + 28, NAME_LEN);
    le32(h + 38, 0600u << 16);
    le32(h + 42, offset);
    memcpy(h + CENTRAL_HDR, name, NAME_LEN);
}

static void put(int fd, const void *p, size_t n, const char *path)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die(EXIT_RUNTIME, "write %s: %s", path, w < 0 ? strerror(errno) : "no progress");
        b += w, n -= (size_t)w;
    }
}

static void put_at(int fd, const void *p, size_t n, off_t at, const char *path)
{
    if (pwrite(fd, p, n, at) != (ssize_t)n)
        die(EXIT_RUNTIME, "write %s: %s", path, strerror(errno));
}

int64_t npz_write(const char *path, int64_t d1, int64_t d2, int64_t spf, uint8_t *buf, size_t bufsize, uint64_t seed)
{
    pcg64_t g;
    pcg64_seed(&g, seed); /* npz_generator.py:88-96 gen_random_tensor(shape, dtype, rng=default_rng(file_seed)) */
    if (npz_file_size(d1, d2, spf) > NPZ_MAX_FILE)
        die(EXIT_BADINPUT,
            "%s: an npz file of %lld bytes needs zip64 central records (over 2^31 - 1 bytes), which "
            "the kernel does not write",
            path, (long long)npz_file_size(d1, d2, spf));
    /* np.savez's zipfile.ZipFile(file, "w") opens it "w+b" (CPython 3.12 Lib/zipfile/__init__.py:1316-1318): read
     * and write, created, truncated, Python's 0666 (measured on DLIO 3.x by strace.generate: O_CREAT|O_RDWR|O_TRUNC) */
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        die(EXIT_RUNTIME, "create %s: %s", path, strerror(errno));
    uint8_t lh[LOCAL_HDR + NAME_LEN + ZIP64_EXTRA], ch[2][CENTRAL_HDR + NAME_LEN], end[END_RECORD];
    char h[512];
    const char *names[2] = {"x.npy", "y.npy"};
    uint32_t offset[2], crc[2];
    int64_t size[2], pos = 0;
    for (int m = 0; m < 2; m++) {
        size_t hl = m == 0 ? x_header(h, sizeof h, d1, d2, spf) : y_header(h, sizeof h, spf);
        int64_t payload = m == 0 ? d1 * d2 * spf : 8 * spf;
        size[m] = (int64_t)hl + payload;
        offset[m] = (uint32_t)pos;
        local_header(lh, names[m], 0, (uint64_t)size[m]); /* CRC rewritten once known, as zipfile does on close */
        put(fd, lh, sizeof lh, path);
        uLong c = crc32(0L, Z_NULL, 0);
        c = crc32(c, (const Bytef *)h, (uInt)hl);
        put(fd, h, hl, path);
        if (m == 0)
            for (int64_t left = payload; left > 0;) {
                size_t n = (size_t)(left < (int64_t)bufsize ? left : (int64_t)bufsize);
                pcg64_uint8_fill(&g, buf, n);
                c = crc32(c, buf, (uInt)n);
                put(fd, buf, n, path);
                left -= (int64_t)n;
            }
        else {
            static const uint8_t zeros[4096]; /* the labels: int64 zeros */
            for (int64_t left = payload; left > 0;) {
                size_t n = (size_t)(left < (int64_t)sizeof zeros ? left : (int64_t)sizeof zeros);
                c = crc32(c, zeros, (uInt)n);
                put(fd, zeros, n, path);
                left -= (int64_t)n;
            }
        }
        crc[m] = (uint32_t)c;
        local_header(lh, names[m], crc[m], (uint64_t)size[m]);
        put_at(fd, lh, sizeof lh, (off_t)offset[m], path);
        pos += (int64_t)sizeof lh + size[m];
    }
    for (int m = 0; m < 2; m++) {
        central_header(ch[m], names[m], crc[m], (uint32_t)size[m], offset[m]);
        put(fd, ch[m], sizeof ch[m], path);
    }
    memset(end, 0, sizeof end);
    le32(end, 0x06054b50);
    le16(end + 8, 2), le16(end + 10, 2);
    le32(end + 12, (uint32_t)sizeof ch), le32(end + 16, (uint32_t)pos);
    put(fd, end, sizeof end, path);
    if (close(fd) != 0)
        die(EXIT_RUNTIME, "close %s: %s", path, strerror(errno));
    return d1 * d2 * spf;
}
