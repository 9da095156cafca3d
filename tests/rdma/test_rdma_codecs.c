/* test_rdma_codecs.c - the hipobj-rc-v2 codecs against every test vector of
 * the wire specification (rdma-wire-protocol.md: RC-0..RC-4 of §2.4, the
 * header formats of §3.2, the PREPARE example and SigV4 vector of §3.3/§3.9,
 * the target encoding of §3.4, the CRC-64/NVME vectors of §4.6, DC-1..DC-3
 * of §7.1, the reply values of §7.2), plus malformed inputs for each parser.
 * Expected values are copied from the specification, not computed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/token.h"

#define S(lit) (lit), strlen(lit)

static const char RC1[] = "012a00000000000000000000000000ffff0a000005efbeadde00"
                          "100000007f00000010000000000000010000";
static const char RC2[] = "012301000000000000000000000000ffffc0a8640a0000000000"
                          "000000000000000000000000000000010000";
static const char RC3[] = "01efcdab0020010db80000000000000000000000010000000000"
                          "000000000000000000000000000000020000";
static const char RC4[] = "01dcfe0000fe80000000000000248a07030049d4f04523010000"
                          "00008c3a7f0000ffffff7f00000000011200";
static const char ZERO88[] =
    "0000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000";

static const uint8_t GID_10_0_0_5[16] = {0, 0, 0,    0,    0,  0, 0, 0,
                                         0, 0, 0xff, 0xff, 10, 0, 0, 5};

static void gid_v4(uint8_t g[16], int a, int b, int c, int d) {
  memset(g, 0, 16);
  g[10] = g[11] = 0xff;
  g[12] = (uint8_t)a, g[13] = (uint8_t)b, g[14] = (uint8_t)c,
  g[15] = (uint8_t)d;
}

static void check_encodes(const struct rdma_rc_token *t, const char *want) {
  char hex[RDMA_TOKEN_HEX_LEN + 1];
  rdma_token_encode(t, hex);
  cr_expect_str_eq(hex, want);
  struct rdma_rc_token back;
  int loop = -1;
  struct hipobj_error why = {0};
  cr_assert_eq(rdma_token_decode(want, strlen(want), 0, &back, &loop, &why), 0,
               "%s", why.message);
  cr_expect_eq(loop, 0);
  cr_expect(memcmp(&back.gid, t->gid, 16) == 0);
  cr_expect_eq(back.transport, t->transport);
  cr_expect_eq(back.qpn, t->qpn);
  cr_expect_eq(back.rkey, t->rkey);
  cr_expect_eq(back.addr, t->addr);
  cr_expect_eq(back.length, t->length);
  cr_expect_eq(back.port, t->port);
  cr_expect_eq(back.lid, t->lid);
}

Test(rc_token, vector_rc1) {
  struct rdma_rc_token t = {.transport = 1,
                            .qpn = 42,
                            .rkey = 0xdeadbeef,
                            .addr = 0x7f0000001000,
                            .length = 4096,
                            .port = 1};
  gid_v4(t.gid, 10, 0, 0, 5);
  check_encodes(&t, RC1);
  /* The field split given under the table. */
  uint8_t raw[RDMA_TOKEN_BYTES];
  rdma_token_pack(&t, raw);
  static const uint8_t want[RDMA_TOKEN_BYTES] = {
      0x01, 0x2a, 0x00, 0x00, 0x00, 0,    0,    0,    0,    0,    0,
      0,    0,    0,    0,    0xff, 0xff, 0x0a, 0x00, 0x00, 0x05, 0xef,
      0xbe, 0xad, 0xde, 0x00, 0x10, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00,
      0x00, 0x10, 0,    0,    0,    0,    0,    0,    0x01, 0x00, 0x00};
  cr_expect(memcmp(raw, want, sizeof want) == 0);
}

Test(rc_token, vector_rc2_client_prepare) {
  struct rdma_rc_token t = {.transport = 1, .qpn = 0x123, .port = 1};
  gid_v4(t.gid, 192, 168, 100, 10);
  check_encodes(&t, RC2);
}

Test(rc_token, vector_rc3_server_reply) {
  struct rdma_rc_token t = {.transport = 1, .qpn = 0xabcdef, .port = 2};
  static const uint8_t g[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                0,    0,    0,    0,    0, 0, 0, 1};
  memcpy(t.gid, g, 16);
  check_encodes(&t, RC3);
}

Test(rc_token, vector_rc4) {
  struct rdma_rc_token t = {.transport = 1,
                            .qpn = 0xfedc,
                            .rkey = 0x12345,
                            .addr = 0x7f3a8c000000,
                            .length = 0x7fffffff,
                            .port = 1,
                            .lid = 0x12};
  static const uint8_t g[16] = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                                0x24, 0x8a, 0x07, 0x03, 0x00, 0x49, 0xd4, 0xf0};
  memcpy(t.gid, g, 16);
  check_encodes(&t, RC4);
}

Test(rc_token, vector_rc0_loopback_marker) {
  struct rdma_rc_token z;
  memset(&z, 0, sizeof z);
  char hex[RDMA_TOKEN_HEX_LEN + 1];
  rdma_token_encode(&z, hex);
  cr_expect_str_eq(hex, ZERO88);
  struct rdma_rc_token t;
  int loop = 0;
  struct hipobj_error why = {0};
  cr_expect_eq(rdma_token_decode(S(ZERO88), 0, &t, &loop, &why),
               HIPOBJ_E_PROTOCOL);
  cr_expect_str_neq(why.message, "");
  cr_expect_eq(
      rdma_token_decode(S(ZERO88), RDMA_TOKEN_ALLOW_LOOPBACK, &t, &loop, NULL),
      0);
  cr_expect_eq(loop, 1);
  cr_expect_eq(
      rdma_token_decode(S(ZERO88), RDMA_TOKEN_PREPARE, &t, &loop, NULL), 0);
  cr_expect_eq(loop, 1);
}

Test(rc_token, either_case_and_whitespace_accepted) {
  char up[sizeof RC4];
  for (size_t i = 0; i < sizeof RC4; i++)
    up[i] = (char)(RC4[i] >= 'a' && RC4[i] <= 'f' ? RC4[i] - 32 : RC4[i]);
  struct rdma_rc_token t;
  cr_expect_eq(rdma_token_decode(S(up), 0, &t, NULL, NULL), 0);
  cr_expect_eq(t.qpn, 0xfedc);
  char padded[RDMA_TOKEN_HEX_LEN + 8];
  snprintf(padded, sizeof padded, " \t%s ", RC2);
  cr_expect_eq(rdma_token_decode(S(padded), 0, &t, NULL, NULL), 0);
  cr_expect_eq(t.qpn, 0x123);
}

Test(rc_token, legacy_suffix) {
  char buf[160];
  struct rdma_rc_token t;
  const char *ok[] = {":7f0000001000:1000", ":0:1", ":ffffffffffffffff:F"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(buf, sizeof buf, "%s%s", RC2, ok[i]);
    cr_expect_eq(
        rdma_token_decode(S(buf), RDMA_TOKEN_ALLOW_SUFFIX, &t, NULL, NULL), 0,
        "%s", ok[i]);
    cr_expect_eq(t.qpn, 0x123);
    /* Clients parsing a server token never accept it. */
    cr_expect_eq(rdma_token_decode(S(buf), 0, &t, NULL, NULL),
                 HIPOBJ_E_PROTOCOL);
  }
  const char *bad[] = {":",
                       "::",
                       ":1",
                       ":1:",
                       "::1",
                       ":1:2:3",
                       ":x:1",
                       ":1:g",
                       ":10000000000000000:1",
                       ":1:10000000000000000",
                       "1:1",
                       ": 1:1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(buf, sizeof buf, "%s%s", RC2, bad[i]);
    struct hipobj_error why = {0};
    cr_expect_eq(rdma_token_decode(S(buf), RDMA_TOKEN_PREPARE, &t, NULL, &why),
                 HIPOBJ_E_PROTOCOL, "suffix %s", bad[i]);
    cr_expect_str_neq(why.message, "");
  }
  /* The loopback marker with a suffix is still the marker. */
  snprintf(buf, sizeof buf, "%s:0:0", ZERO88);
  int loop = 0;
  cr_expect_eq(rdma_token_decode(S(buf), RDMA_TOKEN_PREPARE, &t, &loop, NULL),
               0);
  cr_expect_eq(loop, 1);
}

Test(rc_token, malformed) {
  char buf[160];
  struct rdma_rc_token t;
  struct hipobj_error why = {0};
  /* 87 and 89 characters. */
  cr_expect_eq(rdma_token_decode(RC1, 87, 0, &t, NULL, &why),
               HIPOBJ_E_PROTOCOL);
  snprintf(buf, sizeof buf, "%s0", RC1);
  cr_expect_eq(rdma_token_decode(S(buf), 0, &t, NULL, &why), HIPOBJ_E_PROTOCOL);
  cr_expect_eq(rdma_token_decode(S(""), 0, &t, NULL, &why), HIPOBJ_E_PROTOCOL);
  cr_expect_eq(rdma_token_decode(NULL, 0, 0, &t, NULL, &why),
               HIPOBJ_E_PROTOCOL);
  /* A non-hex character anywhere. */
  for (size_t pos = 0; pos < RDMA_TOKEN_HEX_LEN; pos += 29) {
    memcpy(buf, RC1, sizeof RC1);
    buf[pos] = 'g';
    cr_expect_eq(rdma_token_decode(S(buf), RDMA_TOKEN_PREPARE, &t, NULL, &why),
                 HIPOBJ_E_PROTOCOL, "pos %zu", pos);
  }
  /* Transport 00 (DC, reserved) and 02. */
  memcpy(buf, RC1, sizeof RC1);
  buf[1] = '0';
  cr_expect_eq(rdma_token_decode(S(buf), RDMA_TOKEN_PREPARE, &t, NULL, &why),
               HIPOBJ_E_PROTOCOL);
  cr_expect(strstr(why.message, "transport") != NULL);
  buf[1] = '2';
  cr_expect_eq(rdma_token_decode(S(buf), RDMA_TOKEN_PREPARE, &t, NULL, &why),
               HIPOBJ_E_PROTOCOL);
  /* A zero GID with other fields set. */
  struct rdma_rc_token z = {.transport = 1, .qpn = 7, .port = 1};
  char hex[RDMA_TOKEN_HEX_LEN + 1];
  rdma_token_encode(&z, hex);
  cr_expect_eq(rdma_token_decode(S(hex), RDMA_TOKEN_PREPARE, &t, NULL, &why),
               HIPOBJ_E_PROTOCOL);
  cr_expect(strstr(why.message, "GID") != NULL);
  /* Inner whitespace is not optional whitespace. */
  memcpy(buf, RC1, sizeof RC1);
  buf[40] = ' ';
  cr_expect_eq(rdma_token_decode(S(buf), 0, &t, NULL, &why), HIPOBJ_E_PROTOCOL);
}

Test(rc_token, qpn_keeps_32_bits) {
  struct rdma_rc_token t = {.transport = 1, .qpn = 0xff123456, .port = 1};
  gid_v4(t.gid, 10, 0, 0, 5);
  char hex[RDMA_TOKEN_HEX_LEN + 1];
  rdma_token_encode(&t, hex);
  cr_expect(strncmp(hex + 2, "563412ff", 8) == 0);
  struct rdma_rc_token back;
  cr_assert_eq(rdma_token_decode(S(hex), 0, &back, NULL, NULL), 0);
  cr_expect_eq(back.qpn & 0xffffff, 0x123456);
}

Test(gid, helpers) {
  char text[64];
  rdma_gid_format(GID_10_0_0_5, text, sizeof text);
  cr_expect_str_eq(text, "::ffff:10.0.0.5");
  cr_expect(rdma_gid_is_ipv4_mapped(GID_10_0_0_5));
  static const uint8_t ll[16] = {0xfe, 0x80, 0,    0,    0,    0,
                                 0,    0,    0x24, 0x8a, 0x07, 0x03,
                                 0x00, 0x49, 0xd4, 0xf0};
  rdma_gid_format(ll, text, sizeof text);
  cr_expect_str_eq(text, "fe80::248a:703:49:d4f0");
  cr_expect_not(rdma_gid_is_ipv4_mapped(ll));
  uint8_t zero[16] = {0};
  cr_expect(rdma_gid_is_zero(zero));
  cr_expect_not(rdma_gid_is_zero(ll));
}

/* ---- DC descriptor ------------------------------------------------------- */

static const char DC1[] = "00007f1234560000:00400000:01f2e973:0000:007a03:1:"
                          "00000000000000000000ffff0a000005";
static const char DC2[] = "0102030405060708:01020304:01020304:0102:010203:1:"
                          "0102030405060708090a0b0c0d0e0f10";
static const char DC3[] = "00007fe3c0000000:ffffffff:00000abc:0000:ffffff:1:"
                          "20010db8000000000000000000000005";

static void check_dc(const struct rdma_dc_desc *d, const char *want) {
  char out[RDMA_DC_DESC_LEN + 1];
  cr_assert_eq(strlen(want), 81);
  cr_assert_eq(rdma_dc_encode(d, out), 0);
  cr_expect_str_eq(out, want);
  struct rdma_dc_desc back;
  struct hipobj_error why = {0};
  cr_assert_eq(rdma_dc_decode(S(want), &back, &why), 0, "%s", why.message);
  cr_expect_eq(back.addr, d->addr);
  cr_expect_eq(back.size, d->size);
  cr_expect_eq(back.rkey, d->rkey);
  cr_expect_eq(back.lid, d->lid);
  cr_expect_eq(back.dctn, d->dctn);
  cr_expect_eq(back.gid_present, d->gid_present);
  cr_expect(memcmp(back.gid, d->gid, 16) == 0);
  cr_expect_eq(rdma_token_classify(S(want)), RDMA_TOKEN_KIND_DC);
}

Test(dc_desc, vectors) {
  struct rdma_dc_desc d1 = {0x7f1234560000, 4u << 20, 0x01f2e973, 0,
                            0x007a03,       1,        {0}};
  memcpy(d1.gid, GID_10_0_0_5, 16);
  check_dc(&d1, DC1);
  struct rdma_dc_desc d2 = {0x0102030405060708, 0x01020304, 0x01020304, 0x0102,
                            0x010203,           1,          {0}};
  for (int i = 0; i < 16; i++)
    d2.gid[i] = (uint8_t)(i + 1);
  check_dc(&d2, DC2);
  struct rdma_dc_desc d3 = {
      0x7fe3c0000000,
      0xffffffff,
      0xabc,
      0,
      0xffffff,
      1,
      {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5}};
  check_dc(&d3, DC3);
}

Test(dc_desc, malformed) {
  char buf[128];
  struct hipobj_error why = {0};
  struct rdma_dc_desc d;
  cr_expect_eq(rdma_dc_decode(DC1, 80, &d, &why), HIPOBJ_E_PROTOCOL);
  snprintf(buf, sizeof buf, "%s0", DC1);
  cr_expect_eq(rdma_dc_decode(S(buf), &d, &why), HIPOBJ_E_PROTOCOL);
  /* The legacy suffix is not part of the descriptor. */
  snprintf(buf, sizeof buf, "%s:1000:1000", DC1);
  cr_expect_eq(rdma_dc_decode(S(buf), &d, &why), HIPOBJ_E_PROTOCOL);
  /* A separator moved: same length, wrong widths. */
  memcpy(buf, DC1, sizeof DC1);
  buf[16] = '0';
  buf[15] = ':';
  cr_expect_eq(rdma_dc_decode(S(buf), &d, &why), HIPOBJ_E_PROTOCOL);
  memcpy(buf, DC1, sizeof DC1);
  buf[20] = 'x';
  cr_expect_eq(rdma_dc_decode(S(buf), &d, &why), HIPOBJ_E_PROTOCOL);
  memcpy(buf, DC1, sizeof DC1);
  buf[80] = 'z';
  cr_expect_eq(rdma_dc_decode(S(buf), &d, &why), HIPOBJ_E_PROTOCOL);
  memcpy(buf, DC1, sizeof DC1);
  buf[47] = '2'; /* gid_present */
  cr_expect_eq(rdma_dc_decode(S(buf), &d, &why), HIPOBJ_E_PROTOCOL);
  cr_expect(strstr(why.message, "gid_present") != NULL);
  /* Upper case is read. */
  for (size_t i = 0; i < sizeof DC3; i++)
    buf[i] = (char)(DC3[i] >= 'a' && DC3[i] <= 'f' ? DC3[i] - 32 : DC3[i]);
  cr_expect_eq(rdma_dc_decode(S(buf), &d, &why), 0);
  cr_expect_eq(d.rkey, 0xabc);
  struct rdma_dc_desc big = {0, 0, 0, 0, 0x1000000, 1, {0}};
  cr_expect_eq(rdma_dc_encode(&big, buf), -1);
  big.dctn = 1;
  big.gid_present = 2;
  cr_expect_eq(rdma_dc_encode(&big, buf), -1);
}

Test(token_kind, classify) {
  char buf[160];
  cr_expect_eq(rdma_token_classify(S(RC1)), RDMA_TOKEN_KIND_RC);
  snprintf(buf, sizeof buf, "%s:0:1", RC3);
  cr_expect_eq(rdma_token_classify(S(buf)), RDMA_TOKEN_KIND_RC);
  /* A malformed RC-shaped token is still RC-shaped (answered 501 by DC
   * servers, 400 by RC servers). */
  cr_expect_eq(rdma_token_classify(RC1, 60), RDMA_TOKEN_KIND_RC);
  cr_expect_eq(rdma_token_classify(S(DC2)), RDMA_TOKEN_KIND_DC);
  cr_expect_eq(rdma_token_classify(S("")), RDMA_TOKEN_KIND_UNKNOWN);
  cr_expect_eq(rdma_token_classify(S("hello")), RDMA_TOKEN_KIND_UNKNOWN);
  cr_expect_eq(rdma_token_classify(DC2, 40), RDMA_TOKEN_KIND_UNKNOWN);
}

/* ---- x-amz-rdma-reply ------------------------------------------------------
 */

Test(reply, single_request_values) {
  static const struct {
    const char *in;
    enum rdma_reply_kind kind;
    int code, legacy;
  } v[] = {
      {"200", RDMA_REPLY_SUCCESS, 200, 0},
      {"204", RDMA_REPLY_SUCCESS, 204, 0},
      {"206", RDMA_REPLY_SUCCESS, 206, 0},
      {"501", RDMA_REPLY_DECLINED, 501, 0},
      {"ok", RDMA_REPLY_SUCCESS, 200, 1},
      {"OK", RDMA_REPLY_SUCCESS, 200, 1},
      {"err", RDMA_REPLY_FAILED, 0, 1},
      {" 200 ", RDMA_REPLY_SUCCESS, 200, 0},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    struct rdma_reply r;
    cr_assert_eq(rdma_reply_parse(S(v[i].in), &r, NULL), 0, "%s", v[i].in);
    cr_expect_eq(r.kind, v[i].kind, "%s", v[i].in);
    cr_expect_eq(r.code, v[i].code, "%s", v[i].in);
    cr_expect_eq(r.legacy, v[i].legacy, "%s", v[i].in);
    cr_expect_eq(r.has_token, 0);
  }
}

Test(reply, prepare_reply_token) {
  char buf[160];
  snprintf(buf, sizeof buf, "200:%s", RC3);
  struct rdma_reply r;
  struct hipobj_error why = {0};
  cr_assert_eq(rdma_reply_parse(S(buf), &r, &why), 0, "%s", why.message);
  cr_expect_eq(r.has_token, 1);
  cr_expect_eq(r.code, 200);
  cr_expect_eq(r.token.qpn, 0xabcdef);
  cr_expect_eq(r.token.port, 2);
  char out[4 + RDMA_TOKEN_HEX_LEN + 1];
  rdma_reply_format_token(&r.token, out);
  cr_expect_str_eq(out, buf);
  /* The device-less test server's "200:" + zeros claims success without a
   * QP (§8 item 12): refused. */
  snprintf(buf, sizeof buf, "200:%s", ZERO88);
  cr_expect_eq(rdma_reply_parse(S(buf), &r, &why), HIPOBJ_E_PROTOCOL);
  /* Clients never accept the legacy suffix in a reply. */
  snprintf(buf, sizeof buf, "200:%s:0:1", RC3);
  cr_expect_eq(rdma_reply_parse(S(buf), &r, &why), HIPOBJ_E_PROTOCOL);
  snprintf(buf, sizeof buf, "200:%.87s", RC3);
  cr_expect_eq(rdma_reply_parse(S(buf), &r, &why), HIPOBJ_E_PROTOCOL);
}

Test(reply, malformed) {
  const char *bad[] = {"",     "404",  "500",   "2000",   "20",   "200:",
                       "501:", "okay", "error", "200 ok", "0x200"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct rdma_reply r;
    struct hipobj_error why = {0};
    cr_expect_eq(rdma_reply_parse(S(bad[i]), &r, &why), HIPOBJ_E_PROTOCOL,
                 "\"%s\"", bad[i]);
    cr_expect_str_neq(why.message, "");
  }
  cr_expect_eq(rdma_reply_parse(NULL, 0, NULL, NULL), HIPOBJ_E_PROTOCOL);
}

/* ---- header values (§3.2) ------------------------------------------------ */

Test(headers, psn) {
  char out[7];
  uint32_t v;
  cr_assert_eq(rdma_psn_format(0x00ff10, out), 0);
  cr_expect_str_eq(out, "00ff10");
  cr_assert_eq(rdma_psn_format(0x5a17c3, out), 0);
  cr_expect_str_eq(out, "5a17c3");
  cr_expect_eq(rdma_psn_format(0, out), -1);
  cr_expect_eq(rdma_psn_format(0x1000000, out), -1);
  const struct {
    const char *in;
    uint32_t want;
  } ok[] = {{"00ff10", 0xff10}, {"5a17c3", 0x5a17c3}, {"5A17C3", 0x5a17c3},
            {"1", 1},           {"ffffff", 0xffffff}, {"00ffffff", 0xffffff}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    cr_expect_eq(rdma_psn_parse(S(ok[i].in), &v), 0, "%s", ok[i].in);
    cr_expect_eq(v, ok[i].want, "%s", ok[i].in);
  }
  const char *bad[] = {"",     "0",  "000000", "1000000", "123456789",
                       "0x10", "-1", "12 3",   "g"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_expect_eq(rdma_psn_parse(S(bad[i]), &v), -1, "\"%s\"", bad[i]);
}

Test(headers, cookie) {
  char out[9];
  uint32_t v;
  cr_assert_eq(rdma_cookie_format(0x1a2b3c4d, out), 0);
  cr_expect_str_eq(out, "1a2b3c4d");
  cr_assert_eq(rdma_cookie_format(0x2a, out), 0);
  cr_expect_str_eq(out, "0000002a");
  cr_expect_eq(rdma_cookie_format(0, out), -1);
  cr_expect_eq(rdma_cookie_parse(S("1a2b3c4d"), &v), 0);
  cr_expect_eq(v, 0x1a2b3c4d);
  cr_expect_eq(rdma_cookie_parse(S("1A2B3C4D"), &v), 0);
  cr_expect_eq(v, 0x1a2b3c4d);
  cr_expect_eq(rdma_cookie_parse(S("0000002a"), &v), 0);
  cr_expect_eq(v, 0x2a);
  cr_expect_eq(rdma_cookie_parse(S("ffffffff"), &v), 0);
  const char *bad[] = {"", "0", "00000000", "1a2b3c4d5", "0x1a2b", "1a2b-c"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_expect_eq(rdma_cookie_parse(S(bad[i]), &v), -1, "\"%s\"", bad[i]);
}

Test(headers, session) {
  static const uint8_t id[16] = {0x3f, 0x9c, 0x2a, 0x1b, 0x0d, 0x4e,
                                 0x5f, 0x60, 0x71, 0x82, 0x93, 0xa4,
                                 0xb5, 0xc6, 0xd7, 0xe8};
  char out[RDMA_SESSION_HEX_LEN + 1];
  rdma_session_format(id, out);
  cr_expect_str_eq(out, "3f9c2a1b0d4e5f60718293a4b5c6d7e8");
  cr_expect_eq(rdma_session_check(S("3f9c2a1b0d4e5f60718293a4b5c6d7e8")), 0);
  cr_expect_eq(rdma_session_check(S("3F9C2A1B0D4E5F60718293A4B5C6D7E8")), 0);
  cr_expect_eq(rdma_session_check(S("3f9c2a1b0d4e5f60718293a4b5c6d7e")), -1);
  cr_expect_eq(rdma_session_check(S("3f9c2a1b0d4e5f60718293a4b5c6d7e80")), -1);
  cr_expect_eq(rdma_session_check(S("3f9c2a1b0d4e5f60718293a4b5c6d7eg")), -1);
  cr_expect_eq(rdma_session_check(S("")), -1);
}

Test(headers, qpn) {
  char out[7];
  uint32_t v;
  cr_assert_eq(rdma_qpn_format(0x123, out), 0);
  cr_expect_str_eq(out, "123");
  cr_assert_eq(rdma_qpn_format(0xabcdef, out), 0);
  cr_expect_str_eq(out, "abcdef");
  cr_expect_eq(rdma_qpn_format(0, out), -1);
  cr_expect_eq(rdma_qpn_format(0x1000000, out), -1);
  cr_expect_eq(rdma_qpn_parse(S("123"), &v), 0);
  cr_expect_eq(v, 0x123);
  cr_expect_eq(rdma_qpn_parse(S("ABCDEF"), &v), 0);
  cr_expect_eq(v, 0xabcdef);
  /* The Go client's 16 zero-padded digits (§8 item 4). */
  cr_expect_eq(rdma_qpn_parse(S("0000000000000123"), &v), 0);
  cr_expect_eq(v, 0x123);
  const char *bad[] = {"",      "0",   "0000", "1000000", "00000000000000123",
                       "0x123", "12g", "-1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_expect_eq(rdma_qpn_parse(S(bad[i]), &v), -1, "\"%s\"", bad[i]);
}

Test(headers, mr_addr_and_rkey) {
  char a[17], k[9];
  uint64_t addr;
  uint32_t rkey;
  rdma_mr_addr_format(0x7f3a8c000000, a);
  cr_expect_str_eq(a, "7f3a8c000000");
  rdma_mr_addr_format(0, a);
  cr_expect_str_eq(a, "0");
  rdma_rkey_format(0x12345, k);
  cr_expect_str_eq(k, "00012345");
  cr_expect_eq(rdma_mr_addr_parse(S("7f3a8c000000"), &addr), 0);
  cr_expect_eq(addr, 0x7f3a8c000000);
  cr_expect_eq(rdma_mr_addr_parse(S("FFFFFFFFFFFFFFFF"), &addr), 0);
  cr_expect_eq(addr, UINT64_MAX);
  cr_expect_eq(rdma_mr_addr_parse(S("10000000000000000"), &addr), -1);
  cr_expect_eq(rdma_mr_addr_parse(S("0x7f3a"), &addr), -1);
  cr_expect_eq(rdma_mr_addr_parse(S(""), &addr), -1);
  cr_expect_eq(rdma_rkey_parse(S("00012345"), &rkey), 0);
  cr_expect_eq(rkey, 0x12345);
  cr_expect_eq(rdma_rkey_parse(S("12345"), &rkey), 0);
  cr_expect_eq(rkey, 0x12345);
  cr_expect_eq(rdma_rkey_parse(S("000012345"), &rkey), -1);
  cr_expect_eq(rdma_rkey_parse(S(""), &rkey), -1);
}

Test(headers, decimal_size_offset_bytes) {
  uint32_t size;
  uint64_t v;
  cr_expect_eq(rdma_size_parse(S("4096"), &size), 0);
  cr_expect_eq(size, 4096);
  cr_expect_eq(rdma_size_parse(S("2147483647"), &size), 0);
  cr_expect_eq(size, 2147483647u);
  const char *bad[] = {"",    "0",    "2147483648",           "+1",   "-1",
                       "1e3", "0x10", "18446744073709551616", "4 096"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_expect_eq(rdma_size_parse(S(bad[i]), &size), -1, "\"%s\"", bad[i]);
  cr_expect_eq(rdma_u64_parse(S("1048576"), &v), 0);
  cr_expect_eq(v, 1048576);
  cr_expect_eq(rdma_u64_parse(S("0"), &v), 0);
  cr_expect_eq(v, 0);
  cr_expect_eq(rdma_u64_parse(S("18446744073709551615"), &v), 0);
  cr_expect_eq(v, UINT64_MAX);
  cr_expect_eq(rdma_u64_parse(S("18446744073709551616"), &v), -1);
  cr_expect_eq(rdma_u64_parse(S("-0"), &v), -1);
  cr_expect_eq(rdma_u64_parse(S(""), &v), -1);
}

Test(headers, op_protocol_status_caps_etag) {
  enum rdma_op op;
  cr_expect_str_eq(rdma_op_name(RDMA_OP_GET), "GET");
  cr_expect_str_eq(rdma_op_name(RDMA_OP_PUT), "PUT");
  cr_expect_eq(rdma_op_parse(S("GET"), &op), 0);
  cr_expect_eq(op, RDMA_OP_GET);
  cr_expect_eq(rdma_op_parse(S("put"), &op), 0);
  cr_expect_eq(op, RDMA_OP_PUT);
  cr_expect_eq(rdma_op_parse(S("POST"), &op), -1);
  cr_expect_eq(rdma_op_parse(S(""), &op), -1);
  cr_expect(rdma_protocol_is_v2(S("hipobj-rc-v2")));
  cr_expect(rdma_protocol_is_v2(S(" hipobj-rc-v2")));
  cr_expect_not(rdma_protocol_is_v2(S("hipobj-rc-v1")));
  cr_expect_not(rdma_protocol_is_v2(S("hipobj-rc-v2x")));
  cr_expect_not(rdma_protocol_is_v2(S("")));
  cr_expect(rdma_protocol_status_is_unsupported(S("unsupported")));
  cr_expect(rdma_protocol_status_is_unsupported(S("Unsupported")));
  cr_expect_not(rdma_protocol_status_is_unsupported(S("busy")));
  cr_expect(rdma_capabilities_has(S("mp"), "mp"));
  cr_expect(rdma_capabilities_has(S("a, mp,b"), "mp"));
  cr_expect(rdma_capabilities_has(S("x MP"), "mp"));
  cr_expect_not(rdma_capabilities_has(S("mpx, amp"), "mp"));
  cr_expect_not(rdma_capabilities_has(S(""), "mp"));
  const char *e;
  size_t el;
  rdma_etag_unquote(S("\"9b2cf535f27731c974343645a3985328\""), &e, &el);
  cr_expect_eq(el, 32);
  cr_expect(strncmp(e, "9b2cf535f27731c974343645a3985328", el) == 0);
  rdma_etag_unquote(S("abc"), &e, &el);
  cr_expect_eq(el, 3);
  rdma_etag_unquote(S("\""), &e, &el);
  cr_expect_eq(el, 1);
}
