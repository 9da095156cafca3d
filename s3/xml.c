/* xml.c - reads and writes the S3 XML documents hipObject uses, on libxml2
 * (see xml.h).
 *
 * Safety: documents come from the network, so the parser never loads a DTD,
 * never touches the network, never substitutes entities, and any document
 * with a DOCTYPE is refused (S3 never sends one; refusing it closes XXE and
 * entity-expansion attacks for good). Elements are matched by local name, so
 * the S3 namespace and no namespace are both accepted.
 *
 * Threads: many threads parse at once. libxml2 keeps its error handlers per
 * thread, so each parse installs its own structured handler on the calling
 * thread and restores the previous one afterwards; libxml2 therefore never
 * prints to stderr, and the first error becomes the one-line message of the
 * struct hipobj_error the caller passed (HIPOBJ_E_PROTOCOL: we received it). */
#include "xml.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "../src/base/codec.h"
#include "../src/base/strutil.h"
#include "xml_doc.h"

#define S3_B64_CHARS HB64_ALPHABET "="

#define S3_XMLNS "http://s3.amazonaws.com/doc/2006-03-01/"
#define MAX_PART_NUMBER 10000

/* ---- Parsing and error capture ---- */

/* Every failure of a document we received is HIPOBJ_E_PROTOCOL, except
 * memory (nomem) and a missing output (no_output). */
#define fail(e, ...) s3_xml_fail((e), HIPOBJ_E_PROTOCOL, __VA_ARGS__)
#define nomem(e, ...) s3_xml_fail((e), HIPOBJ_E_OUT_OF_MEMORY, __VA_ARGS__)
#define no_output(e, what)                                                     \
  s3_xml_fail((e), HIPOBJ_E_INVALID_ARGUMENT, "no output for the %s", (what))
#define is_el s3_xml_is_el

/* Parses xml and checks the root element's local name (any of the
 * NULL-terminated `roots`). On success *doc must be freed with xmlFreeDoc. */
static int parse_doc(const char *xml, size_t len, const char *const *roots,
                     xmlDocPtr *doc, struct s3_xml_err *e) {
  *doc = NULL;
  if (!xml && len)
    return fail(e, "malformed XML: no document");
  /* S3 sends whitespace to keep a slow CompleteMultipartUpload alive before
   * the document, but an XML declaration is only legal at offset 0. */
  while (len && (*xml == ' ' || *xml == '\t' || *xml == '\r' || *xml == '\n')) {
    xml++;
    len--;
  }
  if (len == 0)
    return fail(e, "malformed XML: empty document");
  if (len > 64u * 1024 * 1024)
    return fail(e, "malformed XML: document too large (%zu bytes)", len);

  xmlDocPtr d;
  if ((e->status = s3_xml_read(xml, len, HIPOBJ_E_PROTOCOL, &d, e->err)))
    return -1;
  xmlNodePtr root = xmlDocGetRootElement(d);
  if (!root) {
    xmlFreeDoc(d);
    return fail(e, "malformed XML: no root element");
  }
  for (const char *const *r = roots; *r; r++) {
    if (is_el(root, *r)) {
      *doc = d;
      return 0;
    }
  }
  fail(e, "unexpected root element <%.64s>, expected <%s>",
       (const char *)root->name, roots[0]);
  xmlFreeDoc(d);
  return -1;
}

/* ---- Element access ---- */

static xmlNodePtr child_el(const xmlNode *parent, const char *name) {
  for (xmlNodePtr c = parent ? parent->children : NULL; c; c = c->next)
    if (is_el(c, name))
      return c;
  return NULL;
}

/* Text content of a leaf element: text and CDATA children concatenated
 * (comments and PIs skipped). An entity reference cannot occur (no DTD is
 * allowed), but if it did, its content is not ours to expand. */
static int node_text(const xmlNode *el, struct hbuf *out,
                     struct s3_xml_err *e) {
  hbuf_append(out, "", 0);
  for (xmlNodePtr c = el->children; c; c = c->next) {
    if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
      if (c->content)
        hbuf_puts(out, (const char *)c->content);
    } else if (c->type == XML_ENTITY_REF_NODE) {
      return fail(e, "entity reference in <%s>", (const char *)el->name);
    } else if (c->type == XML_ELEMENT_NODE) {
      return fail(e, "unexpected element <%.64s> in <%s>",
                  (const char *)c->name, (const char *)el->name);
    }
  }
  if (out->oom)
    return nomem(e, "out of memory reading <%s>", (const char *)el->name);
  return 0;
}

/* Field getters return 0 when found, 1 when absent and not required, -1 on
 * error (e filled). */
static int field_text(const xmlNode *parent, const char *name, int required,
                      struct hbuf *out, struct s3_xml_err *e) {
  xmlNodePtr el = child_el(parent, name);
  if (!el)
    return required ? fail(e, "missing <%s>", name) : 1;
  return node_text(el, out, e);
}

/* Copies into a fixed array. Diagnostic text (error messages) may be cut;
 * identifiers (ETags) must not be, since a cut one is a wrong one. */
static int field_fixed(const xmlNode *parent, const char *name, int required,
                       char *dst, size_t dstsz, int may_truncate,
                       struct s3_xml_err *e) {
  struct hbuf t = HBUF_INIT;
  int rc = field_text(parent, name, required, &t, e);
  if (rc == 0) {
    if (strlen(hbuf_str(&t)) != t.len)
      rc = fail(e, "NUL character in <%s>", name);
    else if (t.len >= dstsz && !may_truncate)
      rc = fail(e, "<%s> too long (%zu bytes)", name, t.len);
    else {
      hstrlcpy(dst, hbuf_str(&t), dstsz);
      /* A cut inside a UTF-8 sequence would leave invalid text: back up
       * to the start of the sequence the cut fell into. */
      size_t n = strlen(dst);
      if (n < t.len)
        while (n && ((unsigned char)t.data[n] & 0xc0) == 0x80)
          dst[--n] = '\0';
    }
  }
  hbuf_free(&t);
  return rc;
}

static int field_dup(const xmlNode *parent, const char *name, int required,
                     char **dst, struct s3_xml_err *e) {
  struct hbuf t = HBUF_INIT;
  int rc = field_text(parent, name, required, &t, e);
  if (rc == 0) {
    if (strlen(hbuf_str(&t)) != t.len) {
      rc = fail(e, "NUL character in <%s>", name);
    } else {
      *dst = hbuf_steal(&t);
      if (!*dst)
        rc = nomem(e, "out of memory reading <%s>", name);
    }
  }
  hbuf_free(&t);
  return rc;
}

/* Numbers, booleans and dates may be surrounded by whitespace when a server
 * pretty-prints; strings (keys, ETags) are taken exactly. */
static int field_trimmed(const xmlNode *parent, const char *name, int required,
                         char *dst, size_t dstsz, struct s3_xml_err *e) {
  struct hbuf t = HBUF_INIT;
  int rc = field_text(parent, name, required, &t, e);
  if (rc == 0) {
    const char *s = hbuf_str(&t);
    size_t n = t.len;
    hstrtrim(&s, &n);
    if (n >= dstsz)
      rc = fail(e, "bad <%s>: value too long", name);
    else {
      memcpy(dst, s, n);
      dst[n] = '\0';
    }
  }
  hbuf_free(&t);
  return rc;
}

static int field_u64(const xmlNode *parent, const char *name, int required,
                     uint64_t *out, struct s3_xml_err *e) {
  char v[32];
  int rc = field_trimmed(parent, name, required, v, sizeof v, e);
  if (rc == 0 && hparse_u64(v, strlen(v), out) != 0)
    return fail(e, "bad <%s>: \"%s\" is not a number", name, v);
  return rc;
}

static int field_bool(const xmlNode *parent, const char *name, int *out,
                      struct s3_xml_err *e) {
  char v[16];
  *out = 0;
  int rc = field_trimmed(parent, name, 0, v, sizeof v, e);
  if (rc != 0)
    return rc;
  if (hstrcaseeq(v, "true"))
    *out = 1;
  else if (!hstrcaseeq(v, "false"))
    return fail(e, "bad <%s>: \"%s\" is not true or false", name, v);
  return 0;
}

static int field_time(const xmlNode *parent, const char *name, int64_t *out,
                      struct s3_xml_err *e) {
  char v[64];
  *out = 0;
  int rc = field_trimmed(parent, name, 0, v, sizeof v, e);
  if (rc == 0 && s3_parse_iso8601(v, out) != 0)
    return fail(e, "bad <%s>: \"%s\" is not an ISO 8601 time", name, v);
  return rc;
}

static int field_part_number(const xmlNode *parent, const char *name,
                             unsigned *out, struct s3_xml_err *e) {
  uint64_t v;
  int rc = field_u64(parent, name, 1, &v, e);
  if (rc != 0)
    return rc;
  if (v < 1 || v > MAX_PART_NUMBER)
    return fail(e, "bad <%s>: %llu is outside 1..%d", name,
                (unsigned long long)v, MAX_PART_NUMBER);
  *out = (unsigned)v;
  return 0;
}

/* ---- Error, Initiate, Complete ---- */

static int read_error_fields(const xmlNode *root, struct s3_xml_error *out,
                             struct s3_xml_err *e) {
  memset(out, 0, sizeof *out);
  if (field_fixed(root, "Code", 1, out->code, sizeof out->code, 0, e) < 0 ||
      field_fixed(root, "Message", 0, out->message, sizeof out->message, 1, e) <
          0 ||
      field_fixed(root, "RequestId", 0, out->request_id, sizeof out->request_id,
                  1, e) < 0 ||
      field_fixed(root, "Resource", 0, out->resource, sizeof out->resource, 1,
                  e) < 0)
    return -1;
  if (!out->code[0])
    return fail(e, "empty <Code> in <Error>");
  return 0;
}

int s3_xml_parse_error(const char *xml, size_t len, struct s3_xml_error *out,
                       struct hipobj_error *err) {
  static const char *const roots[] = {"Error", NULL};
  struct s3_xml_err x = {err, HIPOBJ_OK}, *e = &x;
  if (!out)
    return s3_xml_status(e, no_output(e, "error document"));
  memset(out, 0, sizeof *out);
  xmlDocPtr doc;
  if (parse_doc(xml, len, roots, &doc, e) != 0)
    return s3_xml_status(e, -1);
  int rc = read_error_fields(xmlDocGetRootElement(doc), out, e);
  xmlFreeDoc(doc);
  return s3_xml_status(e, rc);
}

int s3_xml_parse_initiate(const char *xml, size_t len, char **upload_id,
                          struct hipobj_error *err) {
  static const char *const roots[] = {"InitiateMultipartUploadResult", NULL};
  struct s3_xml_err x = {err, HIPOBJ_OK}, *e = &x;
  if (!upload_id)
    return s3_xml_status(e, no_output(e, "upload id"));
  *upload_id = NULL;
  xmlDocPtr doc;
  if (parse_doc(xml, len, roots, &doc, e) != 0)
    return s3_xml_status(e, -1);
  char *id = NULL;
  int rc = field_dup(xmlDocGetRootElement(doc), "UploadId", 1, &id, e);
  xmlFreeDoc(doc);
  if (rc != 0)
    return s3_xml_status(e, -1);
  if (!id[0]) {
    free(id);
    return s3_xml_status(e, fail(e, "empty <UploadId>"));
  }
  *upload_id = id;
  return HIPOBJ_OK;
}

int s3_xml_parse_complete(const char *xml, size_t len, int *is_error,
                          struct s3_xml_error *s3err, char etag[128],
                          struct hipobj_error *err) {
  static const char *const roots[] = {"CompleteMultipartUploadResult", "Error",
                                      NULL};
  struct s3_xml_err x = {err, HIPOBJ_OK}, *e = &x;
  struct s3_xml_error scratch;
  if (!s3err)
    s3err = &scratch;
  memset(s3err, 0, sizeof *s3err);
  if (is_error)
    *is_error = 0;
  if (etag)
    etag[0] = '\0';
  xmlDocPtr doc;
  if (parse_doc(xml, len, roots, &doc, e) != 0)
    return s3_xml_status(e, -1);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  int rc;
  if (is_el(root, "Error")) {
    /* The "200 with <Error>" case: the upload did not complete. */
    rc = read_error_fields(root, s3err, e);
    if (rc == 0 && is_error)
      *is_error = 1;
  } else {
    char tmp[128];
    /* Ceph RGW (Pacific) completes the upload but sends <ETag></ETag>:
     * pass the empty value on rather than report a failure. */
    rc = field_fixed(root, "ETag", 1, tmp, sizeof tmp, 0, e);
    if (rc == 0 && tmp[0] && !s3_etag_ok(tmp))
      rc = fail(e, "bad <ETag>: not a quoted string of printable ASCII");
    if (rc == 0 && etag)
      memcpy(etag, tmp, sizeof tmp);
  }
  xmlFreeDoc(doc);
  return s3_xml_status(e, rc);
}

/* ---- ListParts ---- */

static size_t count_children(const xmlNode *parent, const char *name) {
  size_t n = 0;
  for (xmlNodePtr c = parent->children; c; c = c->next)
    n += is_el(c, name);
  return n;
}

/* <ChecksumCRC32C> of a listed part, when present: base64 of 4 bytes. */
static int list_part_crc32c(const xmlNode *part, struct s3_part *p,
                            struct s3_xml_err *e) {
  int rc =
      field_trimmed(part, "ChecksumCRC32C", 0, p->crc32c, sizeof p->crc32c, e);
  if (rc < 0)
    return -1;
  /* 8 characters: 6 of the alphabet, then "==". */
  if (rc == 0 &&
      (strlen(p->crc32c) != 8 || strcspn(p->crc32c, "=") != 6 ||
       strspn(p->crc32c, S3_B64_CHARS) != 8 || strcmp(p->crc32c + 6, "=="))) {
    p->crc32c[0] = '\0';
    return fail(e, "bad <ChecksumCRC32C>: not the base64 of 4 bytes");
  }
  return 0;
}

int s3_xml_parse_list_parts(const char *xml, size_t len,
                            struct s3_list_parts *out,
                            struct hipobj_error *err) {
  static const char *const roots[] = {"ListPartsResult", NULL};
  struct s3_xml_err x = {err, HIPOBJ_OK}, *e = &x;
  if (!out)
    return s3_xml_status(e, no_output(e, "part list"));
  memset(out, 0, sizeof *out);
  xmlDocPtr doc;
  if (parse_doc(xml, len, roots, &doc, e) != 0)
    return s3_xml_status(e, -1);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  int rc = -1;
  size_t cap = count_children(root, "Part");
  if (cap > S3_LIST_MAX_ENTRIES) {
    fail(e, "%zu parts in one page; S3 sends at most %d", cap,
         S3_LIST_MAX_ENTRIES);
    goto done;
  }
  if (cap && !(out->parts = calloc(cap, sizeof *out->parts))) {
    nomem(e, "out of memory for %zu parts", cap);
    goto done;
  }
  for (xmlNodePtr c = root->children; c; c = c->next) {
    if (!is_el(c, "Part"))
      continue;
    struct s3_part *p = &out->parts[out->n];
    if (field_part_number(c, "PartNumber", &p->number, e) != 0 ||
        field_fixed(c, "ETag", 1, p->etag, sizeof p->etag, 0, e) < 0 ||
        field_u64(c, "Size", 1, &p->size, e) != 0 ||
        field_time(c, "LastModified", &p->mtime, e) < 0 ||
        list_part_crc32c(c, p, e) != 0)
      goto done;
    if (!s3_etag_ok(p->etag)) {
      fail(e, "part %u: bad <ETag>: not a quoted string of printable ASCII",
           p->number);
      goto done;
    }
    out->n++;
  }
  if (field_bool(root, "IsTruncated", &out->is_truncated, e) < 0)
    goto done;
  uint64_t marker = 0;
  int mrc = field_u64(root, "NextPartNumberMarker", 0, &marker, e);
  if (mrc < 0)
    goto done;
  if (marker > MAX_PART_NUMBER) {
    fail(e, "bad <NextPartNumberMarker>: %llu is above %d",
         (unsigned long long)marker, MAX_PART_NUMBER);
    goto done;
  }
  /* Without a marker a truncated listing cannot be continued. */
  if (out->is_truncated && mrc != 0) {
    fail(e, "missing <NextPartNumberMarker> in a truncated listing");
    goto done;
  }
  out->next_marker = (unsigned)marker;
  rc = 0;
done:
  xmlFreeDoc(doc);
  if (rc != 0)
    s3_xml_list_parts_free(out);
  return s3_xml_status(e, rc);
}

void s3_xml_list_parts_free(struct s3_list_parts *lp) {
  if (!lp)
    return;
  free(lp->parts);
  memset(lp, 0, sizeof *lp);
}

/* ---- ListObjectsV2 ---- */

int s3_xml_parse_list_objects(const char *xml, size_t len,
                              struct s3_list_objects *out,
                              struct hipobj_error *err) {
  static const char *const roots[] = {"ListBucketResult", NULL};
  struct s3_xml_err x = {err, HIPOBJ_OK}, *e = &x;
  if (!out)
    return s3_xml_status(e, no_output(e, "object list"));
  memset(out, 0, sizeof *out);
  xmlDocPtr doc;
  if (parse_doc(xml, len, roots, &doc, e) != 0)
    return s3_xml_status(e, -1);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  int rc = -1, url_encoded = 0;
  char enc[16];
  int erc = field_trimmed(root, "EncodingType", 0, enc, sizeof enc, e);
  if (erc < 0)
    goto done;
  if (erc == 0) {
    if (!hstrcaseeq(enc, "url")) {
      fail(e, "unsupported <EncodingType> \"%s\"", enc);
      goto done;
    }
    url_encoded = 1;
  }

  size_t n_obj = count_children(root, "Contents");
  size_t n_pre = count_children(root, "CommonPrefixes");
  if (n_obj + n_pre > S3_LIST_MAX_ENTRIES) {
    fail(e, "%zu entries in one page; S3 sends at most %d", n_obj + n_pre,
         S3_LIST_MAX_ENTRIES);
    goto done;
  }
  if ((n_obj && !(out->objects = calloc(n_obj, sizeof *out->objects))) ||
      (n_pre && !(out->prefixes = calloc(n_pre, sizeof *out->prefixes)))) {
    nomem(e, "out of memory for %zu objects", n_obj + n_pre);
    goto done;
  }
  for (xmlNodePtr c = root->children; c; c = c->next) {
    if (is_el(c, "Contents")) {
      struct s3_object_entry *o = &out->objects[out->n_objects++];
      if (field_dup(c, "Key", 1, &o->key, e) != 0 ||
          field_u64(c, "Size", 1, &o->size, e) != 0 ||
          field_fixed(c, "ETag", 0, o->etag, sizeof o->etag, 0, e) < 0 ||
          field_time(c, "LastModified", &o->mtime, e) < 0)
        goto done;
      if (url_encoded && s3_xml_form_decode(&o->key) != 0) {
        fail(e, "bad url-encoded <Key> \"%.64s\"", o->key);
        goto done;
      }
      if (!o->key[0]) {
        fail(e, "empty <Key>");
        goto done;
      }
    } else if (is_el(c, "CommonPrefixes")) {
      char **p = &out->prefixes[out->n_prefixes++];
      if (field_dup(c, "Prefix", 1, p, e) != 0)
        goto done;
      if (url_encoded && s3_xml_form_decode(p) != 0) {
        fail(e, "bad url-encoded <Prefix> \"%.64s\"", *p);
        goto done;
      }
    }
  }
  if (field_bool(root, "IsTruncated", &out->is_truncated, e) < 0 ||
      field_dup(root, "NextContinuationToken", 0, &out->next_token, e) < 0)
    goto done;
  /* Without a token a truncated listing cannot be continued. */
  if (out->is_truncated && (!out->next_token || !out->next_token[0])) {
    fail(e, "missing <NextContinuationToken> in a truncated listing");
    goto done;
  }
  rc = 0;
done:
  xmlFreeDoc(doc);
  if (rc != 0)
    s3_xml_list_objects_free(out);
  return s3_xml_status(e, rc);
}

void s3_xml_list_objects_free(struct s3_list_objects *lo) {
  if (!lo)
    return;
  for (size_t i = 0; i < lo->n_objects; i++)
    free(lo->objects[i].key);
  free(lo->objects);
  for (size_t i = 0; i < lo->n_prefixes; i++)
    free(lo->prefixes[i]);
  free(lo->prefixes);
  free(lo->next_token);
  memset(lo, 0, sizeof *lo);
}

/* ---- Timestamps ---- */

/* Reads exactly n digits. */
static int digits(const char **s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    char c = (*s)[i];
    if (c < '0' || c > '9')
      return -1;
    v = v * 10 + (c - '0');
  }
  *s += n;
  *out = v;
  return 0;
}

static int days_in_month(int year, int month) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : days[month - 1];
}

/* Range-checks the fields first: timegm would silently turn "Feb 30" into
 * March 2nd. A leap second (:60) is accepted and lands on the next second. */
static int civil_to_unix(int year, int mon, int day, int h, int m, int sec,
                         int64_t *out) {
  if (year < 1 || year > 9999 || mon < 1 || mon > 12 || day < 1 ||
      day > days_in_month(year, mon) || h > 23 || m > 59 || sec > 60)
    return -1;
  struct tm tm = {0};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = sec;
  tm.tm_isdst = 0;
  time_t t = timegm(&tm);
  if (t == (time_t)-1 && !(year == 1969 && mon == 12 && day == 31))
    return -1;
  *out = (int64_t)t;
  return 0;
}

int s3_parse_iso8601(const char *s, int64_t *out) {
  int y, mo, d, h, mi, se;
  if (!s || !out)
    return -1;
  if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' ||
      digits(&s, 2, &d) || (*s != 'T' && *s != 't'))
    return -1;
  s++;
  if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi) || *s++ != ':' ||
      digits(&s, 2, &se))
    return -1;
  if (*s == '.') { /* fraction: S3 sends milliseconds; Unix time drops it */
    s++;
    if (*s < '0' || *s > '9')
      return -1;
    while (*s >= '0' && *s <= '9')
      s++;
  }
  int64_t offset = 0;
  if (*s == 'Z' || *s == 'z') {
    s++;
  } else if (*s == '+' || *s == '-') {
    int sign = *s++ == '-' ? -1 : 1, oh, om;
    if (digits(&s, 2, &oh))
      return -1;
    if (*s == ':')
      s++;
    if (digits(&s, 2, &om) || oh > 23 || om > 59)
      return -1;
    offset = sign * (int64_t)(oh * 3600 + om * 60);
  } else {
    return -1; /* no zone: local time would be a guess */
  }
  if (*s)
    return -1;
  int64_t t;
  if (civil_to_unix(y, mo, d, h, mi, se, &t) != 0)
    return -1;
  *out = t - offset;
  return 0;
}

static int month_index(const char *s) {
  static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
                                       "May", "Jun", "Jul", "Aug",
                                       "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; i++)
    if (strncmp(s, months[i], 3) == 0)
      return i + 1;
  return -1;
}

/* Skips a day name: short ("Sun") when `full` is 0, long ("Sunday") when 1. */
static int skip_weekday(const char **s, int full) {
  static const char *const names[] = {"Sunday",    "Monday",   "Tuesday",
                                      "Wednesday", "Thursday", "Friday",
                                      "Saturday"};
  for (int i = 0; i < 7; i++) {
    size_t n = full ? strlen(names[i]) : 3;
    if (strncmp(*s, names[i], n) == 0) {
      *s += n;
      return 0;
    }
  }
  return -1;
}

static int hms(const char **s, int *h, int *m, int *sec) {
  if (digits(s, 2, h) || *(*s)++ != ':' || digits(s, 2, m) || *(*s)++ != ':' ||
      digits(s, 2, sec))
    return -1;
  return 0;
}

/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
static int parse_imf_fixdate(const char *p, int64_t *out) {
  int y, mo, d, h, mi, se;
  if (skip_weekday(&p, 0) || *p++ != ',' || *p++ != ' ' || digits(&p, 2, &d) ||
      *p++ != ' ' || (mo = month_index(p)) < 0)
    return -1;
  p += 3;
  if (*p++ != ' ' || digits(&p, 4, &y) || *p++ != ' ' ||
      hms(&p, &h, &mi, &se) || strcmp(p, " GMT") != 0)
    return -1;
  return civil_to_unix(y, mo, d, h, mi, se, out);
}

/* RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" */
static int parse_rfc850(const char *p, int64_t *out) {
  int yy, mo, d, h, mi, se;
  if (skip_weekday(&p, 1) || *p++ != ',' || *p++ != ' ' || digits(&p, 2, &d) ||
      *p++ != '-' || (mo = month_index(p)) < 0)
    return -1;
  p += 3;
  if (*p++ != '-' || digits(&p, 2, &yy) || *p++ != ' ' ||
      hms(&p, &h, &mi, &se) || strcmp(p, " GMT") != 0)
    return -1;
  /* RFC 7231: a two-digit year more than 50 years ahead is in the past
   * century; a fixed 1970-2069 window is the usual reading. */
  int y = yy < 70 ? 2000 + yy : 1900 + yy;
  return civil_to_unix(y, mo, d, h, mi, se, out);
}

/* asctime: "Sun Nov  6 08:49:37 1994" (a one-digit day is space-padded) */
static int parse_asctime(const char *p, int64_t *out) {
  int y, mo, d, h, mi, se;
  if (skip_weekday(&p, 0) || *p++ != ' ' || (mo = month_index(p)) < 0)
    return -1;
  p += 3;
  if (*p++ != ' ')
    return -1;
  if (*p == ' ') {
    p++;
    if (digits(&p, 1, &d))
      return -1;
  } else if (digits(&p, 2, &d)) {
    return -1;
  }
  if (*p++ != ' ' || hms(&p, &h, &mi, &se) || *p++ != ' ' ||
      digits(&p, 4, &y) || *p)
    return -1;
  return civil_to_unix(y, mo, d, h, mi, se, out);
}

/* RFC 7231 section 7.1.1.1: senders use IMF-fixdate, recipients must also
 * accept the obsolete RFC 850 and asctime forms. */
int s3_parse_http_date(const char *s, int64_t *out) {
  if (!s || !out)
    return -1;
  int64_t t;
  if (parse_imf_fixdate(s, &t) != 0 && parse_rfc850(s, &t) != 0 &&
      parse_asctime(s, &t) != 0)
    return -1;
  *out = t;
  return 0;
}
