/* fuzz.h - what the libFuzzer harnesses of tests/fuzz/ share: a property
 * check that aborts (so libFuzzer reports it as a crash and keeps the
 * input), and a reader that splits an input into fields. Harnesses are
 * built by tests/fuzz/run.sh with clang -fsanitize=fuzzer,address,
 * undefined; each defines LLVMFuzzerTestOneInput. */
#ifndef HIPOBJ_FUZZ_H
#define HIPOBJ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "property failed at %s:%d: %s: ", __FILE__, __LINE__,    \
              #cond);                                                          \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* Input cut into fields at a separator byte (0xff never appears in the
 * hand-made seeds' text): field(i) is a malloc'd NUL-terminated copy of
 * the i-th one ("" past the last), free with fuzz_free. */
struct fuzz_in {
  const uint8_t *data;
  size_t size;
};

static inline char *fuzz_field(struct fuzz_in in, unsigned i, size_t *len) {
  const uint8_t *p = in.data, *end = in.data + in.size;
  for (unsigned k = 0; k < i && p <= end; k++) {
    const uint8_t *sep = memchr(p, 0xff, (size_t)(end - p));
    p = sep ? sep + 1 : end + 1;
  }
  size_t n = 0;
  if (p <= end) {
    const uint8_t *sep = memchr(p, 0xff, (size_t)(end - p));
    n = (size_t)((sep ? sep : end) - p);
  }
  char *s = malloc(n + 1);
  if (!s)
    abort();
  if (n)
    memcpy(s, p, n);
  s[n] = '\0';
  if (len)
    *len = n;
  return s;
}

#endif
