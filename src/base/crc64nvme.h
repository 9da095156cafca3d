/* crc64nvme.h - CRC-64/NVME, the checksum S3 calls CRC64NVME and the
 * hipobj-rc-v2 FINAL response carries (wire spec §4.6): reflected polynomial
 * 0xAD93D23594C93659, init and xorout all ones, check("123456789") =
 * 0xae8b14860a799888.
 *
 * Incremental use:   uint64_t c = crc64nvme_init();
 *                    c = crc64nvme_update(c, p, n); ... (any number of times)
 *                    uint64_t crc = crc64nvme_final(c);
 * or in one call:    crc64nvme(p, n).
 * crc64nvme_combine() joins the CRCs of two adjacent pieces computed
 * independently (parallel parts, multipart full-object checksums). All
 * functions are thread-safe.
 *
 * crc64nvme_update() uses PCLMULQDQ folding where the CPU has it (x86-64,
 * checked at run time), else the table code; both are exported so that
 * tests compare them and benchmarks time them. */
#ifndef HIPOBJ_BASE_CRC64NVME_H
#define HIPOBJ_BASE_CRC64NVME_H

#include <stddef.h>
#include <stdint.h>

/* Length of the base64 rendering without its NUL: 11 data characters + '='. */
#define CRC64NVME_B64_LEN 12

/* The running state before any byte (the init value, not yet a CRC). */
uint64_t crc64nvme_init(void);
/* Feeds n bytes; p may be NULL only when n is 0. */
uint64_t crc64nvme_update(uint64_t state, const void *p, size_t n);
/* The same by table lookups (slice-by-16) on any CPU: the reference. */
uint64_t crc64nvme_update_table(uint64_t state, const void *p, size_t n);
/* The same by PCLMULQDQ folding; the table code where the CPU has no
 * PCLMULQDQ/SSE4.1 (crc64nvme_has_clmul() 0) and for short pieces. */
uint64_t crc64nvme_update_clmul(uint64_t state, const void *p, size_t n);
int crc64nvme_has_clmul(void);
/* Turns a running state into the CRC value (applies xorout). */
uint64_t crc64nvme_final(uint64_t state);
/* The CRC of one buffer. */
uint64_t crc64nvme(const void *p, size_t n);
/* CRC(A || B) from crc_a = CRC(A), crc_b = CRC(B) and len_b = |B|. */
uint64_t crc64nvme_combine(uint64_t crc_a, uint64_t crc_b, uint64_t len_b);
/* crc * x^(8 * len) mod P: combine(a, b, len) = shift(a, len) ^ b. So the
 * CRC of pieces P1..Pn, met in any order, is the XOR of
 * shift(CRC(Pi), bytes after Pi): parts that finish out of order are
 * accumulated without keeping them. */
uint64_t crc64nvme_shift(uint64_t crc, uint64_t len);

/* Renders the CRC as S3 does: the 8 bytes big-endian, standard base64,
 * 12 characters + NUL into out. */
void crc64nvme_to_base64(uint64_t crc, char out[CRC64NVME_B64_LEN + 1]);
/* Parses exactly 12 characters of canonical base64 (11 data characters from
 * the standard alphabet, then '=', the 2 unused low bits zero). Returns 0, or
 * -1 when the text is anything else. */
int crc64nvme_from_base64(const char *s, size_t n, uint64_t *crc);

#endif
