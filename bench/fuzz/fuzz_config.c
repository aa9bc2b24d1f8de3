/* libFuzzer target: the kernel's whole configuration front end, as main() runs it before any I/O.
 *
 * Input: byte 0 selects how the rest is given (bits 0-1: a .yaml file, a .json file, --set strings only, or a
 * file without extension plus --set strings), byte 1 the rank count to validate for (1..64); the rest is the file
 * text, then (after a 0x01 byte) up to 16 newline-separated --set strings.
 *
 * Invariants checked (abort = a finding):
 *   - config_load/config_validate never crash, hang or leak (ASan/UBSan/LSan), whatever the bytes;
 *   - a refusal is one non-empty line (what the user sees: "h5dlio: error: <line>");
 *   - an accepted config can be printed (config_to_json) and, for small datasets, every file path and dimension
 *     the run would use is computed without error (layout_init/layout_path never end the process).
 * Build and run: make fuzz (mk/reliability.mk). */
#define _GNU_SOURCE
#include "config.h"
#include "layout.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void remove_dir(void)
{
    const char *ext[] = {".yaml", ".json", ""};
    char p[512];
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/config%s", dir, ext[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* The config file of one input, in memory-backed /dev/shm when there is one (3x faster than a disk /tmp). */
static const char *write_input(const char *ext, const uint8_t *data, size_t n)
{
    static char path[512];
    if (!*dir) {
        const char *t = getenv("H5DLIO_FUZZ_TMPDIR");
        if (!t || !*t)
            t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/h5dlio-fuzz-%d", t, (int)getpid());
        if (mkdir(dir, 0700) != 0 && access(dir, W_OK) != 0)
            abort();
        atexit(remove_dir);
    }
    snprintf(path, sizeof path, "%s/config%s", dir, ext);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0)
        abort();
    return path;
}

static void check_one_line(const char *err)
{
    if (!*err || strchr(err, '\n') || strlen(err) >= CFG_ERRLEN) {
        fprintf(stderr, "fuzz_config: bad error message: '%s'\n", err);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int mode = data[0] & 3, nranks = 1 + data[1] % 64;
    data += 2, size -= 2;
    const uint8_t *sep = memchr(data, 0x01, size);
    size_t flen = sep ? (size_t)(sep - data) : size;
    const char *path = NULL;
    if (mode == 0)
        path = write_input(".yaml", data, flen);
    else if (mode == 1)
        path = write_input(".json", data, flen);
    else if (mode == 3)
        path = write_input("", data, flen);
    /* --set strings: the part after the separator (mode 2: all of it) */
    const uint8_t *sp = mode == 2 ? data : sep ? sep + 1 : NULL;
    size_t slen = mode == 2 ? size : sep ? size - flen - 1 : 0;
    char *setbuf = NULL, *sets[16];
    int nset = 0;
    if (sp) {
        setbuf = malloc(slen + 1);
        memcpy(setbuf, sp, slen);
        setbuf[slen] = 0;
        for (char *s = setbuf, *e; s && nset < 16; s = e ? e + 1 : NULL) {
            e = strchr(s, '\n');
            if (e)
                *e = 0;
            sets[nset++] = s;
        }
    }
    static config_t c;
    char err[CFG_ERRLEN] = "";
    int rc = config_load(&c, path, nset, sets, err);
    if (rc)
        check_one_line(err);
    else if ((rc = config_validate(&c, nranks, err)) != 0)
        check_one_line(err);
    else {
        char *j = config_to_json(&c);
        if (!j || j[0] != '{')
            abort();
        free(j);
        int64_t files = c.num_files_train + c.num_files_eval;
        if (files <= 1024) {
            layout_t L;
            layout_init(&L, &c);
            for (int ph = 0; ph < 2; ph++)
                for (int64_t i = 0; i < L.nfiles[ph]; i++) {
                    char p[4600];
                    int64_t d1, d2;
                    layout_path(&L, ph, i, p, sizeof p);
                    layout_dims(&L, ph, i, &d1, &d2);
                    if (d1 < 1 || d2 < 1)
                        abort();
                }
            layout_free(&L);
        }
    }
    free(setbuf);
    return 0;
}
