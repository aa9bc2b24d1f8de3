/* numpy's default generator as DLIO 3.x's npz generator uses it: np.random.default_rng(seed) (SeedSequence of an
 * integer, PCG64 with the XSL-RR output), Generator.integers(0, 2**63) and Generator.random(dtype=float32) scaled to
 * uint8 as utils/utility.py gen_random_tensor does (f6796ed :640-660). Checked against numpy itself in
 * tests/test_dlio3_npz.py (the files' bytes). */
#ifndef H5DLIO_PCG64_H
#define H5DLIO_PCG64_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned __int128 state, inc;
    int has_uint32;
    uint32_t uinteger;
} pcg64_t;

void pcg64_seed(pcg64_t *g, uint64_t seed); /* np.random.default_rng(seed) */
uint64_t pcg64_next64(pcg64_t *g);          /* bit_generator.random_raw() */
uint64_t pcg64_int63(pcg64_t *g);           /* Generator.integers(0, 2**63) */
/* n bytes of gen_random_tensor(shape, uint8, rng): (rng.random(float32) * 255 + 0).astype(uint8), in C order */
void pcg64_uint8_fill(pcg64_t *g, uint8_t *out, size_t n);
#endif
