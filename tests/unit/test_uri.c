/* test_uri.c - S3 URI encoding, decoding and canonical query strings.
 *
 * Expected strings follow the SigV4 UriEncode rules in AWS's S3 API
 * reference ("Signature Calculations for the Authorization Header"): only
 * A-Z a-z 0-9 - . _ ~ stay literal, other bytes become %XX with uppercase
 * hex, '/' is kept in object key paths only, space is %20 (never '+'). */
#include <criterion/criterion.h>
#include <string.h>

#include "src/base/uri.h"

static char *enc(const char *s, int keep_slash) {
  struct hbuf b = HBUF_INIT;
  cr_assert_eq(huri_encode(&b, s, strlen(s), keep_slash), 0);
  return hbuf_steal(&b);
}

#define ASSERT_ENC(in, keep, want)                                             \
  do {                                                                         \
    char *got_ = enc(in, keep);                                                \
    cr_expect_str_eq(got_, want, "encode(\"%s\", %d)", in, keep);              \
    free(got_);                                                                \
  } while (0)

Test(uri_encode, unreserved_stay_literal) {
  const char *all = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    "0123456789-._~";
  ASSERT_ENC(all, 0, all);
  ASSERT_ENC(all, 1, all);
}

Test(uri_encode, reserved_and_special) {
  ASSERT_ENC("a b", 0, "a%20b");
  ASSERT_ENC("a+b", 0, "a%2Bb");
  ASSERT_ENC("100%", 0, "100%25");
  ASSERT_ENC("k=v&x", 0, "k%3Dv%26x");
  ASSERT_ENC("~tilde~", 0, "~tilde~");
  ASSERT_ENC("test$file.text", 0, "test%24file.text");
  ASSERT_ENC("*", 0, "%2A");
  ASSERT_ENC("!'()", 0, "%21%27%28%29");
  ASSERT_ENC("?#[]@", 0, "%3F%23%5B%5D%40");
  ASSERT_ENC("", 0, "");
}

Test(uri_encode, uppercase_hex_and_control_bytes) {
  ASSERT_ENC("\x01\x1f\x7f", 0, "%01%1F%7F");
  ASSERT_ENC("\xff\xfe", 0, "%FF%FE");
  ASSERT_ENC(":;,", 0, "%3A%3B%2C");
}

Test(uri_encode, utf8_bytes) {
  /* U+00FC is C3 BC in UTF-8; U+20AC (euro) is E2 82 AC. */
  ASSERT_ENC("\xc3\xbc", 0, "%C3%BC");
  ASSERT_ENC("gr\xc3\xbc\xc3\x9f/\xe2\x82\xac", 1, "gr%C3%BC%C3%9F/%E2%82%AC");
}

Test(uri_encode, slash_with_and_without_keep) {
  ASSERT_ENC("dir/sub/obj 1.bin", 1, "dir/sub/obj%201.bin");
  ASSERT_ENC("dir/sub/obj 1.bin", 0, "dir%2Fsub%2Fobj%201.bin");
  /* No path normalisation: empty and dot segments survive. */
  ASSERT_ENC("/a//b/./c/../d/", 1, "/a//b/./c/../d/");
}

Test(uri_encode, no_double_encoding) {
  /* An already encoded string is data: its '%' is encoded once more only
   * when the caller encodes it again, never silently "fixed". */
  char *once = enc("a b", 0);
  cr_assert_str_eq(once, "a%20b");
  char *twice = enc(once, 0);
  cr_expect_str_eq(twice, "a%2520b");
  free(once);
  free(twice);
}

Test(uri_encode, embedded_nul_and_length) {
  struct hbuf b = HBUF_INIT;
  cr_assert_eq(huri_encode(&b, "a\0b", 3, 0), 0);
  cr_expect_str_eq(hbuf_str(&b), "a%00b");
  /* n bounds the input: "xyz" with n=1 is just "x". */
  hbuf_reset(&b);
  cr_assert_eq(huri_encode(&b, "x y", 1, 0), 0);
  cr_expect_str_eq(hbuf_str(&b), "x");
  hbuf_free(&b);
}

Test(uri_encode, appends) {
  struct hbuf b = HBUF_INIT;
  hbuf_puts(&b, "/bucket/");
  cr_assert_eq(huri_encode(&b, "my key", 6, 1), 0);
  cr_expect_str_eq(hbuf_str(&b), "/bucket/my%20key");
  cr_expect_eq(b.len, strlen("/bucket/my%20key"));
  hbuf_free(&b);
}

Test(uri_encode, null_arguments) {
  struct hbuf b = HBUF_INIT;
  cr_expect_eq(huri_encode(NULL, "a", 1, 0), -1);
  cr_expect_eq(huri_encode(&b, NULL, 1, 0), -1);
  cr_expect_eq(huri_encode(&b, NULL, 0, 0), 0);
  hbuf_free(&b);
}

static int dec(const char *s, struct hbuf *b) {
  hbuf_reset(b);
  return huri_decode(b, s, strlen(s));
}

Test(uri_decode, valid) {
  struct hbuf b = HBUF_INIT;
  cr_assert_eq(dec("a%20b", &b), 0);
  cr_expect_str_eq(hbuf_str(&b), "a b");
  cr_assert_eq(dec("%C3%bc", &b), 0); /* either case of hex */
  cr_expect_str_eq(hbuf_str(&b), "\xc3\xbc");
  cr_assert_eq(dec("a+b", &b), 0); /* '+' is not a space here */
  cr_expect_str_eq(hbuf_str(&b), "a+b");
  cr_assert_eq(dec("100%25", &b), 0);
  cr_expect_str_eq(hbuf_str(&b), "100%");
  cr_assert_eq(dec("a%2520b", &b), 0); /* decodes exactly one level */
  cr_expect_str_eq(hbuf_str(&b), "a%20b");
  cr_assert_eq(dec("", &b), 0);
  cr_expect_str_eq(hbuf_str(&b), "");
  hbuf_free(&b);
}

Test(uri_decode, malformed_escapes) {
  const char *bad[] = {"%",   "abc%", "%4",   "a%4", "%zz",
                       "%g0", "%0g",  "%%41", "ok%2"};
  struct hbuf b = HBUF_INIT;
  hbuf_puts(&b, "keep");
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_expect_eq(huri_decode(&b, bad[i], strlen(bad[i])), -1, "\"%s\"", bad[i]);
    /* A failed decode leaves what was there before. */
    cr_expect_str_eq(hbuf_str(&b), "keep", "after \"%s\"", bad[i]);
  }
  hbuf_free(&b);
}

Test(uri_decode, round_trip_every_byte) {
  char all[256];
  for (int i = 0; i < 256; i++)
    all[i] = (char)i;
  struct hbuf e = HBUF_INIT, d = HBUF_INIT;
  cr_assert_eq(huri_encode(&e, all, sizeof all, 0), 0);
  cr_assert_eq(huri_decode(&d, e.data, e.len), 0);
  cr_assert_eq(d.len, sizeof all);
  cr_expect_eq(memcmp(d.data, all, sizeof all), 0);
  hbuf_free(&e);
  hbuf_free(&d);
}

static char *query(const struct hparam *p, size_t n) {
  struct hbuf b = HBUF_INIT;
  cr_assert_eq(huri_canonical_query(&b, p, n), 0);
  return hbuf_steal(&b);
}

#define ASSERT_QUERY(params, want)                                             \
  do {                                                                         \
    char *got_ = query(params, sizeof params / sizeof params[0]);              \
    cr_expect_str_eq(got_, want);                                              \
    free(got_);                                                                \
  } while (0)

Test(canonical_query, bare_name) {
  /* AWS's "GET ?lifecycle" example signs "lifecycle=". */
  struct hparam p[] = {{"uploads", NULL}};
  ASSERT_QUERY(p, "uploads=");
  struct hparam q[] = {{"lifecycle", ""}};
  ASSERT_QUERY(q, "lifecycle=");
}

Test(canonical_query, sorted_by_name) {
  struct hparam p[] = {{"uploadId", "abc"}, {"partNumber", "1"}};
  ASSERT_QUERY(p, "partNumber=1&uploadId=abc");
  /* AWS's list example: given prefix first, signs "max-keys=2&prefix=J". */
  struct hparam q[] = {{"prefix", "J"}, {"max-keys", "2"}};
  ASSERT_QUERY(q, "max-keys=2&prefix=J");
}

Test(canonical_query, values_encoded) {
  struct hparam p[] = {{"prefix", "a b"}, {"list-type", "2"}};
  ASSERT_QUERY(p, "list-type=2&prefix=a%20b");
  struct hparam q[] = {{"prefix", "dir/x+y=z&w"}, {"delimiter", "/"}};
  ASSERT_QUERY(q, "delimiter=%2F&prefix=dir%2Fx%2By%3Dz%26w");
}

Test(canonical_query, bare_name_mixed_with_values) {
  struct hparam p[] = {{"uploads", NULL}, {"prefix", "p"}, {"a", "1"}};
  ASSERT_QUERY(p, "a=1&prefix=p&uploads=");
}

Test(canonical_query, same_name_sorted_by_value) {
  struct hparam p[] = {{"k", "b"}, {"k", "a"}, {"k", ""}};
  ASSERT_QUERY(p, "k=&k=a&k=b");
}

Test(canonical_query, sorted_by_encoded_bytes) {
  /* Raw, "\xc3\xbc" (0xC3) sorts after "z"; encoded, "%C3%BC" starts with
   * '%' (0x25) and sorts before "a". SigV4 sorts the encoded form. */
  struct hparam p[] = {{"z", "1"}, {"\xc3\xbc", "2"}, {"a", "3"}};
  ASSERT_QUERY(p, "%C3%BC=2&a=3&z=1");
  /* Upper case sorts before lower case (byte order, not case-folded). */
  struct hparam q[] = {{"b", "1"}, {"B", "2"}, {"a", "3"}};
  ASSERT_QUERY(q, "B=2&a=3&b=1");
}

Test(canonical_query, empty_and_errors) {
  struct hbuf b = HBUF_INIT;
  cr_expect_eq(huri_canonical_query(&b, NULL, 0), 0);
  cr_expect_str_eq(hbuf_str(&b), "");
  struct hparam bad[] = {{NULL, "v"}};
  cr_expect_eq(huri_canonical_query(&b, bad, 1), -1);
  cr_expect_eq(huri_canonical_query(&b, NULL, 1), -1);
  cr_expect_str_eq(hbuf_str(&b), "");
  hbuf_free(&b);
}
