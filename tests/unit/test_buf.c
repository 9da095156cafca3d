/* test_buf.c - unit tests of buf.c (growable buffer) and strutil.c (string
 * helpers). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/buf.h"
#include "src/base/strutil.h"

Test(buf, empty_buffer_reads_as_empty_string) {
  struct hbuf b = HBUF_INIT;
  cr_assert_str_eq(hbuf_str(&b), "");
  cr_assert_eq(b.len, 0);
  char *s = hbuf_steal(&b);
  cr_assert_not_null(s);
  cr_assert_str_eq(s, "");
  free(s);
  hbuf_free(&b);
}

Test(buf, append_and_terminate) {
  struct hbuf b = HBUF_INIT;
  cr_assert_eq(hbuf_puts(&b, "abc"), 0);
  cr_assert_eq(hbuf_putc(&b, 'd'), 0);
  cr_assert_eq(hbuf_append(&b, "efgh", 2), 0);
  cr_assert_eq(hbuf_append(&b, NULL, 0), 0);
  cr_assert_eq(b.len, 6);
  cr_assert_str_eq(hbuf_str(&b), "abcdef");
  cr_assert_eq(b.data[b.len], '\0');
  hbuf_free(&b);
  cr_assert_null(b.data);
  cr_assert_eq(b.len, 0);
}

Test(buf, binary_data_with_nul) {
  struct hbuf b = HBUF_INIT;
  cr_assert_eq(hbuf_append(&b, "a\0b", 3), 0);
  cr_assert_eq(b.len, 3);
  cr_assert_eq(memcmp(b.data, "a\0b", 4), 0);
  hbuf_free(&b);
}

Test(buf, grows_across_many_appends) {
  struct hbuf b = HBUF_INIT;
  for (int i = 0; i < 10000; i++)
    cr_assert_eq(hbuf_printf(&b, "%04d,", i % 10000), 0);
  cr_assert_eq(b.len, 50000);
  cr_assert(b.cap > b.len);
  cr_assert_eq(strncmp(b.data, "0000,0001,", 10), 0);
  cr_assert_str_eq(b.data + b.len - 5, "9999,");
  hbuf_free(&b);
}

Test(buf, printf_formats_and_long_output) {
  struct hbuf b = HBUF_INIT;
  cr_assert_eq(hbuf_printf(&b, "%s=%d;", "x", 42), 0);
  cr_assert_str_eq(hbuf_str(&b), "x=42;");
  char big[5000];
  memset(big, 'z', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  cr_assert_eq(hbuf_printf(&b, "[%s]", big), 0);
  cr_assert_eq(b.len, 5 + 2 + 4999);
  cr_assert_eq(b.data[b.len - 1], ']');
  hbuf_free(&b);
}

/* Texts around the sizes where hbuf_printf changes how it formats (its
 * 256-byte stack buffer, the spare room of the buffer) come out whole
 * after what was there, and a failed fit leaves nothing of itself. */
Test(buf, printf_at_every_size_boundary) {
  static const size_t lens[] = {0, 1, 254, 255, 256, 257, 300, 511, 512, 513};
  for (size_t pre = 0; pre < 3; pre++) {
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
      struct hbuf b = HBUF_INIT;
      if (pre == 1)
        hbuf_puts(&b, "head:");
      if (pre == 2) { /* room of 300 + 1 after "head:" */
        cr_assert_eq(hbuf_reserve(&b, 306), 0);
        hbuf_puts(&b, "head:");
      }
      char *s = malloc(lens[i] + 1);
      cr_assert_not_null(s);
      memset(s, 'a' + (int)(i % 26), lens[i]);
      s[lens[i]] = '\0';
      cr_assert_eq(hbuf_printf(&b, "%s|%d", s, 7), 0);
      size_t head = pre ? 5 : 0;
      cr_assert_eq(b.len, head + lens[i] + 2, "pre %zu len %zu", pre, lens[i]);
      cr_assert_eq(strlen(hbuf_str(&b)), b.len);
      cr_assert_eq(memcmp(b.data + head, s, lens[i]), 0);
      cr_assert_str_eq(b.data + head + lens[i], "|7");
      if (pre)
        cr_assert_eq(memcmp(b.data, "head:", 5), 0);
      free(s);
      hbuf_free(&b);
    }
  }
}

Test(buf, reset_keeps_memory) {
  struct hbuf b = HBUF_INIT;
  hbuf_puts(&b, "hello");
  char *mem = b.data;
  hbuf_reset(&b);
  cr_assert_eq(b.len, 0);
  cr_assert_str_eq(hbuf_str(&b), "");
  cr_assert_eq(b.data, mem);
  hbuf_puts(&b, "x");
  cr_assert_str_eq(hbuf_str(&b), "x");
  hbuf_free(&b);
}

Test(buf, steal_hands_over_ownership) {
  struct hbuf b = HBUF_INIT;
  hbuf_puts(&b, "owned");
  char *s = hbuf_steal(&b);
  cr_assert_str_eq(s, "owned");
  cr_assert_null(b.data);
  cr_assert_eq(b.len, 0);
  free(s);
}

Test(buf, overflowing_reserve_sets_oom_and_sticks) {
  struct hbuf b = HBUF_INIT;
  hbuf_puts(&b, "keep");
  cr_assert_eq(hbuf_reserve(&b, SIZE_MAX), -1);
  cr_assert(b.oom);
  cr_assert_str_eq(hbuf_str(&b), "keep", "a failed append changes nothing");
  cr_assert_eq(hbuf_puts(&b, "more"), -1, "oom is sticky");
  cr_assert_eq(b.len, 4);
  cr_assert_null(hbuf_steal(&b), "steal reports the failure");
  cr_assert_null(b.data);
  hbuf_reset(&b);
  cr_assert_eq(b.oom, 0);
  cr_assert_eq(hbuf_puts(&b, "again"), 0);
  cr_assert_str_eq(hbuf_str(&b), "again");
  hbuf_free(&b);
}

Test(strutil, lcpy_truncates_and_terminates) {
  char d[4];
  cr_assert_eq(hstrlcpy(d, "ab", sizeof d), 2);
  cr_assert_str_eq(d, "ab");
  cr_assert_eq(hstrlcpy(d, "abcdef", sizeof d), 6);
  cr_assert_str_eq(d, "abc");
  d[0] = 'q';
  cr_assert_eq(hstrlcpy(d, "xyz", 0), 3);
  cr_assert_eq(d[0], 'q', "size 0 writes nothing");
  cr_assert_eq(hstrlcpy(d, "", sizeof d), 0);
  cr_assert_str_eq(d, "");
}

Test(strutil, dup_and_ndup) {
  cr_assert_null(hstrdup(NULL));
  char *a = hstrdup("abc");
  cr_assert_str_eq(a, "abc");
  free(a);
  char *b = hstrndup("abcdef", 3);
  cr_assert_str_eq(b, "abc");
  free(b);
  char *c = hstrndup("x", 0);
  cr_assert_str_eq(c, "");
  free(c);
}

Test(strutil, case_insensitive_compare) {
  cr_assert(hstrcaseeq("Content-Length", "content-length"));
  cr_assert(!hstrcaseeq("abc", "abd"));
  cr_assert(!hstrcaseeq("abc", "ab"));
  cr_assert(hstrncaseeq("ETAG: x", "etag: y", 6));
  cr_assert(!hstrncaseeq("ETAG: x", "etag: y", 7));
}

Test(strutil, trim) {
  const char *s = " \t a b \r\n";
  size_t n = strlen(s);
  hstrtrim(&s, &n);
  cr_assert_eq(n, 3);
  cr_assert_eq(strncmp(s, "a b", 3), 0);
  const char *blank = "  \t ";
  n = strlen(blank);
  hstrtrim(&blank, &n);
  cr_assert_eq(n, 0);
  const char *none = "";
  n = 0;
  hstrtrim(&none, &n);
  cr_assert_eq(n, 0);
}

Test(strutil, parse_u64) {
  uint64_t v = 0;
  cr_assert_eq(hparse_u64("0", 1, &v), 0);
  cr_assert_eq(v, 0);
  cr_assert_eq(hparse_u64("12345xyz", 5, &v), 0, "only n bytes are read");
  cr_assert_eq(v, 12345);
  cr_assert_eq(hparse_u64("18446744073709551615", 20, &v), 0);
  cr_assert_eq(v, UINT64_MAX);
  v = 9;
  cr_assert_eq(hparse_u64("18446744073709551616", 20, &v), -1);
  cr_assert_eq(hparse_u64("", 0, &v), -1);
  cr_assert_eq(hparse_u64("-1", 2, &v), -1);
  cr_assert_eq(hparse_u64("+1", 2, &v), -1);
  cr_assert_eq(hparse_u64(" 1", 2, &v), -1);
  cr_assert_eq(hparse_u64("1a", 2, &v), -1);
  cr_assert_eq(v, 9, "output untouched on failure");
}
