/* get_loop.c - serial GETs of one object through the public API, timed:
 * the rate a single thread reaches with hipobj_s3_get into a host buffer,
 * on one client (connection kept). Against answerer.c it is the client's
 * own cost; against a real server, the whole round trip. A benchmark, not
 * a test. Endpoint and credentials come from the AWS_* environment.
 *
 *   get_loop BUCKET KEY [N [M]]  1 untimed and 3 timed rounds of N GETs
 *                                (default 5000); prints requests/s per round
 *     M  GET M objects in turn, KEY-000000 .. KEY-<M-1> (6 digits), as
 *        `hipobj bench --small M` does, instead of KEY alone */
#include <hipobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int n = argc > 3 ? atoi(argv[3]) : 5000;
  int m = argc > 4 ? atoi(argv[4]) : 0;
  if (argc < 3 || argc > 5 || n < 1 || m < 0 || m > 1000000 ||
      strlen(argv[2]) > 200) {
    fprintf(stderr, "usage: get_loop BUCKET KEY [N >= 1 [M <= 1000000]]\n");
    return 2;
  }
  char key[256];
  snprintf(key, sizeof key, "%s", argv[2]);
  struct hipobj_client *client = NULL;
  struct hipobj_error *err = NULL;
  static char buf[1 << 20];
  int rc = 1;
  hipobj_global_init();
  if (hipobj_error_create(&err) != HIPOBJ_OK ||
      hipobj_client_create(NULL, &client, err) != HIPOBJ_OK)
    goto out;
  for (int round = 0; round < 4; round++) {
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
      struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
      struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
      if (m)
        snprintf(key, sizeof key, "%s-%06d", argv[2], i % m);
      if (hipobj_s3_get(client, argv[1], key, &dst, NULL, &res, err) !=
          HIPOBJ_OK)
        goto out;
    }
    if (round > 0)
      printf("get_loop: round %d: %.0f requests/s\n", round,
             n / (now_s() - t0));
  }
  rc = 0;
out:
  if (rc && err)
    fprintf(stderr, "get_loop: %s\n", hipobj_error_message(err));
  hipobj_client_free(client);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  return rc;
}
