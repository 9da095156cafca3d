/* test_request.c - endpoint parsing, addressing, URL building and the signed
 * header set produced by s3/request.c, including AWS's published GET-object
 * example reproduced through the whole request builder. */
#include <criterion/criterion.h>
#include <string.h>

#include "s3/crypto.h"
#include "s3/request.h"
#include "src/base/error.h"

/* 2013-05-24T00:00:00Z, the date of AWS's S3 SigV4 examples. */
#define AWS_EXAMPLE_TIME ((time_t)1369353600)

static const char *line(const struct s3_signed *s, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i < s->n_lines; i++)
    if (!strncasecmp(s->lines[i], name, n) && s->lines[i][n] == ':')
      return s->lines[i] + n + 2;
  return NULL;
}

Test(endpoint, parses_scheme_host_port_and_path) {
  struct s3_endpoint ep;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_endpoint_parse("http://127.0.0.1:7480/", 0, &ep, &why), 0);
  cr_assert_str_eq(ep.scheme, "http");
  cr_assert_str_eq(ep.host, "127.0.0.1:7480");
  cr_assert_str_eq(ep.base_path, "");
  cr_assert_eq(ep.virtual_hosted, 0, "custom endpoints default to path style");
  s3_endpoint_free(&ep);
  cr_assert_eq(s3_endpoint_parse("HTTPS://s3.eu-west-1.amazonaws.com/base//", 0,
                                 &ep, &why),
               0);
  cr_assert_str_eq(ep.scheme, "https");
  cr_assert_str_eq(ep.base_path, "/base");
  cr_assert_eq(ep.virtual_hosted, 1, "AWS defaults to virtual-hosted");
  s3_endpoint_free(&ep);
  cr_assert_eq(s3_endpoint_parse("https://s3.amazonaws.com", 1, &ep, &why), 0);
  cr_assert_eq(ep.virtual_hosted, 0, "explicit path style wins");
  s3_endpoint_free(&ep);
}

Test(endpoint, rejects_bad_urls_with_a_reason) {
  const char *bad[] = {"",        "ftp://x",           "127.0.0.1:9000",
                       "http://", "http://user@host/", "http://h/?q=1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct s3_endpoint ep;
    struct hipobj_error why = {0};
    cr_assert_eq(s3_endpoint_parse(bad[i], 0, &ep, &why), HIPOBJ_E_CONFIG, "%s",
                 bad[i]);
    cr_assert_gt(strlen(why.message), 0);
    cr_assert_str_eq(why.operation, "", "the caller names the operation");
  }
}

static void sign(const char *endpoint, int addressing, struct s3_request *r,
                 const struct s3_creds *c, struct s3_signed *out) {
  struct s3_endpoint ep;
  struct hipobj_error why = {0};
  cr_assert_eq(s3_endpoint_parse(endpoint, addressing, &ep, &why), 0);
  cr_assert_eq(
      s3_request_sign(r, &ep, c, "us-east-1", AWS_EXAMPLE_TIME, out, &why), 0,
      "%s", why.message);
  s3_endpoint_free(&ep);
}

Test(request, aws_get_object_example_end_to_end) {
  struct s3_request r = {
      .method = "GET", .bucket = "examplebucket", .key = "test.txt"};
  s3_request_header(&r, "Range", "bytes=0-9");
  r.payload_hash = S3_EMPTY_SHA256;
  struct s3_creds c = {"AKIAIOSFODNN7EXAMPLE",
                       "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", NULL, 0};
  struct s3_signed s;
  sign("https://s3.amazonaws.com", 0, &r, &c, &s);
  cr_assert_str_eq(s.url, "https://examplebucket.s3.amazonaws.com/test.txt");
  cr_assert_str_eq(line(&s, "host"), "examplebucket.s3.amazonaws.com");
  cr_assert_str_eq(line(&s, "x-amz-date"), "20130524T000000Z");
  const char *auth = line(&s, "Authorization");
  cr_assert_not_null(auth);
  cr_assert(strstr(auth, "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/"
                         "s3/aws4_request"));
  cr_assert(strstr(auth, "SignedHeaders=host;range;x-amz-content-sha256;"
                         "x-amz-date"));
  cr_assert(strstr(auth, "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f01"
                         "70aba48dd91039c6036bdb41"),
            "%s", auth);
  cr_assert_null(strstr(auth, c.secret_key));
  s3_signed_free(&s);
}

Test(request, path_style_keys_are_encoded_once_and_not_normalised) {
  struct s3_request r = {
      .method = "GET", .bucket = "bkt", .key = "dir/a b+c%~=&\xc3\xbc/../x//y"};
  struct s3_creds c = {"AK", "SK", NULL, 0};
  struct s3_signed s;
  sign("http://127.0.0.1:9000/prefix", 0, &r, &c, &s);
  cr_assert_str_eq(s.url, "http://127.0.0.1:9000/prefix/bkt/dir/"
                          "a%20b%2Bc%25~%3D%26%C3%BC/../x//y");
  cr_assert_str_eq(line(&s, "host"), "127.0.0.1:9000");
  s3_signed_free(&s);
}

Test(request, query_parameters_sorted_and_bare_names_kept) {
  struct s3_request r = {.method = "PUT", .bucket = "bkt", .key = "k"};
  s3_request_param(&r, "uploadId", "a/b+c");
  s3_request_param(&r, "partNumber", "3");
  struct s3_creds c = {"AK", "SK", NULL, 0};
  struct s3_signed s;
  sign("http://h:1", 0, &r, &c, &s);
  cr_assert_str_eq(s.url, "http://h:1/bkt/k?partNumber=3&uploadId=a%2Fb%2Bc");
  cr_assert_str_eq(line(&s, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
  s3_signed_free(&s);
  struct s3_request u = {.method = "POST", .bucket = "bkt", .key = "k"};
  s3_request_param(&u, "uploads", NULL);
  sign("http://h:1", 0, &u, &c, &s);
  cr_assert_str_eq(s.url, "http://h:1/bkt/k?uploads=");
  s3_signed_free(&s);
}

Test(request, session_token_is_sent_and_signed) {
  struct s3_request r = {.method = "GET", .bucket = "bkt", .key = "k"};
  struct s3_creds c = {"AK", "SK", "TOKEN123", 0};
  struct s3_signed s;
  sign("http://h:1", 0, &r, &c, &s);
  cr_assert_str_eq(line(&s, "x-amz-security-token"), "TOKEN123");
  cr_assert(strstr(line(&s, "Authorization"), "x-amz-security-token"));
  s3_signed_free(&s);
}

Test(request, anonymous_requests_are_not_signed) {
  struct s3_request r = {.method = "GET", .bucket = "bkt", .key = "k"};
  struct s3_creds c = {NULL, NULL, NULL, 1};
  struct s3_signed s;
  sign("http://h:1", 0, &r, &c, &s);
  cr_assert_null(line(&s, "Authorization"));
  s3_signed_free(&s);
}

Test(request, virtual_hosted_bucket_goes_to_the_host) {
  struct s3_request r = {.method = "GET", .bucket = "bkt", .key = NULL};
  s3_request_param(&r, "list-type", "2");
  struct s3_creds c = {"AK", "SK", NULL, 0};
  struct s3_signed s;
  sign("http://minio.local:9000", 2, &r, &c, &s);
  cr_assert_str_eq(s.url, "http://bkt.minio.local:9000/?list-type=2");
  cr_assert_str_eq(line(&s, "host"), "bkt.minio.local:9000");
  s3_signed_free(&s);
}

Test(request, bucket_and_key_checks) {
  struct hipobj_error why = {0};
  cr_assert_eq(s3_check_bucket("my-bucket.1", &why), 0);
  cr_assert_eq(s3_check_bucket("ab", &why), HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_str_eq(why.message,
                   "bucket name 'ab' must be 3 to 63 characters long");
  cr_assert_eq(s3_check_bucket("a/b/c", &why), HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_eq(s3_check_bucket(NULL, &why), HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_eq(s3_check_key("", &why), HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_str_eq(why.message, "object key is empty");
  char longkey[1100];
  memset(longkey, 'k', sizeof longkey - 1);
  longkey[sizeof longkey - 1] = '\0';
  cr_assert_eq(s3_check_key(longkey, &why), HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_eq(s3_check_key("ok/key with space", &why), 0);
}
