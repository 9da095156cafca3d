/* buf.h - growable byte buffer / string builder used across the library. */
#ifndef HIPOBJ_BUF_H
#define HIPOBJ_BUF_H

#include <stdarg.h>
#include <stddef.h>

/* Always NUL-terminated when data != NULL (the NUL is not counted in len).
 * A failed append leaves the buffer unchanged and sets `oom`, so callers may
 * append many times and check once. */
struct hbuf {
  char *data;
  size_t len;
  size_t cap;
  int oom;
};

#define HBUF_INIT                                                              \
  { NULL, 0, 0, 0 }

int hbuf_reserve(struct hbuf *b, size_t extra);
int hbuf_append(struct hbuf *b, const void *data, size_t len);
int hbuf_puts(struct hbuf *b, const char *s);
int hbuf_putc(struct hbuf *b, char c);
int hbuf_printf(struct hbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int hbuf_vprintf(struct hbuf *b, const char *fmt, va_list ap);
void hbuf_reset(struct hbuf *b);
void hbuf_free(struct hbuf *b);
/* Hands the string to the caller (never NULL on success: "" for empty). */
char *hbuf_steal(struct hbuf *b);
/* "" when empty, never NULL. */
const char *hbuf_str(const struct hbuf *b);

#endif
