/* CRC-32C: table-driven software version, run-time dispatch to SSE4.2.
 *
 * The CRC register is linear over GF(2), so crc(A||B) = Z_len(B)(crc(A)) ^ crc0(B),
 * where Z_n is "feed n zero bytes" and crc0 starts from a zero register.  The
 * hardware body runs three streams at once and joins them with Z_n, which is
 * tabulated here (one 4x256 table per stream length).
 */
#include "crc32c.h"

#include <string.h>

#include "zc_platform.h"

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t slice[8][256];
static uint32_t long_shift[4][256];
static uint32_t short_shift[4][256];
static int have_sse42;
static zc_once_t init_once = ZC_ONCE_INIT;

/* Raw register update (no pre/post inversion), slicing by eight. */
static uint32_t raw_software(uint32_t reg, const unsigned char *p, size_t len)
{
    while (len && ((uintptr_t)p & 7)) {
        reg = slice[0][(reg ^ *p++) & 0xff] ^ (reg >> 8);
        len--;
    }
    while (len >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
#if defined(ZC_BIG_ENDIAN)
        lo = zc_bswap32(lo);
        hi = zc_bswap32(hi);
#endif
        lo ^= reg;
        reg = slice[7][lo & 0xff] ^ slice[6][(lo >> 8) & 0xff] ^
              slice[5][(lo >> 16) & 0xff] ^ slice[4][lo >> 24] ^
              slice[3][hi & 0xff] ^ slice[2][(hi >> 8) & 0xff] ^
              slice[1][(hi >> 16) & 0xff] ^ slice[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        reg = slice[0][(reg ^ *p++) & 0xff] ^ (reg >> 8);
    return reg;
}

/* Z_n as a 4x256 table: table[k][b] = Z_n(b << 8k). */
static void make_shift_table(uint32_t table[4][256], size_t n)
{
    static const unsigned char zeros[ZC_CRC32C_LONG];
    uint32_t basis[32];
    for (int bit = 0; bit < 32; bit++)
        basis[bit] = raw_software(1u << bit, zeros, n);
    for (int k = 0; k < 4; k++) {
        for (int b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int j = 0; j < 8; j++)
                if (b & (1 << j))
                    v ^= basis[8 * k + j];
            table[k][b] = v;
        }
    }
}

static void init_tables(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        slice[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = slice[0][n];
        for (int k = 1; k < 8; k++) {
            c = slice[0][c & 0xff] ^ (c >> 8);
            slice[k][n] = c;
        }
    }
    make_shift_table(long_shift, ZC_CRC32C_LONG);
    make_shift_table(short_shift, ZC_CRC32C_SHORT);
#if defined(ZC_X86) && defined(ZC_HAVE_SSE42)
    have_sse42 = zc_cpu_has_sse42();
#endif
}

uint32_t zc_crc32c_software(uint32_t crc, const void *buf, size_t len)
{
    zc_once(&init_once, init_tables);
    return ~raw_software(~crc, (const unsigned char *)buf, len);
}

int zc_crc32c_hardware_available(void)
{
    zc_once(&init_once, init_tables);
    return have_sse42;
}

uint32_t zc_crc32c(uint32_t crc, const void *buf, size_t len)
{
    zc_once(&init_once, init_tables);
#if defined(ZC_HAVE_SSE42)
    if (have_sse42)
        return ~zc_crc32c_sse42(~crc, (const unsigned char *)buf, len,
                                (const uint32_t(*)[256])long_shift,
                                (const uint32_t(*)[256])short_shift);
#endif
    return ~raw_software(~crc, (const unsigned char *)buf, len);
}
