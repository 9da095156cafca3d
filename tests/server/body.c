/* body.c - request bodies of hipobj-server. Object data streams to a temp
 * file in the bucket while its MD5 (the ETag; in memory mode only when
 * Content-MD5 was sent, see body_etag), for signed payloads its
 * SHA-256 and, when an x-amz-checksum-<alg> was sent (as a header or an
 * aws-chunked trailer), its CRC are computed on the way; XML bodies are
 * collected in memory up to a limit. Checks at the end:
 * x-amz-content-sha256, Content-MD5, the aws-chunked framing (trailer
 * included) and decoded length, x-amz-checksum-<alg>. A body that fails
 * any check is deleted and never becomes an object. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handlers.h"
#include "src/base/codec.h"
#include "storage.h"

int body_begin_file(struct req *r) {
  int fd = st_tmp_create(r->srv, r->bucket, &r->tmp_path);
  if (fd == -ENOENT)
    return req_fail(r, 404, "NoSuchBucket",
                    "The specified bucket does not exist");
  if (fd < 0)
    return req_fail(r, 500, "InternalError", "cannot create a temp file: %s",
                    strerror(-fd));
  r->tmp_fd = fd;
  r->sink = SINK_FILE;
  /* The memory mode forms ETags without MD5 (body_etag), and computes one
   * only to check a Content-MD5 the request sent. */
  if (r->srv->memory && !req_header(r, "Content-MD5"))
    return 0;
  r->md5 = s3_md5_begin();
  if (!r->md5)
    return req_fail(r, 500, "InternalError", "MD5 is unavailable");
  return 0;
}

int body_begin_mem(struct req *r, size_t max) {
  r->sink = SINK_MEM;
  r->mem_max = max;
  return 0;
}

/* Payload bytes (after aws-chunked decoding). The limits hold for the
 * bytes as they arrive, whatever the framing promised: an HTTP-chunked
 * body declares no length, and an aws-chunked one may decode to more than
 * its x-amz-decoded-content-length; neither is written past its limit. */
static int emit(struct req *r, const char *data, size_t n) {
  int aws_chunked =
      r->pay == PAY_CHUNKED_SIGNED || r->pay == PAY_CHUNKED_UNSIGNED;
  if (aws_chunked && n > r->expect_len - r->body_len)
    return req_fail(r, 400, "IncompleteBody",
                    "The aws-chunked body decodes to more than the %llu "
                    "bytes of its x-amz-decoded-content-length.",
                    (unsigned long long)r->expect_len);
  if (r->sink == SINK_FILE && n > r->srv->max_put - r->body_len)
    return too_large(r);
  if (r->sink == SINK_FILE && r->srv->memory && mem_reserve(r->srv, n) != 0)
    return req_fail(r, 507, "InsufficientStorage",
                    "The server's memory store is full (--memory-cap %llu "
                    "bytes); delete objects or restart it with a larger cap.",
                    (unsigned long long)r->srv->mem_cap);
  r->body_len += n;
  switch (r->sink) {
  case SINK_FILE:
    if (r->md5)
      s3_md5_update(r->md5, data, n);
    cks_body_update(r, data, n);
    while (n) {
      ssize_t w = write(r->tmp_fd, data, n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0) {
        int e = errno;
        return req_fail(r, e == ENOSPC ? 507 : 500,
                        e == ENOSPC ? "InsufficientStorage" : "InternalError",
                        "cannot write the upload: %s", strerror(e));
      }
      data += w;
      n -= (size_t)w;
    }
    return 0;
  case SINK_MEM:
    if (r->mem.len + n > r->mem_max)
      return req_fail(r, 400, "MaxMessageLengthExceeded",
                      "Your request was too big (at most %zu bytes here).",
                      r->mem_max);
    hbuf_append(&r->mem, data, n);
    return r->mem.oom ? req_fail(r, 500, "InternalError", "out of memory") : 0;
  default:
    return 0;
  }
}

int body_feed(struct req *r, const char *data, size_t n) {
  if (r->err_http)
    return 0; /* already failed: the rest is read and dropped */
  if (r->pay == PAY_CHUNKED_SIGNED || r->pay == PAY_CHUNKED_UNSIGNED) {
    if (!r->chunk && !(r->chunk = chunk_new(r->pay == PAY_CHUNKED_SIGNED)))
      return req_fail(r, 500, "InternalError", "out of memory");
    return chunk_feed(r, r->chunk, data, n, emit);
  }
  if (r->pay == PAY_HASHED) {
    if (!r->sha && !(r->sha = s3_sha256_begin()))
      return req_fail(r, 500, "InternalError", "out of memory");
    s3_sha256_update(r->sha, data, n);
  }
  return emit(r, data, n);
}

static int check_content_md5(struct req *r, const uint8_t md5[16]) {
  const char *want = req_header(r, "Content-MD5");
  if (!want)
    return 0;
  char b64[32];
  hb64_encode(md5, 16, b64);
  if (strlen(want) != 24)
    return req_fail(r, 400, "InvalidDigest",
                    "The Content-MD5 you specified was invalid.");
  if (strcmp(want, b64))
    return req_fail(r, 400, "BadDigest",
                    "The Content-MD5 you specified did not match what we "
                    "received.");
  return 0;
}

int body_finish(struct req *r) {
  if (r->err_http)
    return -1;
  if (r->pay == PAY_CHUNKED_SIGNED || r->pay == PAY_CHUNKED_UNSIGNED) {
    if (!chunk_complete(r->chunk))
      return req_fail(r, 400, "IncompleteBody",
                      "The aws-chunked body ended before its final chunk.");
    if (r->body_len != r->expect_len)
      return req_fail(r, 400, "IncompleteBody",
                      "You did not provide the number of bytes specified by "
                      "the x-amz-decoded-content-length HTTP header");
  } else if (r->pay == PAY_HASHED) {
    uint8_t d[S3_SHA256_LEN];
    char hex[65];
    if (r->sha)
      s3_sha256_end(r->sha, d);
    else
      s3_sha256("", 0, d);
    r->sha = NULL;
    hhex_encode(d, sizeof d, hex);
    if (strcmp(hex, r->payload_hash))
      return req_fail(r, 400, "XAmzContentSHA256Mismatch",
                      "The provided 'x-amz-content-sha256' header does not "
                      "match what was computed.");
  }
  if (r->sink == SINK_FILE) {
    if (r->md5) {
      s3_md5_end(r->md5, r->md5_digest);
      r->md5 = NULL;
      r->md5_real = 1;
    } else {
      body_mem_digest(r->crc64_run, r->body_len, r->md5_digest);
    }
    if (check_content_md5(r, r->md5_digest) != 0 || cks_body_check(r) != 0)
      return -1;
    /* An object is made durable before it is committed. A part is not
     * fsynced: CompleteMultipartUpload syncs the object it assembles, and
     * a part lost in a crash before that no longer matches its recorded
     * size or ETag (multipart.c load_part), so Complete refuses it. */
    int src = r->part_number == 0 ? st_sync_fd(r->tmp_fd) : 0;
    if (src != 0)
      return req_fail(r, 500, "InternalError", "cannot sync the upload: %s",
                      strerror(-src));
    close(r->tmp_fd);
    r->tmp_fd = -1;
  } else if (r->sink == SINK_MEM) {
    uint8_t d[16];
    s3_md5(r->mem.data ? r->mem.data : "", r->mem.len, d);
    if (check_content_md5(r, d) != 0)
      return -1;
  }
  return 0;
}

void body_md5_hex(const struct req *r, char out[33]) {
  hhex_encode(r->md5_digest, 16, out);
}

void body_mem_digest(uint64_t crc64nvme, uint64_t len, uint8_t out[16]) {
  for (int i = 0; i < 8; i++) {
    out[i] = (uint8_t)(crc64nvme >> (56 - 8 * i));
    out[8 + i] = (uint8_t)(len >> (56 - 8 * i));
  }
}

void body_etag(const struct req *r, char out[80]) {
  char hex[33];
  body_md5_hex(r, hex);
  /* A memory-mode ETag is no MD5: "-1" says so to clients that compare
   * ETags without a dash with the MD5 of what they sent (s3cmd retries such
   * a PutObject or UploadPart, then gives up), as S3's own non-MD5 ETags
   * do. Complete's ETag is formed from the parts' 32 hex digits. */
  snprintf(out, 80, "\"%s%s\"", hex, r->md5_real ? "" : "-1");
}

void body_cleanup(struct req *r) {
  if (r->tmp_fd >= 0)
    close(r->tmp_fd);
  r->tmp_fd = -1;
  if (r->tmp_path) {
    unlink(r->tmp_path); /* no-op once committed (renamed away) */
    free(r->tmp_path);
    r->tmp_path = NULL;
  }
  s3_md5_abandon(r->md5);
  r->md5 = NULL;
  if (r->sha) {
    uint8_t junk[S3_SHA256_LEN];
    s3_sha256_end(r->sha, junk);
    r->sha = NULL;
  }
  chunk_free(r->chunk);
  r->chunk = NULL;
  hbuf_free(&r->mem);
}
