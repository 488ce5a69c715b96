/* CRC-32C (Castagnoli), as used by the Zarr v3 crc32c codec.
 *
 * zc_crc32c(0, buf, len) is the checksum of buf; passing a previous result as
 * `crc` continues it over more data.  Uses the SSE4.2 crc32 instruction when
 * the CPU has it (checked once, at run time), a table-driven version otherwise.
 * Thread-safe and re-entrant; callable without the GIL.
 */
#ifndef ZARRC_CRC32C_H
#define ZARRC_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t zc_crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t zc_crc32c_software(uint32_t crc, const void *buf, size_t len);
int zc_crc32c_hardware_available(void);

/* Internal: the SSE4.2 body (crc32c_sse42.c) and the tables it needs. */
#define ZC_CRC32C_LONG 8192
#define ZC_CRC32C_SHORT 256
uint32_t zc_crc32c_sse42(uint32_t reg, const unsigned char *p, size_t len,
                         const uint32_t long_shift[4][256],
                         const uint32_t short_shift[4][256]);

#endif
