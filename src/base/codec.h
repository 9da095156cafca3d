/* codec.h - hex and base64, the text forms of binary values every layer
 * writes and reads: digests, RDMA tokens and session ids in hex; checksums
 * (x-amz-checksum-*, the RDMA FINAL's CRC-64/NVME) and Content-MD5 in
 * standard base64. One alphabet each. Encoders cannot fail; decoders
 * accept exactly one spelling of each value and return 0 or -1. */
#ifndef HIPOBJ_BASE_CODEC_H
#define HIPOBJ_BASE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Lowercase hex of len bytes into out: 2 * len characters and a NUL. */
void hhex_encode(const uint8_t *in, size_t len, char *out);
/* The value of a hex digit of either case, or -1 for any other byte. */
int hhex_value(unsigned char c);
/* Exactly 2 * len hex digits of either case at s into out[0..len): 0, or -1
 * at the first byte that is not a hex digit (out is then partly written). */
int hhex_decode(const char *s, uint8_t *out, size_t len);

/* The standard alphabet (RFC 4648 section 4), without the '=' pad. */
#define HB64_ALPHABET                                                          \
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
/* Characters of the padded base64 of n bytes, without the NUL. */
#define HB64_LEN(n) (4 * (((n) + 2) / 3))

/* Padded standard base64 of len bytes into out (HB64_LEN(len) characters
 * and a NUL); returns HB64_LEN(len). */
size_t hb64_encode(const uint8_t *in, size_t len, char *out);
/* The value of a character of the alphabet, or -1 (also for '='). */
int hb64_value(unsigned char c);
/* Decodes s[0..n), which must be exactly the canonical padded base64 of
 * len bytes: n == HB64_LEN(len), characters of the alphabet, then the '='
 * padding, and the unused low bits of the last character zero, so that
 * stored values compare as strings. 0, or -1 for anything else. */
int hb64_decode(const char *s, size_t n, uint8_t *out, size_t len);

#endif
