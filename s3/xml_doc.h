/* xml_doc.h - the one safe way s3/ reads an XML document with libxml2: no
 * DTD loading, no network, entities left unsubstituted, any DOCTYPE
 * refused, the first error captured on the calling thread instead of being
 * printed. Shared by the client parsers (xml.c) and the server's request
 * body parsers (xml_server.c), which report the same reasons. */
#ifndef HIPOBJ_S3_XML_DOC_H
#define HIPOBJ_S3_XML_DOC_H

#include <stddef.h>

#include <libxml/tree.h>

struct hbuf;

enum s3_xml_read_status {
  S3_XML_READ_OK = 0,
  S3_XML_READ_NOMEM,  /* the parser context could not be created */
  S3_XML_READ_SYNTAX, /* an error was reported: see line and msg */
  S3_XML_READ_NOT_WELL_FORMED,
  S3_XML_READ_FAILED,  /* no document and no error (out of memory?) */
  S3_XML_READ_DOCTYPE, /* a DOCTYPE: refused in S3 documents */
};

struct s3_xml_read_error {
  int line;
  char msg[200]; /* the parser's message: one line, control bytes replaced */
  char why[256]; /* the whole reason, for an error message */
};

/* Parses xml[0..len) (len > 0). On S3_XML_READ_OK *out must be freed with
 * xmlFreeDoc; otherwise *out is NULL and e says why. */
enum s3_xml_read_status s3_xml_read(const char *xml, size_t len, xmlDocPtr *out,
                                    struct s3_xml_read_error *e);

/* Appends the formatted reason to why (when not NULL); returns -1. */
int s3_xml_fail(struct hbuf *why, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* An element node with this local name. */
int s3_xml_is_el(const xmlNode *n, const char *name);

#endif
