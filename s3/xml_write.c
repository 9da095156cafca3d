/* xml_write.c - the XML documents the client sends (see xml.h): the body
 * of CompleteMultipartUpload and the configuration of CreateBucket,
 * written with libxml2's xmlTextWriter, which escapes text; and the check
 * of ETags before they are sent back.
 *
 * Why a writer and a check both: a part ETag comes from the server, and it
 * goes back in the Complete body (and, for GETs, in If-Match). Escaping
 * keeps markup out of the document, but XML 1.0 cannot carry a control
 * character at all, and a CR in a header value would end the header; so
 * an ETag that is not what S3 sends is refused before any reuse, naming
 * the part, instead of surfacing later as an empty body or "out of
 * memory". */
#include <string.h>

#include <libxml/xmlwriter.h>

#include "../src/base/codec.h"
#include "xml.h"

#define S3_XMLNS "http://s3.amazonaws.com/doc/2006-03-01/"
#define MAX_PART_NUMBER 10000

int s3_etag_ok(const char *etag) {
  size_t n = etag ? strnlen(etag, S3_ETAG_MAX) : 0;
  if (n < 3 || n >= S3_ETAG_MAX || etag[0] != '"' || etag[n - 1] != '"')
    return 0;
  /* RFC 7232 etagc without obs-text: printable ASCII but the quote. */
  for (size_t i = 1; i + 1 < n; i++) {
    unsigned char c = (unsigned char)etag[i];
    if (c < 0x21 || c > 0x7e || c == '"')
      return 0;
  }
  return 1;
}

/* base64 of 4 bytes: 6 characters of the alphabet and "==". */
static int crc32c_b64_ok(const char *s) {
  return strlen(s) == 8 && strspn(s, HB64_ALPHABET) == 6 &&
         !strcmp(s + 6, "==");
}

/* Appends what w wrote into buf to out; frees both. */
static int finish(xmlTextWriterPtr w, xmlBufferPtr buf, int rc,
                  struct hbuf *out, struct hipobj_error *err) {
  if (rc >= 0)
    rc = xmlTextWriterFlush(w);
  xmlFreeTextWriter(w);
  if (rc >= 0 && hbuf_append(out, xmlBufferContent(buf),
                             (size_t)xmlBufferLength(buf)) == 0)
    rc = HIPOBJ_OK;
  else
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, NULL,
                  "out of memory writing XML");
  xmlBufferFree(buf);
  return rc;
}

static int writer_new(xmlTextWriterPtr *w, xmlBufferPtr *buf,
                      struct hipobj_error *err) {
  *buf = xmlBufferCreate();
  *w = *buf ? xmlNewTextWriterMemory(*buf, 0) : NULL;
  if (*w)
    return HIPOBJ_OK;
  xmlBufferFree(*buf);
  return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, NULL,
                  "out of memory writing XML");
}

int s3_xml_build_complete(struct hbuf *out, const struct s3_part *parts,
                          size_t n, struct hipobj_error *err) {
  /* S3 refuses an empty part list (MalformedXML): refuse it here. */
  if (!out || !parts || n == 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL, "no part to list");
  for (size_t i = 0; i < n; i++) {
    const struct s3_part *p = &parts[i];
    if (p->number < 1 || p->number > MAX_PART_NUMBER)
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL,
                      "part number %u is outside 1..%d", p->number,
                      MAX_PART_NUMBER);
    if (!s3_etag_ok(p->etag))
      return herr_set(err, HIPOBJ_E_PROTOCOL, NULL,
                      "part %u: the server's ETag for it is not a quoted "
                      "string of printable ASCII of at most %d bytes, as "
                      "S3 sends; it cannot be sent back",
                      p->number, S3_ETAG_MAX - 1);
    if (p->crc32c[0] &&
        (strnlen(p->crc32c, sizeof p->crc32c) == sizeof p->crc32c ||
         !crc32c_b64_ok(p->crc32c)))
      return herr_set(err, HIPOBJ_E_PROTOCOL, NULL,
                      "part %u: its CRC32C is not the base64 of 4 bytes",
                      p->number);
  }
  xmlTextWriterPtr w;
  xmlBufferPtr buf;
  int rc = writer_new(&w, &buf, err);
  if (rc != HIPOBJ_OK)
    return rc;
  rc = xmlTextWriterStartElement(w, BAD_CAST "CompleteMultipartUpload");
  if (rc >= 0)
    rc = xmlTextWriterWriteAttribute(w, BAD_CAST "xmlns", BAD_CAST S3_XMLNS);
  for (size_t i = 0; rc >= 0 && i < n; i++) {
    const struct s3_part *p = &parts[i];
    rc = xmlTextWriterStartElement(w, BAD_CAST "Part");
    if (rc >= 0)
      rc = xmlTextWriterWriteFormatElement(w, BAD_CAST "PartNumber", "%u",
                                           p->number);
    if (rc >= 0)
      rc = xmlTextWriterWriteElement(w, BAD_CAST "ETag", BAD_CAST p->etag);
    if (rc >= 0 && p->crc32c[0])
      rc = xmlTextWriterWriteElement(w, BAD_CAST "ChecksumCRC32C",
                                     BAD_CAST p->crc32c);
    if (rc >= 0)
      rc = xmlTextWriterEndElement(w);
  }
  if (rc >= 0)
    rc = xmlTextWriterEndElement(w);
  return finish(w, buf, rc, out, err);
}

int s3_xml_build_create_bucket(struct hbuf *out, const char *region,
                               struct hipobj_error *err) {
  size_t n = region ? strlen(region) : 0;
  if (!out || n == 0 || n > 64)
    return herr_set(err, HIPOBJ_E_CONFIG, NULL,
                    "region must be 1 to 64 characters long");
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)region[i] <= ' ' || (unsigned char)region[i] >= 0x7f)
      return herr_set(err, HIPOBJ_E_CONFIG, NULL,
                      "region holds a space or a character that is not "
                      "printable ASCII");
  xmlTextWriterPtr w;
  xmlBufferPtr buf;
  int rc = writer_new(&w, &buf, err);
  if (rc != HIPOBJ_OK)
    return rc;
  rc = xmlTextWriterStartElement(w, BAD_CAST "CreateBucketConfiguration");
  if (rc >= 0)
    rc = xmlTextWriterWriteAttribute(w, BAD_CAST "xmlns", BAD_CAST S3_XMLNS);
  if (rc >= 0)
    rc = xmlTextWriterWriteElement(w, BAD_CAST "LocationConstraint",
                                   BAD_CAST region);
  if (rc >= 0)
    rc = xmlTextWriterEndElement(w);
  return finish(w, buf, rc, out, err);
}
