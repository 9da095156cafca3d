/* copy.c - hipobj-server's server-side copies: CopyObject (PUT with
 * x-amz-copy-source) and UploadPartCopy (the same on a part of a multipart
 * upload, with x-amz-copy-source-range).
 *
 * The source's bytes are copied into a temp file of the destination bucket
 * (copy_file_range, so the kernel may share extents), fsynced, and the
 * result is committed like an uploaded object or part: an object appears
 * only complete. x-amz-copy-source-if-match (and -if-none-match) are
 * checked against the source's ETag (412). CopyObject keeps the source's
 * type and metadata (x-amz-metadata-directive COPY, the default) or takes
 * the request's (REPLACE); copying an object onto itself without REPLACE is
 * refused, as S3 does. The answer is CopyObjectResult / CopyPartResult.
 * Not implemented (501): versionId in the source, and UploadPartCopy into
 * an upload with a checksum algorithm (the part would need one). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handlers.h"
#include "server.h"
#include "src/base/uri.h"

/* The source named by x-amz-copy-source: "[/]bucket/key", URL-encoded.
 * 0, or -1 after answering. */
static int copy_source(struct req *r, char **bucket, char **key) {
  const char *v = req_header(r, "x-amz-copy-source");
  *bucket = *key = NULL;
  struct hbuf dec = HBUF_INIT;
  if (v && *v == '/')
    v++;
  if (!v || strchr(v, '?') || huri_decode(&dec, v, strlen(v)) != 0 || dec.oom ||
      strlen(hbuf_str(&dec)) != dec.len) {
    int versioned = v && strstr(v, "?versionId=");
    hbuf_free(&dec);
    if (versioned)
      return req_fail(r, 501, "NotImplemented",
                      "hipobj-server has no versions to copy from.");
    return req_fail(r, 400, "InvalidArgument",
                    "Copy Source must mention the source bucket and key: "
                    "sourcebucket/sourcekey.");
  }
  const char *s = hbuf_str(&dec);
  const char *slash = strchr(s, '/');
  if (!slash || slash == s || !slash[1]) {
    hbuf_free(&dec);
    return req_fail(r, 400, "InvalidArgument",
                    "Copy Source must mention the source bucket and key: "
                    "sourcebucket/sourcekey.");
  }
  *bucket = strndup(s, (size_t)(slash - s));
  *key = strdup(slash + 1);
  hbuf_free(&dec);
  if (!*bucket || !*key || !st_valid_bucket(*bucket)) {
    int oom = !*bucket || !*key;
    free(*bucket);
    free(*key);
    *bucket = *key = NULL;
    return oom ? req_fail(r, 500, "InternalError", "out of memory")
               : req_fail(r, 400, "InvalidBucketName",
                          "The source bucket is not valid.");
  }
  return 0;
}

static int etag_eq(const char *a, const char *b) {
  size_t an = strlen(a), bn = strlen(b);
  if (an >= 2 && a[0] == '"')
    a++, an -= 2;
  if (bn >= 2 && b[0] == '"')
    b++, bn -= 2;
  return an == bn && !strncmp(a, b, an);
}

/* Copies [off, off+len) of fd into a new temp file of r->bucket, fsynced;
 * its ETag (MD5) into etag and its CRC-64/NVME into *crc64 (kept with
 * every upload, so a copy's GET can be verified and a copied part joins
 * its upload's checksum), both from the bytes written. The temp file's
 * path in *tmp. 0 or -errno. */
static int copy_range(struct req *r, int fd, uint64_t off, uint64_t len,
                      char **tmp, char etag[80], uint64_t *crc64) {
  int rc = mem_reserve(r->srv, len);
  if (rc != 0)
    return rc;
  int out = st_tmp_create(r->srv, r->bucket, tmp);
  if (out < 0)
    return out;
  loff_t in_off = (loff_t)off;
  for (uint64_t left = len; left > 0 && rc == 0;) {
    ssize_t n = copy_file_range(fd, &in_off, out, NULL, left, 0);
    if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS)) {
      char buf[65536];
      n = pread(fd, buf, left < sizeof buf ? left : sizeof buf, in_off);
      if (n > 0 && write(out, buf, (size_t)n) != n)
        n = -1;
      if (n > 0)
        in_off += n;
    }
    if (n <= 0)
      rc = n == 0 ? -EIO : -errno;
    else
      left -= (uint64_t)n;
  }
  if (rc == 0)
    rc = st_sync_fd(out);
  if (rc == 0)
    rc = st_file_digests(out, len, etag, CKS_NONE, NULL, crc64);
  close(out);
  if (rc != 0) {
    unlink(*tmp);
    free(*tmp);
    *tmp = NULL;
  }
  return rc;
}

/* Opens the source and checks the copy-source conditions. 0, or -1 after
 * answering. */
static int open_source(struct req *r, const char *bucket, const char *key,
                       struct obj_meta *m, int *fd) {
  int rc = st_obj_open(r->srv, bucket, key, m, fd);
  if (rc == -ENOENT)
    return st_bucket_exists(r->srv, bucket)
               ? req_fail(r, 404, "NoSuchKey",
                          "The specified key does not exist.")
               : req_fail(r, 404, "NoSuchBucket",
                          "The specified bucket does not exist");
  if (rc != 0)
    return req_fail(r, 500, "InternalError", "cannot open the source: %s",
                    strerror(-rc));
  const char *im = req_header(r, "x-amz-copy-source-if-match");
  const char *inm = req_header(r, "x-amz-copy-source-if-none-match");
  if ((im && !etag_eq(im, m->etag)) || (inm && etag_eq(inm, m->etag))) {
    close(*fd);
    meta_free(m);
    return req_fail(r, 412, "PreconditionFailed",
                    "At least one of the pre-conditions you specified did "
                    "not hold");
  }
  return 0;
}

static enum MHD_Result copy_result(struct req *r, const char *root,
                                   const char *etag, int64_t mtime_ms) {
  char when[32];
  srv_iso8601(mtime_ms, when);
  struct hbuf x = HBUF_INIT;
  xml_begin(&x, root);
  xml_el(&x, "LastModified", when);
  xml_el(&x, "ETag", etag);
  xml_end(&x, root);
  return srv_xml(r, 200, &x);
}

enum MHD_Result h_copy_object(struct req *r) {
  char *sb, *sk;
  if (copy_source(r, &sb, &sk) != 0)
    return srv_fail(r);
  const char *dir = req_header(r, "x-amz-metadata-directive");
  int replace = dir && !strcasecmp(dir, "REPLACE");
  if (dir && !replace && strcasecmp(dir, "COPY")) {
    free(sb);
    free(sk);
    return srv_error(r, 400, "InvalidArgument", "Unknown metadata directive.");
  }
  if (!replace && !strcmp(sb, r->bucket) && !strcmp(sk, r->key)) {
    free(sb);
    free(sk);
    return srv_error(r, 400, "InvalidRequest",
                     "This copy request is illegal because it is trying to "
                     "copy an object to itself without changing the "
                     "object's metadata, storage class, website redirect "
                     "location or encryption attributes.");
  }
  struct obj_meta src;
  int fd;
  int orc = open_source(r, sb, sk, &src, &fd);
  free(sb);
  free(sk);
  if (orc != 0)
    return srv_fail(r);
  struct obj_meta m;
  memset(&m, 0, sizeof m);
  char *tmp = NULL;
  int rc = copy_range(r, fd, 0, src.size, &tmp, m.etag, &m.crc64);
  m.has_crc64 = rc == 0;
  close(fd);
  if (rc == 0) {
    m.key = strdup(r->key);
    if (replace) {
      rc = collect_object_headers(r, &m) != 0 ? -ENOMEM : 0;
    } else {
      m.ctype = src.ctype ? strdup(src.ctype) : NULL;
      hbuf_append(&m.hdrs, src.hdrs.data, src.hdrs.len);
      rc = m.hdrs.oom || (src.ctype && !m.ctype) ? -ENOMEM : 0;
    }
    if (!m.key)
      rc = -ENOMEM;
  }
  meta_free(&src);
  if (rc == 0)
    rc = st_obj_commit(r->srv, r->bucket, r->key, tmp, &m);
  if (tmp)
    unlink(tmp); /* no-op when committed */
  free(tmp);
  char etag[80];
  snprintf(etag, sizeof etag, "%s", m.etag);
  meta_free(&m);
  if (rc == -ENOENT)
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  if (rc != 0)
    return srv_errno(r, rc, "cannot copy the object");
  return copy_result(r, "CopyObjectResult", etag, st_now_ms());
}

/* "bytes=a-b" within size. 0, or -1 after answering. */
static int copy_range_header(struct req *r, uint64_t size, uint64_t *off,
                             uint64_t *len) {
  const char *v = req_header(r, "x-amz-copy-source-range");
  *off = 0;
  *len = size;
  if (!v)
    return 0;
  uint64_t a, b;
  int n = -1;
  if (sscanf(v, "bytes=%" SCNu64 "-%" SCNu64 "%n", &a, &b, &n) != 2 ||
      n != (int)strlen(v) || a > b || b >= size)
    return req_fail(r, 400, "InvalidArgument",
                    "The x-amz-copy-source-range value must be of the form "
                    "bytes=first-last where first and last are the "
                    "zero-based offsets of the first and last bytes to "
                    "copy, within the object.");
  *off = a;
  *len = b - a + 1;
  return 0;
}

enum MHD_Result h_upload_part_copy(struct req *r) {
  if (upload_part_copy_check(r) != 0)
    return srv_fail(r);
  char *sb, *sk;
  if (copy_source(r, &sb, &sk) != 0)
    return srv_fail(r);
  struct obj_meta src;
  int fd;
  int orc = open_source(r, sb, sk, &src, &fd);
  free(sb);
  free(sk);
  if (orc != 0)
    return srv_fail(r);
  uint64_t off, len;
  if (copy_range_header(r, src.size, &off, &len) != 0) {
    close(fd);
    meta_free(&src);
    return srv_fail(r);
  }
  meta_free(&src);
  char *tmp = NULL, etag[80];
  uint64_t crc64 = 0;
  int rc = copy_range(r, fd, off, len, &tmp, etag, &crc64);
  close(fd);
  if (rc != 0)
    return srv_errno(r, rc, "cannot copy the part");
  struct obj_meta m;
  memset(&m, 0, sizeof m);
  snprintf(m.etag, sizeof m.etag, "%s", etag);
  m.has_crc64 = 1;
  m.crc64 = crc64;
  rc = part_store(r, tmp, &m);
  unlink(tmp); /* no-op when stored */
  free(tmp);
  if (rc == -ENOENT)
    return srv_error(r, 404, "NoSuchUpload",
                     "The specified upload does not exist.");
  if (rc != 0)
    return srv_errno(r, rc, "cannot store the part");
  return copy_result(r, "CopyPartResult", m.etag, m.mtime_ms);
}
