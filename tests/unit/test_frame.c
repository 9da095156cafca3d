/* test_frame.c - s3/http_frame.c, the strict framing of one HTTP/1.1
 * answer (docs/engine.md, "The wire path for small GETs"; RFC 9112):
 * status lines, header lines, bodies framed by Content-Length, by chunks or
 * by the connection's end, interim 1xx answers, the limits of the header
 * block, every malformed answer with its exact message, the connection's
 * end at each point, and callbacks that stop. Each answer is fed whole and
 * in pieces (down to one byte), and the lines and body bytes the callbacks
 * got are compared exactly. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3/http_frame.h"

/* What the callbacks got: every line followed by '\n', the body bytes, and
 * when to stop (the line or body call numbered stop_*, counting from 1). */
struct out {
  char *lines;
  size_t lines_len, lines_cap;
  char *body;
  size_t body_len, body_cap;
  int n_lines, n_body;
  long body_status;
  int stop_line, stop_body;
};

static void append(char **buf, size_t *len, size_t *cap, const char *p,
                   size_t n) {
  if (*len + n + 1 > *cap) {
    *cap = (*len + n + 1) * 2;
    *buf = realloc(*buf, *cap);
    cr_assert_not_null(*buf);
  }
  memcpy(*buf + *len, p, n);
  *len += n;
  (*buf)[*len] = '\0';
}

static int on_line(void *ctx, const char *line, size_t len) {
  struct out *o = ctx;
  append(&o->lines, &o->lines_len, &o->lines_cap, line, len);
  append(&o->lines, &o->lines_len, &o->lines_cap, "\n", 1);
  return ++o->n_lines == o->stop_line ? -1 : 0;
}

static int on_body(void *ctx, long status, const char *data, size_t len) {
  struct out *o = ctx;
  cr_assert_gt(len, 0, "an empty body call");
  o->body_status = status;
  append(&o->body, &o->body_len, &o->body_cap, data, len);
  return ++o->n_body == o->stop_body ? -1 : 0;
}

static const struct hframe_ops ops = {on_line, on_body};

static void out_init(struct out *o) {
  memset(o, 0, sizeof *o);
  append(&o->lines, &o->lines_len, &o->lines_cap, "", 0);
  append(&o->body, &o->body_len, &o->body_cap, "", 0);
}

static void out_free(struct out *o) {
  free(o->lines);
  free(o->body);
}

/* Feeds p[0..n) in pieces of `piece` bytes (0: whole) until the parser
 * says anything but MORE; *used gets the bytes taken in all. */
static enum hframe_result feed(struct hframe *f, const char *p, size_t n,
                               size_t piece, struct out *o, size_t *used) {
  enum hframe_result r = HFRAME_MORE;
  size_t off = 0;
  *used = 0;
  do {
    size_t k = piece && n - off > piece ? piece : n - off, u = 12345;
    r = hframe_feed(f, p + off, k, &u, &ops, o);
    cr_assert_leq(u, k);
    if (r == HFRAME_MORE)
      cr_assert_eq(u, k, "MORE must take every byte");
    *used += u;
    off += k;
  } while (r == HFRAME_MORE && off < n);
  return r;
}

/* One answer from a fresh parser. */
static enum hframe_result run(struct hframe *f, const char *s, size_t n,
                              size_t piece, struct out *o, size_t *used) {
  hframe_init(f);
  out_init(o);
  return feed(f, s, n, piece, o, used);
}

#define ALL ((size_t)-1)
/* The parser, what its callbacks got, and the bytes it took. */
#define VARS                                                                   \
  struct hframe f;                                                             \
  struct out o;                                                                \
  size_t u = 0

/* s must give result r with exactly these lines and body and take `used`
 * bytes (ALL: every one), fed whole, one byte at a time, and in pieces of 2, 3,
 * 7 and 64. */
static void expect(const char *s, size_t n, enum hframe_result r, size_t used,
                   const char *lines, const char *body, size_t body_len) {
  static const size_t pieces[] = {0, 1, 2, 3, 7, 64};
  if (used == ALL)
    used = n;
  for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
    VARS;
    cr_assert_eq(run(&f, s, n, pieces[i], &o, &u), r, "piece %zu: %s",
                 pieces[i], f.err);
    cr_assert_eq(u, used, "piece %zu: used %zu", pieces[i], u);
    cr_assert_str_eq(o.lines, lines, "piece %zu", pieces[i]);
    cr_assert_eq(o.body_len, body_len, "piece %zu", pieces[i]);
    cr_assert_eq(memcmp(o.body, body, body_len), 0, "piece %zu", pieces[i]);
    cr_assert_eq(f.body, body_len);
    out_free(&o);
  }
}

/* s (fed whole and one byte at a time) must fail with exactly err. */
static void expect_err(const char *s, size_t n, const char *err) {
  for (size_t piece = 0; piece < 2; piece++) {
    VARS;
    cr_assert_eq(run(&f, s, n, piece, &o, &u), HFRAME_ERROR,
                 "piece %zu: not an error: %s", piece, s);
    cr_assert_str_eq(f.err, err, "piece %zu: %s", piece, s);
    out_free(&o);
  }
}

#define S(lit) lit, sizeof(lit) - 1
#define ERR(lit, err) expect_err(S(lit), err)

static const char malformed_status[] =
    "malformed status line (not HTTP/1.x NNN)";
static const char bad_field[] = "header line without a name and a colon";
static const char bad_te[] =
    "Transfer-Encoding other than one \"chunked\" (not read)";
static const char bad_chunk[] = "malformed chunk size line";

/* ---- answers that parse ------------------------------------------------ */

static const char plain[] = "HTTP/1.1 200 OK\r\n"
                            "Content-Length: 11\r\n"
                            "ETag: \"abc\"\r\n"
                            "\r\n"
                            "hello world";
static const char plain_lines[] =
    "HTTP/1.1 200 OK\nContent-Length: 11\nETag: \"abc\"\n";

Test(frame, content_length_fed_whole) {
  VARS;
  cr_assert_eq(run(&f, S(plain), 0, &o, &u), HFRAME_DONE, "%s", f.err);
  cr_assert_eq(u, sizeof plain - 1);
  cr_assert_str_eq(o.lines, plain_lines);
  cr_assert_eq(o.n_lines, 3);
  cr_assert_str_eq(o.body, "hello world");
  cr_assert_eq(o.n_body, 1, "the body in one call when fed whole");
  cr_assert_eq(o.body_status, 200);
  cr_assert_eq(f.status, 200);
  cr_assert_eq(f.clen, 11);
  cr_assert_eq(f.body, 11);
  cr_assert_eq(f.seen, sizeof plain - 1);
  cr_assert_eq(f.close, 0);
  cr_assert_eq(f.http10, 0);
  cr_assert_eq(f.chunked, 0);
  cr_assert_eq(hframe_short_body(&f), 0);
  cr_assert_eq(hframe_eof(&f), HFRAME_DONE);
  out_free(&o);
}

Test(frame, content_length_fed_byte_by_byte) {
  VARS;
  cr_assert_eq(run(&f, S(plain), 1, &o, &u), HFRAME_DONE, "%s", f.err);
  cr_assert_eq(u, sizeof plain - 1);
  cr_assert_str_eq(o.lines, plain_lines);
  cr_assert_str_eq(o.body, "hello world");
  cr_assert_eq(o.n_body, 11);
  /* Every split gives the same. */
  expect(S(plain), HFRAME_DONE, ALL, plain_lines, S("hello world"));
  out_free(&o);
}

Test(frame, content_length_zero_is_done_at_the_empty_line) {
  expect(S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), HFRAME_DONE, ALL,
         "HTTP/1.1 200 OK\nContent-Length: 0\n", S(""));
  VARS;
  cr_assert_eq(
      run(&f, S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP"), 0, &o, &u),
      HFRAME_DONE);
  cr_assert_eq(u, 38);
  cr_assert_eq(o.n_body, 0);
  out_free(&o);
}

Test(frame, no_body_for_204_and_304) {
  expect(S("HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\nextra"), HFRAME_DONE, 35,
         "HTTP/1.1 204 No Content\nX-A: 1\n", S(""));
  /* A 304's Content-Length is the unsent representation's. */
  expect(S("HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\nextra"),
         HFRAME_DONE, 50, "HTTP/1.1 304 Not Modified\nContent-Length: 100\n",
         S(""));
  expect(S("HTTP/1.1 304 Not Modified\r\n\r\n"), HFRAME_DONE, ALL,
         "HTTP/1.1 304 Not Modified\n", S(""));
}

static const char chunked[] = "HTTP/1.1 200 OK\r\n"
                              "Transfer-Encoding: chunked\r\n"
                              "\r\n"
                              "5;x=y\r\n"
                              "hello\r\n"
                              "A ; name=\"v\" ;flag\r\n"
                              "0123456789\r\n"
                              "1F\r\n"
                              "abcdefghijklmnopqrstuvwxyz01234\r\n"
                              "1\r\n"
                              "!\r\n"
                              "0;last=1\r\n"
                              "x-amz-checksum-crc32: AAAAAA==\r\n"
                              "Other: y\r\n"
                              "\r\n";
static const char chunked_body[] =
    "hello0123456789abcdefghijklmnopqrstuvwxyz01234!";

Test(frame, chunked_body_with_extensions_and_trailers) {
  expect(S(chunked), HFRAME_DONE, ALL,
         "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n", S(chunked_body));
  VARS;
  cr_assert_eq(run(&f, S(chunked), 0, &o, &u), HFRAME_DONE);
  cr_assert_eq(f.chunked, 1);
  cr_assert_eq(f.clen, -1);
  cr_assert_eq(f.close, 0);
  cr_assert_eq(o.n_body, 4, "one call a chunk when fed whole");
  cr_assert_eq(o.body_status, 200);
  cr_assert_eq(hframe_short_body(&f), 0);
  out_free(&o);
}

Test(frame, chunked_stops_after_its_trailers) {
  char buf[sizeof chunked + 32];
  size_t n = sizeof chunked - 1;
  memcpy(buf, chunked, n);
  memcpy(buf + n, "HTTP/1.1 200 OK\r\n", 17);
  expect(buf, n + 17, HFRAME_DONE, n,
         "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n", S(chunked_body));
  /* And with no trailer at all. */
  expect(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
           "3\r\nabc\r\n0\r\n\r\nXYZ"),
         HFRAME_DONE, 60, "HTTP/1.1 200 OK\nTransfer-Encoding: Chunked\n",
         S("abc"));
}

Test(frame, chunk_size_at_the_limit_is_taken) {
  VARS;
  /* 2^48 bytes announced: read as a size, cut short by the connection. */
  cr_assert_eq(run(&f,
                   S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "1000000000000\r\nab"),
                   0, &o, &u),
               HFRAME_MORE, "%s", f.err);
  cr_assert_str_eq(o.body, "ab");
  cr_assert_eq(f.left, ((uint64_t)1 << 48) - 2);
  out_free(&o);
}

Test(frame, body_until_the_connection_ends) {
  static const char s[] = "HTTP/1.1 200 OK\r\nServer: x\r\n\r\nabc";
  expect(S(s), HFRAME_MORE, ALL, "HTTP/1.1 200 OK\nServer: x\n", S("abc"));
  VARS;
  cr_assert_eq(run(&f, S(s), 0, &o, &u), HFRAME_MORE);
  cr_assert_eq(f.close, 1, "a body to the end ends the connection");
  cr_assert_eq(hframe_feed(&f, S("def"), &u, &ops, &o), HFRAME_MORE);
  cr_assert_eq(u, 3);
  cr_assert_eq(hframe_short_body(&f), 0);
  cr_assert_eq(hframe_eof(&f), HFRAME_DONE, "%s", f.err);
  cr_assert_eq(f.close, 1);
  cr_assert_str_eq(o.body, "abcdef");
  cr_assert_eq(f.body, 6);
  cr_assert_eq(hframe_short_body(&f), 0);
  out_free(&o);
  /* Nothing after the header at all: an empty body. */
  cr_assert_eq(run(&f, S("HTTP/1.1 200 OK\r\n\r\n"), 0, &o, &u), HFRAME_MORE);
  cr_assert_eq(hframe_eof(&f), HFRAME_DONE);
  cr_assert_eq(o.n_body, 0);
  out_free(&o);
}

Test(frame, interim_answers_then_the_final_one) {
  static const char s[] = "HTTP/1.1 100 Continue\r\n"
                          "\r\n"
                          "HTTP/1.1 103 Early Hints\r\n"
                          "Link: </a>; rel=preload\r\n"
                          "\r\n"
                          "HTTP/1.1 200 OK\r\n"
                          "Content-Length: 2\r\n"
                          "\r\n"
                          "ok";
  expect(S(s), HFRAME_DONE, ALL,
         "HTTP/1.1 100 Continue\nHTTP/1.1 103 Early Hints\n"
         "Link: </a>; rel=preload\nHTTP/1.1 200 OK\nContent-Length: 2\n",
         S("ok"));
  /* An interim answer's fields do not frame the final one's body. */
  expect(S("HTTP/1.1 100 Continue\r\nContent-Length: 3\r\n\r\n"
           "HTTP/1.1 200 OK\r\n\r\nabcdef"),
         HFRAME_MORE, ALL,
         "HTTP/1.1 100 Continue\nContent-Length: 3\nHTTP/1.1 200 OK\n",
         S("abcdef"));
  VARS;
  /* Only the interim answer: its status is forgotten at its end. */
  cr_assert_eq(run(&f, S("HTTP/1.1 100 Continue\r\n\r\n"), 0, &o, &u),
               HFRAME_MORE);
  cr_assert_eq(f.status, 0);
  cr_assert_eq(hframe_short_body(&f), 0);
  out_free(&o);
}

Test(frame, switching_protocols_is_refused) {
  ERR("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
      "101 Switching Protocols answered a GET");
}

Test(frame, bytes_after_the_answer_are_not_taken) {
  static const char s[] =
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\n";
  expect(S(s), HFRAME_DONE, 41, "HTTP/1.1 200 OK\nContent-Length: 3\n",
         S("abc"));
  VARS;
  cr_assert_eq(run(&f, S(s), 0, &o, &u), HFRAME_DONE);
  cr_assert_eq(u, 41);
  cr_assert_lt(u, sizeof s - 1);
  /* Fed again after its end: DONE, nothing taken. */
  cr_assert_eq(hframe_feed(&f, S("more"), &u, &ops, &o), HFRAME_DONE);
  cr_assert_eq(u, 0);
  cr_assert_eq(hframe_feed(&f, "", 0, &u, &ops, &o), HFRAME_DONE);
  cr_assert_eq(u, 0);
  cr_assert_str_eq(o.body, "abc");
  out_free(&o);
}

static void check_close(const char *s, size_t n, int close, int http10) {
  VARS;
  cr_assert_eq(run(&f, s, n, 0, &o, &u), HFRAME_DONE, "%s: %s", s, f.err);
  cr_assert_eq(f.close, close, "%s", s);
  cr_assert_eq(f.http10, http10, "%s", s);
  out_free(&o);
}

Test(frame, connection_close_and_http10) {
  check_close(S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), 0, 0);
  check_close(S("HTTP/1.1 200 OK\r\nConnection: close\r\n"
                "Content-Length: 0\r\n\r\n"),
              1, 0);
  check_close(S("HTTP/1.1 200 OK\r\nconnection:  Keep-Alive , CLOSE \r\n"
                "Content-Length: 0\r\n\r\n"),
              1, 0);
  check_close(S("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n"
                "Content-Length: 0\r\n\r\n"),
              0, 0);
  check_close(S("HTTP/1.1 200 OK\r\nConnection: closed\r\n"
                "Content-Length: 0\r\n\r\n"),
              0, 0);
  check_close(S("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), 1, 1);
  check_close(S("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n"
                "Content-Length: 0\r\n\r\n"),
              1, 1);
  check_close(S("HTTP/1.0 204 No Content\r\n\r\n"), 1, 1);
}

Test(frame, bare_lf_line_ends_are_accepted) {
  expect(S("HTTP/1.1 200 OK\nContent-Length: 2\n\nhi"), HFRAME_DONE, ALL,
         "HTTP/1.1 200 OK\nContent-Length: 2\n", S("hi"));
  expect(S("HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\r\n"
           "Transfer-Encoding: chunked\n\r\n2\nhi\n3;e\r\nabc\r\n0\n"
           "T: 1\n\n"),
         HFRAME_DONE, ALL,
         "HTTP/1.1 100 Continue\nHTTP/1.1 200 OK\nTransfer-Encoding: chunked\n",
         S("hiabc"));
}

Test(frame, status_lines_accepted) {
  expect(S("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"), HFRAME_DONE, ALL,
         "HTTP/1.1 200\nContent-Length: 0\n", S(""));
  expect(S("HTTP/1.1 404 \r\nContent-Length: 1\r\n\r\nx"), HFRAME_DONE, ALL,
         "HTTP/1.1 404 \nContent-Length: 1\n", S("x"));
  /* Reason phrases may hold tabs and obs-text; field values too. */
  expect(S("HTTP/1.1 500 Fa\til \xc3\xa9\r\nX-V: a\t\xff b\r\n"
           "Content-Length: 1\r\n\r\nx"),
         HFRAME_DONE, ALL,
         "HTTP/1.1 500 Fa\til \xc3\xa9\nX-V: a\t\xff b\nContent-Length: 1\n",
         S("x"));
  VARS;
  cr_assert_eq(run(&f,
                   S("HTTP/1.1 503 Slow Down\r\nContent-Length: 1\r\n\r\n"
                     "x"),
                   0, &o, &u),
               HFRAME_DONE);
  cr_assert_eq(o.body_status, 503);
  out_free(&o);
}

Test(frame, equal_content_lengths_are_one) {
  expect(S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length:  05 \r\n"
           "\r\nhelloX"),
         HFRAME_DONE, 65,
         "HTTP/1.1 200 OK\nContent-Length: 5\ncontent-length:  05 \n",
         S("hello"));
}

Test(frame, empty_field_value_is_a_field) {
  expect(S("HTTP/1.1 200 OK\r\nX-Empty:\r\nContent-Length: 0\r\n\r\n"),
         HFRAME_DONE, ALL, "HTTP/1.1 200 OK\nX-Empty:\nContent-Length: 0\n",
         S(""));
}

/* ---- malformed answers ------------------------------------------------- */

Test(frame, malformed_status_lines) {
  ERR("HTTP/2 200 OK\r\n\r\n", malformed_status);
  ERR("HTTP/1.1 20\r\n\r\n", malformed_status);
  ERR("HTTP/1.1200 OK\r\n\r\n", malformed_status);
  ERR("HTTP/1.1  200 OK\r\n\r\n", malformed_status);
  ERR("HTTP/1.1 200OK\r\n\r\n", malformed_status);
  ERR("HTTP/1.1 2000 OK\r\n\r\n", malformed_status);
  ERR("HTTP/1.1 2x0 OK\r\n\r\n", malformed_status);
  ERR("http/1.1 200 OK\r\n\r\n", malformed_status);
  ERR("HTTP/1.x 200 OK\r\n\r\n", malformed_status);
  ERR("\r\nHTTP/1.1 200 OK\r\n\r\n", malformed_status);
  ERR("ICY 200 OK\r\n\r\n", malformed_status);
  ERR("HTTP/1.1 200 O\x01K\r\n\r\n", malformed_status);
  ERR("HTTP/1.1 600 Odd\r\n\r\n", "status code outside 100-599");
  ERR("HTTP/1.1 099 Odd\r\n\r\n", "status code outside 100-599");
  ERR("HTTP/1.1 100 Continue\r\n\r\nHTTP/2 200\r\n\r\n", malformed_status);
}

Test(frame, malformed_header_lines) {
  ERR("HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n",
      "folded header line (obsolete line folding)");
  ERR("HTTP/1.1 200 OK\r\n\tX: y\r\n\r\n",
      "folded header line (obsolete line folding)");
  ERR("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", bad_field);
  ERR("HTTP/1.1 200 OK\r\nName : v\r\n\r\n", bad_field);
  ERR("HTTP/1.1 200 OK\r\n: v\r\n\r\n", bad_field);
  ERR("HTTP/1.1 200 OK\r\nBad(Name): v\r\n\r\n", bad_field);
  ERR("HTTP/1.1 200 OK\r\nA: b\x01"
      "c\r\n\r\n",
      "control character in a header value");
  ERR("HTTP/1.1 200 OK\r\nA: b\x7f\r\n\r\n",
      "control character in a header value");
  ERR("HTTP/1.1 200 OK\r\nA: b\x1b[0m\r\n\r\n",
      "control character in a header value");
}

Test(frame, bare_cr_or_nul_inside_a_line) {
  ERR("HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", "CR or NUL inside a line");
  ERR("HTTP/1.1 200 OK\r\nA: b\r\r\n\r\n", "CR or NUL inside a line");
  ERR("HTTP/1.1 200\rOK\r\n\r\n", "CR or NUL inside a line");
  expect_err(S("HTTP/1.1 200 OK\r\nA: b\0c\r\n\r\n"),
             "CR or NUL inside a line");
  expect_err(S("HTTP/1.1 200 OK\0\r\n\r\n"), "CR or NUL inside a line");
  ERR("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\r\nhello",
      "CR or NUL inside a line");
}

Test(frame, content_length_errors) {
  ERR("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
      "two different Content-Length values");
  ERR("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n",
      "Content-Length is not a number");
  ERR("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
      "Content-Length is not a number");
  ERR("HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n",
      "Content-Length is not a number");
  ERR("HTTP/1.1 200 OK\r\nContent-Length: 5 5\r\n\r\n",
      "Content-Length is not a number");
  ERR("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n",
      "Content-Length is not a number");
  ERR("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
      "Content-Length is not a number");
  ERR("HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
      "Content-Length is not a number");
  ERR("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\n",
      "Content-Length is not a number");
  ERR("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
      "Content-Length is not a number");
}

Test(frame, transfer_encoding_errors) {
  ERR("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", bad_te);
  ERR("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", bad_te);
  ERR("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", bad_te);
  ERR("HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\r\n", bad_te);
  ERR("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
      "Transfer-Encoding: chunked\r\n\r\n",
      bad_te);
  ERR("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
      "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
      "both Content-Length and Transfer-Encoding");
  ERR("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
      "Content-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
      "both Content-Length and Transfer-Encoding");
}

/* RFC 9112 section 6.1: "A server or client that receives an HTTP/1.0
 * message containing a Transfer-Encoding header field MUST treat the
 * message as if the framing is faulty". */
Test(frame, http10_with_transfer_encoding_is_faulty_framing) {
  VARS;
  enum hframe_result r =
      run(&f,
          S("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            "3\r\nabc\r\n0\r\n\r\n"),
          0, &o, &u);
  cr_expect_eq(r, HFRAME_ERROR,
               "an HTTP/1.0 answer's chunked framing was read (result %d, "
               "body \"%s\")",
               (int)r, o.body);
  cr_expect_eq(o.n_body, 0);
  out_free(&o);
}

Test(frame, chunk_errors) {
#define CH "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
  ERR(CH "zz\r\n", bad_chunk);
  ERR(CH "\r\n", bad_chunk);
  ERR(CH "5 x\r\nhello\r\n0\r\n\r\n", bad_chunk);
  ERR(CH " 5\r\nhello\r\n0\r\n\r\n", bad_chunk);
  ERR(CH "-5\r\nhello\r\n0\r\n\r\n", bad_chunk);
  ERR(CH "0x5\r\nhello\r\n0\r\n\r\n", bad_chunk);
  ERR(CH "5;a=\x01\r\nhello\r\n0\r\n\r\n", bad_chunk);
  ERR(CH "5\r\nhelloX\r\n0\r\n\r\n", "chunk data longer than its size");
  ERR(CH "5\r\nhello\r\n\r\n", bad_chunk);
  ERR(CH "3\r\nabc\r\n0\r\nbad trailer\r\n\r\n", bad_field);
  ERR(CH "3\r\nabc\r\n0\r\nT: 1\r\n folded\r\n\r\n",
      "folded header line (obsolete line folding)");
  ERR(CH "1000000000001\r\n", "chunk size too large");
  ERR(CH "ffffffffffffffffffff\r\n", "chunk size too large");
}

Test(frame, chunk_data_then_something_else_never_ends_a_line) {
  /* No line end after the extra bytes: the line limit catches it. */
  static char s[9101];
  int n = snprintf(s, sizeof s, "%s", CH "1\r\na");
  memset(s + n, 'b', sizeof s - 1 - n);
  expect_err(s, sizeof s - 1, "header or chunk line longer than 8 KiB");
#undef CH
}

/* ---- limits ------------------------------------------------------------ */

/* An answer whose header block is exactly `total` bytes: the status line,
 * filler lines of at most 4000 bytes, "Content-Length: 0" and the empty
 * line. */
static char *head_of(size_t total, size_t *n) {
  static const char st[] = "HTTP/1.1 200 OK\r\n",
                    cl[] = "Content-Length: 0\r\n";
  char *s = malloc(total + 1);
  cr_assert_not_null(s);
  size_t k = 0, fill = total - (sizeof st - 1) - (sizeof cl - 1) - 2;
  memcpy(s, st, sizeof st - 1);
  k = sizeof st - 1;
  while (fill) {
    size_t line = fill > 4000 ? 4000 : fill;
    if (fill - line < 5 && fill > 4000)
      line = 3990; /* leave room for one more "X:\r\n" at least */
    cr_assert_geq(line, 4);
    memcpy(s + k, "X:", 2);
    memset(s + k + 2, 'v', line - 4);
    memcpy(s + k + line - 2, "\r\n", 2);
    k += line;
    fill -= line;
  }
  memcpy(s + k, cl, sizeof cl - 1);
  k += sizeof cl - 1;
  memcpy(s + k, "\r\n", 2);
  k += 2;
  cr_assert_eq(k, total);
  *n = k;
  return s;
}

Test(frame, header_block_of_64_kib_is_the_limit) {
  size_t n;
  char *s = head_of(HFRAME_HEAD_MAX, &n);
  VARS;
  cr_assert_eq(run(&f, s, n, 1000, &o, &u), HFRAME_DONE, "%s", f.err);
  cr_assert_eq(u, n);
  cr_assert_eq(f.head, HFRAME_HEAD_MAX);
  out_free(&o);
  free(s);
  s = head_of(HFRAME_HEAD_MAX + 1, &n);
  for (size_t piece = 0; piece <= 1000; piece += 1000) {
    cr_assert_eq(run(&f, s, n, piece, &o, &u), HFRAME_ERROR);
    cr_assert_str_eq(f.err, "header block larger than 64 KiB");
    out_free(&o);
  }
  free(s);
}

Test(frame, many_interim_answers_add_up_to_the_limit) {
  static const char one[] = "HTTP/1.1 100 Continue\r\n\r\n";
  size_t k = sizeof one - 1, reps = HFRAME_HEAD_MAX / k + 1;
  char *s = malloc(reps * k);
  cr_assert_not_null(s);
  for (size_t i = 0; i < reps; i++)
    memcpy(s + i * k, one, k);
  VARS;
  cr_assert_eq(run(&f, s, reps * k, 100, &o, &u), HFRAME_ERROR);
  cr_assert_str_eq(f.err, "header block larger than 64 KiB");
  cr_assert_eq(o.n_lines, (int)(HFRAME_HEAD_MAX / k),
               "each complete interim status line was passed on");
  out_free(&o);
  /* One fewer than the limit: still waiting for the final answer. */
  cr_assert_eq(run(&f, s, (reps - 1) * k, 0, &o, &u), HFRAME_MORE);
  cr_assert_eq(hframe_eof(&f), HFRAME_ERROR);
  cr_assert_str_eq(f.err, "connection closed inside the answer's header");
  out_free(&o);
  free(s);
}

Test(frame, one_line_over_8_kib) {
  static char s[9100];
  int n = snprintf(s, sizeof s, "HTTP/1.1 200 OK\r\nX-Long: ");
  memset(s + n, 'a', 9000);
  memcpy(s + n + 9000, "\r\n\r\n", 4);
  expect_err(s, n + 9004, "header or chunk line longer than 8 KiB");
  /* A line of 8190 bytes and its CRLF fills the buffer: taken. */
  memset(s + n, 'a', 8190 - n + 17);
  memcpy(s + 8190 + 17, "\r\nContent-Length: 0\r\n\r\n", 23);
  VARS;
  cr_assert_eq(run(&f, s, 8190 + 17 + 23, 0, &o, &u), HFRAME_DONE, "%s", f.err);
  cr_assert_eq(o.lines_len, 16 + 8191 + 18);
  out_free(&o);
  /* One byte more: refused. */
  memset(s + n, 'a', 8191 - n + 17);
  memcpy(s + 8191 + 17, "\r\nContent-Length: 0\r\n\r\n", 23);
  expect_err(s, 8191 + 17 + 23, "header or chunk line longer than 8 KiB");
}

Test(frame, chunk_size_line_over_8_kib) {
  static char s[9200];
  int n = snprintf(s, sizeof s,
                   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  memset(s + n, '0', 9000);
  memcpy(s + n + 9000, "5\r\nhello\r\n0\r\n\r\n", 15);
  expect_err(s, n + 9015, "header or chunk line longer than 8 KiB");
}

/* ---- the connection's end ---------------------------------------------- */

static void eof_after(const char *s, size_t n, const char *err, int short_body,
                      const char *body) {
  for (size_t piece = 0; piece < 2; piece++) {
    VARS;
    cr_assert_eq(run(&f, s, n, piece, &o, &u), HFRAME_MORE, "%s", f.err);
    cr_assert_eq(u, n);
    cr_assert_eq(hframe_eof(&f), HFRAME_ERROR, "%s", s);
    cr_assert_str_eq(f.err, err, "%s", s);
    cr_assert_eq(hframe_short_body(&f), short_body, "%s", s);
    cr_assert_str_eq(o.body, body);
    out_free(&o);
  }
}

Test(frame, eof_at_each_point) {
  struct hframe f;
  hframe_init(&f);
  cr_assert_eq(hframe_eof(&f), HFRAME_ERROR);
  cr_assert_str_eq(f.err, "the server closed the connection without answering");
  cr_assert_eq(hframe_short_body(&f), 0);
  /* Fed nothing (an empty read) is still no answer. */
  hframe_init(&f);
  size_t u;
  struct out o;
  out_init(&o);
  cr_assert_eq(hframe_feed(&f, "", 0, &u, &ops, &o), HFRAME_MORE);
  cr_assert_eq(u, 0);
  cr_assert_eq(hframe_eof(&f), HFRAME_ERROR);
  cr_assert_str_eq(f.err, "the server closed the connection without answering");
  out_free(&o);

  eof_after(S("HTT"), "connection closed inside the answer's header", 0, "");
  eof_after(S("HTTP/1.1 200 OK\r\nContent-Len"),
            "connection closed inside the answer's header", 0, "");
  eof_after(S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"),
            "connection closed inside the answer's header", 0, "");
  eof_after(S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"),
            "connection closed after 0 of 5 body bytes", 1, "");
  eof_after(S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe"),
            "connection closed after 2 of 5 body bytes", 1, "he");
  eof_after(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "connection closed inside the chunked body", 1, "");
  eof_after(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"),
            "connection closed inside the chunked body", 1, "hel");
  eof_after(
      S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r"),
      "connection closed inside the chunked body", 1, "hello");
  eof_after(
      S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
        "0\r\nT: 1\r\n"),
      "connection closed inside the chunked body", 1, "hello");
}

Test(frame, eof_after_the_end_is_done) {
  VARS;
  cr_assert_eq(run(&f, S(plain), 0, &o, &u), HFRAME_DONE);
  cr_assert_eq(hframe_eof(&f), HFRAME_DONE);
  cr_assert_eq(hframe_short_body(&f), 0);
  out_free(&o);
  cr_assert_eq(run(&f, S("HTTP/1.1 204 No Content\r\n\r\n"), 0, &o, &u),
               HFRAME_DONE);
  cr_assert_eq(hframe_eof(&f), HFRAME_DONE);
  out_free(&o);
}

/* ---- callbacks that stop ----------------------------------------------- */

Test(frame, line_callback_stops) {
  for (int at = 1; at <= 3; at++) {
    for (size_t piece = 0; piece < 2; piece++) {
      VARS;
      hframe_init(&f);
      out_init(&o);
      o.stop_line = at;
      cr_assert_eq(feed(&f, S(plain), piece, &o, &u), HFRAME_STOPPED, "line %d",
                   at);
      cr_assert_eq(o.n_lines, at);
      cr_assert_eq(o.n_body, 0);
      /* The bytes up to the end of the stopping line. */
      size_t want = at == 1 ? 17 : at == 2 ? 37 : 50;
      cr_assert_eq(u, want, "line %d piece %zu: used %zu", at, piece, u);
      out_free(&o);
    }
  }
}

Test(frame, interim_status_line_callback_stops) {
  VARS;
  hframe_init(&f);
  out_init(&o);
  o.stop_line = 1;
  cr_assert_eq(feed(&f, S("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
                    0, &o, &u),
               HFRAME_STOPPED);
  cr_assert_str_eq(o.lines, "HTTP/1.1 100 Continue\n");
  out_free(&o);
}

Test(frame, body_callback_stops) {
  VARS;
  hframe_init(&f);
  out_init(&o);
  o.stop_body = 1;
  cr_assert_eq(feed(&f, S(plain), 0, &o, &u), HFRAME_STOPPED);
  cr_assert_eq(u, sizeof plain - 1);
  cr_assert_str_eq(o.body, "hello world");
  out_free(&o);

  hframe_init(&f);
  out_init(&o);
  o.stop_body = 3;
  cr_assert_eq(feed(&f, S(plain), 1, &o, &u), HFRAME_STOPPED);
  cr_assert_str_eq(o.body, "hel");
  cr_assert_eq(o.n_body, 3);
  out_free(&o);

  hframe_init(&f);
  out_init(&o);
  o.stop_body = 2;
  cr_assert_eq(feed(&f, S(chunked), 0, &o, &u), HFRAME_STOPPED);
  cr_assert_str_eq(o.body, "hello0123456789");
  out_free(&o);

  hframe_init(&f);
  out_init(&o);
  o.stop_body = 1;
  cr_assert_eq(feed(&f, S("HTTP/1.1 200 OK\r\n\r\nto the end"), 0, &o, &u),
               HFRAME_STOPPED);
  cr_assert_str_eq(o.body, "to the end");
  out_free(&o);
}
