/* fuzz_frame.c - s3/http_frame.c, the strict framing of one HTTP/1.1
 * answer that the wire path for small GETs reads (docs/engine.md). The
 * input is fed three ways: whole, in two pieces cut where byte 0 says, and
 * (inputs of up to 4 KiB) one byte at a time; then the connection ends.
 * Properties: *used <= n, and every byte is taken unless the answer is
 * DONE; nothing is fed after DONE, ERROR or STOPPED, and a DONE parser fed
 * again takes nothing; lines hold no CR, LF or NUL and fit HFRAME_LINE_MAX,
 * all of them HFRAME_HEAD_MAX; body bytes go only to a final answer that
 * has a body (not 1xx, 204, 304) and never past its Content-Length; a
 * Content-Length answer that is DONE passed exactly that many, a 204 or
 * 304 none; an error has a message; the connection's end completes only a
 * body that runs to it (and then the connection is not kept), and a body
 * cut short is what hframe_short_body says. The three ways agree on the
 * result, the bytes taken, the lines and body bytes passed, and the
 * answer's fields (and the error's text, but for which of the two limits
 * a line past both hits). A line "X-Stop: ..." makes the line callback stop.
 *
 * Input: byte 0 chooses the cut (0..255 scaled over the rest), the rest is
 * the answer. */
#include "fuzz.h"

#include "s3/http_frame.h"

struct seen {
  const struct hframe *f;
  uint64_t line_hash, body_hash, body;
  size_t head, lines;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

static int on_line(void *ctx, const char *line, size_t len) {
  struct seen *s = ctx;
  FUZZ_CHECK(len <= HFRAME_LINE_MAX, "a line of %zu bytes", len);
  FUZZ_CHECK(!memchr(line, '\r', len) && !memchr(line, '\n', len) &&
                 !memchr(line, '\0', len),
             "CR, LF or NUL in a line passed on");
  s->head += len;
  FUZZ_CHECK(s->head <= HFRAME_HEAD_MAX, "%zu bytes of lines", s->head);
  s->lines++;
  s->line_hash = fnv(fnv(s->line_hash, line, len), "\n", 1);
  return len >= 7 && !memcmp(line, "X-Stop:", 7) ? -1 : 0;
}

static int on_body(void *ctx, long status, const char *data, size_t len) {
  struct seen *s = ctx;
  const struct hframe *f = s->f;
  FUZZ_CHECK(len > 0, "an empty body call");
  FUZZ_CHECK(status >= 200 && status <= 599 && status != 204 && status != 304,
             "body bytes of a %ld answer", status);
  FUZZ_CHECK(status == f->status, "status %ld, parser's %ld", status,
             f->status);
  FUZZ_CHECK(f->body == s->body, "parser counted %llu, passed %llu",
             (unsigned long long)f->body, (unsigned long long)s->body);
  if (f->clen >= 0)
    FUZZ_CHECK(!f->chunked && s->body + len <= (uint64_t)f->clen,
               "%llu body bytes past a Content-Length of %lld",
               (unsigned long long)(s->body + len), (long long)f->clen);
  s->body += len;
  s->body_hash = fnv(s->body_hash, data, len);
  return 0;
}

static const struct hframe_ops ops = {on_line, on_body};

struct outcome {
  enum hframe_result r, eof;
  size_t used;
  struct seen s;
  long status;
  int close, http10, chunked, short_body;
  int64_t clen;
  char err[sizeof((struct hframe *)0)->err];
};

/* Feeds data in pieces: cut > 0 cuts once there, step > 0 feeds that many
 * bytes at a time. */
static void run(const uint8_t *data, size_t size, size_t cut, size_t step,
                struct outcome *o) {
  struct hframe *f = malloc(sizeof *f);
  if (!f)
    abort();
  hframe_init(f);
  memset(o, 0, sizeof *o);
  o->s.f = f;
  o->r = HFRAME_MORE;
  size_t off = 0;
  while (off < size && o->r == HFRAME_MORE) {
    size_t n = size - off;
    if (step && n > step)
      n = step;
    if (cut && off < cut && n > cut - off)
      n = cut - off;
    size_t used = (size_t)-1;
    o->r = hframe_feed(f, (const char *)data + off, n, &used, &ops, &o->s);
    FUZZ_CHECK(used <= n, "used %zu of %zu", used, n);
    if (o->r == HFRAME_MORE)
      FUZZ_CHECK(used == n, "MORE with %zu of %zu taken", used, n);
    o->used += used;
    off += n;
  }
  FUZZ_CHECK(f->seen == off, "seen %llu, fed %zu", (unsigned long long)f->seen,
             off);
  FUZZ_CHECK(f->body == o->s.body, "parser counted %llu, passed %llu",
             (unsigned long long)f->body, (unsigned long long)o->s.body);
  o->eof = o->r;
  switch (o->r) {
  case HFRAME_DONE: {
    FUZZ_CHECK(f->status >= 200 && f->status <= 599, "DONE with status %ld",
               f->status);
    if (f->status == 204 || f->status == 304)
      FUZZ_CHECK(o->s.body == 0, "%llu body bytes of a %ld",
                 (unsigned long long)o->s.body, f->status);
    else if (f->clen >= 0)
      FUZZ_CHECK(!f->chunked && o->s.body == (uint64_t)f->clen,
                 "DONE after %llu of %lld body bytes",
                 (unsigned long long)o->s.body, (long long)f->clen);
    size_t again = (size_t)-1;
    FUZZ_CHECK(hframe_feed(f, "x", 1, &again, &ops, &o->s) == HFRAME_DONE &&
                   again == 0,
               "a finished answer took more");
    FUZZ_CHECK(!hframe_short_body(f), "DONE yet cut short");
    FUZZ_CHECK(hframe_eof(f) == HFRAME_DONE, "the end after DONE: %s", f->err);
    break;
  }
  case HFRAME_ERROR:
    FUZZ_CHECK(f->err[0], "an error without a message");
    break;
  case HFRAME_STOPPED:
    FUZZ_CHECK(o->s.lines > 0, "stopped with no line passed");
    break;
  case HFRAME_MORE: {
    FUZZ_CHECK(o->used == size, "MORE with %zu of %zu taken", o->used, size);
    int short_body = hframe_short_body(f);
    uint64_t body = f->body;
    o->eof = hframe_eof(f);
    if (o->eof == HFRAME_DONE) {
      FUZZ_CHECK(f->status >= 200 && f->clen < 0 && !f->chunked && f->close,
                 "the connection's end completed a framed answer");
      FUZZ_CHECK(!short_body, "a body to the end reported short");
    } else {
      FUZZ_CHECK(o->eof == HFRAME_ERROR && f->err[0], "eof gave %d",
                 (int)o->eof);
      FUZZ_CHECK(short_body == (f->status >= 200 &&
                                (f->chunked ||
                                 (f->clen >= 0 && body < (uint64_t)f->clen)) &&
                                strncmp(f->err,
                                        "connection closed inside the "
                                        "answer's header",
                                        40) != 0),
                 "short body %d for: %s", short_body, f->err);
      if (!strncmp(f->err, "connection closed after ", 24)) {
        char want[160];
        snprintf(want, sizeof want,
                 "connection closed after %llu of %lld body bytes",
                 (unsigned long long)body, (long long)f->clen);
        FUZZ_CHECK(!strcmp(f->err, want), "%s", f->err);
      }
    }
    break;
  }
  }
  o->status = f->status;
  o->close = f->close;
  o->http10 = f->http10;
  o->chunked = f->chunked;
  o->clen = f->clen;
  o->short_body = hframe_short_body(f);
  memcpy(o->err, f->err, sizeof o->err);
  free(f);
}

static void same(const struct outcome *a, const struct outcome *b,
                 const char *how) {
  FUZZ_CHECK(a->r == b->r && a->eof == b->eof, "%s: result %d/%d, whole %d/%d",
             how, (int)b->r, (int)b->eof, (int)a->r, (int)a->eof);
  FUZZ_CHECK(a->used == b->used, "%s: used %zu, whole %zu", how, b->used,
             a->used);
  FUZZ_CHECK(a->s.lines == b->s.lines && a->s.line_hash == b->s.line_hash,
             "%s: other lines", how);
  FUZZ_CHECK(a->s.body == b->s.body && a->s.body_hash == b->s.body_hash,
             "%s: other body bytes", how);
  FUZZ_CHECK(a->status == b->status && a->close == b->close &&
                 a->http10 == b->http10 && a->chunked == b->chunked &&
                 a->clen == b->clen && a->short_body == b->short_body,
             "%s: other fields", how);
  /* Which limit a line past both is reported for depends on the pieces. */
  if (!strstr(a->err, "KiB") && !strstr(b->err, "KiB"))
    FUZZ_CHECK(!strcmp(a->err, b->err), "%s: \"%s\", whole \"%s\"", how, b->err,
               a->err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t cut = (size - 1) * data[0] / 255;
  data++;
  size--;
  struct outcome whole, split, bytes;
  run(data, size, 0, 0, &whole);
  run(data, size, cut, 0, &split);
  same(&whole, &split, "cut in two");
  if (size <= 4096) {
    run(data, size, 0, 1, &bytes);
    same(&whole, &bytes, "byte by byte");
  }
  return 0;
}
