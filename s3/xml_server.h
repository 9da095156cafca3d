/* xml_server.h - the XML request bodies hipobj-server reads: the part list
 * of CompleteMultipartUpload and the key list of DeleteObjects. Same safety
 * rules as xml.c (no DTD, no entities, no network). A body they cannot use
 * is HIPOBJ_E_INVALID_ARGUMENT (out of memory: HIPOBJ_E_OUT_OF_MEMORY) with
 * the one-line reason in err (NULL allowed; operation NULL). */
#ifndef HIPOBJ_S3_XML_SERVER_H
#define HIPOBJ_S3_XML_SERVER_H

#include <stddef.h>

#include "../src/base/error.h"
#include "xml.h"

/* <CompleteMultipartUpload><Part><PartNumber/><ETag/>[<ChecksumCRC32C/>]
 * [<ChecksumCRC32/>]</Part>...: the parts in document order (order is
 * checked by the caller: InvalidPartOrder). *parts is malloc'd; size and
 * mtime are 0, crc32c and crc32 "" when not listed. An empty list, a
 * <ChecksumCRC32C> or <ChecksumCRC32> that is not the base64 of 4 bytes,
 * and any other <Checksum...> element are errors. */
int s3_xml_parse_complete_request(const char *xml, size_t len,
                                  struct s3_part **parts, size_t *n,
                                  struct hipobj_error *err);

struct s3_delete_request {
  char **keys; /* malloc'd strings, in document order */
  size_t n;
  int quiet;
};
/* <Delete><Quiet/><Object><Key/></Object>...</Delete>. At most max_keys
 * objects; an empty list is an error. */
int s3_xml_parse_delete_request(const char *xml, size_t len, size_t max_keys,
                                struct s3_delete_request *out,
                                struct hipobj_error *err);
void s3_delete_request_free(struct s3_delete_request *d);

#endif
