/* SHA-256 (FIPS 180-4), for the core-config-v1 hash (coreconfig.c); tests/test_kernel_coreconfig.py checks it
 * against the NIST vectors through `h5dlio --sha256`. */
#ifndef H5DLIO_SHA256_H
#define H5DLIO_SHA256_H
#include <stddef.h>
#include <stdint.h>

/* The digest of len bytes as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char hex[65]);
#endif
