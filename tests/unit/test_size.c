/* test_size.c - unit tests of hipobj_parse_size(). */
#include <criterion/criterion.h>
#include <stdint.h>

#include "hipobj.h"

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define TIB (1ull << 40)

struct good {
  const char *text;
  uint64_t want;
};

Test(size, accepted_spellings) {
  static const struct good cases[] = {
      {"5242880", 5242880},
      {"0", 0},
      {"5MiB", 5 * MIB},
      {"5MB", 5 * MIB}, /* aws s3 convention: MB is 1024^2 too */
      {"5M", 5 * MIB},
      {"5m", 5 * MIB},
      {"5mib", 5 * MIB},
      {"5mB", 5 * MIB},
      {"1.5GiB", 1610612736},
      {"1.50G", 1610612736},
      {"8KiB", 8 * KIB},
      {"8k", 8 * KIB},
      {"8kb", 8 * KIB},
      {"1TiB", TIB},
      {"1t", TIB},
      {"2G", 2 * GIB},
      {"100B", 100},
      {"100b", 100},
      {"0.5K", 512},
      {"0.25KiB", 256},
      {"1.0", 1},
      {"3.000", 3},
      {"0.0009765625MiB", 1024},
      {"0.0000019073486328125T", 2097152},
      {" 5MiB ", 5 * MIB},
      {"5 MiB", 5 * MIB},
      {"18446744073709551615", UINT64_MAX},
      {"16777215T", 16777215ull * TIB},
      {"007", 7},
      {"16777215.5T", 18446743523953737728ull},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t v = 12345;
    cr_assert_eq(hipobj_parse_size(cases[i].text, &v), HIPOBJ_OK, "'%s'",
                 cases[i].text);
    cr_assert_eq(v, cases[i].want, "'%s' gave %llu", cases[i].text,
                 (unsigned long long)v);
  }
}

Test(size, rejected) {
  static const char *const bad[] = {
      "",
      " ",
      "-5",
      "+5",
      "-5MiB",
      "MiB",
      "abc",
      "5X",
      "5MiBx",
      "5MiB5",
      "5iB",
      "5i",
      "5 M i B",
      "5KK",
      "5BB",
      "1.",
      ".5G",
      "1..5G",
      "1.5",          /* 1.5 bytes */
      "0.1K",         /* 102.4 bytes */
      "1.0000001GiB", /* not a whole number of bytes */
      "0x10",
      "1e6",
      "5,5M",
      "18446744073709551616",
      "16777216T",
      "99999999999999999999999",
      "17179869184G",
      "16777215.99999999999T",
      "0.00000000000000000000000000001T",
      "1.00000000000000000000000000000000000001K",
      "5MiB\n x",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint64_t v = 777;
    cr_assert_eq(hipobj_parse_size(bad[i], &v), HIPOBJ_E_INVALID_ARGUMENT,
                 "'%s'", bad[i]);
    cr_assert_eq(v, 777, "output untouched on failure ('%s')", bad[i]);
  }
}

Test(size, trailing_zeros_do_not_limit_precision) {
  uint64_t v;
  cr_assert_eq(hipobj_parse_size("1.50000000000000000000000000000000G", &v),
               HIPOBJ_OK);
  cr_assert_eq(v, 1610612736);
}

Test(size, null_arguments) {
  uint64_t v;
  cr_assert_eq(hipobj_parse_size(NULL, &v), HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_eq(hipobj_parse_size("5", NULL), HIPOBJ_E_INVALID_ARGUMENT);
}
