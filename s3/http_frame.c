/* http_frame.c - one HTTP/1.1 answer's framing, read strictly (see
 * http_frame.h). A state machine fed whatever the connection gave: lines
 * of the header block are gathered whole (bounded), body bytes are passed
 * on as they come, framed by Content-Length, by chunks, or by the
 * connection's end. Whatever it does not understand is an error, never a
 * guess: a mis-framed answer is how a body's bytes end up in the wrong
 * place. */
#include "http_frame.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../src/base/strutil.h"

enum {
  S_STATUS,     /* the status line */
  S_HEADER,     /* header lines, to the empty one */
  S_BODY,       /* `left` bytes of a Content-Length body */
  S_TO_EOF,     /* a body that runs to the connection's end */
  S_CHUNK_SIZE, /* a chunk's size line */
  S_CHUNK_DATA, /* `left` bytes of a chunk */
  S_CHUNK_END,  /* the line end after a chunk's data */
  S_TRAILER,    /* trailer lines after the last chunk, to the empty one */
  S_DONE,
};

/* The largest chunk taken: more than any answer the wire path reads, and
 * far from overflowing the counters. */
#define CHUNK_MAX ((uint64_t)1 << 48)

void hframe_init(struct hframe *f) {
  memset(f, 0, sizeof *f);
  f->state = S_STATUS;
  f->clen = -1;
}

static enum hframe_result fail(struct hframe *f, const char *fmt,
                               const char *what) {
  snprintf(f->err, sizeof f->err, fmt, what);
  return HFRAME_ERROR;
}

static int is_tchar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Field values and reason phrases: visible characters, spaces, tabs and
 * bytes of 0x80 and above (obs-text); no other control character. */
static int text_ok(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return 0;
  }
  return 1;
}

static int digit(char c) {
  return c >= '0' && c <= '9';
}

static enum hframe_result status_line(struct hframe *f, const char *s, size_t n,
                                      const struct hframe_ops *ops, void *ctx) {
  if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || !digit(s[7]) || s[8] != ' ' ||
      !digit(s[9]) || !digit(s[10]) || !digit(s[11]) ||
      (n > 12 && s[12] != ' ') || !text_ok(s, n))
    return fail(f, "%s", "malformed status line (not HTTP/1.x NNN)");
  long st = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
  if (st < 100 || st > 599)
    return fail(f, "%s", "status code outside 100-599");
  f->status = st;
  f->http10 = s[7] == '0';
  f->close = 0;
  f->chunked = 0;
  f->clen = -1;
  f->state = S_HEADER;
  return ops->line(ctx, s, n) ? HFRAME_STOPPED : HFRAME_MORE;
}

/* Whether the comma-separated list v holds the token tok (any case). */
static int has_token(const char *v, size_t n, const char *tok) {
  size_t tl = strlen(tok);
  while (n) {
    size_t k = 0;
    while (k < n && v[k] != ',')
      k++;
    const char *t = v;
    size_t tn = k;
    hstrtrim(&t, &tn);
    if (tn == tl && !strncasecmp(t, tok, tl))
      return 1;
    v += k < n ? k + 1 : k;
    n -= k < n ? k + 1 : k;
  }
  return 0;
}

/* A "name: value" line; fields of the final answer that frame the body
 * are read here. For trailers (framing 0) only the shape is checked. */
static enum hframe_result field(struct hframe *f, const char *s, size_t n,
                                int framing) {
  if (s[0] == ' ' || s[0] == '\t')
    return fail(f, "%s", "folded header line (obsolete line folding)");
  size_t nl = 0;
  while (nl < n && is_tchar((unsigned char)s[nl]))
    nl++;
  if (nl == 0 || nl == n || s[nl] != ':')
    return fail(f, "%s", "header line without a name and a colon");
  const char *v = s + nl + 1;
  size_t vn = n - nl - 1;
  if (!text_ok(v, vn))
    return fail(f, "%s", "control character in a header value");
  hstrtrim(&v, &vn);
  if (!framing)
    return HFRAME_MORE;
#define IS(name) (nl == sizeof(name) - 1 && !strncasecmp(s, name, nl))
  if (IS("content-length")) {
    uint64_t cl;
    if (hparse_u64(v, vn, &cl) != 0 || cl > INT64_MAX)
      return fail(f, "%s", "Content-Length is not a number");
    if (f->clen >= 0 && (uint64_t)f->clen != cl)
      return fail(f, "%s", "two different Content-Length values");
    f->clen = (int64_t)cl;
  } else if (IS("transfer-encoding")) {
    if (vn != 7 || strncasecmp(v, "chunked", 7) || f->chunked)
      return fail(f, "%s",
                  "Transfer-Encoding other than one \"chunked\" (not read)");
    f->chunked = 1;
  } else if (IS("connection")) {
    if (has_token(v, vn, "close"))
      f->close = 1;
  }
#undef IS
  return HFRAME_MORE;
}

/* The empty line after an answer's header lines: what follows. */
static enum hframe_result head_end(struct hframe *f) {
  if (f->status < 200) {
    if (f->status == 101)
      return fail(f, "%s", "101 Switching Protocols answered a GET");
    f->state = S_STATUS; /* an interim answer: the real one follows */
    f->status = 0;
    return HFRAME_MORE;
  }
  if (f->chunked && f->clen >= 0)
    return fail(f, "%s", "both Content-Length and Transfer-Encoding");
  /* HTTP/1.0 has no chunked coding: such framing is faulty (RFC 9112
   * 6.1), however well the chunks would parse. */
  if (f->chunked && f->http10)
    return fail(f, "%s", "Transfer-Encoding in an HTTP/1.0 answer");
  if (f->http10)
    f->close = 1;
  if (f->status == 204 || f->status == 304) {
    f->state = S_DONE;
  } else if (f->chunked) {
    f->state = S_CHUNK_SIZE;
  } else if (f->clen >= 0) {
    f->left = (uint64_t)f->clen;
    f->state = f->left ? S_BODY : S_DONE;
  } else {
    f->state = S_TO_EOF;
    f->close = 1;
  }
  return f->state == S_DONE ? HFRAME_DONE : HFRAME_MORE;
}

static enum hframe_result chunk_size(struct hframe *f, const char *s,
                                     size_t n) {
  uint64_t v = 0;
  size_t i = 0;
  for (; i < n; i++) {
    char c = s[i];
    int d = digit(c)                 ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0)
      break;
    v = v * 16 + (uint64_t)d;
    if (v > CHUNK_MAX)
      return fail(f, "%s", "chunk size too large");
  }
  /* After the digits only whitespace and a chunk extension (dropped). */
  size_t j = i;
  while (j < n && (s[j] == ' ' || s[j] == '\t'))
    j++;
  if (i == 0 || (j < n && s[j] != ';') || !text_ok(s, n))
    return fail(f, "%s", "malformed chunk size line");
  f->left = v;
  f->state = v ? S_CHUNK_DATA : S_TRAILER;
  return HFRAME_MORE;
}

/* A complete line (line end removed) in the state that reads lines. */
static enum hframe_result on_line(struct hframe *f, const char *s, size_t n,
                                  const struct hframe_ops *ops, void *ctx) {
  switch (f->state) {
  case S_STATUS:
    return status_line(f, s, n, ops, ctx);
  case S_HEADER: {
    if (n == 0)
      return head_end(f);
    enum hframe_result r = field(f, s, n, 1);
    if (r != HFRAME_MORE)
      return r;
    return ops->line(ctx, s, n) ? HFRAME_STOPPED : HFRAME_MORE;
  }
  case S_CHUNK_SIZE:
    return chunk_size(f, s, n);
  case S_CHUNK_END:
    if (n)
      return fail(f, "%s", "chunk data longer than its size");
    f->state = S_CHUNK_SIZE;
    return HFRAME_MORE;
  case S_TRAILER:
    if (n == 0) {
      f->state = S_DONE;
      return HFRAME_DONE;
    }
    return field(f, s, n, 0);
  default:
    return fail(f, "%s", "internal: a line in a body state");
  }
}

static int reads_lines(int state) {
  return state == S_STATUS || state == S_HEADER || state == S_CHUNK_SIZE ||
         state == S_CHUNK_END || state == S_TRAILER;
}

/* Lines of the header block and trailers count against HFRAME_HEAD_MAX;
 * chunk size lines are the body's framing and bounded one by one. */
static int counts_as_head(int state) {
  return state == S_STATUS || state == S_HEADER || state == S_TRAILER;
}

/* Gathers a line from p; returns bytes taken, sets *whole when its line
 * end was among them. */
static size_t gather(struct hframe *f, const char *p, size_t n, int *whole,
                     enum hframe_result *r) {
  const char *lf = memchr(p, '\n', n);
  size_t take = lf ? (size_t)(lf - p) + 1 : n;
  *whole = lf != NULL;
  *r = HFRAME_MORE;
  if (counts_as_head(f->state)) {
    f->head += take;
    if (f->head > HFRAME_HEAD_MAX) {
      *r = fail(f, "%s", "header block larger than 64 KiB");
      return take;
    }
  }
  if (f->line_len + take > sizeof f->line) {
    *r = fail(f, "%s", "header or chunk line longer than 8 KiB");
    return take;
  }
  memcpy(f->line + f->line_len, p, take);
  f->line_len += take;
  return take;
}

enum hframe_result hframe_feed(struct hframe *f, const char *p, size_t n,
                               size_t *used, const struct hframe_ops *ops,
                               void *ctx) {
  size_t i = 0;
  enum hframe_result r = HFRAME_MORE;
  f->seen += n;
  while (i < n && r == HFRAME_MORE) {
    if (f->state == S_DONE) {
      r = HFRAME_DONE;
      break;
    }
    if (reads_lines(f->state)) {
      int whole;
      i += gather(f, p + i, n - i, &whole, &r);
      if (r != HFRAME_MORE || !whole)
        continue;
      size_t len = f->line_len - 1; /* without the LF */
      if (len && f->line[len - 1] == '\r')
        len--;
      f->line_len = 0;
      if (memchr(f->line, '\r', len) || memchr(f->line, '\0', len)) {
        r = fail(f, "%s", "CR or NUL inside a line");
        break;
      }
      r = on_line(f, f->line, len, ops, ctx);
      continue;
    }
    size_t m = n - i;
    if (f->state != S_TO_EOF && m > f->left)
      m = (size_t)f->left;
    if (ops->body(ctx, f->status, p + i, m)) {
      i += m;
      r = HFRAME_STOPPED;
      break;
    }
    i += m;
    f->body += m;
    if (f->state == S_TO_EOF)
      continue;
    f->left -= m;
    if (f->left == 0) {
      if (f->state == S_BODY) {
        f->state = S_DONE;
        r = HFRAME_DONE;
      } else {
        f->state = S_CHUNK_END;
      }
    }
  }
  if (r == HFRAME_MORE && f->state == S_DONE)
    r = HFRAME_DONE;
  *used = i;
  return r;
}

enum hframe_result hframe_eof(struct hframe *f) {
  switch (f->state) {
  case S_TO_EOF:
  case S_DONE:
    f->state = S_DONE;
    return HFRAME_DONE;
  case S_STATUS:
  case S_HEADER:
    if (!f->seen)
      return fail(f, "%s",
                  "the server closed the connection without "
                  "answering");
    return fail(f, "%s", "connection closed inside the answer's header");
  case S_BODY:
    snprintf(f->err, sizeof f->err,
             "connection closed after %llu of %lld body bytes",
             (unsigned long long)f->body, (long long)f->clen);
    return HFRAME_ERROR;
  default:
    return fail(f, "%s", "connection closed inside the chunked body");
  }
}

int hframe_short_body(const struct hframe *f) {
  return f->status >= 200 && f->state != S_STATUS && f->state != S_HEADER &&
         f->state != S_DONE && f->state != S_TO_EOF;
}
