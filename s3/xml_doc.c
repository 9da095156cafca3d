/* xml_doc.c - reads XML documents safely with libxml2 (see xml_doc.h). */
#include "xml_doc.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include "../src/base/buf.h"
#include "../src/base/strutil.h"
#include "../src/base/uri.h"

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

/* What read_doc found wrong. */
enum read_status {
  READ_OK = 0,
  READ_NOMEM,  /* the parser context could not be created */
  READ_SYNTAX, /* an error was reported: see line and msg */
  READ_NOT_WELL_FORMED,
  READ_FAILED,  /* no document and no error (out of memory?) */
  READ_DOCTYPE, /* a DOCTYPE: refused in S3 documents */
};

struct read_error {
  int line;
  char msg[200]; /* the parser's message: one line, control bytes replaced */
};

struct capture {
  int have;
  struct read_error *e;
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

static enum read_status read_doc(const char *xml, size_t len, xmlDocPtr *out,
                                 struct read_error *e) {
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
    return READ_NOMEM;
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
      return READ_SYNTAX;
    return d ? READ_NOT_WELL_FORMED : READ_FAILED;
  }
  if (d->intSubset || d->extSubset) {
    xmlFreeDoc(d);
    return READ_DOCTYPE;
  }
  *out = d;
  return READ_OK;
}

int s3_xml_read(const char *xml, size_t len, int malformed, xmlDocPtr *out,
                struct hipobj_error *err) {
  struct read_error e;
  switch (read_doc(xml, len, out, &e)) {
  case READ_OK:
    return HIPOBJ_OK;
  case READ_NOMEM:
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, NULL,
                    "out of memory creating the XML parser");
  case READ_SYNTAX:
    return herr_set(err, malformed, NULL, "malformed XML at line %d: %s",
                    e.line, e.msg);
  case READ_NOT_WELL_FORMED:
    return herr_set(err, malformed, NULL, "malformed XML: not well-formed");
  case READ_FAILED:
    return herr_set(err, malformed, NULL,
                    "malformed XML: parser failed (out of memory?)");
  case READ_DOCTYPE:
  default:
    return herr_set(err, malformed, NULL,
                    "malformed XML: DOCTYPE not allowed in S3 documents");
  }
}

int s3_xml_fail(struct s3_xml_err *e, int status, const char *fmt, ...) {
  e->status = status;
  va_list ap;
  va_start(ap, fmt);
  herr_vset(e->err, status, NULL, fmt, ap);
  va_end(ap);
  return -1;
}

int s3_xml_status(const struct s3_xml_err *e, int rc) {
  if (rc == 0)
    return HIPOBJ_OK;
  return e->status != HIPOBJ_OK ? e->status : HIPOBJ_E_INTERNAL;
}

int s3_xml_is_el(const xmlNode *n, const char *name) {
  return n && n->type == XML_ELEMENT_NODE &&
         strcmp((const char *)n->name, name) == 0;
}

int s3_xml_form_decode(char **s) {
  struct hbuf plus = HBUF_INIT, dec = HBUF_INIT;
  hbuf_puts(&plus, *s);
  for (size_t i = 0; i < plus.len; i++)
    if (plus.data[i] == '+')
      plus.data[i] = ' ';
  int rc = -1;
  if (!plus.oom && huri_decode(&dec, hbuf_str(&plus), plus.len) == 0 &&
      strlen(hbuf_str(&dec)) == dec.len) {
    char *d = hbuf_steal(&dec);
    if (d) {
      free(*s);
      *s = d;
      rc = 0;
    }
  }
  hbuf_free(&plus);
  hbuf_free(&dec);
  return rc;
}
