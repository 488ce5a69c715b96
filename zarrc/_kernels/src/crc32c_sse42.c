/* CRC-32C with the SSE4.2 crc32 instruction: three interleaved streams, joined
 * with the shift tables from crc32c.c.  Compiled with -msse4.2, on its own; only
 * called when the CPU reports SSE4.2. */
#include "crc32c.h"

#include <nmmintrin.h>
#include <string.h>

static inline uint32_t shift(const uint32_t table[4][256], uint32_t reg)
{
    return table[0][reg & 0xff] ^ table[1][(reg >> 8) & 0xff] ^
           table[2][(reg >> 16) & 0xff] ^ table[3][reg >> 24];
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static const unsigned char *interleave(uint32_t *reg, const unsigned char *p,
                                       size_t *len, size_t block,
                                       const uint32_t table[4][256])
{
    while (*len >= 3 * block) {
        uint64_t c0 = *reg, c1 = 0, c2 = 0;
        const unsigned char *end = p + block;
        do {
            c0 = _mm_crc32_u64(c0, load64(p));
            c1 = _mm_crc32_u64(c1, load64(p + block));
            c2 = _mm_crc32_u64(c2, load64(p + 2 * block));
            p += 8;
        } while (p < end);
        uint32_t r = shift(table, (uint32_t)c0) ^ (uint32_t)c1;
        *reg = shift(table, r) ^ (uint32_t)c2;
        p += 2 * block;
        *len -= 3 * block;
    }
    return p;
}

uint32_t zc_crc32c_sse42(uint32_t reg, const unsigned char *p, size_t len,
                         const uint32_t long_shift[4][256],
                         const uint32_t short_shift[4][256])
{
    while (len && ((uintptr_t)p & 7)) {
        reg = _mm_crc32_u8(reg, *p++);
        len--;
    }
    p = interleave(&reg, p, &len, ZC_CRC32C_LONG, long_shift);
    p = interleave(&reg, p, &len, ZC_CRC32C_SHORT, short_shift);
    uint64_t c = reg;
    while (len >= 8) {
        c = _mm_crc32_u64(c, load64(p));
        p += 8;
        len -= 8;
    }
    reg = (uint32_t)c;
    while (len--)
        reg = _mm_crc32_u8(reg, *p++);
    return reg;
}
