/* http_frame.h - the framing of one HTTP/1.1 answer, read strictly: bytes
 * in, the status line, header lines and body bytes out. No I/O and no
 * libcurl, so the parser is tested and fuzzed on its own
 * (tests/unit/test_frame.c, tests/fuzz/fuzz_frame.c); http_wire.c feeds it
 * what it receives. What it accepts and why: docs/engine.md, "The wire
 * path for small GETs". */
#ifndef HIPOBJ_S3_HTTP_FRAME_H
#define HIPOBJ_S3_HTTP_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* The header block of an answer (interim 1xx answers included, trailers of
 * a chunked body too) may hold at most this many bytes. */
#define HFRAME_HEAD_MAX ((size_t)64 * 1024)
/* One line of it at most this many (S3's longest are a few hundred). */
#define HFRAME_LINE_MAX 8192

struct hframe_ops {
  /* One line of the header block, without its line end: the status line
   * (of interim answers too) and each header line. 0 goes on, -1 stops. */
  int (*line)(void *ctx, const char *line, size_t len);
  /* Body bytes of the final answer, status its code. 0 goes on, -1 stops. */
  int (*body)(void *ctx, long status, const char *data, size_t len);
};

enum hframe_result {
  HFRAME_MORE,    /* all bytes taken; the answer goes on */
  HFRAME_DONE,    /* the answer ended; bytes after it were not taken */
  HFRAME_ERROR,   /* malformed: err says how */
  HFRAME_STOPPED, /* a callback returned -1 */
};

struct hframe {
  int state;
  long status;   /* of the answer being read; 0 before its status line */
  int http10;    /* an HTTP/1.0 answer */
  int close;     /* the connection cannot carry another request */
  int chunked;   /* Transfer-Encoding: chunked */
  int64_t clen;  /* Content-Length, -1 when absent */
  uint64_t left; /* bytes left of the body, or of the current chunk */
  uint64_t body; /* body bytes passed on */
  uint64_t seen; /* bytes fed, all answers included */
  size_t head;   /* bytes of header lines so far (HFRAME_HEAD_MAX) */
  char line[HFRAME_LINE_MAX]; /* a line not yet complete */
  size_t line_len;
  char err[160];
};

/* Ready for an answer to a GET (the only request the wire path sends). */
void hframe_init(struct hframe *f);
/* Feeds n bytes; *used gets how many were taken: all of them with
 * HFRAME_MORE; with HFRAME_DONE the rest came after the answer; with
 * HFRAME_STOPPED and HFRAME_ERROR the answer is abandoned (the connection
 * must go) and *used only says how far the parser got. */
enum hframe_result hframe_feed(struct hframe *f, const char *p, size_t n,
                               size_t *used, const struct hframe_ops *ops,
                               void *ctx);
/* The connection ended: HFRAME_DONE when the body runs to the
 * connection's end, else HFRAME_ERROR (err says what was missing). */
enum hframe_result hframe_eof(struct hframe *f);
/* Whether the answer read so far is a final one whose body was cut short
 * by the connection's end (libcurl's CURLE_PARTIAL_FILE). */
int hframe_short_body(const struct hframe *f);

#endif
