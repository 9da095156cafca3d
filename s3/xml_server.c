/* xml_server.c - parses the two XML request bodies hipobj-server accepts
 * (see xml_server.h), on libxml2.
 *
 * These documents come from any client, so the parser is as strict as the
 * one in xml.c: no DTD loading, no network, entities left unsubstituted and
 * any DOCTYPE refused; errors are captured on the calling thread instead of
 * being printed. Elements are matched by local name, so the S3 namespace is
 * optional, as it is for S3 itself. */
#include "xml_server.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "../src/base/codec.h"
#include "../src/base/strutil.h"
#include "xml_doc.h"

#define MAX_PART_NUMBER 10000
#define MAX_BODY (16u * 1024 * 1024)

/* The body is the server's input: a document it cannot use is
 * HIPOBJ_E_INVALID_ARGUMENT (the server answers 400 MalformedXML with the
 * message), memory HIPOBJ_E_OUT_OF_MEMORY. */
#define fail(x, ...) s3_xml_fail((x), HIPOBJ_E_INVALID_ARGUMENT, __VA_ARGS__)
#define nomem(x) s3_xml_fail((x), HIPOBJ_E_OUT_OF_MEMORY, "out of memory")
#define is_el s3_xml_is_el

static int parse(const char *xml, size_t len, const char *root_name,
                 xmlDocPtr *out, struct s3_xml_err *x) {
  *out = NULL;
  if (!xml || len == 0)
    return fail(x, "the request body is empty");
  if (len > MAX_BODY)
    return fail(x, "the request body is too large (%zu bytes)", len);
  xmlDocPtr d;
  if ((x->status =
           s3_xml_read(xml, len, HIPOBJ_E_INVALID_ARGUMENT, &d, x->err)))
    return -1;
  xmlNodePtr root = xmlDocGetRootElement(d);
  if (!is_el(root, root_name)) {
    fail(x, "expected <%s> as the root element", root_name);
    xmlFreeDoc(d);
    return -1;
  }
  *out = d;
  return 0;
}

/* Text of a leaf element. Child elements and entity references make the
 * document invalid for our purposes. */
static int leaf_text(const xmlNode *el, struct hbuf *out,
                     struct s3_xml_err *x) {
  hbuf_append(out, "", 0);
  for (xmlNodePtr c = el->children; c; c = c->next) {
    if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
      if (c->content)
        hbuf_puts(out, (const char *)c->content);
    } else if (c->type == XML_ELEMENT_NODE || c->type == XML_ENTITY_REF_NODE) {
      return fail(x, "unexpected content in <%s>", (const char *)el->name);
    }
  }
  if (out->oom)
    return nomem(x);
  if (strlen(hbuf_str(out)) != out->len)
    return fail(x, "NUL character in <%s>", (const char *)el->name);
  return 0;
}

/* <ChecksumCRC32C> or <ChecksumCRC32> (name) into field: base64 of 4
 * bytes, 8 characters ending in "==". */
static int read_crc(const char *name, const char *s, size_t n, char field[12],
                    struct s3_xml_err *x) {
  if (field[0])
    return fail(x, "two <%s> in one <Part>", name);
  if (n != 8 || s[6] != '=' || s[7] != '=')
    return fail(x, "<%s> is not the base64 of 4 bytes", name);
  for (size_t i = 0; i < 6; i++)
    if (hb64_value((unsigned char)s[i]) < 0)
      return fail(x, "<%s> is not the base64 of 4 bytes", name);
  memcpy(field, s, n);
  return 0;
}

/* Another <Checksum...> would be a check nobody makes: the server checks
 * part checksums of CRC32C and CRC32 uploads only, so it refuses the rest
 * rather than ignore them. */
static int other_checksum(const xmlNode *c) {
  return !strncmp((const char *)c->name, "Checksum", 8) &&
         !is_el(c, "ChecksumCRC32C") && !is_el(c, "ChecksumCRC32");
}

static int read_part(const xmlNode *part, struct s3_part *p,
                     struct s3_xml_err *x) {
  int have_num = 0, have_etag = 0;
  memset(p, 0, sizeof *p);
  for (xmlNodePtr c = part->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE)
      continue;
    if (other_checksum(c))
      return fail(x,
                  "<%s> is not supported (only <ChecksumCRC32C> and "
                  "<ChecksumCRC32>)",
                  (const char *)c->name);
    int is_num = is_el(c, "PartNumber"), is_etag = is_el(c, "ETag");
    int is_crc32c = is_el(c, "ChecksumCRC32C");
    int is_crc32 = is_el(c, "ChecksumCRC32");
    if (!is_num && !is_etag && !is_crc32c && !is_crc32)
      continue;
    struct hbuf t = HBUF_INIT;
    if (leaf_text(c, &t, x) != 0) {
      hbuf_free(&t);
      return -1;
    }
    const char *s = hbuf_str(&t);
    size_t n = t.len;
    hstrtrim(&s, &n);
    int rc = 0;
    if (is_num) {
      uint64_t v = 0;
      size_t i = 0;
      for (; i < n && i < 8 && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
      if (n == 0 || i != n || v < 1 || v > MAX_PART_NUMBER)
        rc = fail(x, "<PartNumber> must be 1..%d", MAX_PART_NUMBER);
      p->number = (unsigned)v;
      have_num = 1;
    } else if (is_crc32c) {
      rc = read_crc("ChecksumCRC32C", s, n, p->crc32c, x);
    } else if (is_crc32) {
      rc = read_crc("ChecksumCRC32", s, n, p->crc32, x);
    } else {
      if (n == 0 || n >= sizeof p->etag)
        rc = fail(x, "<ETag> is empty or too long");
      else
        memcpy(p->etag, s, n);
      have_etag = 1;
    }
    hbuf_free(&t);
    if (rc != 0)
      return -1;
  }
  if (!have_num || !have_etag)
    return fail(x, "<Part> needs <PartNumber> and <ETag>");
  return 0;
}

int s3_xml_parse_complete_request(const char *xml, size_t len,
                                  struct s3_part **parts, size_t *n,
                                  struct hipobj_error *err) {
  struct s3_xml_err xs = {err, HIPOBJ_OK}, *x = &xs;
  *parts = NULL;
  *n = 0;
  xmlDocPtr doc;
  if (parse(xml, len, "CompleteMultipartUpload", &doc, x) != 0)
    return s3_xml_status(x, -1);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  size_t count = 0;
  for (xmlNodePtr c = root->children; c; c = c->next)
    count += is_el(c, "Part");
  int rc = -1;
  struct s3_part *list = NULL;
  if (count == 0) {
    fail(x, "the part list is empty");
    goto done;
  }
  if (count > MAX_PART_NUMBER) {
    fail(x, "more than %d parts", MAX_PART_NUMBER);
    goto done;
  }
  list = calloc(count, sizeof *list);
  if (!list) {
    nomem(x);
    goto done;
  }
  size_t i = 0;
  for (xmlNodePtr c = root->children; c; c = c->next)
    if (is_el(c, "Part") && read_part(c, &list[i++], x) != 0)
      goto done;
  *parts = list;
  *n = count;
  list = NULL;
  rc = 0;
done:
  free(list);
  xmlFreeDoc(doc);
  return s3_xml_status(x, rc);
}

void s3_delete_request_free(struct s3_delete_request *d) {
  if (!d)
    return;
  for (size_t i = 0; i < d->n; i++)
    free(d->keys[i]);
  free(d->keys);
  memset(d, 0, sizeof *d);
}

int s3_xml_parse_delete_request(const char *xml, size_t len, size_t max_keys,
                                struct s3_delete_request *out,
                                struct hipobj_error *err) {
  struct s3_xml_err xs = {err, HIPOBJ_OK}, *x = &xs;
  memset(out, 0, sizeof *out);
  xmlDocPtr doc;
  if (parse(xml, len, "Delete", &doc, x) != 0)
    return s3_xml_status(x, -1);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  size_t count = 0;
  int rc = -1;
  for (xmlNodePtr c = root->children; c; c = c->next)
    count += is_el(c, "Object");
  if (count == 0 || count > max_keys) {
    fail(x, "the request must name 1 to %zu objects (it names %zu)", max_keys,
         count);
    goto done;
  }
  out->keys = calloc(count, sizeof *out->keys);
  if (!out->keys) {
    nomem(x);
    goto done;
  }
  for (xmlNodePtr c = root->children; c; c = c->next) {
    struct hbuf t = HBUF_INIT;
    if (is_el(c, "Quiet")) {
      if (leaf_text(c, &t, x) != 0) {
        hbuf_free(&t);
        goto done;
      }
      const char *s = hbuf_str(&t);
      size_t n = t.len;
      hstrtrim(&s, &n);
      if (n == 4 && strncasecmp(s, "true", 4) == 0)
        out->quiet = 1;
      else if (!(n == 5 && strncasecmp(s, "false", 5) == 0)) {
        hbuf_free(&t);
        fail(x, "<Quiet> must be true or false");
        goto done;
      }
    } else if (is_el(c, "Object")) {
      xmlNodePtr k = NULL;
      for (xmlNodePtr e = c->children; e; e = e->next)
        if (is_el(e, "Key"))
          k = e;
      /* Keys are taken exactly: spaces are part of a key. */
      if (!k || leaf_text(k, &t, x) != 0 || t.len == 0) {
        if (!k || t.len == 0)
          fail(x, "<Object> needs a non-empty <Key>");
        hbuf_free(&t);
        goto done;
      }
      out->keys[out->n] = hbuf_steal(&t);
      if (!out->keys[out->n]) {
        nomem(x);
        goto done;
      }
      out->n++;
    }
    hbuf_free(&t);
  }
  rc = 0;
done:
  if (rc != 0)
    s3_delete_request_free(out);
  xmlFreeDoc(doc);
  return s3_xml_status(x, rc);
}
