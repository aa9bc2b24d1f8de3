/* numpy's SeedSequence and PCG64 (pcg64.h), written from their specification: numpy/random/bit_generator.pyx
 * (SeedSequence: _int_to_uint32_array, mix_entropy, generate_state; hashmix and mix with INIT_A/MULT_A/INIT_B/MULT_B/
 * MIX_MULT_L/MIX_MULT_R, XSHIFT 16), numpy/random/_pcg64.pyx (PCG64: generate_state(4, uint64) -> pcg64_set_seed:
 * initstate = s[0]:s[1], initseq = s[2]:s[3]), src/pcg64/pcg64.h (pcg_setseq_128 step, XSL-RR output; next_uint32
 * hands out the low then the high half of one 64-bit draw), src/distributions/distributions.c (next_float: the
 * 32-bit draw >> 8 times 2^-24), _bounded_integers (integers(0, 2**63): Lemire's method with a range of 2^63, whose
 * threshold is 0: the draw's top 63 bits). */
#include "pcg64.h"

#define INIT_A 0x43b0d7e5u
#define MULT_A 0x931e8875u
#define INIT_B 0x8b51f9ddu
#define MULT_B 0x58f38dedu
#define MIX_MULT_L 0xca01f9ddu
#define MIX_MULT_R 0x4973f715u
#define POOL 4
#define MULT128 (((unsigned __int128)0x2360ED051FC65DA4ull << 64) | 0x4385DF649FCCF645ull)

static uint32_t hashmix(uint32_t v, uint32_t *hc)
{
    v ^= *hc;
    *hc *= MULT_A;
    v *= *hc;
    return v ^ (v >> 16);
}

static uint32_t mix(uint32_t x, uint32_t y)
{
    uint32_t r = MIX_MULT_L * x - MIX_MULT_R * y;
    return r ^ (r >> 16);
}

static void step(pcg64_t *g) { g->state = g->state * MULT128 + g->inc; }

void pcg64_seed(pcg64_t *g, uint64_t seed)
{
    uint32_t ent[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, pool[POOL], hc = INIT_A;
    int n = seed >> 32 ? 2 : 1; /* the integer's 32-bit words, least significant first ([0] for 0) */
    for (int i = 0; i < POOL; i++) pool[i] = hashmix(i < n ? ent[i] : 0, &hc);
    for (int s = 0; s < POOL; s++)
        for (int d = 0; d < POOL; d++)
            if (s != d)
                pool[d] = mix(pool[d], hashmix(pool[s], &hc));
    uint32_t w[8], h = INIT_B; /* generate_state(4, uint64): 8 words from the pool, cycled */
    for (int i = 0; i < 8; i++) {
        uint32_t v = pool[i % POOL] ^ h;
        h *= MULT_B;
        v *= h;
        w[i] = v ^ (v >> 16);
    }
    uint64_t s64[4];
    for (int k = 0; k < 4; k++) s64[k] = (uint64_t)w[2 * k] | (uint64_t)w[2 * k + 1] << 32;
    unsigned __int128 initstate = (unsigned __int128)s64[0] << 64 | s64[1];
    unsigned __int128 initseq = (unsigned __int128)s64[2] << 64 | s64[3];
    g->state = 0;
    g->inc = initseq << 1 | 1;
    step(g);
    g->state += initstate;
    step(g);
    g->has_uint32 = 0;
    g->uinteger = 0;
}

uint64_t pcg64_next64(pcg64_t *g)
{
    step(g);
    uint64_t x = (uint64_t)(g->state >> 64) ^ (uint64_t)g->state;
    unsigned r = (unsigned)(g->state >> 122);
    return (x >> r) | (x << ((64 - r) & 63));
}

uint64_t pcg64_int63(pcg64_t *g) { return pcg64_next64(g) >> 1; }

static uint32_t next32(pcg64_t *g)
{
    if (g->has_uint32) {
        g->has_uint32 = 0;
        return g->uinteger;
    }
    uint64_t n = pcg64_next64(g);
    g->has_uint32 = 1;
    g->uinteger = (uint32_t)(n >> 32);
    return (uint32_t)n;
}

void pcg64_uint8_fill(pcg64_t *g, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float f = (float)(next32(g) >> 8) * (1.0f / 16777216.0f);
        float y = f * 255.0f + 0.0f; /* records * (max - min) + min, in float32 */
        out[i] = (uint8_t)y;         /* astype(uint8): truncation */
    }
}
