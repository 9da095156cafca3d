/* s3_fixture.h - shared set-up for the S3 integration suites: a client for
 * the server named by HIPOBJ_TEST_*, a private bucket per test, seeded
 * random payloads and assertion helpers that print the library's error. */
#ifndef HIPOBJ_TEST_S3_FIXTURE_H
#define HIPOBJ_TEST_S3_FIXTURE_H

#include "hipobj.h"

#include <stddef.h>
#include <stdint.h>

#define MiB ((size_t)1024 * 1024)

/* The state of the running test (each Criterion test runs in its own
 * process, so one global is enough). */
struct s3_fixture {
  struct hipobj_client *client;
  struct hipobj_error *err;
  char bucket[64];
};
extern struct s3_fixture fx;

/* Suite init/fini: skip when HIPOBJ_TEST_ENDPOINT is unset, otherwise create
 * the client and a fresh bucket; fini empties and deletes it. */
void fx_setup(void);
void fx_teardown(void);

/* A client for the test server; secret overrides the configured secret when
 * not NULL. log_fn/log_user, when given, receive every log line at DEBUG. */
int fx_client_create(const char *secret, hipobj_log_fn log_fn, void *log_user,
                     struct hipobj_client **out, struct hipobj_error *err);

/* The configured secret key (for checking it never leaks). */
const char *fx_secret(void);

/* Deterministic pseudo-random bytes (splitmix64) so a failure reproduces. */
void fx_fill(void *buf, size_t len, uint64_t seed);
/* malloc(len) (at least 1 byte) filled with fx_fill(seed); asserts non-NULL. */
unsigned char *fx_random(size_t len, uint64_t seed);

/* Asserts rc == HIPOBJ_OK, printing what failed and the error message. */
void fx_check(int rc, const char *what, const struct hipobj_error *err);

/* Puts len bytes of buf under key in the test bucket; asserts success. */
void fx_put(const char *key, const void *buf, size_t len,
            const struct hipobj_put_opts *opts, struct hipobj_xfer_result *res);

/* Reads key whole into a new buffer of exactly its size (from HEAD) and
 * asserts it equals want[0..len). */
void fx_get_compare(const char *key, const void *want, size_t len);

/* Index of the first differing byte, or len when equal. */
size_t fx_first_diff(const void *a, const void *b, size_t len);

#endif
