/* uri.c - S3's URI encoding and canonical query strings (see uri.h).
 *
 * S3 signs exactly the bytes it receives, so encoding must be byte-exact:
 * only the RFC 3986 unreserved set stays literal, hex digits are uppercase,
 * and nothing is ever decoded and re-encoded (no double encoding) or
 * normalised ("a/./b" and "a//b" are distinct S3 keys). */
#include "uri.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

static int is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
}

int huri_encode(struct hbuf *out, const char *s, size_t n, int keep_slash) {
  static const char digits[] = "0123456789ABCDEF";
  if (!out || (!s && n))
    return -1;
  /* Worst case every byte becomes %XX: reserve once so the loop cannot fail
   * half-way and leave a partly encoded string behind. */
  if (n > (SIZE_MAX - 1) / 3 || hbuf_reserve(out, 3 * n) != 0)
    return -1;
  char *p = out->data + out->len;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      *p++ = (char)c;
    } else {
      *p++ = '%';
      *p++ = digits[c >> 4];
      *p++ = digits[c & 0x0f];
    }
  }
  *p = '\0';
  out->len = (size_t)(p - out->data);
  return 0;
}

int huri_decode(struct hbuf *out, const char *s, size_t n) {
  if (!out || (!s && n))
    return -1;
  /* The result is never longer than the input. */
  if (hbuf_reserve(out, n) != 0)
    return -1;
  size_t start = out->len;
  char *p = out->data + start;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '%') {
      *p++ = s[i];
      continue;
    }
    /* Both hex digits must be present: "%", "%4" and "%zz" are malformed. */
    int hi = i + 2 < n ? hhex_value((unsigned char)s[i + 1]) : -1;
    int lo = hi >= 0 ? hhex_value((unsigned char)s[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      /* Leave the buffer as it was: no half-decoded string escapes. */
      out->len = start;
      out->data[start] = '\0';
      return -1;
    }
    *p++ = (char)(hi << 4 | lo);
    i += 2;
  }
  *p = '\0';
  out->len = (size_t)(p - out->data);
  return 0;
}

struct enc_param {
  char *name;
  char *value;
};

static int cmp_enc_param(const void *a, const void *b) {
  const struct enc_param *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->value, y->value);
}

static char *encode_dup(const char *s) {
  struct hbuf b = HBUF_INIT;
  if (huri_encode(&b, s, strlen(s), 0) != 0) {
    hbuf_free(&b);
    return NULL;
  }
  return hbuf_steal(&b);
}

int huri_canonical_query(struct hbuf *out, const struct hparam *params,
                         size_t n) {
  if (!out || (!params && n))
    return -1;
  if (n == 0)
    return hbuf_append(out, "", 0);
  /* SigV4 sorts by the encoded bytes, which is not the raw order: "\xc3\xbc"
   * (u-umlaut) sorts after "z" raw, but its "%C3%BC" sorts before "a". */
  struct enc_param *e = calloc(n, sizeof *e);
  if (!e)
    return -1;
  int rc = -1;
  for (size_t i = 0; i < n; i++) {
    if (!params[i].name)
      goto done;
    e[i].name = encode_dup(params[i].name);
    e[i].value = encode_dup(params[i].value ? params[i].value : "");
    if (!e[i].name || !e[i].value)
      goto done;
  }
  qsort(e, n, sizeof *e, cmp_enc_param);
  size_t start = out->len;
  for (size_t i = 0; i < n; i++) {
    if (i)
      hbuf_putc(out, '&');
    hbuf_puts(out, e[i].name);
    hbuf_putc(out, '=');
    hbuf_puts(out, e[i].value);
  }
  if (out->oom) {
    /* hbuf keeps what fit; cut back so no truncated query is used. */
    out->len = start;
    if (out->data)
      out->data[start] = '\0';
    goto done;
  }
  rc = 0;
done:
  for (size_t i = 0; i < n; i++) {
    free(e[i].name);
    free(e[i].value);
  }
  free(e);
  return rc;
}
