/* fuzz_xml_client.c - every parser of s3/xml.c and s3/xml_lists.c on the
 * same input (error bodies, Initiate, Complete, ListParts, ListObjectsV2,
 * ListBuckets, ListMultipartUploads, CopyObject/UploadPartCopy results),
 * and the timestamp parsers. Properties: a parse either fails with a message or
 * gives what xml.h promises (non-empty Code and UploadId, part
 * numbers 1..10000, ETags passing s3_etag_ok, at most S3_LIST_MAX_ENTRIES
 * entries); a ListParts page written back by s3_xml_build_complete (the resumed
 * upload's Complete) parses, with the server's parser, to the same parts. */
#include "fuzz.h"

#include "s3/xml.h"
#include "s3/xml_server.h"
#include "src/base/error.h"

static void complete_round_trip(const struct s3_list_parts *lp) {
  if (!lp->n)
    return;
  struct hbuf body = HBUF_INIT;
  if (s3_xml_build_complete(&body, lp->parts, lp->n, NULL) != HIPOBJ_OK) {
    /* Only a part list that cannot be written is refused: ListParts gave
     * valid ETags, so the CRC32C must be the reason. */
    int bad_crc = 0;
    for (size_t i = 0; i < lp->n; i++)
      bad_crc |= lp->parts[i].crc32c[0] != 0;
    FUZZ_CHECK(bad_crc || body.oom, "a valid part list was refused");
    hbuf_free(&body);
    return;
  }
  struct s3_part *back = NULL;
  size_t n = 0;
  struct hipobj_error e = {0};
  FUZZ_CHECK(s3_xml_parse_complete_request(body.data, body.len, &back, &n,
                                           &e) == HIPOBJ_OK,
             "the Complete body written does not parse: %s", e.message);
  FUZZ_CHECK(n == lp->n, "%zu parts written, %zu read", lp->n, n);
  for (size_t i = 0; i < n; i++) {
    FUZZ_CHECK(back[i].number == lp->parts[i].number, "part number");
    FUZZ_CHECK(!strcmp(back[i].etag, lp->parts[i].etag), "ETag %s vs %s",
               back[i].etag, lp->parts[i].etag);
    FUZZ_CHECK(!strcmp(back[i].crc32c, lp->parts[i].crc32c), "CRC32C");
  }
  free(back);
  hbuf_free(&body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *xml = (const char *)data;
  struct hipobj_error e = {0};

  struct s3_xml_error xe;
  if (s3_xml_parse_error(xml, size, &xe, &e) == HIPOBJ_OK)
    FUZZ_CHECK(xe.code[0], "an error without Code");
  else
    FUZZ_CHECK(e.message[0], "a failure without a reason");

  char *id = NULL;
  if (s3_xml_parse_initiate(xml, size, &id, NULL) == HIPOBJ_OK) {
    FUZZ_CHECK(id && id[0], "an empty UploadId accepted");
    free(id);
  }

  int is_error = 0;
  char etag[128];
  if (s3_xml_parse_complete(xml, size, &is_error, &xe, etag, NULL) ==
          HIPOBJ_OK &&
      !is_error)
    FUZZ_CHECK(!etag[0] || s3_etag_ok(etag), "Complete ETag %s", etag);

  struct s3_list_parts lp;
  if (s3_xml_parse_list_parts(xml, size, &lp, NULL) == HIPOBJ_OK) {
    FUZZ_CHECK(lp.n <= S3_LIST_MAX_ENTRIES, "%zu parts", lp.n);
    for (size_t i = 0; i < lp.n; i++) {
      FUZZ_CHECK(lp.parts[i].number >= 1 && lp.parts[i].number <= 10000,
                 "part number %u", lp.parts[i].number);
      FUZZ_CHECK(s3_etag_ok(lp.parts[i].etag), "part ETag");
    }
    complete_round_trip(&lp);
    s3_xml_list_parts_free(&lp);
  }

  struct s3_list_objects lo;
  if (s3_xml_parse_list_objects(xml, size, &lo, NULL) == HIPOBJ_OK) {
    FUZZ_CHECK(lo.n_objects + lo.n_prefixes <= S3_LIST_MAX_ENTRIES,
               "%zu entries", lo.n_objects + lo.n_prefixes);
    for (size_t i = 0; i < lo.n_objects; i++)
      FUZZ_CHECK(lo.objects[i].key && lo.objects[i].key[0], "empty key");
    FUZZ_CHECK(!lo.is_truncated || (lo.next_token && lo.next_token[0]),
               "truncated without a token");
    s3_xml_list_objects_free(&lo);
  }

  struct s3_list_buckets lb;
  if (s3_xml_parse_list_buckets(xml, size, &lb, NULL) == HIPOBJ_OK) {
    for (size_t i = 0; i < lb.n; i++)
      FUZZ_CHECK(lb.buckets[i].name && lb.buckets[i].name[0], "empty name");
    FUZZ_CHECK(!lb.next_token || lb.next_token[0], "empty token kept");
    s3_xml_list_buckets_free(&lb);
  }

  struct s3_list_uploads lu;
  if (s3_xml_parse_list_uploads(xml, size, &lu, NULL) == HIPOBJ_OK) {
    FUZZ_CHECK(lu.n <= S3_LIST_MAX_ENTRIES, "%zu uploads", lu.n);
    for (size_t i = 0; i < lu.n; i++)
      FUZZ_CHECK(lu.uploads[i].upload_id[0], "empty UploadId");
    FUZZ_CHECK(!lu.is_truncated ||
                   (lu.next_key_marker && lu.next_key_marker[0]),
               "truncated without a marker");
    s3_xml_list_uploads_free(&lu);
  }

  if (s3_xml_parse_copy_result(xml, size, &is_error, &xe, etag, NULL) ==
      HIPOBJ_OK) {
    if (is_error)
      FUZZ_CHECK(xe.code[0], "a copy error without Code");
    else
      FUZZ_CHECK(s3_etag_ok(etag), "copy ETag %s", etag);
  }

  /* The timestamps, on the input as a string. */
  char *s = malloc(size + 1);
  if (!s)
    return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  int64_t t;
  s3_parse_iso8601(s, &t);
  s3_parse_http_date(s, &t);
  free(s);
  return 0;
}
