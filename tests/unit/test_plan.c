/* test_plan.c - unit tests of plan.c: part layout under S3's limits, Range
 * header text, Content-Range parsing. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "src/plan.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define TIB (1ull << 40)

/* Checks that the parts of an object tile it exactly, in order. */
static void check_tiling(uint64_t size, uint64_t ps) {
  unsigned n = hplan_part_count(size, ps);
  uint64_t next = 0;
  for (unsigned i = 1; i <= n; i++) {
    uint64_t off, len;
    hplan_part(size, ps, i, &off, &len);
    cr_assert_eq(off, next, "part %u offset", i);
    cr_assert(len <= ps);
    if (i < n)
      cr_assert_eq(len, ps, "only the last part may be short");
    next = off + len;
  }
  cr_assert_eq(next, size);
}

Test(plan, asked_5mib_on_9mib_gives_two_parts) {
  uint64_t ps;
  cr_assert_eq(hplan_part_size(9 * MIB, 5 * MIB, &ps), 0);
  cr_assert_eq(ps, 5 * MIB);
  cr_assert_eq(hplan_part_count(9 * MIB, ps), 2);
  uint64_t off, len;
  hplan_part(9 * MIB, ps, 1, &off, &len);
  cr_assert_eq(off, 0);
  cr_assert_eq(len, 5 * MIB);
  hplan_part(9 * MIB, ps, 2, &off, &len);
  cr_assert_eq(off, 5 * MIB);
  cr_assert_eq(len, 4 * MIB);
}

Test(plan, default_8mib_on_64mib_gives_eight_parts) {
  uint64_t ps;
  cr_assert_eq(hplan_part_size(64 * MIB, 8 * MIB, &ps), 0);
  cr_assert_eq(ps, 8 * MIB);
  cr_assert_eq(hplan_part_count(64 * MIB, ps), 8);
  check_tiling(64 * MIB, ps);
}

Test(plan, one_tib_grows_part_size) {
  uint64_t ps;
  cr_assert_eq(hplan_part_size(TIB, 5 * MIB, &ps), 0);
  cr_assert(ps > 5 * MIB);
  cr_assert_eq(ps % MIB, 0, "grown sizes are MiB multiples");
  cr_assert(hplan_part_count(TIB, ps) <= HPLAN_MAX_PARTS);
  /* And it is the smallest such MiB multiple. */
  cr_assert(hplan_part_count(TIB, ps - MIB) > HPLAN_MAX_PARTS);
  check_tiling(TIB, ps);
}

Test(plan, five_tib_is_the_limit) {
  uint64_t ps = 0;
  cr_assert_eq(hplan_part_size(HPLAN_MAX_OBJECT, 8 * MIB, &ps), 0);
  cr_assert(ps <= HPLAN_MAX_PART);
  cr_assert(hplan_part_count(HPLAN_MAX_OBJECT, ps) <= HPLAN_MAX_PARTS);
  cr_assert_eq(hplan_part_size(HPLAN_MAX_OBJECT + 1, 8 * MIB, &ps), -1);
  cr_assert_eq(hplan_part_size(UINT64_MAX, 8 * MIB, &ps), -1);
}

Test(plan, wanted_is_clamped_to_s3_limits) {
  uint64_t ps;
  cr_assert_eq(hplan_part_size(100 * MIB, 1, &ps), 0);
  cr_assert_eq(ps, HPLAN_MIN_PART);
  cr_assert_eq(hplan_part_size(100 * MIB, 0, &ps), 0);
  cr_assert_eq(ps, HPLAN_MIN_PART);
  cr_assert_eq(hplan_part_size(100 * GIB, 6 * GIB, &ps), 0);
  cr_assert_eq(ps, HPLAN_MAX_PART);
  cr_assert_eq(hplan_part_size(100 * GIB, UINT64_MAX, &ps), 0);
  cr_assert_eq(ps, HPLAN_MAX_PART);
}

Test(plan, exact_10000_parts_is_not_grown) {
  uint64_t ps;
  cr_assert_eq(hplan_part_size(10000 * 5 * MIB, 5 * MIB, &ps), 0);
  cr_assert_eq(ps, 5 * MIB);
  cr_assert_eq(hplan_part_count(10000 * 5 * MIB, ps), 10000);
  cr_assert_eq(hplan_part_size(10000 * 5 * MIB + 1, 5 * MIB, &ps), 0);
  cr_assert_eq(ps, 6 * MIB);
}

Test(plan, unaligned_wanted_kept_when_it_fits) {
  uint64_t ps;
  cr_assert_eq(hplan_part_size(100 * MIB, 5 * MIB + 3, &ps), 0);
  cr_assert_eq(ps, 5 * MIB + 3);
  check_tiling(100 * MIB, ps);
}

Test(plan, small_and_empty_objects) {
  uint64_t ps;
  cr_assert_eq(hplan_part_size(0, 8 * MIB, &ps), 0);
  cr_assert_eq(ps, 8 * MIB);
  cr_assert_eq(hplan_part_count(0, ps), 1);
  uint64_t off = 1, len = 1;
  hplan_part(0, ps, 1, &off, &len);
  cr_assert_eq(off, 0);
  cr_assert_eq(len, 0);
  cr_assert_eq(hplan_part_count(1, ps), 1);
  cr_assert_eq(hplan_part_count(8 * MIB, ps), 1);
  cr_assert_eq(hplan_part_count(8 * MIB + 1, ps), 2);
  check_tiling(8 * MIB + 1, ps);
}

Test(plan, part_count_edge_cases) {
  cr_assert_eq(hplan_part_count(100, 0), 1, "no division by zero");
  cr_assert_eq(hplan_part_count(UINT64_MAX, 1), UINT32_MAX, "saturates");
  cr_assert_eq(hplan_part_count(UINT64_MAX, UINT64_MAX), 1);
  cr_assert_eq(hplan_part_count(UINT64_MAX, UINT64_MAX / 2), 3);
}

Test(plan, out_of_range_parts_are_empty) {
  uint64_t off, len;
  hplan_part(10 * MIB, 5 * MIB, 0, &off, &len);
  cr_assert_eq(len, 0);
  cr_assert_eq(off, 10 * MIB);
  hplan_part(10 * MIB, 5 * MIB, 3, &off, &len);
  cr_assert_eq(len, 0);
  hplan_part(10 * MIB, 5 * MIB, UINT32_MAX, &off, &len);
  cr_assert_eq(len, 0);
  hplan_part(10 * MIB, 0, 1, &off, &len);
  cr_assert_eq(len, 0);
  /* No overflow computing the offset of a huge part number. */
  hplan_part(UINT64_MAX, UINT64_MAX / 2, 3, &off, &len);
  cr_assert_eq(off, (UINT64_MAX / 2) * 2);
  cr_assert_eq(len, 1);
}

Test(plan, range_header) {
  char buf[64];
  hplan_range_header(0, 10, buf);
  cr_assert_str_eq(buf, "bytes=0-9");
  hplan_range_header(100, 1, buf);
  cr_assert_str_eq(buf, "bytes=100-100");
  hplan_range_header(5, 0, buf);
  cr_assert_str_eq(buf, "bytes=5-");
  hplan_range_header(5 * MIB, 5 * MIB, buf);
  cr_assert_str_eq(buf, "bytes=5242880-10485759");
  hplan_range_header(UINT64_MAX - 1, 10, buf);
  cr_assert_str_eq(buf, "bytes=18446744073709551614-18446744073709551615");
  hplan_range_header(UINT64_MAX, UINT64_MAX, buf);
  cr_assert_str_eq(buf, "bytes=18446744073709551615-18446744073709551615");
  hplan_range_header(0, UINT64_MAX, buf);
  cr_assert_str_eq(buf, "bytes=0-18446744073709551614");
}

Test(plan, content_range_valid) {
  uint64_t f, l, t;
  cr_assert_eq(hplan_parse_content_range("bytes 0-9/100", &f, &l, &t), 0);
  cr_assert_eq(f, 0);
  cr_assert_eq(l, 9);
  cr_assert_eq(t, 100);
  cr_assert_eq(hplan_parse_content_range("bytes 0-9/*", &f, &l, &t), 0);
  cr_assert_eq(t, UINT64_MAX);
  cr_assert_eq(hplan_parse_content_range("bytes 5-5/6", &f, &l, &t), 0);
  cr_assert_eq(f, 5);
  cr_assert_eq(l, 5);
  cr_assert_eq(hplan_parse_content_range(" Bytes  7-8/9 \t", &f, &l, &t), 0);
  cr_assert_eq(f, 7);
  cr_assert_eq(
      hplan_parse_content_range(
          "bytes 0-18446744073709551614/18446744073709551615", &f, &l, &t),
      0);
  cr_assert_eq(l, UINT64_MAX - 1);
}

Test(plan, content_range_rejects_junk) {
  static const char *const bad[] = {
      "",
      "bytes",
      "bytes ",
      "bytes 0-9",
      "bytes 0-9/",
      "bytes 9-0/100",
      "bytes 0-100/100",
      "bytes 0-9/100x",
      "bytes 0-9/100 x",
      "bytes -1-9/100",
      "bytes 0--9/100",
      "bytes +0-9/100",
      "bytes */100",
      "bytes 0-9/**",
      "bits 0-9/100",
      "bytes0-9/100",
      "bytes 0 - 9/100",
      "bytes 0-18446744073709551616/*",
      "bytes 0x0-9/100",
      "0-9/100",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint64_t f = 42, l = 42, t = 42;
    cr_assert_eq(hplan_parse_content_range(bad[i], &f, &l, &t), -1, "'%s'",
                 bad[i]);
    cr_assert_eq(f, 42, "outputs untouched on failure");
  }
  uint64_t f, l, t;
  cr_assert_eq(hplan_parse_content_range(NULL, &f, &l, &t), -1);
}
