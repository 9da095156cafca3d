/* objects.c - hipobj-server's object and bucket operations: PutObject,
 * GetObject / HeadObject (ranges, partNumber, conditional requests),
 * DeleteObject, DeleteObjects, CreateBucket, DeleteBucket, HeadBucket,
 * GetBucketLocation and GetBucketVersioning. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "handlers.h"
#include "s3/xml.h"
#include "s3/xml_server.h"

#define MAX_USER_META 2048

/* ---- helpers shared with multipart.c ------------------------------------ */

/* Headers kept with an object and returned by GET/HEAD. */
static int stored_header(const char *name) {
  static const char *const keep[] = {"Cache-Control",    "Content-Disposition",
                                     "Content-Encoding", "Content-Language",
                                     "Expires",          NULL};
  if (!strncasecmp(name, "x-amz-meta-", 11))
    return 1;
  for (const char *const *k = keep; *k; k++)
    if (!strcasecmp(name, *k))
      return 1;
  return 0;
}

int collect_object_headers(struct req *r, struct obj_meta *m) {
  size_t user = 0;
  for (size_t i = 0; i < r->n_hdrs; i++) {
    const char *n = r->hdrs[i].name, *v = r->hdrs[i].value;
    if (!stored_header(n))
      continue;
    if (!strcasecmp(n, "Content-Encoding")) {
      /* aws-chunked describes the transfer, not the object. */
      if (!strcasecmp(v, "aws-chunked"))
        continue;
      if (!strncasecmp(v, "aws-chunked,", 12))
        v += 12 + strspn(v + 12, " ");
    }
    if (!strncasecmp(n, "x-amz-meta-", 11))
      user += strlen(n) - 11 + strlen(v);
    for (const char *p = n; *p; p++)
      hbuf_putc(&m->hdrs, (*p >= 'A' && *p <= 'Z') ? (char)(*p + 32) : *p);
    hbuf_puts(&m->hdrs, ": ");
    for (const char *p = v; *p; p++)
      hbuf_putc(&m->hdrs, (*p == '\n' || *p == '\r') ? ' ' : *p);
    hbuf_putc(&m->hdrs, '\n');
  }
  if (user > MAX_USER_META)
    return req_fail(r, 400, "MetadataTooLarge",
                    "Your metadata headers exceed the maximum allowed "
                    "metadata size (%d bytes).",
                    MAX_USER_META);
  const char *ct = req_header(r, "Content-Type");
  if (ct && *ct)
    m->ctype = strdup(ct);
  return m->hdrs.oom ? req_fail(r, 500, "InternalError", "out of memory") : 0;
}

void add_object_headers(struct MHD_Response *resp, const struct obj_meta *m) {
  char date[40];
  srv_http_date(m->mtime_ms / 1000, date);
  MHD_add_response_header(resp, "ETag", m->etag);
  MHD_add_response_header(resp, "Last-Modified", date);
  MHD_add_response_header(resp, "Content-Type",
                          m->ctype ? m->ctype : "binary/octet-stream");
  MHD_add_response_header(resp, "Accept-Ranges", "bytes");
  const char *h = hbuf_str(&m->hdrs);
  while (*h) {
    size_t n = strcspn(h, "\n");
    const char *colon = memchr(h, ':', n);
    if (colon) {
      char name[256], value[2048];
      size_t nl = (size_t)(colon - h), vl = n - nl - 1;
      const char *v = colon + 1;
      while (vl && *v == ' ') {
        v++;
        vl--;
      }
      if (nl < sizeof name && vl < sizeof value) {
        memcpy(name, h, nl);
        name[nl] = '\0';
        memcpy(value, v, vl);
        value[vl] = '\0';
        MHD_add_response_header(resp, name, value);
      }
    }
    h += n + (h[n] == '\n');
  }
}

/* NoSuchBucket or NoSuchKey for a missing object. */
static enum MHD_Result missing(struct req *r) {
  if (!st_bucket_exists(r->srv, r->bucket))
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  return srv_error(r, 404, "NoSuchKey", "The specified key does not exist.");
}

/* ---- PutObject ---------------------------------------------------------- */

int too_large(struct req *r) {
  return req_fail(r, 400, "EntityTooLarge",
                  "Your proposed upload exceeds the maximum allowed size "
                  "(%llu bytes for one PUT or part; use a multipart upload).",
                  (unsigned long long)r->srv->max_put);
}

int has_body_length(const struct req *r) {
  const char *te = req_header(r, "Transfer-Encoding");
  return req_header(r, "Content-Length") || (te && strcasestr(te, "chunked"));
}

int put_object_begin(struct req *r) {
  if (!has_body_length(r))
    return req_fail(r, 411, "MissingContentLength",
                    "You must provide the Content-Length HTTP header.");
  if (r->expect_len > r->srv->max_put)
    return too_large(r);
  return body_begin_file(r);
}

enum MHD_Result h_put_object(struct req *r) {
  const char *inm = req_header(r, "If-None-Match");
  struct obj_meta m;
  memset(&m, 0, sizeof m);
  if (inm && !strcmp(inm, "*") &&
      st_obj_info(r->srv, r->bucket, r->key, &m) == 0) {
    meta_free(&m);
    return srv_error(r, 412, "PreconditionFailed",
                     "At least one of the pre-conditions you specified did "
                     "not hold");
  }
  memset(&m, 0, sizeof m);
  body_etag(r, m.etag);
  m.key = strdup(r->key); /* listings of long (hashed) names need it */
  cks_object_record(r, &m);
  if (!m.key || collect_object_headers(r, &m) != 0) {
    meta_free(&m);
    return srv_fail(r);
  }
  int rc = st_obj_commit(r->srv, r->bucket, r->key, r->tmp_path, &m);
  meta_free(&m);
  if (rc == -ENOENT)
    return missing(r);
  if (rc != 0)
    return srv_errno(r, rc, "cannot store the object");
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (resp) {
    char etag[80];
    body_etag(r, etag);
    MHD_add_response_header(resp, "ETag", etag);
  }
  return srv_queue(r, 200, resp);
}

/* ---- GetObject / HeadObject --------------------------------------------- */

static void strip_etag(const char *s, size_t n, const char **out,
                       size_t *olen) {
  while (n && *s == ' ') {
    s++;
    n--;
  }
  while (n && s[n - 1] == ' ')
    n--;
  if (n >= 2 && s[0] == 'W' && s[1] == '/') {
    s += 2;
    n -= 2;
  }
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
    s++;
    n -= 2;
  }
  *out = s;
  *olen = n;
}

/* Does a comma-separated list of ETags (or "*") name this ETag? */
static int etag_listed(const char *list, const char *etag) {
  const char *e;
  size_t en;
  strip_etag(etag, strlen(etag), &e, &en);
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    const char *t;
    size_t tn;
    strip_etag(p, n, &t, &tn);
    if ((tn == 1 && *t == '*') || (tn == en && !strncasecmp(t, e, en)))
      return 1;
    p += n + (p[n] == ',');
  }
  return 0;
}

/* 0: go on; 304 or 412 otherwise (RFC 7232 order of evaluation). */
static int preconditions(struct req *r, const struct obj_meta *m) {
  int64_t mtime = m->mtime_ms / 1000, t;
  const char *im = req_header(r, "If-Match");
  const char *ius = req_header(r, "If-Unmodified-Since");
  const char *inm = req_header(r, "If-None-Match");
  const char *ims = req_header(r, "If-Modified-Since");
  if (im && !etag_listed(im, m->etag))
    return 412;
  if (!im && ius && s3_parse_http_date(ius, &t) == 0 && mtime > t)
    return 412;
  if (inm && etag_listed(inm, m->etag))
    return 304;
  if (!inm && ims && s3_parse_http_date(ims, &t) == 0 && mtime <= t)
    return 304;
  return 0;
}

enum MHD_Result h_get_object(struct req *r) {
  struct obj_meta m;
  int fd = -1;
  char *body = NULL; /* the object's bytes when the cache holds them */
  int rc = st_obj_open_body(r->srv, r->bucket, r->key, &m, &fd, &body);
  if (rc == -ENOENT || rc == -ENOTDIR)
    return missing(r);
  if (rc != 0)
    return srv_errno(r, rc, "cannot open the object");
  enum MHD_Result res;
  uint64_t off = 0, len = m.size;
  int status = 200, parts_count = 0;
  unsigned part = 0; /* a multipart object's part asked by number */
  const char *pn = req_param(r, "partNumber");
  const char *range = req_header(r, "Range");
  int pre = preconditions(r, &m);
  if (pre == 412) {
    res = srv_error(r, 412, "PreconditionFailed",
                    "At least one of the pre-conditions you specified did "
                    "not hold");
    goto done;
  }
  if (pre == 304) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (resp) {
      char date[40];
      srv_http_date(m.mtime_ms / 1000, date);
      MHD_add_response_header(resp, "ETag", m.etag);
      MHD_add_response_header(resp, "Last-Modified", date);
    }
    res = srv_queue(r, 304, resp);
    goto done;
  }
  if (pn) {
    uint64_t n = 0;
    if (range) {
      res = srv_error(r, 400, "InvalidRequest",
                      "Cannot specify both Range header and partNumber query "
                      "parameter");
      goto done;
    }
    if (rp_parse_u64(pn, strlen(pn), &n) != 0 || n < 1 || n > SRV_MAX_PARTS) {
      res = srv_error(r, 400, "InvalidArgument",
                      "Part number must be an integer between 1 and 10000, "
                      "inclusive");
      goto done;
    }
    if ((m.n_parts && n > m.n_parts) || (!m.n_parts && n != 1)) {
      res = srv_error(r, 416, "InvalidPartNumber",
                      "The requested partnumber is not satisfiable");
      goto done;
    }
    if (m.n_parts) {
      for (unsigned i = 0; i + 1 < n; i++)
        off += m.parts[i];
      len = m.parts[n - 1];
      status = 206;
      parts_count = (int)m.n_parts;
      part = (unsigned)n;
    }
  } else if (range) {
    int pr = rp_parse_range(range, m.size, &off, &len);
    if (pr < 0) {
      struct MHD_Response *resp = srv_error_response(
          r, "InvalidRange", "The requested range is not satisfiable");
      if (resp) {
        char cr[64];
        snprintf(cr, sizeof cr, "bytes */%llu", (unsigned long long)m.size);
        MHD_add_response_header(resp, "Content-Range", cr);
      }
      res = srv_queue(r, 416, resp);
      goto done;
    }
    if (pr > 0)
      status = 206;
  }
  if (status == 206 && r->fault.action == FA_PARTIAL && len > 1) {
    /* Fewer bytes than asked, honestly labelled: a client must not take
     * this answer for the range it asked (at least one byte stays, so the
     * Content-Range remains valid). */
    uint64_t cut = r->fault.has_arg ? r->fault.arg : len / 2;
    len -= cut < len ? cut : len - 1;
    srv_log(r->srv, SLOG_INFO, "%s: fault: partial answer, %llu bytes", r->id,
            (unsigned long long)len);
  }
  struct MHD_Response *resp = body ? srv_body_mem(r, body + off, (size_t)len)
                                   : srv_body_fd(r, fd, off, len);
  fd = -1; /* the response owns it now */
  if (resp) {
    add_object_headers(resp, &m);
    cks_get_headers(r, resp, &m, !part && off == 0 && len == m.size, part);
    if (status == 206) {
      char cr[96];
      snprintf(cr, sizeof cr, "bytes %llu-%llu/%llu", (unsigned long long)off,
               (unsigned long long)(off + len - 1), (unsigned long long)m.size);
      MHD_add_response_header(resp, "Content-Range", cr);
    }
    if (parts_count) {
      char pc[16];
      snprintf(pc, sizeof pc, "%d", parts_count);
      MHD_add_response_header(resp, "x-amz-mp-parts-count", pc);
    }
    if (r->rdma_token) /* RDMA declined: the data is in this body */
      MHD_add_response_header(resp, "x-amz-rdma-reply", "501");
  }
  res = srv_queue(r, status, resp);
done:
  if (fd >= 0)
    close(fd);
  free(body);
  meta_free(&m);
  return res;
}

/* ---- deletes ------------------------------------------------------------ */

enum MHD_Result h_delete_object(struct req *r) {
  if (!st_bucket_exists(r->srv, r->bucket))
    return missing(r);
  int rc = st_obj_delete(r->srv, r->bucket, r->key);
  if (rc != 0)
    return srv_errno(r, rc, "cannot delete the object");
  return srv_empty(r, 204);
}

enum MHD_Result h_delete_objects(struct req *r) {
  struct s3_delete_request d;
  struct hipobj_error why = {0};
  if (s3_xml_parse_delete_request(r->mem.data, r->mem.len, 1000, &d, &why) !=
      HIPOBJ_OK)
    return srv_error(r, 400, "MalformedXML",
                     "The XML you provided was not well-formed or did not "
                     "validate against our published schema: %s",
                     why.message);
  if (!st_bucket_exists(r->srv, r->bucket)) {
    s3_delete_request_free(&d);
    return missing(r);
  }
  struct hbuf x = HBUF_INIT;
  xml_begin(&x, "DeleteResult");
  for (size_t i = 0; i < d.n; i++) {
    int rc = strlen(d.keys[i]) > SRV_MAX_KEY
                 ? -ENAMETOOLONG
                 : st_obj_delete(r->srv, r->bucket, d.keys[i]);
    if (rc == 0) {
      if (!d.quiet) {
        xml_open(&x, "Deleted");
        xml_el(&x, "Key", d.keys[i]);
        xml_close(&x, "Deleted");
      }
    } else {
      xml_open(&x, "Error");
      xml_el(&x, "Key", d.keys[i]);
      xml_el(&x, "Code",
             rc == -ENAMETOOLONG ? "KeyTooLongError" : "InternalError");
      xml_el(&x, "Message", strerror(-rc));
      xml_close(&x, "Error");
    }
  }
  xml_end(&x, "DeleteResult");
  s3_delete_request_free(&d);
  return srv_xml(r, 200, &x);
}

/* ---- buckets ------------------------------------------------------------ */

/* AWS's rules for a new bucket, stricter than what st_valid_bucket lets
 * existing buckets (made by hand in --root) be called: lower case, no
 * '_', a letter or digit at both ends, no "..", no dash next to a dot,
 * not an IP address. */
static int new_bucket_ok(const char *b) {
  size_t n = strlen(b), dots = 0, digits = 0;
  for (size_t i = 0; i < n; i++) {
    char c = b[i];
    if (c == '.')
      dots++;
    else if (c >= '0' && c <= '9')
      digits++;
    else if (!(c >= 'a' && c <= 'z') && c != '-')
      return 0;
  }
  if (dots == 3 && dots + digits == n)
    return 0; /* 192.168.5.4 */
  return b[0] != '-' && b[0] != '.' && b[n - 1] != '-' && b[n - 1] != '.' &&
         !strstr(b, "..") && !strstr(b, ".-") && !strstr(b, "-.") &&
         strncmp(b, "xn--", 4) != 0;
}

enum MHD_Result h_create_bucket(struct req *r) {
  if (!new_bucket_ok(r->bucket))
    return srv_error(r, 400, "InvalidBucketName",
                     "The specified bucket is not valid: a new bucket's "
                     "name is lower-case letters, digits, dots and dashes, "
                     "starting and ending with a letter or digit.");
  int rc = st_bucket_create(r->srv, r->bucket);
  if (rc == -EEXIST)
    return srv_error(r, 409, "BucketAlreadyOwnedByYou",
                     "Your previous request to create the named bucket "
                     "succeeded and you already own it.");
  if (rc != 0)
    return srv_errno(r, rc, "cannot create the bucket");
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (resp) {
    char loc[80];
    snprintf(loc, sizeof loc, "/%s", r->bucket);
    MHD_add_response_header(resp, "Location", loc);
  }
  return srv_queue(r, 200, resp);
}

enum MHD_Result h_delete_bucket(struct req *r) {
  int rc = st_bucket_delete(r->srv, r->bucket);
  if (rc == -ENOENT || rc == -ENOTDIR)
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  if (rc == -ENOTEMPTY)
    return srv_error(r, 409, "BucketNotEmpty",
                     "The bucket you tried to delete is not empty");
  if (rc != 0)
    return srv_errno(r, rc, "cannot delete the bucket");
  return srv_empty(r, 204);
}

enum MHD_Result h_head_bucket(struct req *r) {
  if (!st_bucket_exists(r->srv, r->bucket))
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (resp)
    MHD_add_response_header(resp, "x-amz-bucket-region", r->srv->region);
  return srv_queue(r, 200, resp);
}

enum MHD_Result h_get_location(struct req *r) {
  if (!st_bucket_exists(r->srv, r->bucket))
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  struct hbuf x = HBUF_INIT;
  xml_begin(&x, "LocationConstraint");
  /* us-east-1 is written as an empty constraint, as S3 does. */
  if (strcmp(r->srv->region, "us-east-1"))
    xml_esc(&x, r->srv->region);
  xml_end(&x, "LocationConstraint");
  return srv_xml(r, 200, &x);
}

enum MHD_Result h_get_versioning(struct req *r) {
  if (!st_bucket_exists(r->srv, r->bucket))
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  struct hbuf x = HBUF_INIT;
  xml_begin(&x, "VersioningConfiguration");
  xml_end(&x, "VersioningConfiguration");
  return srv_xml(r, 200, &x);
}
