/* fuzz_chunked.c - hipobj-server's aws-chunked decoder
 * (tests/server/chunked.c), unsigned and signed, fed in pieces of the
 * sizes the input chooses. The request, the signature functions and the
 * checksum trailer hooks are stubs here (the decoder is what is fuzzed):
 * a chunk signature is "0" x 64 followed by nothing, so that the fuzzer
 * can get past it. Properties: the decoder never emits more payload than
 * it was given; a failure is recorded with a status and code; once
 * complete, more input is refused.
 *
 * Input: byte 0 chooses signed (bit 0) and trailer (bit 1) modes, byte 1
 * the piece size (1..256), the rest is the body. */
#include "fuzz.h"

#include "tests/server/server.h"

/* ---- stubs of the server functions chunked.c calls --------------------- */

int req_fail(struct req *r, int http, const char *code, const char *fmt, ...) {
  (void)fmt;
  if (!r->err_http) {
    r->err_http = http;
    snprintf(r->err_code, sizeof r->err_code, "%s", code);
  }
  return -1;
}

void auth_chunk_signature(const struct req *r, const char *prev_sig,
                          const char *chunk_sha_hex, char out[65]) {
  (void)r;
  (void)prev_sig;
  (void)chunk_sha_hex;
  memset(out, '0', 64);
  out[64] = '\0';
}

void auth_trailer_signature(const struct req *r, const char *prev_sig,
                            const char *trailer_sha_hex, char out[65]) {
  auth_chunk_signature(r, prev_sig, trailer_sha_hex, out);
}

int cks_trailer_line(struct req *r, const char *name, const char *value) {
  (void)value;
  if (strncmp(name, "x-amz-checksum-", 15))
    return req_fail(r, 400, "MalformedTrailerError", "other trailer");
  return 0;
}

int cks_trailer_end(struct req *r) {
  (void)r;
  return 0;
}

/* ---- the harness ----------------------------------------------------------
 */

static uint64_t emitted;

static int emit(struct req *r, const char *d, size_t n) {
  (void)r;
  (void)d;
  emitted += n;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  int verify = data[0] & 1;
  size_t piece = (size_t)data[1] + 1;
  data += 2;
  size -= 2;
  struct req r;
  memset(&r, 0, sizeof r);
  r.pay = verify ? PAY_CHUNKED_SIGNED : PAY_CHUNKED_UNSIGNED;
  r.pay_trailer = (data[-2] >> 1) & 1;
  memset(r.seed_sig, 'a', 64);
  struct chunk_dec *d = chunk_new(verify);
  if (!d)
    return 0;
  emitted = 0;
  int rc = 0;
  for (size_t off = 0; off < size && rc == 0; off += piece) {
    size_t n = size - off < piece ? size - off : piece;
    rc = chunk_feed(&r, d, (const char *)data + off, n, emit);
  }
  FUZZ_CHECK(emitted <= size, "%llu bytes out of %zu in",
             (unsigned long long)emitted, size);
  if (rc != 0)
    FUZZ_CHECK(r.err_http >= 400 && r.err_code[0], "a failure unrecorded");
  if (rc == 0 && chunk_complete(d)) {
    struct req r2 = r;
    FUZZ_CHECK(chunk_feed(&r2, d, "x", 1, emit) != 0,
               "data after the final chunk taken");
  }
  chunk_free(d);
  return 0;
}
