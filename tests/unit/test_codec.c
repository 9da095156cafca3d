/* test_codec.c - src/base/codec.c: hex and base64, and above all that the
 * decoders accept exactly one spelling of each value. */
#include <criterion/criterion.h>
#include <string.h>

#include "src/base/codec.h"

Test(hex, encode_decode_round_trip) {
  uint8_t in[256], back[256];
  char hex[2 * sizeof in + 1];
  for (size_t i = 0; i < sizeof in; i++)
    in[i] = (uint8_t)i;
  hhex_encode(in, sizeof in, hex);
  cr_expect_eq(strlen(hex), 2 * sizeof in);
  cr_expect_eq(strncmp(hex, "000102", 6), 0);
  cr_expect_str_eq(hex + 2 * 250, "fafbfcfdfeff");
  cr_assert_eq(hhex_decode(hex, back, sizeof back), 0);
  cr_expect_eq(memcmp(in, back, sizeof in), 0);
  hhex_encode(in, 0, hex);
  cr_expect_str_eq(hex, "");
}

Test(hex, digits_of_either_case_and_nothing_else) {
  uint8_t out[4];
  cr_assert_eq(hhex_decode("DeadBEEF", out, 4), 0);
  cr_expect_eq(out[0], 0xde);
  cr_expect_eq(out[3], 0xef);
  cr_expect_eq(hhex_decode("deadbeeg", out, 4), -1);
  cr_expect_eq(hhex_decode("dead beef", out, 4), -1);
  cr_expect_eq(hhex_decode("0x12", out, 2), -1);
  cr_expect_eq(hhex_value('0'), 0);
  cr_expect_eq(hhex_value('f'), 15);
  cr_expect_eq(hhex_value('F'), 15);
  cr_expect_eq(hhex_value('g'), -1);
  cr_expect_eq(hhex_value('\0'), -1);
  cr_expect_eq(hhex_value(0xe4), -1);
}

Test(base64, decode_rfc4648_vectors) {
  const char *raw[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char *b64[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                       "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (size_t i = 0; i < 7; i++) {
    uint8_t out[8];
    size_t len = strlen(raw[i]);
    cr_expect_eq(HB64_LEN(len), strlen(b64[i]));
    cr_assert_eq(hb64_decode(b64[i], strlen(b64[i]), out, len), 0, "%s",
                 b64[i]);
    cr_expect_eq(memcmp(out, raw[i], len), 0, "%s", b64[i]);
  }
}

Test(base64, round_trip_every_length) {
  uint8_t in[40], out[40];
  char text[HB64_LEN(sizeof in) + 1];
  for (size_t i = 0; i < sizeof in; i++)
    in[i] = (uint8_t)(i * 37 + 11);
  for (size_t len = 0; len <= sizeof in; len++) {
    size_t n = hb64_encode(in, len, text);
    cr_assert_eq(n, HB64_LEN(len));
    cr_assert_eq(hb64_decode(text, n, out, len), 0, "len %zu", len);
    cr_expect_eq(memcmp(in, out, len), 0, "len %zu", len);
  }
}

Test(base64, one_spelling_only) {
  uint8_t out[8];
  /* "Zh==" carries the same byte as "Zg==" with a non-zero unused bit. */
  cr_expect_eq(hb64_decode("Zh==", 4, out, 1), -1);
  cr_expect_eq(hb64_decode("Zm9=", 4, out, 2), -1);
  /* Padding must be there, exactly, and only at the end. */
  cr_expect_eq(hb64_decode("Zg", 2, out, 1), -1);
  cr_expect_eq(hb64_decode("Zg=", 3, out, 1), -1);
  cr_expect_eq(hb64_decode("Zg=A", 4, out, 1), -1);
  cr_expect_eq(hb64_decode("Z===", 4, out, 1), -1);
  cr_expect_eq(hb64_decode("Zm8=", 4, out, 1), -1);
  cr_expect_eq(hb64_decode("Zm9v", 4, out, 2), -1);
  /* The standard alphabet: no URL-safe characters, spaces or NULs. */
  cr_expect_eq(hb64_decode("-_-_", 4, out, 3), -1);
  cr_expect_eq(hb64_decode("Zm9 ", 4, out, 3), -1);
  cr_expect_eq(hb64_decode("Zm\0v", 4, out, 3), -1);
  cr_expect_eq(hb64_decode("+/+/", 4, out, 3), 0);
  cr_expect_eq(out[0], 0xfb);
  cr_expect_eq(hb64_value('='), -1);
  cr_expect_eq(hb64_value('/'), 63);
  cr_expect_eq(hb64_decode(NULL, 0, out, 0), 0);
  cr_expect_eq(hb64_decode(NULL, 4, out, 3), -1);
}
