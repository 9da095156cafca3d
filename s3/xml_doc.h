/* xml_doc.h - the one safe way s3/ reads an XML document with libxml2: no
 * DTD loading, no network, entities left unsubstituted, any DOCTYPE
 * refused, the first error captured on the calling thread instead of being
 * printed. Shared by the client parsers (xml.c) and the server's request
 * body parsers (xml_server.c), which report the same reasons, and how
 * both report them (struct s3_xml_err). */
#ifndef HIPOBJ_S3_XML_DOC_H
#define HIPOBJ_S3_XML_DOC_H

#include <stddef.h>

#include <libxml/tree.h>

#include "../src/base/error.h"

/* Parses xml[0..len) (len > 0). On HIPOBJ_OK *out must be freed with
 * xmlFreeDoc; otherwise *out is NULL and err (NULL allowed) has the
 * one-line reason ("malformed XML at line 1: ...", operation NULL). A
 * document that is not well-formed, or has a DOCTYPE, fails with
 * `malformed` (HIPOBJ_E_PROTOCOL for an answer we received,
 * HIPOBJ_E_INVALID_ARGUMENT for a request body given to the server); no
 * parser context is HIPOBJ_E_OUT_OF_MEMORY. */
int s3_xml_read(const char *xml, size_t len, int malformed, xmlDocPtr *out,
                struct hipobj_error *err);

/* How the parsers of xml.c and xml_server.c fail. Their static helpers
 * return -1 after s3_xml_fail(), which fills err (NULL allowed; operation
 * NULL, the caller names it with herr_op) and keeps the status, so the
 * public function can return it with s3_xml_status(). */
struct s3_xml_err {
  struct hipobj_error *err;
  int status; /* HIPOBJ_OK until a failure */
};
/* Records a failure with `status`; returns -1. */
int s3_xml_fail(struct s3_xml_err *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* What a parser returns: HIPOBJ_OK when rc is 0, else the recorded status
 * (HIPOBJ_E_INTERNAL if a path failed without s3_xml_fail). */
int s3_xml_status(const struct s3_xml_err *e, int rc);

/* An element node with this local name. */
int s3_xml_is_el(const xmlNode *n, const char *name);

/* Decodes a key of a listing sent with EncodingType=url in place (*s is
 * replaced by a new malloc'd string). S3 (and MinIO) encode keys like an
 * HTML form: a space becomes '+', and a literal '+' is always sent as %2B,
 * so '+' is a space here, unlike in huri_decode. Returns 0, or -1 (bad
 * encoding, an embedded NUL, out of memory; *s unchanged). */
int s3_xml_form_decode(char **s);

#endif
