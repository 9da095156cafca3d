/* test_xml_lists.c - the parsers of s3/xml_lists.c: ListBuckets
 * (ListAllMyBucketsResult, AWS's paged form with ContinuationToken),
 * ListMultipartUploads (EncodingType=url, truncation markers) and the
 * answers of CopyObject / UploadPartCopy, including S3's <Error> inside a
 * 200. Documents are modelled on the examples in AWS's S3 API reference.
 * Expected Unix times were computed with GNU date, e.g.
 * `date -u -d 2019-10-12T17:50:30Z +%s`. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "s3/xml.h"
#include "src/base/error.h"

#define NS "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\""

/* ---- ListBuckets --------------------------------------------------------- */

Test(xml_list_buckets, two_buckets_with_owner) {
  static const char x[] =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<ListAllMyBucketsResult " NS ">"
      "<Owner><ID>abc</ID><DisplayName>me</DisplayName></Owner>"
      "<Buckets>"
      "<Bucket><Name>alpha</Name>"
      "<CreationDate>2019-10-12T17:50:30.000Z</CreationDate></Bucket>"
      "<Bucket><Name>beta.data</Name></Bucket>"
      "</Buckets></ListAllMyBucketsResult>";
  struct s3_list_buckets lb;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_list_buckets(x, strlen(x), &lb, &why), HIPOBJ_OK,
               "%s", why.message);
  cr_assert_eq(lb.n, 2);
  cr_expect_str_eq(lb.buckets[0].name, "alpha");
  cr_expect_eq(lb.buckets[0].ctime, 1570902630);
  cr_expect_str_eq(lb.buckets[1].name, "beta.data");
  cr_expect_eq(lb.buckets[1].ctime, 0, "no CreationDate: 0");
  cr_expect_null(lb.next_token);
  s3_xml_list_buckets_free(&lb);
  cr_expect_null(lb.buckets);
}

Test(xml_list_buckets, empty_and_paged) {
  static const char empty[] =
      "<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>";
  struct s3_list_buckets lb;
  cr_assert_eq(s3_xml_parse_list_buckets(empty, strlen(empty), &lb, NULL),
               HIPOBJ_OK);
  cr_expect_eq(lb.n, 0);
  s3_xml_list_buckets_free(&lb);

  static const char paged[] =
      "<ListAllMyBucketsResult><Buckets><Bucket><Name>a</Name></Bucket>"
      "</Buckets><ContinuationToken>tok/+=</ContinuationToken>"
      "</ListAllMyBucketsResult>";
  cr_assert_eq(s3_xml_parse_list_buckets(paged, strlen(paged), &lb, NULL),
               HIPOBJ_OK);
  cr_expect_eq(lb.n, 1);
  cr_assert_not_null(lb.next_token);
  cr_expect_str_eq(lb.next_token, "tok/+=", "the token is opaque");
  s3_xml_list_buckets_free(&lb);
}

static void expect_buckets_error(const char *x, const char *part) {
  struct s3_list_buckets lb;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_list_buckets(x, strlen(x), &lb, &why),
               HIPOBJ_E_PROTOCOL, "accepted: %s", x);
  cr_expect(strstr(why.message, part), "'%s' lacks '%s'", why.message, part);
  cr_expect_eq(lb.n, 0);
  cr_expect_null(lb.buckets);
}

Test(xml_list_buckets, invalid) {
  expect_buckets_error("<ListBucketResult/>", "unexpected root element");
  expect_buckets_error("<ListAllMyBucketsResult><Buckets><Bucket>"
                       "<CreationDate>2019-10-12T17:50:30Z</CreationDate>"
                       "</Bucket></Buckets></ListAllMyBucketsResult>",
                       "missing <Name>");
  expect_buckets_error("<ListAllMyBucketsResult><Buckets><Bucket><Name></Name>"
                       "</Bucket></Buckets></ListAllMyBucketsResult>",
                       "empty <Name>");
  expect_buckets_error("<ListAllMyBucketsResult><Buckets><Bucket><Name>a</Name>"
                       "<CreationDate>yesterday</CreationDate></Bucket>"
                       "</Buckets></ListAllMyBucketsResult>",
                       "bad <CreationDate>");
  expect_buckets_error("<ListAllMyBucketsResult><Buckets>", "malformed XML");
  expect_buckets_error("", "empty document");
}

/* ---- ListMultipartUploads ------------------------------------------------ */

Test(xml_list_uploads, url_encoded_truncated) {
  static const char x[] =
      "<ListMultipartUploadsResult " NS ">"
      "<Bucket>bucket</Bucket><KeyMarker></KeyMarker>"
      "<UploadIdMarker></UploadIdMarker>"
      "<NextKeyMarker>my+movie%2B.m2ts</NextKeyMarker>"
      "<NextUploadIdMarker>YW55IGlkZWEgd2h5</NextUploadIdMarker>"
      "<EncodingType>url</EncodingType><MaxUploads>2</MaxUploads>"
      "<IsTruncated>true</IsTruncated>"
      "<Upload><Key>my+divisor</Key><UploadId>XMgbGlrZSBlbHZpbmcncyBub3Q</"
      "UploadId><Initiator><ID>x</ID></Initiator>"
      "<Initiated>2010-11-10T20:48:33.000Z</Initiated></Upload>"
      "<Upload><Key>my+movie%2B.m2ts</Key><UploadId>YW55IGlkZWEgd2h5</UploadId>"
      "<Initiated>2010-11-10T20:48:33.000Z</Initiated></Upload>"
      "</ListMultipartUploadsResult>";
  struct s3_list_uploads lu;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_list_uploads(x, strlen(x), &lu, &why), HIPOBJ_OK,
               "%s", why.message);
  cr_assert_eq(lu.n, 2);
  cr_expect_str_eq(lu.uploads[0].key, "my divisor");
  cr_expect_str_eq(lu.uploads[0].upload_id, "XMgbGlrZSBlbHZpbmcncyBub3Q");
  cr_expect_eq(lu.uploads[0].initiated, 1289422113);
  cr_expect_str_eq(lu.uploads[1].key, "my movie+.m2ts");
  cr_expect(lu.is_truncated);
  cr_expect_str_eq(lu.next_key_marker, "my movie+.m2ts");
  /* The upload id is never URL-encoded. */
  cr_expect_str_eq(lu.next_upload_id_marker, "YW55IGlkZWEgd2h5");
  s3_xml_list_uploads_free(&lu);
}

Test(xml_list_uploads, plain_last_page) {
  static const char x[] =
      "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
      "<Upload><Key>a+b</Key><UploadId>id1</UploadId></Upload>"
      "</ListMultipartUploadsResult>";
  struct s3_list_uploads lu;
  cr_assert_eq(s3_xml_parse_list_uploads(x, strlen(x), &lu, NULL), HIPOBJ_OK);
  cr_assert_eq(lu.n, 1);
  cr_expect_str_eq(lu.uploads[0].key, "a+b", "not decoded without url");
  cr_expect_eq(lu.uploads[0].initiated, 0);
  cr_expect_not(lu.is_truncated);
  s3_xml_list_uploads_free(&lu);
}

static void expect_uploads_error(const char *x, const char *part) {
  struct s3_list_uploads lu;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_xml_parse_list_uploads(x, strlen(x), &lu, &why),
               HIPOBJ_E_PROTOCOL, "accepted: %s", x);
  cr_expect(strstr(why.message, part), "'%s' lacks '%s'", why.message, part);
  cr_expect_eq(lu.n, 0);
}

Test(xml_list_uploads, invalid) {
  expect_uploads_error("<ListMultipartUploadsResult><IsTruncated>true"
                       "</IsTruncated></ListMultipartUploadsResult>",
                       "missing <NextKeyMarker>");
  expect_uploads_error("<ListMultipartUploadsResult><Upload><Key>k</Key>"
                       "</Upload></ListMultipartUploadsResult>",
                       "missing <UploadId>");
  expect_uploads_error("<ListMultipartUploadsResult><Upload><Key>k</Key>"
                       "<UploadId></UploadId></Upload>"
                       "</ListMultipartUploadsResult>",
                       "empty <UploadId>");
  expect_uploads_error("<ListMultipartUploadsResult><EncodingType>url"
                       "</EncodingType><Upload><Key>a%00b</Key>"
                       "<UploadId>i</UploadId></Upload>"
                       "</ListMultipartUploadsResult>",
                       "bad URL encoding");
  expect_uploads_error("<ListAllMyBucketsResult/>", "unexpected root element");
}

/* ---- CopyObject / UploadPartCopy ------------------------------------------
 */

Test(xml_copy, results) {
  static const char obj[] =
      "<CopyObjectResult " NS "><LastModified>2009-10-28T22:32:00Z"
      "</LastModified><ETag>\"9b2cf535f27731c974343645a3985328\"</ETag>"
      "</CopyObjectResult>";
  static const char part[] =
      "<CopyPartResult><LastModified>2009-10-28T22:32:00Z</LastModified>"
      "<ETag>\"b2cf535f27731c974343645a3985328\"</ETag></CopyPartResult>";
  char etag[128];
  int is_error = 1;
  struct s3_xml_error xe;
  cr_assert_eq(
      s3_xml_parse_copy_result(obj, strlen(obj), &is_error, &xe, etag, NULL),
      HIPOBJ_OK);
  cr_expect_not(is_error);
  cr_expect_str_eq(etag, "\"9b2cf535f27731c974343645a3985328\"");
  cr_assert_eq(
      s3_xml_parse_copy_result(part, strlen(part), &is_error, NULL, etag, NULL),
      HIPOBJ_OK);
  cr_expect_str_eq(etag, "\"b2cf535f27731c974343645a3985328\"");
  /* Ceph RGW's, without quotes: quoted like every other ETag. */
  static const char rgw[] = "<CopyObjectResult><ETag>5d41402abc4b2a76b9719d9"
                            "11017c592</ETag></CopyObjectResult>";
  cr_assert_eq(
      s3_xml_parse_copy_result(rgw, strlen(rgw), &is_error, NULL, etag, NULL),
      HIPOBJ_OK);
  cr_expect_str_eq(etag, "\"5d41402abc4b2a76b9719d911017c592\"");
}

Test(xml_copy, error_inside_200) {
  static const char x[] = "<Error><Code>InternalError</Code><Message>We "
                          "encountered an internal error.</Message>"
                          "<RequestId>656c76696e6727732072657175657374"
                          "</RequestId></Error>";
  char etag[128] = "x";
  int is_error = 0;
  struct s3_xml_error xe;
  cr_assert_eq(
      s3_xml_parse_copy_result(x, strlen(x), &is_error, &xe, etag, NULL),
      HIPOBJ_OK);
  cr_expect(is_error);
  cr_expect_str_eq(xe.code, "InternalError");
  cr_expect_str_eq(xe.message, "We encountered an internal error.");
  cr_expect_str_eq(xe.request_id, "656c76696e6727732072657175657374");
  cr_expect_str_eq(etag, "");
}

Test(xml_copy, invalid) {
  static const char *const bad[][2] = {
      {"<CopyObjectResult><LastModified>2009-10-28T22:32:00Z</LastModified>"
       "</CopyObjectResult>",
       "missing <ETag>"},
      {"<CopyObjectResult><ETag>\"a\nb\"</ETag></CopyObjectResult>",
       "bad <ETag>"},
      {"<Error><Message>m</Message></Error>", "empty <Code>"},
      {"<PutObjectResult/>", "unexpected root element"},
      /* A copy answered 200 and then cut off. */
      {"<CopyObjectResult><ETag>\"a\"</ETag>", "malformed XML"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char etag[128];
    int is_error;
    struct s3_xml_error xe;
    struct hipobj_error why = {0};
    cr_expect_eq(s3_xml_parse_copy_result(bad[i][0], strlen(bad[i][0]),
                                          &is_error, &xe, etag, &why),
                 HIPOBJ_E_PROTOCOL, "accepted: %s", bad[i][0]);
    cr_expect(strstr(why.message, bad[i][1]), "'%s' lacks '%s'", why.message,
              bad[i][1]);
  }
}
