/* test_xml.c - S3 XML documents: fixtures modelled on the examples in AWS's
 * S3 API reference (Error, CreateMultipartUpload, CompleteMultipartUpload
 * incl. the "200 with <Error>" case, ListParts, ListObjectsV2), malformed
 * and hostile input, silence on stderr, thread safety, and the timestamp
 * parsers (the builders are in test_xml_write.c).
 *
 * Expected Unix times were computed independently with GNU date, e.g.
 * `date -u -d 2009-10-12T17:50:30Z +%s`; 784111777 is RFC 7231's example
 * date (Sun, 06 Nov 1994 08:49:37 GMT). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "s3/xml.h"
#include "src/base/error.h"

static char *load(const char *name, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/unit/fixtures/%s", HIPOBJ_TEST_SRCDIR, name);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open fixture %s", path);
  char *buf = malloc(1 << 16);
  cr_assert_not_null(buf);
  *len = fread(buf, 1, (1 << 16) - 1, f);
  buf[*len] = '\0';
  fclose(f);
  return buf;
}

/* ------------------------------------------------------------------------ */
/* stderr must stay silent                                                  */
/* ------------------------------------------------------------------------ */

struct quiet {
  int saved;
  FILE *tmp;
};

static void quiet_begin(struct quiet *q) {
  fflush(stderr);
  q->tmp = tmpfile();
  cr_assert_not_null(q->tmp);
  q->saved = dup(2);
  cr_assert_geq(q->saved, 0);
  cr_assert_geq(dup2(fileno(q->tmp), 2), 0);
}

/* Restores stderr and returns how many bytes were written to it. */
static long quiet_end(struct quiet *q) {
  fflush(stderr);
  dup2(q->saved, 2);
  close(q->saved);
  struct stat st;
  long n = fstat(fileno(q->tmp), &st) == 0 ? (long)st.st_size : -1;
  fclose(q->tmp);
  return n;
}

/* ------------------------------------------------------------------------ */
/* Error                                                                    */
/* ------------------------------------------------------------------------ */

Test(xml_error, all_fields) {
  size_t len;
  char *x = load("error_full.xml", &len);
  struct s3_xml_error e;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_error(x, len, &e, &why), 0, "%s", why.message);
  cr_expect_str_eq(e.code, "NoSuchKey");
  cr_expect_str_eq(e.message, "The resource you requested does not exist");
  cr_expect_str_eq(e.request_id, "4442587FB7D0A2F9");
  cr_expect_str_eq(e.resource, "/mybucket/photos/2006/February/sample.jpg");
  cr_expect_str_eq(why.message, "");
  free(x);
}

Test(xml_error, namespaced_and_optional_fields) {
  const char *x = "<Error xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                  "<Code>SlowDown</Code></Error>";
  struct s3_xml_error e;
  cr_assert_eq(s3_xml_parse_error(x, strlen(x), &e, NULL), 0);
  cr_expect_str_eq(e.code, "SlowDown");
  cr_expect_str_eq(e.message, "");
  cr_expect_str_eq(e.request_id, "");
  cr_expect_str_eq(e.resource, "");
}

Test(xml_error, long_message_truncated_not_failed) {
  struct hbuf x = HBUF_INIT;
  hbuf_puts(&x, "<Error><Code>InternalError</Code><Message>");
  for (int i = 0; i < 100; i++)
    hbuf_puts(&x, "0123456789");
  hbuf_puts(&x, "</Message></Error>");
  struct s3_xml_error e;
  cr_assert_eq(s3_xml_parse_error(x.data, x.len, &e, NULL), 0);
  cr_expect_eq(strlen(e.message), sizeof e.message - 1);
  cr_expect_eq(strncmp(e.message, "0123456789", 10), 0);
  hbuf_free(&x);
}

Test(xml_error, truncation_keeps_utf8_whole) {
  /* 510 ASCII bytes then U+00FC (2 bytes): 512 bytes do not fit in the
   * 511 available, and half a character must not be kept. */
  struct hbuf x = HBUF_INIT;
  hbuf_puts(&x, "<Error><Code>E</Code><Message>");
  for (int i = 0; i < 510; i++)
    hbuf_putc(&x, 'a');
  hbuf_puts(&x, "\xc3\xbc</Message></Error>");
  struct s3_xml_error e;
  cr_assert_eq(s3_xml_parse_error(x.data, x.len, &e, NULL), 0);
  cr_expect_eq(strlen(e.message), 510);
  cr_expect_eq(e.message[509], 'a');
  hbuf_free(&x);
}

Test(xml_error, missing_code) {
  const char *x = "<Error><Message>no code</Message></Error>";
  struct s3_xml_error e;
  struct hipobj_error why = {0};
  cr_expect_eq(s3_xml_parse_error(x, strlen(x), &e, &why), HIPOBJ_E_PROTOCOL);
  cr_expect_str_eq(why.message, "missing <Code>");
}

/* ------------------------------------------------------------------------ */
/* Initiate                                                                 */
/* ------------------------------------------------------------------------ */

static void expect_upload_id(const char *fixture, const char *want) {
  size_t len;
  char *x = load(fixture, &len);
  char *id = NULL;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_initiate(x, len, &id, &why), 0, "%s: %s", fixture,
               why.message);
  cr_expect_str_eq(id, want);
  free(id);
  free(x);
}

Test(xml_initiate, namespaced) {
  expect_upload_id(
      "initiate.xml",
      "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA");
}

Test(xml_initiate, no_namespace) {
  expect_upload_id("initiate_nons.xml", "2~abc.def_XYZ");
}

Test(xml_initiate, namespace_prefix) {
  expect_upload_id("initiate_prefixed.xml", "prefixed-id");
}

/* ------------------------------------------------------------------------ */
/* Complete                                                                 */
/* ------------------------------------------------------------------------ */

Test(xml_complete, success_keeps_quotes) {
  size_t len;
  char *x = load("complete.xml", &len);
  int is_error = -1;
  struct s3_xml_error e;
  char etag[128];
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_complete(x, len, &is_error, &e, etag, &why), 0,
               "%s", why.message);
  cr_expect_eq(is_error, 0);
  cr_expect_str_eq(etag, "\"3858f62230ac3c915f300c664312c11f-9\"");
  free(x);
}

Test(xml_complete, ok_200_carrying_error) {
  /* The body starts with S3's keep-alive whitespace, then the declaration. */
  size_t len;
  char *x = load("complete_200_error.xml", &len);
  cr_assert(x[0] == '\n', "fixture must start with whitespace");
  int is_error = 0;
  struct s3_xml_error e;
  char etag[128] = "stale";
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_complete(x, len, &is_error, &e, etag, &why), 0,
               "%s", why.message);
  cr_expect_eq(is_error, 1);
  cr_expect_str_eq(e.code, "InternalError");
  cr_expect_str_eq(e.message,
                   "We encountered an internal error. Please try again.");
  cr_expect_str_eq(e.request_id, "656c76696e6727732072657175657374");
  cr_expect_str_eq(etag, "");
  free(x);
}

Test(xml_complete, missing_etag) {
  const char *x = "<CompleteMultipartUploadResult><Bucket>b</Bucket>"
                  "</CompleteMultipartUploadResult>";
  int is_error;
  char etag[128];
  struct hipobj_error why = {0};
  cr_expect_eq(s3_xml_parse_complete(x, strlen(x), &is_error, NULL, etag, &why),
               HIPOBJ_E_PROTOCOL);
  cr_expect_str_eq(why.message, "missing <ETag>");
}

/* ------------------------------------------------------------------------ */
/* ListParts                                                                */
/* ------------------------------------------------------------------------ */

Test(xml_list_parts, truncated_with_marker) {
  size_t len;
  char *x = load("list_parts.xml", &len);
  struct s3_list_parts lp;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_list_parts(x, len, &lp, &why), 0, "%s",
               why.message);
  cr_assert_eq(lp.n, 2);
  cr_expect_eq(lp.is_truncated, 1);
  cr_expect_eq(lp.next_marker, 3);
  cr_expect_eq(lp.parts[0].number, 2);
  cr_expect_eq(lp.parts[0].size, 10485760);
  cr_expect_str_eq(lp.parts[0].etag, "\"7778aef83f66abc1fa1e8477f296d394\"");
  cr_expect_eq(lp.parts[0].mtime, 1289422114);
  cr_expect_eq(lp.parts[1].number, 3);
  /* &quot; in the document is a plain quote in the value. */
  cr_expect_str_eq(lp.parts[1].etag, "\"aaaa18db4cc2f85cedef654fccc4a4x8\"");
  cr_expect_eq(lp.parts[1].mtime, 1289422113);
  s3_xml_list_parts_free(&lp);
  cr_expect_null(lp.parts);
  free(x);
}

Test(xml_list_parts, empty_not_truncated) {
  const char *x = "<ListPartsResult><IsTruncated>false</IsTruncated>"
                  "</ListPartsResult>";
  struct s3_list_parts lp;
  cr_assert_eq(s3_xml_parse_list_parts(x, strlen(x), &lp, NULL), 0);
  cr_expect_eq(lp.n, 0);
  cr_expect_eq(lp.is_truncated, 0);
  s3_xml_list_parts_free(&lp);
}

/* <ChecksumCRC32C> of a part fills crc32c; a part without it has "". */
Test(xml_list_parts, part_checksums) {
  const char *x =
      "<ListPartsResult><IsTruncated>false</IsTruncated>"
      "<Part><PartNumber>1</PartNumber><ETag>\"a\"</ETag><Size>5</Size>"
      "<ChecksumCRC32C> 4waSgw== </ChecksumCRC32C></Part>"
      "<Part><PartNumber>2</PartNumber><ETag>\"b\"</ETag><Size>1</Size>"
      "</Part></ListPartsResult>";
  struct s3_list_parts lp;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_list_parts(x, strlen(x), &lp, &why), 0, "%s",
               why.message);
  cr_assert_eq(lp.n, 2);
  cr_expect_str_eq(lp.parts[0].crc32c, "4waSgw==");
  cr_expect_str_eq(lp.parts[1].crc32c, "");
  s3_xml_list_parts_free(&lp);
}

static void expect_list_parts_error(const char *x, const char *want_why) {
  struct s3_list_parts lp;
  struct hipobj_error why = {0};
  cr_expect_eq(s3_xml_parse_list_parts(x, strlen(x), &lp, &why),
               HIPOBJ_E_PROTOCOL, "%s", x);
  cr_expect_str_eq(why.message, want_why);
  cr_expect_null(lp.parts);
  cr_expect_eq(lp.n, 0);
}

Test(xml_list_parts, invalid_content) {
  expect_list_parts_error("<ListPartsResult><IsTruncated>true</IsTruncated>"
                          "</ListPartsResult>",
                          "missing <NextPartNumberMarker> in a truncated "
                          "listing");
  expect_list_parts_error("<ListPartsResult><Part><PartNumber>1</PartNumber>"
                          "<Size>5</Size></Part></ListPartsResult>",
                          "missing <ETag>");
  expect_list_parts_error(
      "<ListPartsResult><Part><PartNumber>0</PartNumber><ETag>e</ETag>"
      "<Size>5</Size></Part></ListPartsResult>",
      "bad <PartNumber>: 0 is outside 1..10000");
  expect_list_parts_error(
      "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>e</ETag>"
      "<Size>-5</Size></Part></ListPartsResult>",
      "bad <Size>: \"-5\" is not a number");
  expect_list_parts_error("<ListPartsResult><IsTruncated>maybe</IsTruncated>"
                          "</ListPartsResult>",
                          "bad <IsTruncated>: \"maybe\" is not true or false");
  expect_list_parts_error(
      "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>e</ETag>"
      "<Size>5</Size><LastModified>yesterday</LastModified></Part>"
      "</ListPartsResult>",
      "bad <LastModified>: \"yesterday\" is not an ISO 8601 time");
  expect_list_parts_error(
      "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>e</ETag>"
      "<Size>5</Size><ChecksumCRC32C>4waSgw</ChecksumCRC32C></Part>"
      "</ListPartsResult>",
      "bad <ChecksumCRC32C>: not the base64 of 4 bytes");
  expect_list_parts_error(
      "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>e</ETag>"
      "<Size>5</Size><ChecksumCRC32C>4waSgw==4waSgw==</ChecksumCRC32C>"
      "</Part></ListPartsResult>",
      "bad <ChecksumCRC32C>: value too long");
}

/* ------------------------------------------------------------------------ */
/* ListObjectsV2                                                            */
/* ------------------------------------------------------------------------ */

Test(xml_list_objects, url_encoded_truncated) {
  size_t len;
  char *x = load("list_v2_encoded.xml", &len);
  struct s3_list_objects lo;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_list_objects(x, len, &lo, &why), 0, "%s",
               why.message);
  cr_assert_eq(lo.n_objects, 2);
  /* EncodingType=url: '+' is a space, %2B a plus, UTF-8 as %XX. */
  cr_expect_str_eq(lo.objects[0].key, "photos/sample 1.jpg");
  cr_expect_eq(lo.objects[0].size, 142863);
  cr_expect_str_eq(lo.objects[0].etag, "\"599bab3ed2c697f1d26842727561fd94\"");
  cr_expect_eq(lo.objects[0].mtime, 1682935200);
  cr_expect_str_eq(lo.objects[1].key, "photos/a+b\xc3\xbc&<>.txt");
  cr_expect_eq(lo.objects[1].size, 0);
  cr_expect_eq(lo.objects[1].mtime, 1255369830);
  cr_assert_eq(lo.n_prefixes, 2);
  cr_expect_str_eq(lo.prefixes[0], "photos/2006/");
  cr_expect_str_eq(lo.prefixes[1], "photos/my album/");
  cr_expect_eq(lo.is_truncated, 1);
  cr_assert_not_null(lo.next_token);
  /* The token is opaque: not decoded even with EncodingType=url. */
  cr_expect_str_eq(lo.next_token,
                   "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
  s3_xml_list_objects_free(&lo);
  cr_expect_null(lo.objects);
  cr_expect_null(lo.next_token);
  free(x);
}

Test(xml_list_objects, plain_no_namespace) {
  size_t len;
  char *x = load("list_v2_plain.xml", &len);
  struct s3_list_objects lo;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_list_objects(x, len, &lo, &why), 0, "%s",
               why.message);
  cr_assert_eq(lo.n_objects, 2);
  /* Not url-encoded: '+' stays, &amp; is '&'. */
  cr_expect_str_eq(lo.objects[0].key, "a+b c&d");
  cr_expect_eq(lo.objects[0].size, UINT64_MAX);
  cr_expect_str_eq(lo.objects[0].etag, "\"828ef3fdfa96f00ad9f27c383fc9ac7f\"");
  cr_expect_str_eq(lo.objects[1].key, "dir/");
  cr_expect_eq(lo.objects[1].mtime, 1255369830);
  cr_expect_eq(lo.n_prefixes, 0);
  cr_expect_eq(lo.is_truncated, 0);
  cr_expect_null(lo.next_token);
  s3_xml_list_objects_free(&lo);
  free(x);
}

static void expect_list_objects_error(const char *x, const char *want_why) {
  struct s3_list_objects lo;
  struct hipobj_error why = {0};
  cr_expect_eq(s3_xml_parse_list_objects(x, strlen(x), &lo, &why),
               HIPOBJ_E_PROTOCOL, "%s", x);
  cr_expect_str_eq(why.message, want_why);
  cr_expect_null(lo.objects);
  cr_expect_null(lo.prefixes);
  cr_expect_null(lo.next_token);
}

Test(xml_list_objects, invalid_content) {
  expect_list_objects_error(
      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
      "missing <NextContinuationToken> in a truncated listing");
  expect_list_objects_error("<ListBucketResult><Contents><Size>1</Size>"
                            "</Contents></ListBucketResult>",
                            "missing <Key>");
  expect_list_objects_error(
      "<ListBucketResult><EncodingType>url</EncodingType><Contents>"
      "<Key>a%zz</Key><Size>1</Size></Contents></ListBucketResult>",
      "bad url-encoded <Key> \"a%zz\"");
  expect_list_objects_error(
      "<ListBucketResult><EncodingType>base64</EncodingType>"
      "</ListBucketResult>",
      "unsupported <EncodingType> \"base64\"");
  expect_list_objects_error(
      "<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents>"
      "<Contents><Key>b</Key><Size>99999999999999999999</Size></Contents>"
      "</ListBucketResult>",
      "bad <Size>: \"99999999999999999999\" is not a number");
}

/* ------------------------------------------------------------------------ */
/* Malformed and hostile documents                                          */
/* ------------------------------------------------------------------------ */

static void expect_initiate_error(const char *x, size_t len,
                                  const char *want_prefix) {
  char *id = (char *)"untouched";
  struct hipobj_error why = {0};
  cr_expect_eq(s3_xml_parse_initiate(x, len, &id, &why), HIPOBJ_E_PROTOCOL);
  cr_expect_null(id);
  cr_expect(strncmp(why.message, want_prefix, strlen(want_prefix)) == 0,
            "why = \"%s\", expected it to start with \"%s\"", why.message,
            want_prefix);
  cr_expect_null(strchr(why.message, '\n'), "why must be one line");
}

Test(xml_malformed, truncated_document) {
  size_t len;
  char *x = load("initiate.xml", &len);
  struct quiet q;
  quiet_begin(&q);
  /* Cut inside the UploadId element (line 5). */
  const char *cut = strstr(x, "<UploadId>") + 15;
  expect_initiate_error(x, (size_t)(cut - x), "malformed XML at line 5: ");
  expect_initiate_error(x, 10, "malformed XML at line 1: ");
  cr_expect_eq(quiet_end(&q), 0, "libxml2 wrote to stderr");
  free(x);
}

Test(xml_malformed, not_xml_and_empty) {
  struct quiet q;
  quiet_begin(&q);
  expect_initiate_error("HTTP/1.1 200 OK", 15, "malformed XML at line 1: ");
  expect_initiate_error("<a><b></a>", 10, "malformed XML at line 1: ");
  expect_initiate_error("", 0, "malformed XML: empty document");
  expect_initiate_error(" \r\n\t", 4, "malformed XML: empty document");
  expect_initiate_error(NULL, 3, "malformed XML");
  expect_initiate_error("<x>&undefined;</x>", 18, "malformed XML at line 1: ");
  cr_expect_eq(quiet_end(&q), 0, "libxml2 wrote to stderr");
}

Test(xml_malformed, wrong_root) {
  size_t len;
  char *x = load("complete.xml", &len);
  expect_initiate_error(
      x, len,
      "unexpected root element <CompleteMultipartUploadResult>, expected "
      "<InitiateMultipartUploadResult>");
  free(x);
  struct s3_xml_error e;
  struct hipobj_error why = {0};
  const char *y = "<NotAnError><Code>x</Code></NotAnError>";
  cr_expect_eq(s3_xml_parse_error(y, strlen(y), &e, &why), HIPOBJ_E_PROTOCOL);
  cr_expect_str_eq(why.message,
                   "unexpected root element <NotAnError>, expected <Error>");
}

/* The status says whose fault it is; the message is the bare reason (the
 * caller names the operation), and err may be NULL. */
Test(xml_malformed, statuses) {
  struct hipobj_error why = {0};
  const char *x = "<Error><Message>m</Message></Error>";
  struct s3_xml_error e;
  cr_expect_eq(s3_xml_parse_error(x, strlen(x), &e, NULL), HIPOBJ_E_PROTOCOL);
  cr_expect_eq(s3_xml_parse_error(x, strlen(x), NULL, &why),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_expect_str_eq(why.message, "no output for the error document");
  cr_expect_str_eq(why.operation, "");
  cr_expect_eq(s3_xml_parse_list_parts(x, strlen(x), NULL, NULL),
               HIPOBJ_E_INVALID_ARGUMENT);
}

Test(xml_malformed, missing_required_element) {
  const char *x = "<InitiateMultipartUploadResult><Bucket>b</Bucket>"
                  "</InitiateMultipartUploadResult>";
  expect_initiate_error(x, strlen(x), "missing <UploadId>");
  const char *y = "<InitiateMultipartUploadResult><UploadId></UploadId>"
                  "</InitiateMultipartUploadResult>";
  expect_initiate_error(y, strlen(y), "empty <UploadId>");
}

Test(xml_malformed, doctype_and_entities_refused) {
  struct quiet q;
  quiet_begin(&q);
  /* External entity (XXE): must be neither fetched nor substituted. The
   * target does not exist, so an attempt to load it would have surfaced
   * as an I/O error instead of the DOCTYPE refusal. */
  const char *xxe =
      "<?xml version=\"1.0\"?>\n"
      "<!DOCTYPE r [<!ENTITY e SYSTEM \"file:///nonexistent/hipobj-xxe\">]>\n"
      "<InitiateMultipartUploadResult><UploadId>&e;</UploadId>"
      "</InitiateMultipartUploadResult>";
  expect_initiate_error(xxe, strlen(xxe),
                        "malformed XML: DOCTYPE not allowed in S3 documents");
  /* Entity expansion ("billion laughs"). */
  const char *lol = "<!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\">"
                    "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
                    "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">"
                    "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">]>"
                    "<InitiateMultipartUploadResult><UploadId>&d;</UploadId>"
                    "</InitiateMultipartUploadResult>";
  expect_initiate_error(lol, strlen(lol), "malformed XML");
  /* A harmless-looking DOCTYPE is refused too: S3 never sends one. */
  const char *dt = "<!DOCTYPE InitiateMultipartUploadResult>"
                   "<InitiateMultipartUploadResult><UploadId>u</UploadId>"
                   "</InitiateMultipartUploadResult>";
  expect_initiate_error(dt, strlen(dt),
                        "malformed XML: DOCTYPE not allowed in S3 documents");
  cr_expect_eq(quiet_end(&q), 0, "libxml2 wrote to stderr");
}

static int handler_calls;
static void my_handler(void *ctx, xmlErrorPtr e) {
  (void)ctx;
  (void)e;
  handler_calls++;
}

Test(xml_malformed, caller_error_handler_restored_and_untouched) {
  int marker;
  xmlSetStructuredErrorFunc(&marker, my_handler);
  const char *x = "<InitiateMultipartUploadResult><UploadId>";
  expect_initiate_error(x, strlen(x), "malformed XML at line 1: ");
  cr_expect_eq(handler_calls, 0);
  cr_expect(xmlStructuredError == my_handler);
  cr_expect(xmlStructuredErrorContext == &marker);
  xmlSetStructuredErrorFunc(NULL, NULL);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */
/* ------------------------------------------------------------------------ */

struct thread_arg {
  const char *good;
  size_t good_len;
  int failures;
};

static void *parse_many(void *p) {
  struct thread_arg *a = p;
  for (int i = 0; i < 300; i++) {
    struct s3_list_parts lp;
    struct hipobj_error why = {0};
    if (s3_xml_parse_list_parts(a->good, a->good_len, &lp, &why) != 0 ||
        lp.n != 2 || lp.next_marker != 3)
      a->failures++;
    s3_xml_list_parts_free(&lp);
    hipobj_error_clear(&why);
    /* Malformed in the middle: each thread must see its own error. */
    if (s3_xml_parse_list_parts(a->good, a->good_len / 2, &lp, &why) !=
            HIPOBJ_E_PROTOCOL ||
        strncmp(why.message, "malformed XML at line ", 22) != 0)
      a->failures++;
  }
  return NULL;
}

Test(xml_threads, concurrent_parses) {
  size_t len;
  char *x = load("list_parts.xml", &len);
  enum { N = 8 };
  pthread_t th[N];
  struct thread_arg args[N];
  struct quiet q;
  quiet_begin(&q);
  for (int i = 0; i < N; i++) {
    args[i] = (struct thread_arg){x, len, 0};
    cr_assert_eq(pthread_create(&th[i], NULL, parse_many, &args[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    cr_expect_eq(args[i].failures, 0, "thread %d", i);
  }
  cr_expect_eq(quiet_end(&q), 0, "libxml2 wrote to stderr");
  free(x);
}

/* ------------------------------------------------------------------------ */
/* Timestamps                                                               */
/* ------------------------------------------------------------------------ */

Test(xml_time, iso8601_valid) {
  struct {
    const char *s;
    int64_t want;
  } v[] = {{"2009-10-12T17:50:30.000Z", 1255369830},
           {"2009-10-12T17:50:30Z", 1255369830},
           {"2009-10-12T17:50:30.123456z", 1255369830},
           {"2009-10-12T19:50:30+02:00", 1255369830},
           {"2009-10-12T12:50:30-0500", 1255369830},
           {"1970-01-01T00:00:00Z", 0},
           {"1969-12-31T23:59:59Z", -1},
           {"2024-02-29T12:00:00.000Z", 1709208000}};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    int64_t t = 42;
    cr_expect_eq(s3_parse_iso8601(v[i].s, &t), 0, "%s", v[i].s);
    cr_expect_eq(t, v[i].want, "%s -> %lld", v[i].s, (long long)t);
  }
}

Test(xml_time, iso8601_invalid) {
  const char *bad[] = {"",
                       "2009-10-12",
                       "2009-10-12T17:50:30",
                       "2009-10-12 17:50:30Z",
                       "2009-10-12T17:50:30.Z",
                       "2009-10-12T17:50:30Zjunk",
                       "2009-13-01T00:00:00Z",
                       "2023-02-29T00:00:00Z",
                       "2009-10-32T00:00:00Z",
                       "2009-10-12T24:00:00Z",
                       "2009-10-12T17:60:00Z",
                       "2009-10-12T17:50:30+2:00",
                       "09-10-12T17:50:30Z"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t t = 42;
    cr_expect_eq(s3_parse_iso8601(bad[i], &t), -1, "\"%s\"", bad[i]);
    cr_expect_eq(t, 42, "output written for \"%s\"", bad[i]);
  }
  int64_t t;
  cr_expect_eq(s3_parse_iso8601(NULL, &t), -1);
}

Test(xml_time, http_date_three_forms) {
  struct {
    const char *s;
    int64_t want;
  } v[] = {{"Wed, 12 Oct 2009 17:50:00 GMT", 1255369800},
           {"Sun, 06 Nov 1994 08:49:37 GMT", 784111777},
           {"Sunday, 06-Nov-94 08:49:37 GMT", 784111777},
           {"Sun Nov  6 08:49:37 1994", 784111777},
           {"Fri, 24 May 2013 00:00:00 GMT", 1369353600}};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    int64_t t = 42;
    cr_expect_eq(s3_parse_http_date(v[i].s, &t), 0, "%s", v[i].s);
    cr_expect_eq(t, v[i].want, "%s -> %lld", v[i].s, (long long)t);
  }
}

Test(xml_time, http_date_invalid) {
  const char *bad[] = {"",
                       "Sun, 06 Nov 1994 08:49:37 UTC",
                       "Sun, 06 Nov 1994 08:49:37",
                       "Sun, 31 Feb 1994 08:49:37 GMT",
                       "Xyz, 06 Nov 1994 08:49:37 GMT",
                       "Sun, 06 Foo 1994 08:49:37 GMT",
                       "Sun, 06 Nov 1994 25:49:37 GMT",
                       "Sun Nov 6 08:49:37 1994",
                       "2009-10-12T17:50:30Z"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t t = 42;
    cr_expect_eq(s3_parse_http_date(bad[i], &t), -1, "\"%s\"", bad[i]);
    cr_expect_eq(t, 42);
  }
}

/* Ceph RGW (Pacific) completes an upload and answers with <ETag></ETag>:
 * that is a success with an unknown ETag, not an error. */
Test(xml_complete, empty_etag_from_ceph_is_success) {
  const char *x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                  "<CompleteMultipartUploadResult xmlns=\"http://s3."
                  "amazonaws.com/doc/2006-03-01/\"><Location>h/b/k</Location>"
                  "<Bucket>b</Bucket><Key>k</Key><ETag></ETag>"
                  "</CompleteMultipartUploadResult>";
  int is_error = -1;
  char etag[128] = "junk";
  struct s3_xml_error e;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_complete(x, strlen(x), &is_error, &e, etag, &why),
               0, "%s", why.message);
  cr_assert_eq(is_error, 0);
  cr_assert_str_eq(etag, "");
}
