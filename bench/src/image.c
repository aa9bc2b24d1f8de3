#include "image.h"
#include "pcg64.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int64_t image_write(const char *path, int64_t d1, int64_t d2, uint8_t *buf, size_t bufsize, uint64_t seed)
{
    pcg64_t g;
    pcg64_seed(&g, seed); /* data_generator.py:174 worker_rng = default_rng(seed=file_seed) */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die(EXIT_RUNTIME, "create %s: %s", path, strerror(errno));
    for (int64_t left = d1 * d2; left > 0;) { /* jpeg_generator.py:92-96: the (d1, d2) uint8 array in C order */
        size_t n = (size_t)(left < (int64_t)bufsize ? left : (int64_t)bufsize);
        pcg64_uint8_fill(&g, buf, n);
        for (const uint8_t *b = buf; n;) {
            ssize_t w = write(fd, b, n);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                die(EXIT_RUNTIME, "write %s: %s", path, w < 0 ? strerror(errno) : "no progress");
            b += w, n -= (size_t)w, left -= w;
        }
    }
    if (close(fd) != 0)
        die(EXIT_RUNTIME, "close %s: %s", path, strerror(errno));
    return d1 * d2;
}
