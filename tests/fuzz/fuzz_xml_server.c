/* fuzz_xml_server.c - the request bodies hipobj-server parses
 * (s3/xml_server.c): CompleteMultipartUpload and DeleteObjects.
 * Properties: a parsed Complete lists at least one part, numbers in
 * 1..10000, non-empty ETags and checksums that are empty or the base64 of
 * 4 bytes; a parsed Delete has 1..1000 non-empty keys (C strings: no NUL
 * cut them short, since the parser refuses a NUL). */
#include "fuzz.h"

#include "s3/xml_server.h"
#include "src/base/error.h"

static int b64_4(const char *s) {
  return !s[0] || (strlen(s) == 8 && !strcmp(s + 6, "=="));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *xml = (const char *)data;
  struct hipobj_error e = {0};
  struct s3_part *parts = NULL;
  size_t n = 0;
  if (s3_xml_parse_complete_request(xml, size, &parts, &n, &e) == HIPOBJ_OK) {
    FUZZ_CHECK(n >= 1, "an empty part list accepted");
    for (size_t i = 0; i < n; i++) {
      FUZZ_CHECK(parts[i].number >= 1 && parts[i].number <= 10000, "number");
      FUZZ_CHECK(parts[i].etag[0], "empty ETag");
      FUZZ_CHECK(b64_4(parts[i].crc32c) && b64_4(parts[i].crc32),
                 "checksum %s %s", parts[i].crc32c, parts[i].crc32);
    }
    free(parts);
  } else {
    FUZZ_CHECK(e.message[0], "a failure without a reason");
  }
  struct s3_delete_request d;
  if (s3_xml_parse_delete_request(xml, size, 1000, &d, NULL) == HIPOBJ_OK) {
    FUZZ_CHECK(d.n >= 1 && d.n <= 1000, "%zu keys", d.n);
    for (size_t i = 0; i < d.n; i++)
      FUZZ_CHECK(d.keys[i] && d.keys[i][0], "empty key");
    s3_delete_request_free(&d);
  }
  return 0;
}
