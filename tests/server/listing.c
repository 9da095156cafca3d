/* listing.c - hipobj-server's listings: ListBuckets, ListObjects (v1 and
 * v2: prefix, delimiter, max-keys, marker / continuation-token /
 * start-after, encoding-type=url, KeyCount) and ListMultipartUploads (the
 * uploads themselves are in multipart.c).
 *
 * Keys are sorted bytewise (UTF-8 byte order, as S3 does). With a
 * delimiter, keys sharing prefix..delimiter collapse into one common prefix
 * that counts as one entry. Paging resumes after a marker: every entry, key
 * or common prefix, not greater than the marker is skipped, which also
 * skips the keys rolled up into a prefix that ended the previous page. The
 * continuation token is simply the hex of that last entry.
 *
 * The repeat-token fault makes a listing that never ends: every page is
 * truncated, and its next token (v1: marker) is the one the request sent,
 * or one of a cycle of fixed ones (repeat_next). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "src/base/codec.h"

int list_limit(struct req *r, const char *name, unsigned cap, unsigned *out) {
  if (rp_list_limit(req_param(r, name), cap, out) != 0)
    return req_fail(r, 400, "InvalidArgument",
                    "%s must be a non-negative integer", name);
  return 0;
}

/* A listing echoes its parameters: one that XML 1.0 cannot carry can only
 * be echoed URL-encoded. */
static enum MHD_Result echo_refused(struct req *r) {
  return srv_error(r, 400, "InvalidArgument",
                   "A listing parameter holds a control character or bytes "
                   "that are not UTF-8, which XML 1.0 cannot carry: ask "
                   "with encoding-type=url.");
}

enum MHD_Result h_list_buckets(struct req *r) {
  struct st_bucket *b;
  size_t n;
  int rc = st_list_buckets(r->srv, &b, &n);
  if (rc != 0)
    return srv_errno(r, rc, "cannot list the buckets");
  struct hbuf x = HBUF_INIT;
  xml_begin(&x, "ListAllMyBucketsResult");
  xml_open(&x, "Owner");
  xml_el(&x, "ID", r->cred->access_key);
  xml_el(&x, "DisplayName", r->cred->access_key);
  xml_close(&x, "Owner");
  xml_open(&x, "Buckets");
  for (size_t i = 0; i < n; i++) {
    char when[32];
    srv_iso8601(b[i].created_ms, when);
    xml_open(&x, "Bucket");
    xml_el(&x, "Name", b[i].name);
    xml_el(&x, "CreationDate", when);
    xml_close(&x, "Bucket");
  }
  xml_close(&x, "Buckets");
  xml_end(&x, "ListAllMyBucketsResult");
  st_free_buckets(b, n);
  return srv_xml(r, 200, &x);
}

static int unhex(const char *s, struct hbuf *out) {
  size_t n = strlen(s);
  if (n % 2)
    return -1;
  for (size_t i = 0; i < n; i += 2) {
    unsigned v;
    if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i] ||
        !strchr("0123456789abcdefABCDEF", s[i + 1]) || !s[i + 1] ||
        sscanf(s + i, "%2x", &v) != 1 || v == 0)
      return -1;
    hbuf_putc(out, (char)v);
  }
  hbuf_append(out, "", 0);
  return out->oom ? -1 : 0;
}

/* repeat-token[:N]: the next token after `sent` (v1: a marker, v2: the
 * hex of one, as real tokens are here). The fixed ones are
 * hipobj-repeat-token-1..N; with N = 1 a token that was sent comes back
 * as it is, with N > 1 the cycle goes on from a fixed one, and a page
 * asked without one (or with another) gets the first. */
static void repeat_next(const struct req *r, const char *sent, int hex,
                        struct hbuf *out) {
  uint64_t n = r->fault.has_arg ? r->fault.arg : 1, next = 1;
  char name[48], enc[2 * sizeof name + 1];
  if (sent && *sent && n == 1) {
    hbuf_puts(out, sent);
    return;
  }
  for (uint64_t k = 1; sent && k <= n; k++) {
    snprintf(name, sizeof name, "hipobj-repeat-token-%llu",
             (unsigned long long)k);
    hhex_encode((const uint8_t *)name, strlen(name), enc);
    if (!strcmp(sent, hex ? enc : name)) {
      next = k % n + 1;
      break;
    }
  }
  snprintf(name, sizeof name, "hipobj-repeat-token-%llu",
           (unsigned long long)next);
  hhex_encode((const uint8_t *)name, strlen(name), enc);
  hbuf_puts(out, hex ? enc : name);
}

static void contents_xml(struct req *r, struct hbuf *b, const char *key,
                         const struct obj_meta *m, int url, int owner) {
  char when[32];
  srv_iso8601(m->mtime_ms, when);
  xml_open(b, "Contents");
  xml_el_key(b, "Key", key, url);
  xml_el(b, "LastModified", when);
  xml_el(b, "ETag", m->etag);
  xml_el_u64(b, "Size", m->size);
  xml_el(b, "StorageClass", "STANDARD");
  if (owner) {
    xml_open(b, "Owner");
    xml_el(b, "ID", r->cred->access_key);
    xml_el(b, "DisplayName", r->cred->access_key);
    xml_close(b, "Owner");
  }
  xml_close(b, "Contents");
}

enum MHD_Result h_list_objects(struct req *r) {
  int v2 = r->op == OP_LIST_OBJECTS_V2;
  const char *prefix = req_param(r, "prefix");
  const char *delim = req_param(r, "delimiter");
  const char *enc = req_param(r, "encoding-type");
  const char *token = v2 ? req_param(r, "continuation-token") : NULL;
  const char *start_after = v2 ? req_param(r, "start-after") : NULL;
  const char *marker_v1 = v2 ? NULL : req_param(r, "marker");
  const char *fo = req_param(r, "fetch-owner");
  unsigned max;
  if (list_limit(r, "max-keys", 1000, &max) != 0)
    return srv_fail(r);
  if (enc && strcmp(enc, "url"))
    return srv_error(r, 400, "InvalidArgument",
                     "Invalid Encoding Method specified in Request");
  int url = enc != NULL, owner = !v2 || (fo && !strcmp(fo, "true"));
  if (!url && !(xml_text_ok(prefix) && xml_text_ok(delim) &&
                xml_text_ok(start_after) && xml_text_ok(marker_v1)))
    return echo_refused(r);
  prefix = prefix ? prefix : "";
  if (delim && !*delim)
    delim = NULL;
  struct hbuf marker = HBUF_INIT;
  if (token) {
    if (!*token || unhex(token, &marker) != 0) {
      hbuf_free(&marker);
      return srv_error(r, 400, "InvalidArgument",
                       "The continuation token provided is incorrect");
    }
  } else if (start_after) {
    hbuf_puts(&marker, start_after);
  } else if (marker_v1) {
    hbuf_puts(&marker, marker_v1);
  }
  char **keys;
  size_t n;
  int rc = st_list_keys(r->srv, r->bucket, prefix, &keys, &n);
  if (rc != 0) {
    hbuf_free(&marker);
    if (rc == -ENOENT)
      return srv_error(r, 404, "NoSuchBucket",
                       "The specified bucket does not exist");
    return srv_errno(r, rc, "cannot list the bucket");
  }
  const char *mk = hbuf_str(&marker);
  size_t plen = strlen(prefix);
  struct hbuf items = HBUF_INIT, cps = HBUF_INIT;
  unsigned count = 0;
  int truncated = 0;
  char *last = NULL, *last_cp = NULL;
  for (size_t i = 0; i < n; i++) {
    const char *k = keys[i];
    const char *dpos = delim ? strstr(k + plen, delim) : NULL;
    if (dpos) {
      size_t cl = (size_t)(dpos - k) + strlen(delim);
      if (last_cp && strlen(last_cp) == cl && !strncmp(last_cp, k, cl))
        continue; /* same common prefix as the entry before */
      char *cp = strndup(k, cl);
      if (!cp)
        continue;
      if (*mk && strcmp(cp, mk) <= 0) {
        free(cp);
        continue;
      }
      if (count == max) {
        truncated = max > 0; /* max-keys=0: an empty, final page */
        free(cp);
        break;
      }
      xml_open(&cps, "CommonPrefixes");
      xml_el_key(&cps, "Prefix", cp, url);
      xml_close(&cps, "CommonPrefixes");
      free(last_cp);
      last_cp = cp;
      last = cp;
    } else {
      if (*mk && strcmp(k, mk) <= 0)
        continue;
      struct obj_meta m;
      if (st_obj_info(r->srv, r->bucket, k, &m) != 0)
        continue; /* deleted while we list */
      if (count == max) {
        truncated = max > 0;
        meta_free(&m);
        break;
      }
      contents_xml(r, &items, k, &m, url, owner);
      meta_free(&m);
      last = keys[i];
    }
    count++;
  }
  struct hbuf x = HBUF_INIT;
  xml_begin(&x, "ListBucketResult");
  xml_el(&x, "Name", r->bucket);
  xml_el_key(&x, "Prefix", prefix, url);
  if (v2) {
    if (token)
      xml_el(&x, "ContinuationToken", token);
    if (start_after)
      xml_el_key(&x, "StartAfter", start_after, url);
    xml_el_u64(&x, "KeyCount", count);
  } else {
    xml_el_key(&x, "Marker", marker_v1 ? marker_v1 : "", url);
  }
  xml_el_u64(&x, "MaxKeys", max);
  if (delim)
    xml_el_key(&x, "Delimiter", delim, url);
  int repeat = r->fault.action == FA_REPEAT_TOKEN;
  xml_el(&x, "IsTruncated", truncated || repeat ? "true" : "false");
  if (repeat) {
    struct hbuf next = HBUF_INIT;
    repeat_next(r, v2 ? token : marker_v1, v2, &next);
    if (v2)
      xml_el(&x, "NextContinuationToken", hbuf_str(&next));
    else
      xml_el_key(&x, "NextMarker", hbuf_str(&next), url);
    srv_log(r->srv, SLOG_INFO, "%s: fault: next token %s", r->id,
            hbuf_str(&next));
    hbuf_free(&next);
  } else if (truncated && last) {
    if (v2) {
      char *hex = malloc(2 * strlen(last) + 1);
      if (hex) {
        hhex_encode((const uint8_t *)last, strlen(last), hex);
        xml_el(&x, "NextContinuationToken", hex);
      }
      free(hex);
    } else {
      /* S3 sends NextMarker only with a delimiter; it helps without one. */
      xml_el_key(&x, "NextMarker", last, url);
    }
  }
  if (url)
    xml_el(&x, "EncodingType", "url");
  hbuf_append(&x, items.data ? items.data : "", items.len);
  hbuf_append(&x, cps.data ? cps.data : "", cps.len);
  xml_end(&x, "ListBucketResult");
  hbuf_free(&items);
  hbuf_free(&cps);
  hbuf_free(&marker);
  free(last_cp);
  st_free_keys(keys, n);
  return srv_xml(r, 200, &x);
}

/* ---- ListMultipartUploads ----------------------------------------------- */

struct upload_ent {
  char *key;
  char id[33];
  int64_t initiated;
};

static int cmp_upload(const void *a, const void *b) {
  const struct upload_ent *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  if (c)
    return c;
  if (x->initiated != y->initiated)
    return x->initiated < y->initiated ? -1 : 1;
  return strcmp(x->id, y->id);
}

enum MHD_Result h_list_uploads(struct req *r) {
  const char *prefix = req_param(r, "prefix"),
             *delim = req_param(r, "delimiter");
  const char *km = req_param(r, "key-marker");
  const char *um = req_param(r, "upload-id-marker");
  const char *enc = req_param(r, "encoding-type");
  unsigned max = 1000;
  if (list_limit(r, "max-uploads", 1000, &max) != 0)
    return srv_fail(r);
  if (enc && strcmp(enc, "url"))
    return srv_error(r, 400, "InvalidArgument",
                     "Invalid Encoding Method specified in Request");
  int url = enc != NULL;
  /* The upload id marker is echoed as it is, even with encoding-type=url. */
  if (!xml_text_ok(um) ||
      (!url && !(xml_text_ok(prefix) && xml_text_ok(delim) && xml_text_ok(km))))
    return echo_refused(r);
  prefix = prefix ? prefix : "";
  delim = delim && *delim ? delim : NULL;
  char *dir = st_path(r->srv, r->bucket, ".hipobj/uploads");
  DIR *d = dir ? opendir(dir) : NULL;
  free(dir);
  /* A bucket made by hand has no uploads directory yet: no uploads. */
  if (!d && !st_bucket_exists(r->srv, r->bucket))
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  struct upload_ent *ents = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    struct obj_meta info;
    if (!valid_upload_id(e->d_name) || load_upload(r, e->d_name, &info) != 0)
      continue;
    if (!info.key || strncmp(info.key, prefix, strlen(prefix))) {
      meta_free(&info);
      continue;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 32;
      struct upload_ent *ne = realloc(ents, cap * sizeof *ne);
      if (!ne) {
        meta_free(&info);
        break;
      }
      ents = ne;
    }
    ents[n].key = info.key;
    info.key = NULL;
    memcpy(ents[n].id, e->d_name, 33);
    ents[n].initiated = info.mtime_ms;
    n++;
    meta_free(&info);
  }
  if (d)
    closedir(d);
  if (n)
    qsort(ents, n, sizeof *ents, cmp_upload);
  struct hbuf x = HBUF_INIT, items = HBUF_INIT, cps = HBUF_INIT;
  xml_begin(&x, "ListMultipartUploadsResult");
  xml_el(&x, "Bucket", r->bucket);
  xml_el_key(&x, "KeyMarker", km ? km : "", url);
  xml_el(&x, "UploadIdMarker", um ? um : "");
  unsigned listed = 0;
  int truncated = 0;
  const char *next_key = "", *next_id = "", *last_cp = NULL;
  char *cp_store = NULL;
  size_t plen = strlen(prefix);
  for (size_t i = 0; i < n; i++) {
    int after =
        !km || !*km || strcmp(ents[i].key, km) > 0 ||
        (!strcmp(ents[i].key, km) && um && *um && strcmp(ents[i].id, um) > 0);
    if (!after)
      continue;
    const char *dpos = delim ? strstr(ents[i].key + plen, delim) : NULL;
    if (dpos) {
      size_t cl = (size_t)(dpos - ents[i].key) + strlen(delim);
      if (last_cp && strlen(last_cp) == cl &&
          !strncmp(last_cp, ents[i].key, cl))
        continue;
      if (km && *km && strncmp(ents[i].key, km, cl) == 0 && strlen(km) >= cl)
        continue; /* that prefix was listed on an earlier page */
      if (listed == max) {
        truncated = 1;
        break;
      }
      free(cp_store);
      cp_store = strndup(ents[i].key, cl);
      last_cp = cp_store;
      xml_open(&cps, "CommonPrefixes");
      xml_el_key(&cps, "Prefix", cp_store, url);
      xml_close(&cps, "CommonPrefixes");
      next_key = cp_store;
      next_id = "";
    } else {
      if (listed == max) {
        truncated = 1;
        break;
      }
      char when[32];
      srv_iso8601(ents[i].initiated, when);
      xml_open(&items, "Upload");
      xml_el_key(&items, "Key", ents[i].key, url);
      xml_el(&items, "UploadId", ents[i].id);
      owner_xml(&items, "Initiator", r);
      owner_xml(&items, "Owner", r);
      xml_el(&items, "StorageClass", "STANDARD");
      xml_el(&items, "Initiated", when);
      xml_close(&items, "Upload");
      next_key = ents[i].key;
      next_id = ents[i].id;
    }
    listed++;
  }
  xml_el_key(&x, "NextKeyMarker", truncated ? next_key : "", url);
  xml_el(&x, "NextUploadIdMarker", truncated ? next_id : "");
  if (delim)
    xml_el_key(&x, "Delimiter", delim, url);
  xml_el_key(&x, "Prefix", prefix, url);
  xml_el_u64(&x, "MaxUploads", max);
  xml_el(&x, "IsTruncated", truncated ? "true" : "false");
  if (url)
    xml_el(&x, "EncodingType", "url");
  hbuf_append(&x, items.data ? items.data : "", items.len);
  hbuf_append(&x, cps.data ? cps.data : "", cps.len);
  xml_end(&x, "ListMultipartUploadsResult");
  hbuf_free(&items);
  hbuf_free(&cps);
  free(cp_store);
  for (size_t i = 0; i < n; i++)
    free(ents[i].key);
  free(ents);
  return srv_xml(r, 200, &x);
}
