/* buf.c - growable byte buffer / string builder (see buf.h). */
#include "buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hbuf_reserve(struct hbuf *b, size_t extra) {
  if (b->oom)
    return -1;
  if (extra > SIZE_MAX - b->len - 1) {
    b->oom = 1;
    return -1;
  }
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->data = p;
  b->cap = cap;
  return 0;
}

int hbuf_append(struct hbuf *b, const void *data, size_t len) {
  if (hbuf_reserve(b, len) != 0)
    return -1;
  if (len)
    memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
  return 0;
}

int hbuf_puts(struct hbuf *b, const char *s) {
  return hbuf_append(b, s, strlen(s));
}

int hbuf_putc(struct hbuf *b, char c) {
  return hbuf_append(b, &c, 1);
}

/* One formatting pass when the text fits the buffer's spare room, or a
 * small one on the stack for a buffer that has little (a fresh one): a
 * signed request formats a dozen short strings, and measuring each with a
 * first vsnprintf doubled their cost. Longer texts are measured, then
 * written. */
int hbuf_vprintf(struct hbuf *b, const char *fmt, va_list ap) {
  enum { LOCAL = 256 };
  char local[LOCAL];
  if (b->oom)
    return -1;
  size_t room = b->data ? b->cap - b->len : 0;
  int in_room = room >= LOCAL;
  char *dst = in_room ? b->data + b->len : local;
  size_t dsz = in_room ? room : LOCAL;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(dst, dsz, fmt, ap2);
  va_end(ap2);
  if (n >= 0 && (size_t)n < dsz) {
    if (!in_room)
      return hbuf_append(b, local, (size_t)n);
    b->len += (size_t)n;
    return 0;
  }
  if (in_room)
    b->data[b->len] = '\0'; /* the cut text in the room is not ours */
  if (n < 0 || hbuf_reserve(b, (size_t)n) != 0) {
    b->oom = 1;
    return -1;
  }
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
  return 0;
}

int hbuf_printf(struct hbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = hbuf_vprintf(b, fmt, ap);
  va_end(ap);
  return rc;
}

void hbuf_reset(struct hbuf *b) {
  b->len = 0;
  b->oom = 0;
  if (b->data)
    b->data[0] = '\0';
}

void hbuf_free(struct hbuf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}

char *hbuf_steal(struct hbuf *b) {
  if (b->oom) {
    hbuf_free(b);
    return NULL;
  }
  char *s = b->data ? b->data : strdup("");
  b->data = NULL;
  b->len = b->cap = 0;
  return s;
}

const char *hbuf_str(const struct hbuf *b) {
  return b->data ? b->data : "";
}
