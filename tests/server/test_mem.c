/* test_mem.c - memory descriptors as the ABI of 0.2.0 has them, against a
 * real hipobj-server: a file is a descriptor and an offset in fields of
 * their own (windows move the offset), a descriptor of a program built
 * before the file fields (struct_size ending at `len`) still moves host
 * memory, a newer program's larger descriptor is taken when its unknown
 * fields are zero and refused otherwise, struct_size 0 is refused, and the
 * descriptors the library fills are written only within their caller's
 * size. Also: after the first transfers of a shape, more transfers (GETs
 * and multipart PUTs of files in parallel parts, asynchronous ones) start
 * no thread at all - threads are made per client, never per transfer or
 * per part. Links the internal library for the thread counter. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "src/base/workq.h"

#define MIB (1024u * 1024)

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static char dir[] = "/tmp/hipobj-mem-XXXXXX";

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
  cr_assert_not_null(mkdtemp(dir));
  srv_start(&srv, NULL, NULL);
  cli = mk_client(srv.url, NULL, NULL, 4);
  cr_assert_eq(hipobj_s3_create_bucket(cli, T_BUCKET, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(mem, .init = init, .fini = fini, .timeout = 180);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

static int tmp_file(const char *name) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  cr_assert_geq(fd, 0, "open %s", path);
  return fd;
}

Test(mem, file_is_a_descriptor_and_an_offset) {
  struct hipobj_mem f = hipobj_mem_file(7, 1000, 50);
  cr_assert_eq(f.struct_size, sizeof f);
  cr_assert_eq(f.kind, HIPOBJ_MEM_FILE);
  cr_assert_eq(f.fd, 7);
  cr_assert_eq(f.offset, 1000);
  cr_assert_null(f.ptr, "no offset hides in the pointer");
  struct hipobj_mem w = hipobj_mem_window(&f, 20, 10);
  cr_assert_eq(w.offset, 1020);
  cr_assert_eq(w.len, 10);
  cr_assert_null(w.ptr);
  char buf[64];
  struct hipobj_mem h = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_mem hw = hipobj_mem_window(&h, 8, 4);
  cr_assert_eq(hw.ptr, buf + 8);
  cr_assert_eq(hw.fd, -1);

  /* Through a window of the file: the bytes land at offset 1000 + 20. */
  char *data = put_pattern(cli, "w", 10, 3);
  int fd = tmp_file("win");
  struct hipobj_mem dst = hipobj_mem_file(fd, 1000, 50);
  struct hipobj_mem win = hipobj_mem_window(&dst, 20, 10);
  OK(hipobj_s3_get(cli, T_BUCKET, "w", &win, NULL, NULL, err));
  file_equals(fd, 1020, data, 10);
  struct stat st;
  cr_assert_eq(fstat(fd, &st), 0);
  cr_assert_eq(st.st_size, 1030);
  close(fd);
  free(data);
}

/* The descriptor of a program built before the file fields: struct_size
 * ends with `len`. */
struct old_mem {
  size_t struct_size;
  enum hipobj_mem_kind kind;
  int device;
  void *ptr;
  size_t len;
};

Test(mem, older_and_newer_descriptors) {
  char *data = put_pattern(cli, "o", 4096, 5);
  char back[4096];
  struct old_mem old = {sizeof old, HIPOBJ_MEM_HOST, 0, back, sizeof back};
  memset(back, 0, sizeof back);
  OK(hipobj_s3_get(cli, T_BUCKET, "o", (const struct hipobj_mem *)&old, NULL,
                   NULL, err));
  cr_assert_eq(memcmp(back, data, sizeof back), 0);
  OK(hipobj_s3_put(cli, T_BUCKET, "o2", (const struct hipobj_mem *)&old, NULL,
                   NULL, err));
  /* An old descriptor cannot name a file: its layout has no fd. */
  old.kind = HIPOBJ_MEM_FILE;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "o",
                             (const struct hipobj_mem *)&old, NULL, NULL, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(hipobj_error_message(err), "no fd"), "%s",
            hipobj_error_message(err));

  /* A newer program's descriptor: a zero tail is fine, a set one is not. */
  struct {
    struct hipobj_mem m;
    uint64_t newer[2];
  } big;
  memset(&big, 0, sizeof big);
  big.m = hipobj_mem_host(back, sizeof back);
  big.m.struct_size = sizeof big;
  OK(hipobj_s3_get(cli, T_BUCKET, "o", &big.m, NULL, NULL, err));
  big.newer[1] = 1;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "o", &big.m, NULL, NULL, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(hipobj_error_message(err), "does not know"), "%s",
            hipobj_error_message(err));

  struct hipobj_mem zero = hipobj_mem_host(back, sizeof back);
  zero.struct_size = 0;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "o", &zero, NULL, NULL, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(hipobj_error_message(err), "struct_size 0"), "%s",
            hipobj_error_message(err));
  free(data);
}

Test(mem, filled_descriptors_stay_within_the_callers_size) {
  /* hipobj_mem_classify writes only what an old program's struct holds:
   * the guard after it is untouched. */
  char host[16];
  struct {
    struct old_mem m;
    unsigned char guard[32];
  } o;
  memset(&o, 0xA5, sizeof o);
  o.m.struct_size = sizeof o.m;
  OK(hipobj_mem_classify(host, sizeof host, (struct hipobj_mem *)&o.m, err));
  cr_assert_eq(o.m.kind, HIPOBJ_MEM_HOST);
  cr_assert_eq(o.m.ptr, host);
  cr_assert_eq(o.m.struct_size, sizeof o.m);
  for (size_t i = 0; i < sizeof o.guard; i++)
    cr_assert_eq(o.guard[i], 0xA5, "byte %zu past the caller's struct", i);
  struct hipobj_mem unset;
  memset(&unset, 0, sizeof unset);
  cr_assert_eq(hipobj_mem_classify(host, sizeof host, &unset, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  struct hipobj_mem full = HIPOBJ_MEM_INIT;
  OK(hipobj_gpu_alloc(HIPOBJ_MEM_HOST, 0, 100, &full, err));
  cr_assert_eq(full.struct_size, sizeof full);
  cr_assert_not_null(full.ptr);
  hipobj_gpu_free(&full);
  cr_assert_null(full.ptr);
}

/* A GET into a file in parallel parts, a multipart PUT from it, and an
 * asynchronous GET: the transfers of one shape after the first. */
static void one_round(int fd, size_t n) {
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.part_size = MIB;
  go.concurrency = 4;
  struct hipobj_mem dst = hipobj_mem_file(fd, 0, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &go, NULL, err));
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5 * MIB;
  po.concurrency = 3;
  OK(hipobj_s3_put(cli, T_BUCKET, "copy", &dst, &po, NULL, err));
  char *back = malloc(n);
  struct hipobj_mem h = hipobj_mem_host(back, n);
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "copy", &h, &go, NULL, &x, err));
  OK(hipobj_xfer_wait(x, NULL, err));
  hipobj_xfer_free(x);
  free(back);
}

Test(mem, transfers_start_no_thread_of_their_own) {
  size_t n = 12 * MIB + 5;
  char *data = put_pattern(cli, "big", n, 9);
  int fd = tmp_file("threads");
  for (int i = 0; i < 3; i++) /* the client's pools grow to this shape */
    one_round(fd, n);
  /* The pools may still grow a little toward their bounds (a thread that
   * is about to be idle is not counted as idle), but a thread per transfer
   * or per part would start at least 29 in every round: 13 GET parts and
   * 3 multipart parts through file streams, 13 more parts, 3 transfers. */
  uint64_t before = hworkq_threads_started();
  for (int i = 0; i < 4; i++)
    one_round(fd, n);
  uint64_t started = hworkq_threads_started() - before;
  cr_assert_lt(started, 4,
               "%llu threads were started by 4 rounds of 3 transfers and 29 "
               "parts each",
               (unsigned long long)started);
  file_equals(fd, 0, data, n);
  close(fd);
  free(data);
}
