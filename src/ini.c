/* ini.c - hcfg_ini_lookup(): reads one value from an INI file in the dialect
 * the AWS tools write (~/.aws/credentials, ~/.aws/config).
 *
 * Only what those files need: [section] headers, "key = value" lines, full-
 * line # and ; comments. Lines may be of any length, end in LF or CRLF, and
 * the last one needs no newline. A line indented deeper than the key before
 * it continues that key's value, as in Python's configparser (the AWS config
 * nests service settings that way: "s3 =\n  endpoint_url = ..."), so it
 * never matches a top-level key. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strutil.h"

/* Compares a section name with the wanted one, treating any run of blanks as
 * one space ("[profile   dev]" is profile "dev", as in the AWS tools). */
static int section_eq(const char *s, size_t n, const char *want) {
  size_t i = 0;
  while (i < n || *want) {
    int sb = i < n && (s[i] == ' ' || s[i] == '\t');
    int wb = *want == ' ' || *want == '\t';
    if (sb && wb) {
      while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
      while (*want == ' ' || *want == '\t')
        want++;
      continue;
    }
    if (i >= n || !*want || s[i] != *want)
      return 0;
    i++;
    want++;
  }
  return 1;
}

int hcfg_ini_lookup(const char *path, const char *section, const char *key,
                    char **value) {
  if (value)
    *value = NULL;
  if (!path || !section)
    return 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return errno == ENOENT || errno == ENOTDIR ? 0 : -1;

  char *line = NULL;
  size_t cap = 0;
  ssize_t got;
  int in_section = 0, after_key = 0, found = 0, first = 1;
  size_t key_indent = 0;
  char *result = NULL;

  while ((got = getline(&line, &cap, f)) >= 0) {
    const char *s = line;
    size_t n = (size_t)got;
    /* A UTF-8 byte order mark, as some editors on Windows write. */
    if (first && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
      s += 3;
      n -= 3;
    }
    first = 0;
    size_t indent = 0;
    while (indent < n && (s[indent] == ' ' || s[indent] == '\t'))
      indent++;
    hstrtrim(&s, &n); /* also drops the CR of CRLF */
    if (n == 0 || s[0] == '#' || s[0] == ';')
      continue;

    if (s[0] == '[') {
      after_key = 0;
      const char *close = memchr(s, ']', n);
      if (!close) {
        in_section = 0; /* malformed header: ignore what follows it */
        continue;
      }
      const char *name = s + 1;
      size_t nn = (size_t)(close - name);
      hstrtrim(&name, &nn);
      in_section = section_eq(name, nn, section);
      if (in_section && !key) {
        found = 1;
        break;
      }
      continue;
    }

    if (after_key && indent > key_indent)
      continue; /* continuation of the previous key's value */
    const char *eq = memchr(s, '=', n);
    if (!eq)
      continue; /* not a key line; ignored as the AWS tools would */
    after_key = 1;
    key_indent = indent;
    if (!in_section || !key)
      continue;

    const char *k = s;
    size_t kn = (size_t)(eq - s);
    hstrtrim(&k, &kn);
    if (kn != strlen(key) || memcmp(k, key, kn) != 0)
      continue;
    const char *v = eq + 1;
    size_t vn = n - (size_t)(v - s);
    hstrtrim(&v, &vn);
    char *copy = hstrndup(v, vn);
    if (!copy) {
      found = -1;
      break;
    }
    /* A repeated key overrides the earlier one, as in Python's configparser
     * when duplicates are tolerated. Values may be secrets: wipe them. */
    if (result) {
      explicit_bzero(result, strlen(result));
      free(result);
    }
    result = copy;
    found = 1;
  }

  if (found >= 0 && ferror(f))
    found = -1;
  int saved_errno = errno; /* the caller reports it */
  if (line) {
    explicit_bzero(line, cap);
    free(line);
  }
  fclose(f);
  if (found == 1 && key && value) {
    *value = result;
    return 1;
  }
  if (result) {
    explicit_bzero(result, strlen(result));
    free(result);
  }
  errno = saved_errno;
  return found;
}
