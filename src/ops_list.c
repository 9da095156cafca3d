/* ops_list.c - ListObjectsV2, one page per call, with the page object and
 * its getters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../s3/xml.h"
#include "client_int.h"
#include "hstruct.h"

struct hipobj_list_page {
  struct s3_list_objects lo;
};

void hipobj_list_page_free(struct hipobj_list_page *p) {
  if (!p)
    return;
  s3_xml_list_objects_free(&p->lo);
  free(p);
}

size_t hipobj_list_page_count(const struct hipobj_list_page *p) {
  return p ? p->lo.n_objects : 0;
}

const char *hipobj_list_page_key(const struct hipobj_list_page *p, size_t i) {
  return p && i < p->lo.n_objects ? p->lo.objects[i].key : NULL;
}

uint64_t hipobj_list_page_size(const struct hipobj_list_page *p, size_t i) {
  return p && i < p->lo.n_objects ? p->lo.objects[i].size : 0;
}

const char *hipobj_list_page_etag(const struct hipobj_list_page *p, size_t i) {
  return p && i < p->lo.n_objects ? p->lo.objects[i].etag : NULL;
}

int64_t hipobj_list_page_mtime(const struct hipobj_list_page *p, size_t i) {
  return p && i < p->lo.n_objects ? p->lo.objects[i].mtime : 0;
}

size_t hipobj_list_page_prefix_count(const struct hipobj_list_page *p) {
  return p ? p->lo.n_prefixes : 0;
}

const char *hipobj_list_page_prefix(const struct hipobj_list_page *p,
                                    size_t i) {
  return p && i < p->lo.n_prefixes ? p->lo.prefixes[i] : NULL;
}

const char *hipobj_list_page_next_token(const struct hipobj_list_page *p) {
  return p && p->lo.is_truncated ? p->lo.next_token : NULL;
}

int hipobj_s3_list(struct hipobj_client *c, const char *bucket,
                   const struct hipobj_list_opts *opts,
                   struct hipobj_list_page **out, struct hipobj_error *err) {
  const char *op = "ListObjectsV2";
  struct hipobj_list_opts o;
  int rc;
  if (!c || !out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "client or out is NULL");
  *out = NULL;
  if ((rc = hcheck_bucket_key(op, bucket, NULL, 0, err)))
    return rc;
  if ((rc = hstruct_in(op, opts, &o, err)))
    return rc;
  struct hreq r;
  hreq_init(&r, c, op, "GET", bucket, NULL);
  s3_request_param(&r.req, "list-type", "2");
  /* Keys may hold bytes XML 1.0 cannot carry; have them URL-encoded. */
  s3_request_param(&r.req, "encoding-type", "url");
  char max_keys[16];
  if (o.prefix && *o.prefix)
    s3_request_param(&r.req, "prefix", o.prefix);
  if (o.delimiter && *o.delimiter)
    s3_request_param(&r.req, "delimiter", o.delimiter);
  if (o.continuation_token && *o.continuation_token)
    s3_request_param(&r.req, "continuation-token", o.continuation_token);
  if (o.start_after && *o.start_after)
    s3_request_param(&r.req, "start-after", o.start_after);
  if (o.max_keys) {
    snprintf(max_keys, sizeof max_keys, "%u", o.max_keys);
    s3_request_param(&r.req, "max-keys", max_keys);
  }
  const char *sent = o.continuation_token && *o.continuation_token
                         ? o.continuation_token
                         : NULL;
  r.body_limit = 64u << 20;
  rc = hreq_run(&r, err);
  if (rc == HIPOBJ_OK) {
    struct hipobj_list_page *p = calloc(1, sizeof *p);
    const struct hbuf *b = &r.xfer.resp.body;
    if (!p) {
      rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
    } else if ((rc = herr_op(err, op,
                             s3_xml_parse_list_objects(hbuf_str(b), b->len,
                                                       &p->lo, err)))) {
      free(p);
    } else if (p->lo.is_truncated && !p->lo.next_token) {
      /* Following such a page would list the same keys forever. */
      rc = herr_set(err, HIPOBJ_E_PROTOCOL, op,
                    "truncated answer without NextContinuationToken");
      hipobj_list_page_free(p);
    } else if (p->lo.is_truncated && sent && !strcmp(p->lo.next_token, sent)) {
      /* So would this one, for every caller that follows tokens: the
       * commonest loop of a broken server, caught here once for all.
       * Longer cycles are the follower's to notice (hipobj ls does). */
      rc = herr_set(err, HIPOBJ_E_PROTOCOL, op,
                    "the server gave back the continuation token it was "
                    "sent (%.24s%s) as the next one: the listing would "
                    "never end",
                    sent, strlen(sent) > 24 ? "..." : "");
      hipobj_list_page_free(p);
    } else {
      *out = p;
    }
  }
  hreq_cleanup(&r);
  return rc;
}
