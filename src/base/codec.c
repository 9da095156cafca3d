/* codec.c - hex and base64 (see codec.h). */
#include "codec.h"

static const char hex_digits[] = "0123456789abcdef";
static const char b64_alphabet[] = HB64_ALPHABET;

void hhex_encode(const uint8_t *in, size_t len, char *out) {
  for (size_t i = 0; i < len; i++) {
    out[2 * i] = hex_digits[in[i] >> 4];
    out[2 * i + 1] = hex_digits[in[i] & 0x0f];
  }
  out[2 * len] = '\0';
}

int hhex_value(unsigned char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int hhex_decode(const char *s, uint8_t *out, size_t len) {
  for (size_t i = 0; i < len; i++) {
    int hi = hhex_value((unsigned char)s[2 * i]);
    int lo = hi < 0 ? -1 : hhex_value((unsigned char)s[2 * i + 1]);
    if (lo < 0)
      return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}

size_t hb64_encode(const uint8_t *in, size_t len, char *out) {
  size_t o = 0, i = 0;
  for (; i + 3 <= len; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    out[o++] = b64_alphabet[v >> 18];
    out[o++] = b64_alphabet[(v >> 12) & 63];
    out[o++] = b64_alphabet[(v >> 6) & 63];
    out[o++] = b64_alphabet[v & 63];
  }
  if (len - i == 1) {
    uint32_t v = (uint32_t)in[i] << 16;
    out[o++] = b64_alphabet[v >> 18];
    out[o++] = b64_alphabet[(v >> 12) & 63];
    out[o++] = '=';
    out[o++] = '=';
  } else if (len - i == 2) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
    out[o++] = b64_alphabet[v >> 18];
    out[o++] = b64_alphabet[(v >> 12) & 63];
    out[o++] = b64_alphabet[(v >> 6) & 63];
    out[o++] = '=';
  }
  out[o] = '\0';
  return o;
}

int hb64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int hb64_decode(const char *s, size_t n, uint8_t *out, size_t len) {
  if ((!s && n) || n != HB64_LEN(len))
    return -1;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    /* Bytes this group carries: 3, except in a last group with padding. */
    size_t bytes = len - o < 3 ? len - o : 3;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
      int d = 0;
      if (k <= bytes) {
        d = hb64_value((unsigned char)s[i + k]);
        if (d < 0)
          return -1;
      } else if (s[i + k] != '=') {
        return -1;
      }
      v = v << 6 | (uint32_t)d;
    }
    /* Canonical only: the bits past the last byte must be zero. */
    if (bytes < 3 && (v & ((1u << (8 * (3 - bytes))) - 1)) != 0)
      return -1;
    for (size_t b = 0; b < bytes; b++)
      out[o++] = (uint8_t)(v >> (16 - 8 * b));
  }
  return 0;
}
