/* strutil.h - small string helpers (bounded copies, case-insensitive compare,
 * trimming, duplication) shared by the library. */
#ifndef HIPOBJ_STRUTIL_H
#define HIPOBJ_STRUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Copies at most dstsz-1 bytes and NUL-terminates; returns strlen(src). */
size_t hstrlcpy(char *dst, const char *src, size_t dstsz);
/* strdup that accepts NULL (returns NULL). */
char *hstrdup(const char *s);
char *hstrndup(const char *s, size_t n);
int hstrcaseeq(const char *a, const char *b);
int hstrncaseeq(const char *a, const char *b, size_t n);
/* Trims ASCII whitespace from both ends of [*s, *s+*n). */
void hstrtrim(const char **s, size_t *n);
/* Parses a decimal u64 from the whole string; -1 on junk or overflow. */
int hparse_u64(const char *s, size_t n, uint64_t *out);

#endif
