/* get_example.c - the README's example: read one object into memory.
 * Built (not installed) so the example in the README always compiles. */
#include <hipobj.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s BUCKET KEY  (endpoint and keys from AWS_*)\n",
            argv[0]);
    return 2;
  }
  struct hipobj_client *client;
  struct hipobj_error *err;
  hipobj_global_init();
  hipobj_error_create(&err);
  if (hipobj_client_create(NULL, &client, err) != HIPOBJ_OK) {
    fprintf(stderr, "%s\n", hipobj_error_message(err));
    return 1;
  }
  static char buf[1 << 20];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(client, argv[1], argv[2], &dst, NULL, &res, err);
  if (rc == HIPOBJ_OK)
    printf("%llu bytes, ETag %s\n", (unsigned long long)res.bytes, res.etag);
  else
    fprintf(stderr, "%s\n", hipobj_error_message(err));
  hipobj_client_free(client);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  return rc == HIPOBJ_OK ? 0 : 1;
}
