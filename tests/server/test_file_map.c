/* test_file_map.c - GETs into tmpfs files through mappings (src/gpu_file.c)
 * against a real hipobj-server, with HIPOBJ_FILE_MAP=1 so that the mapped
 * path runs whatever the CPU count: objects of odd sizes at offsets that
 * are not page-aligned, staging chunks larger than one mapping window,
 * parts in parallel into one file; the byte counter proves the mapping
 * wrote them. PUTs from a tmpfs file read mapped windows. A write-only
 * descriptor (which cannot be mapped) and HIPOBJ_FILE_MAP=0 fall back to
 * pwrite. A window longer than the object leaves the file as long as the
 * object. A file over the size limit and a full tmpfs (mounted in a private
 * mount namespace where that is allowed) end the GET with the cause, never
 * SIGBUS and never success. Skips where /dev/shm is not tmpfs. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "harness.h"
#include "src/mem_file.h"

#define PS (64u * 1024)     /* GET part size */
#define CHUNK (256u * 1024) /* staging chunk */

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static char dir[] = "/dev/shm/hipobj-filemap-XXXXXX";

static void start(const char *map, size_t chunk) {
  struct statfs sf;
  if (statfs("/dev/shm", &sf) != 0 || sf.f_type != TMPFS_MAGIC)
    cr_skip_test("/dev/shm is not a tmpfs here: mapped writes are only "
                 "used on tmpfs");
  setenv("HIPOBJ_FILE_MAP", map, 1); /* before the library's first write */
  hipobj_global_init();
  hipobj_error_create(&err);
  cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
  srv_start(&srv, NULL, NULL);
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 2, 0);
  cfg.staging_chunk_bytes = chunk;
  cfg.staging_pool_bytes = 4 * chunk;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  cr_assert_eq(hipobj_s3_create_bucket(cli, T_BUCKET, err), HIPOBJ_OK);
}

static void init_on(void) {
  start("1", CHUNK);
}

static void init_off(void) {
  start("0", CHUNK);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  char cmd[80];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (dir[sizeof dir - 2] != 'X' && system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", dir);
}

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

static int tmp_file(const char *in, const char *name, int flags) {
  char path[160];
  snprintf(path, sizeof path, "%s/%s", in, name);
  int fd = open(path, flags | O_CREAT | O_CLOEXEC, 0600);
  cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
  return fd;
}

/* GETs key (n bytes) into fd at off; returns the bytes the mapping wrote. */
static uint64_t get_into(const char *key, int fd, uint64_t off, size_t n,
                         unsigned conc) {
  uint64_t before = hfile_mapped_bytes();
  struct hipobj_mem dst = hipobj_mem_file(fd, off, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = conc;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, &o, &res, err));
  cr_assert_eq(res.bytes, n, "%s: %llu bytes", key,
               (unsigned long long)res.bytes);
  return hfile_mapped_bytes() - before;
}

TestSuite(filemap, .init = init_on, .fini = fini, .timeout = 180);

Test(filemap, odd_sizes_at_unaligned_offsets_in_parallel) {
  const size_t sizes[] = {3 * PS + 1, PS + 7, 5 * PS - 3, 1, 100000, 4097};
  const unsigned concs[] = {1, 3, 8};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char key[32];
    snprintf(key, sizeof key, "odd-%zu", i);
    char *data = put_pattern(cli, key, sizes[i], (unsigned)i + 21);
    for (size_t j = 0; j < sizeof concs / sizeof concs[0]; j++) {
      int fd = tmp_file(dir, key, O_RDWR | O_TRUNC);
      const uint64_t at = 4096 * j + 333;
      uint64_t mapped = get_into(key, fd, at, sizes[i], concs[j]);
      cr_assert_eq(mapped, sizes[i], "size %zu: %llu bytes mapped", sizes[i],
                   (unsigned long long)mapped);
      struct stat st;
      cr_assert_eq(fstat(fd, &st), 0);
      cr_assert_eq((uint64_t)st.st_size, at + sizes[i],
                   "the file ends after the object");
      file_equals(fd, at, data, sizes[i]);
      close(fd);
    }
    free(data);
  }
}

/* A window longer than the object (what a download to a file gives, the
 * size not known yet), and a range past the object's end: the file ends
 * where the bytes do. The part that learns the size once mapped its whole
 * window, which left a 4 KiB object as a file of one part size, the tail
 * zeros, reported as success. */
Test(filemap, window_longer_than_the_object_ends_the_file_at_its_end) {
  const size_t sizes[] = {1, 4097, PS + 5, 3 * PS};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char key[32];
    snprintf(key, sizeof key, "short-%zu", i);
    char *data = put_pattern(cli, key, sizes[i], (unsigned)i + 41);
    for (int ranged = 0; ranged < 2; ranged++) {
      int fd = tmp_file(dir, key, O_RDWR | O_TRUNC);
      const uint64_t at = 333, from = ranged ? sizes[i] / 2 : 0;
      struct hipobj_mem dst = hipobj_mem_file(fd, at, 4 * PS + sizes[i]);
      struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
      o.part_size = PS;
      o.concurrency = 4;
      if (ranged) {
        o.has_range = 1;
        o.offset = from;
        o.length = 3 * PS; /* past the end */
      }
      struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
      OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, &o, &res, err));
      cr_assert_eq(res.bytes, sizes[i] - from, "%s: %llu bytes", key,
                   (unsigned long long)res.bytes);
      struct stat st;
      cr_assert_eq(fstat(fd, &st), 0);
      cr_assert_eq((uint64_t)st.st_size, at + sizes[i] - from,
                   "%s (ranged %d): the file is %lld bytes, not %llu", key,
                   ranged, (long long)st.st_size,
                   (unsigned long long)(at + sizes[i] - from));
      file_equals(fd, at, data + from, sizes[i] - from);
      close(fd);
    }
    free(data);
  }
}

/* PUTs from a tmpfs file send their parts straight from mapped windows:
 * single and multipart, at offsets that are not page-aligned, a last part
 * of one byte; the object read back is the file's range. */
Test(filemap, puts_read_mapped_windows) {
  const size_t mp = 5u << 20; /* S3's least part size */
  const size_t sizes[] = {100000, 2 * mp + 1, 1};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const size_t n = sizes[i];
    const uint64_t at = 4096 * i + 555;
    char *data = malloc(n);
    cr_assert_not_null(data);
    fill_pattern(data, n, (unsigned)i + 71);
    char name[32];
    snprintf(name, sizeof name, "src-%zu", i);
    int fd = tmp_file(dir, name, O_RDWR | O_TRUNC);
    cr_assert_eq(pwrite(fd, data, n, (off_t)at), (ssize_t)n);
    close(fd);
    fd = tmp_file(dir, name, O_RDONLY);
    struct hipobj_mem src = hipobj_mem_file(fd, at, n);
    struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
    po.part_size = mp;
    po.concurrency = 2;
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    uint64_t before = hfile_mapped_read_bytes();
    OK(hipobj_s3_put(cli, T_BUCKET, name, &src, &po, &res, err));
    cr_assert_eq(hfile_mapped_read_bytes() - before, n,
                 "size %zu: %llu bytes read through mappings", n,
                 (unsigned long long)(hfile_mapped_read_bytes() - before));
    cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
    cr_assert_eq(res.parts, n > mp ? 3u : 0u, "size %zu: %u parts", n,
                 res.parts);
    close(fd);
    /* Read back into memory and compared. */
    char *back = malloc(n);
    cr_assert_not_null(back);
    struct hipobj_mem dst = hipobj_mem_host(back, n);
    OK(hipobj_s3_get(cli, T_BUCKET, name, &dst, NULL, NULL, err));
    cr_assert(memcmp(back, data, n) == 0, "size %zu: the object differs", n);
    free(back);
    free(data);
  }
}

/* Two objects into one file at once, the second right after the first:
 * their mapped windows share a page. */
/* GETs of keys[0] and keys[1] (n bytes each) into dst[0] and dst[1] at
 * once, PS-sized parts, conc in flight each; second_first starts keys[1]
 * first. Both must move all n bytes. */
static void two_gets(const char *keys[2], const struct hipobj_mem dst[2],
                     size_t n, unsigned conc, int second_first) {
  struct hipobj_xfer *x[2];
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = conc;
  for (int k = 0; k < 2; k++) {
    int i = second_first ? 1 - k : k;
    OK(hipobj_s3_get_start(cli, T_BUCKET, keys[i], &dst[i], &o, NULL, &x[i],
                           err));
  }
  for (int i = 0; i < 2; i++) {
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(hipobj_xfer_wait(x[i], &res, err));
    cr_assert_eq(res.bytes, n, "%s", keys[i]);
    hipobj_xfer_free(x[i]);
  }
}

Test(filemap, two_gets_into_one_file_share_a_page) {
  const size_t n = 9 * PS + 5;
  char *a = put_pattern(cli, "share-a", n, 31),
       *b = put_pattern(cli, "share-b", n, 32);
  int fd = tmp_file(dir, "shared", O_RDWR | O_TRUNC);
  struct hipobj_mem dst[2] = {hipobj_mem_file(fd, 0, n),
                              hipobj_mem_file(fd, n, n)};
  const char *keys[2] = {"share-a", "share-b"};
  two_gets(keys, dst, n, 4, 0);
  file_equals(fd, 0, a, n);
  file_equals(fd, n, b, n);
  close(fd);
  free(a);
  free(b);
}

/* Two descriptors of one file, each written by a GET whose parts grow the
 * file from different writers' turns: the file may only ever grow, or a
 * copy into a mapping past a shrunk end dies of SIGBUS. The second GET
 * lands before the first, so its writers grow the file while the first's
 * still wait to. */
Test(filemap, two_descriptors_of_one_file_grow_it_only) {
  const size_t n = 12 * PS + 3;
  char *a = put_pattern(cli, "grow-a", n, 51),
       *b = put_pattern(cli, "grow-b", n, 52);
  for (int round = 0; round < 4; round++) {
    int fd1 = tmp_file(dir, "grow", O_RDWR | O_TRUNC);
    int fd2 = tmp_file(dir, "grow", O_RDWR);
    struct hipobj_mem dst[2] = {hipobj_mem_file(fd1, 0, n),
                                hipobj_mem_file(fd2, n, n)};
    const char *keys[2] = {"grow-a", "grow-b"};
    two_gets(keys, dst, n, 6, 1);
    file_equals(fd1, 0, a, n);
    file_equals(fd1, n, b, n);
    struct stat st;
    cr_assert_eq(fstat(fd1, &st), 0);
    cr_assert_eq((size_t)st.st_size, 2 * n, "the file ends at %lld",
                 (long long)st.st_size);
    close(fd1);
    close(fd2);
  }
  free(a);
  free(b);
}

Test(filemap, write_only_descriptor_falls_back_to_pwrite) {
  const size_t n = 2 * PS + 9;
  char *data = put_pattern(cli, "wronly", n, 41);
  int fd = tmp_file(dir, "wronly", O_WRONLY | O_TRUNC);
  cr_assert_eq(get_into("wronly", fd, 100, n, 2), 0,
               "a write-only file cannot be mapped");
  close(fd);
  fd = tmp_file(dir, "wronly", O_RDONLY);
  file_equals(fd, 100, data, n);
  close(fd);
  free(data);
}

/* The size limit makes fallocate fail before anything is mapped: the GET
 * reports it. Criterion runs each test in a process of its own. */
Test(filemap, size_limit_is_an_error_not_sigbus) {
  free(put_pattern(cli, "big", 3 * PS + 5, 8));
  int fd = tmp_file(dir, "limited", O_RDWR | O_TRUNC);
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {PS, PS};
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
  struct hipobj_mem dst = hipobj_mem_file(fd, 0, 3 * PS + 5);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 2;
  int st = hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, NULL, err);
  const char *m = hipobj_error_message(err);
  cr_assert_eq(st, HIPOBJ_E_IO, "status %d: %s", st, m);
  cr_assert_not_null(strstr(m, "file write failed: fallocate: File too large"),
                     "%s", m);
  close(fd);
}

/* A tmpfs of 1 MiB in a mount namespace of this test's own; the object is
 * 3 MiB. Without the allocation first, the copy would die of SIGBUS. */
Test(filemap, full_tmpfs_is_an_error_not_sigbus) {
  const size_t n = 3u << 20;
  free(put_pattern(cli, "fill", n, 9));
  char mnt[] = "/tmp/hipobj-filemap-mnt-XXXXXX";
  cr_assert_not_null(mkdtemp(mnt));
  if (unshare(CLONE_NEWNS) != 0 ||
      /* A propagation change ignores source and type; naming them keeps
       * valgrind from flagging NULL strings. */
      mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount("hipobj-test", mnt, "tmpfs", 0, "size=1m") != 0) {
    int e = errno;
    rmdir(mnt);
    cr_skip_test("cannot mount a small tmpfs here (%s): needs CAP_SYS_ADMIN",
                 strerror(e));
  }
  int fd = tmp_file(mnt, "full", O_RDWR | O_TRUNC);
  struct hipobj_mem dst = hipobj_mem_file(fd, 0, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 4;
  int st = hipobj_s3_get(cli, T_BUCKET, "fill", &dst, &o, NULL, err);
  const char *m = hipobj_error_message(err);
  cr_assert_eq(st, HIPOBJ_E_IO, "status %d: %s", st, m);
  cr_assert_not_null(
      strstr(m, "file write failed: fallocate: No space left on device"), "%s",
      m);
  close(fd);
  umount2(mnt, MNT_DETACH);
  rmdir(mnt);
}

/* Windows of 4 MiB: a 9 MiB chunk is copied through three mappings. */
static void init_big_chunk(void) {
  start("1", 9u << 20);
}

TestSuite(filemap_window, .init = init_big_chunk, .fini = fini, .timeout = 60);

Test(filemap_window, chunk_larger_than_a_window) {
  const size_t n = (9u << 20) + 3;
  char *data = put_pattern(cli, "window", n, 51);
  int fd = tmp_file(dir, "window", O_RDWR | O_TRUNC);
  struct hipobj_mem dst = hipobj_mem_file(fd, 777, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = n; /* one part, one chunk */
  uint64_t before = hfile_mapped_bytes();
  OK(hipobj_s3_get(cli, T_BUCKET, "window", &dst, &o, NULL, err));
  cr_assert_eq(hfile_mapped_bytes() - before, n);
  file_equals(fd, 777, data, n);
  close(fd);
  free(data);
}

TestSuite(filemap_off, .init = init_off, .fini = fini, .timeout = 60);

Test(filemap_off, map_0_keeps_pwrite_on_tmpfs) {
  const size_t n = 3 * PS + 1;
  char *data = put_pattern(cli, "off", n, 61);
  int fd = tmp_file(dir, "off", O_RDWR | O_TRUNC);
  cr_assert_eq(get_into("off", fd, 0, n, 3), 0);
  file_equals(fd, 0, data, n);
  close(fd);
  free(data);
}
