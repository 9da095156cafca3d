/* xml_doc.c - reads XML documents safely with libxml2 (see xml_doc.h). */
#include "xml_doc.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include "../src/base/buf.h"
#include "../src/base/strutil.h"

#if LIBXML_VERSION >= 21200
typedef const xmlError *xml_error_ptr;
#else
typedef xmlErrorPtr xml_error_ptr;
#endif

static pthread_once_t libxml_once = PTHREAD_ONCE_INIT;

/* xmlInitParser is idempotent but not safe to race on first use. */
static void libxml_init(void) {
  xmlInitParser();
}

struct capture {
  int have;
  struct s3_xml_read_error *e;
};

static void capture_error(void *ctx, xml_error_ptr err) {
  struct capture *c = ctx;
  if (!c || !err || c->have || err->level < XML_ERR_ERROR)
    return;
  c->have = 1;
  c->e->line = err->line;
  char *m = c->e->msg;
  hstrlcpy(m, err->message ? err->message : "unknown error", sizeof c->e->msg);
  /* libxml2 messages end in '\n' and may quote document text: make sure
   * the reason stays on one line. */
  size_t n = strlen(m);
  while (n && isspace((unsigned char)m[n - 1]))
    m[--n] = '\0';
  for (char *p = m; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
}

static enum s3_xml_read_status read_doc(const char *xml, size_t len,
                                        xmlDocPtr *out,
                                        struct s3_xml_read_error *e) {
  *out = NULL;
  memset(e, 0, sizeof *e);
  pthread_once(&libxml_once, libxml_init);
  struct capture cap = {0, e};
  xmlStructuredErrorFunc old_fn = xmlStructuredError;
  void *old_ctx = xmlStructuredErrorContext;
  xmlSetStructuredErrorFunc(&cap, capture_error);
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) {
    xmlSetStructuredErrorFunc(old_ctx, old_fn);
    return S3_XML_READ_NOMEM;
  }
  /* No XML_PARSE_NOENT (entities stay unsubstituted), no DTDLOAD, NONET;
   * NOERROR/NOWARNING are a second guard against output on stderr. */
  int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  xmlDocPtr d = xmlCtxtReadMemory(ctxt, xml, (int)len, NULL, NULL, opts);
  int well_formed = ctxt->wellFormed;
  xmlFreeParserCtxt(ctxt);
  xmlSetStructuredErrorFunc(old_ctx, old_fn);
  if (!d || !well_formed || cap.have) {
    xmlFreeDoc(d);
    if (cap.have)
      return S3_XML_READ_SYNTAX;
    return d ? S3_XML_READ_NOT_WELL_FORMED : S3_XML_READ_FAILED;
  }
  if (d->intSubset || d->extSubset) {
    xmlFreeDoc(d);
    return S3_XML_READ_DOCTYPE;
  }
  *out = d;
  return S3_XML_READ_OK;
}

enum s3_xml_read_status s3_xml_read(const char *xml, size_t len, xmlDocPtr *out,
                                    struct s3_xml_read_error *e) {
  enum s3_xml_read_status st = read_doc(xml, len, out, e);
  const char *why = NULL;
  switch (st) {
  case S3_XML_READ_OK:
    break;
  case S3_XML_READ_NOMEM:
    why = "out of memory creating the XML parser";
    break;
  case S3_XML_READ_SYNTAX:
    snprintf(e->why, sizeof e->why, "malformed XML at line %d: %s", e->line,
             e->msg);
    break;
  case S3_XML_READ_NOT_WELL_FORMED:
    why = "malformed XML: not well-formed";
    break;
  case S3_XML_READ_FAILED:
    why = "malformed XML: parser failed (out of memory?)";
    break;
  case S3_XML_READ_DOCTYPE:
    why = "malformed XML: DOCTYPE not allowed in S3 documents";
    break;
  }
  if (why)
    hstrlcpy(e->why, why, sizeof e->why);
  return st;
}

int s3_xml_fail(struct hbuf *why, const char *fmt, ...) {
  if (why) {
    va_list ap;
    va_start(ap, fmt);
    hbuf_vprintf(why, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int s3_xml_is_el(const xmlNode *n, const char *name) {
  return n && n->type == XML_ELEMENT_NODE &&
         strcmp((const char *)n->name, name) == 0;
}
