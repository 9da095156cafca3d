/* xml.h - the S3 XML documents hipObject reads and writes, on libxml2:
 * error bodies, multipart results, ListParts, ListObjectsV2, and the
 * CompleteMultipartUpload request body. Parsers never fetch external
 * entities or DTDs; malformed input is an error with a message. */
#ifndef HIPOBJ_S3_XML_H
#define HIPOBJ_S3_XML_H

#include <stddef.h>
#include <stdint.h>

#include "../src/base/buf.h"
#include "../src/base/error.h"

/* Every parser returns HIPOBJ_OK, or the status with the one-line reason in
 * err (NULL allowed; operation NULL, so the message is the bare reason,
 * e.g. "malformed XML at line 1: ...", "missing <UploadId>"; the caller
 * names its operation with herr_op): HIPOBJ_E_PROTOCOL for a document that
 * is not what S3 sends, HIPOBJ_E_OUT_OF_MEMORY, and
 * HIPOBJ_E_INVALID_ARGUMENT for a NULL output. */

struct s3_xml_error {
  char code[64];
  char message[512];
  char request_id[128];
  char resource[256];
};
/* Parses <Error><Code/><Message/><RequestId/><Resource/></Error>. */
int s3_xml_parse_error(const char *xml, size_t len, struct s3_xml_error *out,
                       struct hipobj_error *err);

/* <InitiateMultipartUploadResult>: the UploadId (malloc'd into *upload_id). */
int s3_xml_parse_initiate(const char *xml, size_t len, char **upload_id,
                          struct hipobj_error *err);

struct s3_part {
  unsigned number;
  uint64_t size;  /* 0 when not known (building the Complete body) */
  char etag[128]; /* quoted, as S3 returns it */
  int64_t mtime;  /* unix time, 0 when absent */
  /* <ChecksumCRC32C> (base64 of 4 bytes), "" when the part has none */
  char crc32c[12];
  /* <ChecksumCRC32>, likewise: only hipobj-server's Complete parser
   * (xml_server.h) fills it; the client neither sends nor reads it. */
  char crc32[12];
};

/* Appends <CompleteMultipartUpload><Part><PartNumber/><ETag/>
 * [<ChecksumCRC32C/>]</Part>... with the parts in the order given (the
 * caller sorts them). */
int s3_xml_build_complete(struct hbuf *out, const struct s3_part *parts,
                          size_t n);

/* A 200 answer to CompleteMultipartUpload may carry <Error>: then
 * *is_error = 1 and s3err is filled (a parsed answer: HIPOBJ_OK). Otherwise
 * the ETag of the result is copied to etag (quotes kept). */
int s3_xml_parse_complete(const char *xml, size_t len, int *is_error,
                          struct s3_xml_error *s3err, char etag[128],
                          struct hipobj_error *err);

struct s3_list_parts {
  struct s3_part *parts; /* malloc'd array, free with s3_xml_list_parts_free */
  size_t n;
  int is_truncated;
  unsigned next_marker; /* NextPartNumberMarker */
};
int s3_xml_parse_list_parts(const char *xml, size_t len,
                            struct s3_list_parts *out,
                            struct hipobj_error *err);
void s3_xml_list_parts_free(struct s3_list_parts *lp);

struct s3_object_entry {
  char *key;
  uint64_t size;
  char etag[128];
  int64_t mtime;
};
struct s3_list_objects {
  struct s3_object_entry *objects;
  size_t n_objects;
  char **prefixes; /* CommonPrefixes/Prefix */
  size_t n_prefixes;
  int is_truncated;
  char *next_token; /* NextContinuationToken, NULL when absent */
};
/* ListBucketResult (ListObjectsV2). Honours EncodingType=url in the answer
 * (keys and prefixes are then URL-decoded). */
int s3_xml_parse_list_objects(const char *xml, size_t len,
                              struct s3_list_objects *out,
                              struct hipobj_error *err);
void s3_xml_list_objects_free(struct s3_list_objects *lo);

/* Parses an ISO 8601 timestamp ("2009-10-12T17:50:30.000Z") to Unix time;
 * -1 when malformed. */
int s3_parse_iso8601(const char *s, int64_t *out);
/* Parses an RFC 7231 HTTP date ("Wed, 12 Oct 2009 17:50:00 GMT"). */
int s3_parse_http_date(const char *s, int64_t *out);

#endif
