/* xml_lists.c - the S3 answers of the bucket-level and copy requests added
 * in 0.2: ListBuckets (ListAllMyBucketsResult), ListMultipartUploads
 * (ListMultipartUploadsResult) and CopyObject / UploadPartCopy
 * (CopyObjectResult, CopyPartResult, or an <Error> inside a 200 answer).
 *
 * Same rules as xml.c (see xml.h): documents are read with s3_xml_read (no
 * DTD, no network, no entities), elements are matched by local name, every
 * failure is HIPOBJ_E_PROTOCOL with a one-line reason, and a page holds at
 * most S3_LIST_MAX_ENTRIES entries. A file of its own because xml.c is at
 * its size limit; the few field readers it needs are repeated here in the
 * simpler form these documents need (whole text of a leaf element). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "../src/base/strutil.h"
#include "xml.h"
#include "xml_doc.h"

#define fail(e, ...) s3_xml_fail((e), HIPOBJ_E_PROTOCOL, __VA_ARGS__)
#define nomem(e, ...) s3_xml_fail((e), HIPOBJ_E_OUT_OF_MEMORY, __VA_ARGS__)

/* Parses and checks the root's local name against roots (NULL-ended). */
static int parse_root(const char *xml, size_t len, const char *const *roots,
                      xmlDocPtr *doc, xmlNodePtr *root, struct s3_xml_err *e) {
  *doc = NULL;
  while (len && (*xml == ' ' || *xml == '\t' || *xml == '\r' || *xml == '\n')) {
    xml++;
    len--;
  }
  if (!xml || len == 0)
    return fail(e, "malformed XML: empty document");
  if ((e->status = s3_xml_read(xml, len, HIPOBJ_E_PROTOCOL, doc, e->err)))
    return -1;
  *root = xmlDocGetRootElement(*doc);
  for (const char *const *r = roots; *root && *r; r++)
    if (s3_xml_is_el(*root, *r))
      return 0;
  fail(e, "unexpected root element <%.64s>, expected <%s>",
       *root ? (const char *)(*root)->name : "", roots[0]);
  xmlFreeDoc(*doc);
  *doc = NULL;
  return -1;
}

static xmlNodePtr child(const xmlNode *parent, const char *name) {
  for (xmlNodePtr c = parent ? parent->children : NULL; c; c = c->next)
    if (s3_xml_is_el(c, name))
      return c;
  return NULL;
}

/* The text of the leaf element `name` under parent, malloc'd into *out:
 * 0 found, 1 absent (and not required), -1 failed. */
static int text(const xmlNode *parent, const char *name, int required,
                char **out, struct s3_xml_err *e) {
  *out = NULL;
  xmlNodePtr el = child(parent, name);
  if (!el)
    return required ? fail(e, "missing <%s>", name) : 1;
  xmlChar *t = xmlNodeGetContent(el);
  *out = hstrdup(t ? (const char *)t : "");
  xmlFree(t);
  return *out ? 0 : nomem(e, "out of memory reading <%s>", name);
}

static int time_field(const xmlNode *parent, const char *name, int64_t *out,
                      struct s3_xml_err *e) {
  char *v;
  *out = 0;
  int rc = text(parent, name, 0, &v, e);
  if (rc == 0) {
    const char *s = v;
    size_t n = strlen(s);
    hstrtrim(&s, &n);
    char buf[64];
    if (n >= sizeof buf) {
      rc = fail(e, "bad <%s>: value too long", name);
    } else {
      memcpy(buf, s, n);
      buf[n] = '\0';
      if (s3_parse_iso8601(buf, out) != 0)
        rc = fail(e, "bad <%s>: \"%s\" is not an ISO 8601 time", name, buf);
    }
  }
  free(v);
  return rc < 0 ? -1 : 0;
}

static size_t count(const xmlNode *parent, const char *name) {
  size_t n = 0;
  for (xmlNodePtr c = parent->children; c; c = c->next)
    n += s3_xml_is_el(c, name);
  return n;
}

/* EncodingType=url: S3 encodes keys as a form does ('+' is a space). */
static int form_decode(char **s, struct s3_xml_err *e) {
  return s3_xml_form_decode(s) == 0 ? 0 : fail(e, "bad URL encoding in a key");
}

/* ---- ListBuckets -------------------------------------------------------- */

void s3_xml_list_buckets_free(struct s3_list_buckets *lb) {
  if (!lb)
    return;
  for (size_t i = 0; i < lb->n; i++)
    free(lb->buckets[i].name);
  free(lb->buckets);
  free(lb->next_token);
  memset(lb, 0, sizeof *lb);
}

int s3_xml_parse_list_buckets(const char *xml, size_t len,
                              struct s3_list_buckets *out,
                              struct hipobj_error *err) {
  static const char *const roots[] = {"ListAllMyBucketsResult", NULL};
  struct s3_xml_err x = {err, HIPOBJ_OK}, *e = &x;
  if (!out)
    return s3_xml_status(
        e, s3_xml_fail(e, HIPOBJ_E_INVALID_ARGUMENT, "no output for buckets"));
  memset(out, 0, sizeof *out);
  xmlDocPtr doc;
  xmlNodePtr root;
  if (parse_root(xml, len, roots, &doc, &root, e) != 0)
    return s3_xml_status(e, -1);
  int rc = -1;
  xmlNodePtr list = child(root, "Buckets");
  size_t cap = list ? count(list, "Bucket") : 0;
  /* AWS pages ListBuckets (max-buckets up to 10000); more than that in
   * one answer is not S3's. */
  if (cap > 10000) {
    fail(e, "%zu buckets in one answer", cap);
    goto done;
  }
  if (cap && !(out->buckets = calloc(cap, sizeof *out->buckets))) {
    nomem(e, "out of memory for %zu buckets", cap);
    goto done;
  }
  for (xmlNodePtr c = list ? list->children : NULL; c; c = c->next) {
    if (!s3_xml_is_el(c, "Bucket"))
      continue;
    struct s3_bucket_entry *b = &out->buckets[out->n];
    if (text(c, "Name", 1, &b->name, e) != 0)
      goto done;
    out->n++;
    if (!b->name[0]) {
      fail(e, "empty <Name> of a bucket");
      goto done;
    }
    if (time_field(c, "CreationDate", &b->ctime, e) != 0)
      goto done;
  }
  if (text(root, "ContinuationToken", 0, &out->next_token, e) < 0)
    goto done;
  if (out->next_token && !out->next_token[0]) {
    free(out->next_token);
    out->next_token = NULL;
  }
  rc = 0;
done:
  xmlFreeDoc(doc);
  if (rc != 0)
    s3_xml_list_buckets_free(out);
  return s3_xml_status(e, rc);
}

/* ---- ListMultipartUploads ----------------------------------------------- */

void s3_xml_list_uploads_free(struct s3_list_uploads *lu) {
  if (!lu)
    return;
  for (size_t i = 0; i < lu->n; i++) {
    free(lu->uploads[i].key);
    free(lu->uploads[i].upload_id);
  }
  free(lu->uploads);
  free(lu->next_key_marker);
  free(lu->next_upload_id_marker);
  memset(lu, 0, sizeof *lu);
}

int s3_xml_parse_list_uploads(const char *xml, size_t len,
                              struct s3_list_uploads *out,
                              struct hipobj_error *err) {
  static const char *const roots[] = {"ListMultipartUploadsResult", NULL};
  struct s3_xml_err x = {err, HIPOBJ_OK}, *e = &x;
  if (!out)
    return s3_xml_status(
        e, s3_xml_fail(e, HIPOBJ_E_INVALID_ARGUMENT, "no output for uploads"));
  memset(out, 0, sizeof *out);
  xmlDocPtr doc;
  xmlNodePtr root;
  if (parse_root(xml, len, roots, &doc, &root, e) != 0)
    return s3_xml_status(e, -1);
  int rc = -1, url = 0;
  char *v = NULL;
  if (text(root, "EncodingType", 0, &v, e) < 0)
    goto done;
  url = v && !strcmp(v, "url");
  free(v);
  v = NULL;
  size_t cap = count(root, "Upload");
  if (cap > S3_LIST_MAX_ENTRIES) {
    fail(e, "%zu uploads in one page; S3 sends at most %d", cap,
         S3_LIST_MAX_ENTRIES);
    goto done;
  }
  if (cap && !(out->uploads = calloc(cap, sizeof *out->uploads))) {
    nomem(e, "out of memory for %zu uploads", cap);
    goto done;
  }
  for (xmlNodePtr c = root->children; c; c = c->next) {
    if (!s3_xml_is_el(c, "Upload"))
      continue;
    struct s3_upload_entry *u = &out->uploads[out->n++];
    if (text(c, "Key", 1, &u->key, e) != 0 ||
        text(c, "UploadId", 1, &u->upload_id, e) != 0 ||
        time_field(c, "Initiated", &u->initiated, e) != 0 ||
        (url && form_decode(&u->key, e) != 0))
      goto done;
    if (!u->upload_id[0]) {
      fail(e, "empty <UploadId> of key %.64s", u->key);
      goto done;
    }
  }
  if (text(root, "IsTruncated", 0, &v, e) < 0)
    goto done;
  out->is_truncated = v && hstrcaseeq(v, "true");
  free(v);
  v = NULL;
  if (text(root, "NextKeyMarker", 0, &out->next_key_marker, e) < 0 ||
      text(root, "NextUploadIdMarker", 0, &out->next_upload_id_marker, e) < 0 ||
      (url && out->next_key_marker &&
       form_decode(&out->next_key_marker, e) != 0))
    goto done;
  /* Without a marker a truncated listing cannot be continued. */
  if (out->is_truncated &&
      (!out->next_key_marker || !out->next_key_marker[0])) {
    fail(e, "missing <NextKeyMarker> in a truncated listing");
    goto done;
  }
  rc = 0;
done:
  xmlFreeDoc(doc);
  if (rc != 0)
    s3_xml_list_uploads_free(out);
  return s3_xml_status(e, rc);
}

/* ---- CopyObject, UploadPartCopy ----------------------------------------- */

int s3_xml_parse_copy_result(const char *xml, size_t len, int *is_error,
                             struct s3_xml_error *s3err, char etag[128],
                             struct hipobj_error *err) {
  static const char *const roots[] = {"CopyObjectResult", "CopyPartResult",
                                      "Error", NULL};
  struct s3_xml_err x = {err, HIPOBJ_OK}, *e = &x;
  *is_error = 0;
  etag[0] = '\0';
  if (s3err)
    memset(s3err, 0, sizeof *s3err);
  xmlDocPtr doc;
  xmlNodePtr root;
  if (parse_root(xml, len, roots, &doc, &root, e) != 0)
    return s3_xml_status(e, -1);
  int rc = 0;
  char *v = NULL;
  if (s3_xml_is_el(root, "Error")) {
    /* S3 may fail a copy after it answered 200 (the copy takes time). */
    *is_error = 1;
    if (s3err) {
      static const struct {
        const char *name;
        size_t off, size;
      } f[] = {
          {"Code", offsetof(struct s3_xml_error, code), 64},
          {"Message", offsetof(struct s3_xml_error, message), 512},
          {"RequestId", offsetof(struct s3_xml_error, request_id), 128},
      };
      for (size_t i = 0; i < sizeof f / sizeof f[0] && rc == 0; i++) {
        if (text(root, f[i].name, 0, &v, e) < 0)
          rc = -1;
        else if (v)
          hstrlcpy((char *)s3err + f[i].off, v, f[i].size);
        free(v);
        v = NULL;
      }
      if (rc == 0 && !s3err->code[0])
        rc = fail(e, "empty <Code> in <Error>");
    }
  } else if ((rc = text(root, "ETag", 1, &v, e)) == 0) {
    /* Ceph RGW (Pacific) sends the ETag of a copy without its quotes:
     * quoted here, so that it reads as HeadObject's and can go back in a
     * CompleteMultipartUpload. */
    char q[128];
    if (v[0] != '"' && strlen(v) + 3 <= sizeof q)
      snprintf(q, sizeof q, "\"%s\"", v);
    else
      hstrlcpy(q, v, sizeof q);
    if (!s3_etag_ok(q))
      rc = fail(e, "bad <ETag>: not a quoted string of printable ASCII");
    else
      hstrlcpy(etag, q, 128);
  }
  free(v);
  xmlFreeDoc(doc);
  return s3_xml_status(e, rc);
}
