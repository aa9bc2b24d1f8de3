/* A JPEG or PNG file as MLCommons DLIO 3.x writes it on a local file system without DALI (the non-DALI "fast path"
 * of data_generator/jpeg_generator.py:60-98 and png_generator.py, identical but for the extension, at f6796ed):
 * not an image bitstream but d1 x d2 raw bytes, gen_random_tensor(shape=(d1, d2), uint8, rng=default_rng(file_seed))
 * written as they are (open(path, 'wb').write(data)). Without dgen-py (the 3.x lock installs none) that is numpy's
 * stream (pcg64.h), byte-identical; with dgen-py the bytes are dgen's unseeded entropy (utils/utility.py:616-629),
 * which nobody can reproduce: the size and the name stay as here. */
#ifndef H5DLIO_IMAGE_H
#define H5DLIO_IMAGE_H
#include <stddef.h>
#include <stdint.h>

/* Write the file at path (created, truncated): d1 * d2 bytes of default_rng(seed) scaled to uint8, generated bufsize
 * bytes at a time into buf. Returns the bytes written; on failure dies naming the file (EXIT_RUNTIME). */
int64_t image_write(const char *path, int64_t d1, int64_t d2, uint8_t *buf, size_t bufsize, uint64_t seed);
#endif
