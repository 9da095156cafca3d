/* xml.h - the S3 XML documents hipObject reads and writes, on libxml2:
 * error bodies, multipart results, ListParts, ListObjectsV2 (xml.c), and
 * the CompleteMultipartUpload and CreateBucket request bodies, written
 * with libxml2's escaping writer (xml_write.c). Parsers never fetch
 * external entities or DTDs; malformed input is an error with a message. */
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

/* Room for an ETag and its NUL (HIPOBJ_ETAG_MAX). */
#define S3_ETAG_MAX 128

/* 1 when etag is what S3 sends and may be sent back (If-Match, the
 * Complete body): a quoted string of printable ASCII other than the quote,
 * 1 to S3_ETAG_MAX-3 characters between the quotes (RFC 7232's etagc
 * without obs-text); 0 otherwise, NULL and "" included. */
int s3_etag_ok(const char *etag);

/* A listing page holds at most this many entries (S3's max-keys and
 * max-parts cannot ask more): a longer one is not S3's, and refused
 * before anything is allocated for it. */
#define S3_LIST_MAX_ENTRIES 1000

struct s3_part {
  unsigned number;
  uint64_t size;          /* 0 when not known (building the Complete body) */
  char etag[S3_ETAG_MAX]; /* quoted, as S3 returns it */
  int64_t mtime;          /* unix time, 0 when absent */
  /* <ChecksumCRC32C> (base64 of 4 bytes), "" when the part has none */
  char crc32c[12];
  /* <ChecksumCRC32>, likewise: only hipobj-server's Complete parser
   * (xml_server.h) fills it; the client neither sends nor reads it. */
  char crc32[12];
};

/* Appends <CompleteMultipartUpload><Part><PartNumber/><ETag/>
 * [<ChecksumCRC32C/>]</Part>... with the parts in the order given (the
 * caller sorts them). HIPOBJ_OK, or (out unchanged) HIPOBJ_E_PROTOCOL
 * naming the part whose ETag fails s3_etag_ok() or whose CRC32C is not
 * the base64 of 4 bytes (both came from the server),
 * HIPOBJ_E_INVALID_ARGUMENT for no part or a number outside 1..10000,
 * HIPOBJ_E_OUT_OF_MEMORY. */
int s3_xml_build_complete(struct hbuf *out, const struct s3_part *parts,
                          size_t n, struct hipobj_error *err);

/* Appends <CreateBucketConfiguration><LocationConstraint>region</...>.
 * HIPOBJ_E_CONFIG for a region that is empty, longer than 64 bytes or not
 * printable ASCII without spaces. */
int s3_xml_build_create_bucket(struct hbuf *out, const char *region,
                               struct hipobj_error *err);

/* A 200 answer to CompleteMultipartUpload may carry <Error>: then
 * *is_error = 1 and s3err is filled (a parsed answer: HIPOBJ_OK). Otherwise
 * the ETag of the result is copied to etag (quotes kept): empty (Ceph RGW
 * sends <ETag></ETag>) or passing s3_etag_ok(). */
int s3_xml_parse_complete(const char *xml, size_t len, int *is_error,
                          struct s3_xml_error *s3err, char etag[128],
                          struct hipobj_error *err);

struct s3_list_parts {
  struct s3_part *parts; /* malloc'd array, free with s3_xml_list_parts_free */
  size_t n;
  int is_truncated;
  unsigned next_marker; /* NextPartNumberMarker */
};
/* At most S3_LIST_MAX_ENTRIES parts, each with an ETag passing
 * s3_etag_ok() (they are sent back in Complete when an upload is
 * resumed); a failure names the part. */
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
 * (keys and prefixes are then URL-decoded). At most S3_LIST_MAX_ENTRIES
 * objects and common prefixes together. */
int s3_xml_parse_list_objects(const char *xml, size_t len,
                              struct s3_list_objects *out,
                              struct hipobj_error *err);
void s3_xml_list_objects_free(struct s3_list_objects *lo);

/* The answers of xml_lists.c. */
struct s3_bucket_entry {
  char *name;
  int64_t ctime; /* CreationDate, Unix time; 0 when absent */
};
struct s3_list_buckets {
  struct s3_bucket_entry *buckets;
  size_t n;
  char *next_token; /* ContinuationToken (AWS pages), NULL when none */
};
/* ListAllMyBucketsResult. */
int s3_xml_parse_list_buckets(const char *xml, size_t len,
                              struct s3_list_buckets *out,
                              struct hipobj_error *err);
void s3_xml_list_buckets_free(struct s3_list_buckets *lb);

struct s3_upload_entry {
  char *key;
  char *upload_id;
  int64_t initiated; /* Unix time; 0 when absent */
};
struct s3_list_uploads {
  struct s3_upload_entry *uploads;
  size_t n;
  int is_truncated;
  char *next_key_marker;       /* NULL when absent */
  char *next_upload_id_marker; /* NULL when absent */
};
/* ListMultipartUploadsResult; honours EncodingType=url for keys. A
 * truncated page must name its NextKeyMarker. */
int s3_xml_parse_list_uploads(const char *xml, size_t len,
                              struct s3_list_uploads *out,
                              struct hipobj_error *err);
void s3_xml_list_uploads_free(struct s3_list_uploads *lu);

/* CopyObjectResult or CopyPartResult: the new ETag (passing s3_etag_ok;
 * an unquoted one, as Ceph RGW sends, is quoted) into etag; an <Error> (S3 may
 * fail a copy inside a 200 answer) sets *is_error and fills s3err (may be
 * NULL). */
int s3_xml_parse_copy_result(const char *xml, size_t len, int *is_error,
                             struct s3_xml_error *s3err, char etag[128],
                             struct hipobj_error *err);

/* Parses an ISO 8601 timestamp ("2009-10-12T17:50:30.000Z") to Unix time;
 * -1 when malformed. */
int s3_parse_iso8601(const char *s, int64_t *out);
/* Parses an RFC 7231 HTTP date ("Wed, 12 Oct 2009 17:50:00 GMT"). */
int s3_parse_http_date(const char *s, int64_t *out);

#endif
