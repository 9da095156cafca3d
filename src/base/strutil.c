/* strutil.c - small string helpers (see strutil.h). */
#include "strutil.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

size_t hstrlcpy(char *dst, const char *src, size_t dstsz) {
  size_t n = strlen(src);
  if (dstsz) {
    size_t c = n < dstsz - 1 ? n : dstsz - 1;
    memcpy(dst, src, c);
    dst[c] = '\0';
  }
  return n;
}

char *hstrdup(const char *s) {
  return s ? strdup(s) : NULL;
}

char *hstrndup(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p)
    return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

int hstrcaseeq(const char *a, const char *b) {
  return strcasecmp(a, b) == 0;
}

int hstrncaseeq(const char *a, const char *b, size_t n) {
  return strncasecmp(a, b, n) == 0;
}

void hstrtrim(const char **s, size_t *n) {
  while (*n && isspace((unsigned char)**s)) {
    (*s)++;
    (*n)--;
  }
  while (*n && isspace((unsigned char)(*s)[*n - 1]))
    (*n)--;
}

int hparse_u64(const char *s, size_t n, uint64_t *out) {
  if (n == 0)
    return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}
