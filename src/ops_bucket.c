/* ops_bucket.c - the listings above objects: ListBuckets (the account's
 * buckets, every page) and ListMultipartUploads (one page of a bucket's
 * unfinished multipart uploads), with their result objects and getters.
 * The answers are parsed by s3/xml_lists.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../s3/xml.h"
#include "client_int.h"
#include "hstruct.h"

/* ---- ListBuckets --------------------------------------------------------- */

struct hipobj_bucket_list {
  struct s3_bucket_entry *buckets;
  size_t n;
};

void hipobj_bucket_list_free(struct hipobj_bucket_list *l) {
  if (!l)
    return;
  for (size_t i = 0; i < l->n; i++)
    free(l->buckets[i].name);
  free(l->buckets);
  free(l);
}

size_t hipobj_bucket_list_count(const struct hipobj_bucket_list *l) {
  return l ? l->n : 0;
}

const char *hipobj_bucket_list_name(const struct hipobj_bucket_list *l,
                                    size_t i) {
  return l && i < l->n ? l->buckets[i].name : NULL;
}

int64_t hipobj_bucket_list_ctime(const struct hipobj_bucket_list *l, size_t i) {
  return l && i < l->n ? l->buckets[i].ctime : 0;
}

/* Moves the page's entries to the end of l. */
static int take_page(struct hipobj_bucket_list *l, struct s3_list_buckets *pg) {
  if (!pg->n)
    return 0;
  struct s3_bucket_entry *b =
      realloc(l->buckets, (l->n + pg->n) * sizeof *l->buckets);
  if (!b)
    return -1;
  l->buckets = b;
  memcpy(l->buckets + l->n, pg->buckets, pg->n * sizeof *pg->buckets);
  l->n += pg->n;
  pg->n = 0; /* the names now belong to l */
  return 0;
}

/* Pages of AWS's ListBuckets, which hands a ContinuationToken to lists
 * larger than max-buckets; other servers answer in one page. A server that
 * never stops is cut off after this many. */
#define MAX_BUCKET_PAGES 1000

int hipobj_s3_list_buckets(struct hipobj_client *c,
                           struct hipobj_bucket_list **out,
                           struct hipobj_error *err) {
  const char *op = "ListBuckets";
  if (!c || !out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "client or out is NULL");
  *out = NULL;
  struct hipobj_bucket_list *l = calloc(1, sizeof *l);
  if (!l)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  char *token = NULL;
  int rc = HIPOBJ_OK;
  for (unsigned page = 0; rc == HIPOBJ_OK; page++) {
    if (page == MAX_BUCKET_PAGES) {
      rc = herr_set(err, HIPOBJ_E_PROTOCOL, op,
                    "more than %d pages of buckets: the listing would never "
                    "end",
                    MAX_BUCKET_PAGES);
      break;
    }
    struct hreq r;
    hreq_init(&r, c, op, "GET", NULL, NULL);
    if (token)
      s3_request_param(&r.req, "continuation-token", token);
    r.body_limit = 64u << 20;
    rc = hreq_run(&r, err);
    struct s3_list_buckets pg;
    memset(&pg, 0, sizeof pg);
    if (rc == HIPOBJ_OK) {
      const struct hbuf *b = &r.xfer.resp.body;
      rc = herr_op(err, op,
                   s3_xml_parse_list_buckets(hbuf_str(b), b->len, &pg, err));
    }
    if (rc == HIPOBJ_OK && take_page(l, &pg) != 0)
      rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
    if (rc == HIPOBJ_OK && pg.next_token && token &&
        !strcmp(pg.next_token, token))
      rc = herr_set(err, HIPOBJ_E_PROTOCOL, op,
                    "the server gave back the continuation token it was "
                    "sent as the next one: the listing would never end");
    free(token);
    token = NULL;
    if (rc == HIPOBJ_OK && pg.next_token) {
      token = pg.next_token;
      pg.next_token = NULL;
    }
    s3_xml_list_buckets_free(&pg);
    hreq_cleanup(&r);
    if (!token)
      break;
  }
  free(token);
  if (rc != HIPOBJ_OK) {
    hipobj_bucket_list_free(l);
    return rc;
  }
  *out = l;
  return HIPOBJ_OK;
}

/* ---- ListMultipartUploads ------------------------------------------------ */

struct hipobj_upload_page {
  struct s3_list_uploads lu;
};

void hipobj_upload_page_free(struct hipobj_upload_page *p) {
  if (!p)
    return;
  s3_xml_list_uploads_free(&p->lu);
  free(p);
}

size_t hipobj_upload_page_count(const struct hipobj_upload_page *p) {
  return p ? p->lu.n : 0;
}

const char *hipobj_upload_page_key(const struct hipobj_upload_page *p,
                                   size_t i) {
  return p && i < p->lu.n ? p->lu.uploads[i].key : NULL;
}

const char *hipobj_upload_page_upload_id(const struct hipobj_upload_page *p,
                                         size_t i) {
  return p && i < p->lu.n ? p->lu.uploads[i].upload_id : NULL;
}

int64_t hipobj_upload_page_initiated(const struct hipobj_upload_page *p,
                                     size_t i) {
  return p && i < p->lu.n ? p->lu.uploads[i].initiated : 0;
}

const char *
hipobj_upload_page_next_key_marker(const struct hipobj_upload_page *p) {
  return p && p->lu.is_truncated ? p->lu.next_key_marker : NULL;
}

const char *
hipobj_upload_page_next_upload_id_marker(const struct hipobj_upload_page *p) {
  if (!p || !p->lu.is_truncated)
    return NULL;
  return p->lu.next_upload_id_marker ? p->lu.next_upload_id_marker : "";
}

int hipobj_s3_list_uploads(struct hipobj_client *c, const char *bucket,
                           const struct hipobj_upload_list_opts *opts,
                           struct hipobj_upload_page **out,
                           struct hipobj_error *err) {
  const char *op = "ListMultipartUploads";
  struct hipobj_upload_list_opts o;
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
  /* No encoding-type=url: Ceph RGW (Pacific) then encodes the keys but
   * says so nowhere in the answer (no <EncodingType>), and leaves
   * NextKeyMarker plain, so an answer could not be read right. The keys
   * come as they are; one XML cannot carry fails the parse, named. */
  s3_request_param(&r.req, "uploads", NULL);
  char max[16];
  if (o.prefix && *o.prefix)
    s3_request_param(&r.req, "prefix", o.prefix);
  if (o.key_marker && *o.key_marker)
    s3_request_param(&r.req, "key-marker", o.key_marker);
  if (o.upload_id_marker && *o.upload_id_marker)
    s3_request_param(&r.req, "upload-id-marker", o.upload_id_marker);
  if (o.max_uploads) {
    snprintf(max, sizeof max, "%u", o.max_uploads);
    s3_request_param(&r.req, "max-uploads", max);
  }
  r.body_limit = 64u << 20;
  rc = hreq_run(&r, err);
  if (rc == HIPOBJ_OK) {
    struct hipobj_upload_page *p = calloc(1, sizeof *p);
    const struct hbuf *b = &r.xfer.resp.body;
    if (!p) {
      rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
    } else if ((rc = herr_op(err, op,
                             s3_xml_parse_list_uploads(hbuf_str(b), b->len,
                                                       &p->lu, err)))) {
      free(p);
    } else if (p->lu.is_truncated && o.key_marker &&
               !strcmp(p->lu.next_key_marker, o.key_marker) &&
               !strcmp(p->lu.next_upload_id_marker ? p->lu.next_upload_id_marker
                                                   : "",
                       o.upload_id_marker ? o.upload_id_marker : "")) {
      /* Following it would list the same page forever. */
      rc = herr_set(err, HIPOBJ_E_PROTOCOL, op,
                    "the server gave back the markers it was sent as the "
                    "next ones: the listing would never end");
      hipobj_upload_page_free(p);
    } else {
      *out = p;
    }
  }
  hreq_cleanup(&r);
  return rc;
}
