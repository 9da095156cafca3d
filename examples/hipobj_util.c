/* hipobj_util.c - helpers of the `hipobj` tool: location parsing, error
 * reports (one line, or one JSON object under --json, with a hint of what
 * to check), terminal-safe text and JSON output, the output lock, and
 * time, size and rate formatting. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hipobj_cli.h"

/* ---- locations ---------------------------------------------------------- */

int loc_parse(const char *arg, struct location *out) {
  memset(out, 0, sizeof *out);
  out->arg = arg;
  if (!strcmp(arg, "-")) {
    out->kind = LOC_STDIO;
    return 0;
  }
  if (strncmp(arg, "s3://", 5) != 0) {
    if (!*arg) {
      report_usage("empty path");
      return -1;
    }
    out->kind = LOC_LOCAL;
    return 0;
  }
  const char *b = arg + 5;
  const char *slash = strchr(b, '/');
  size_t blen = slash ? (size_t)(slash - b) : strlen(b);
  if (blen == 0) {
    report_usage("%s: no bucket name", arg);
    return -1;
  }
  out->kind = LOC_S3;
  out->bucket = strndup(b, blen);
  out->key = strdup(slash ? slash + 1 : "");
  if (!out->bucket || !out->key) {
    loc_free(out);
    report_errno(arg, ENOMEM);
    return -1;
  }
  return 0;
}

void loc_free(struct location *loc) {
  free(loc->bucket);
  free(loc->key);
  loc->bucket = loc->key = NULL;
}

char *s3_url(const char *bucket, const char *key) {
  char *s = NULL;
  if (asprintf(&s, "s3://%s/%s", bucket, key ? key : "") < 0)
    return NULL;
  return s;
}

const char *last_component(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

int ends_with_slash(const char *s) {
  size_t n = strlen(s);
  return n > 0 && s[n - 1] == '/';
}

/* ---- the output lock ---------------------------------------------------- */

/* Recursive: a report made while the progress display is being ended (or
 * from a log line) takes it again on the same thread. */
static pthread_mutex_t output_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void out_lock(void) {
  pthread_mutex_lock(&output_mutex);
}

void out_unlock(void) {
  pthread_mutex_unlock(&output_mutex);
}

/* ---- terminal-safe text ------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. Keys
 * and paths are not guaranteed UTF-8. */
static size_t utf8_len(const unsigned char *s) {
  unsigned char c = s[0];
  size_t n;
  uint32_t cp;
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  /* Reject overlong forms, surrogates and values past U+10FFFF. */
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

/* A character that drives a terminal: C0, DEL, and C1 (U+0080..U+009F,
 * whose U+009B is a CSI), given its UTF-8 length n at s. */
static int is_control(const unsigned char *s, size_t n) {
  return (n == 1 && (s[0] < 0x20 || s[0] == 0x7f)) ||
         (n == 2 && s[0] == 0xc2 && s[1] < 0xa0);
}

/* Everything the tool prints that came from outside it (keys, messages of
 * a server, paths) passes here: a control character or a byte that is not
 * UTF-8 is written as \xNN, so a server cannot move the cursor, retitle
 * the window or hide text. Writes at most cap - 1 bytes and a NUL (a
 * sequence is never cut). Returns the length written. */
size_t cli_escape(const char *text, char *out, size_t cap) {
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  size_t k = 0;
  while (*s) {
    size_t n = utf8_len(s);
    if (n == 0 || is_control(s, n)) {
      size_t m = n ? n : 1;
      if (k + 4 * m >= cap)
        break;
      for (size_t i = 0; i < m; i++, k += 4)
        snprintf(out + k, 5, "\\x%02x", s[i]);
      s += m;
      continue;
    }
    if (k + n >= cap)
      break;
    memcpy(out + k, s, n);
    k += n;
    s += n;
  }
  if (cap)
    out[k < cap ? k : cap - 1] = '\0';
  return k;
}

void cli_print(FILE *f, const char *fmt, ...) {
  char *text = NULL;
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(&text, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  /* The format's own final newline stays; any other is escaped. */
  int nl = n > 0 && text[n - 1] == '\n';
  if (nl)
    text[n - 1] = '\0';
  size_t cap = 4 * (size_t)n + 1;
  char *safe = malloc(cap);
  if (safe) {
    cli_escape(text, safe, cap);
    fputs(safe, f);
  }
  if (nl)
    fputc('\n', f);
  free(safe);
  free(text);
}

/* ---- error reports ------------------------------------------------------ */

static int report_json;        /* --json */
static const char *report_op;  /* the command, "op" of error objects */
static atomic_int data_on_out; /* object data on stdout: reports to stderr */

void report_setup(int json, const char *op) {
  report_json = json;
  report_op = op;
}

void report_data_on_stdout(int on) {
  atomic_store(&data_on_out, on);
}

/* The error line is the last thing the user sees, so it names the object
 * and the cause but not the library call; the call is kept only for
 * multi-step operations ("UploadPart #3: ..."), where it says which step. */
void describe_error(const struct cli *c, const struct hipobj_error *err,
                    char *buf, size_t len) {
  int status = hipobj_error_status(err);
  const char *msg = hipobj_error_message(err);
  const char *op = hipobj_error_operation(err);
  size_t oplen = strlen(op);
  if (oplen && !strchr(op, ' ') && !strncmp(msg, op, oplen) &&
      msg[oplen] == ':' && msg[oplen + 1] == ' ')
    msg += oplen + 2;
  if (!*msg)
    msg = hipobj_strerror(status);
  const char *rid = hipobj_error_request_id(err);
  if (c && c->debug && *rid)
    snprintf(buf, len, "%s (request id %s)", msg, rid);
  else
    snprintf(buf, len, "%s", msg);
}

const char *error_hint(const struct hipobj_error *err) {
  static const struct {
    const char *code, *hint;
  } by_code[] = {
      {"SignatureDoesNotMatch",
       "check the secret key (AWS_SECRET_ACCESS_KEY, or "
       "aws_secret_access_key of the profile)"},
      {"InvalidAccessKeyId", "check the access key id (AWS_ACCESS_KEY_ID, "
                             "or aws_access_key_id of the profile)"},
      {"RequestTimeTooSkewed", "check this machine's clock"},
      {"AuthorizationHeaderMalformed",
       "check the region (--region, AWS_REGION)"},
      {"PermanentRedirect", "the bucket is in another region: check the "
                            "region (--region, AWS_REGION)"},
      {"AccessDenied", "the credentials may not do this (or the bucket is "
                       "not public, for --no-sign-request)"},
      {"NoSuchBucket", "check the bucket name ('hipobj ls' lists yours)"},
      {"InvalidBucketName", "bucket names are 3 to 63 lower-case letters, "
                            "digits, dots and dashes"},
  };
  const char *code = hipobj_error_s3_code(err);
  for (size_t i = 0; *code && i < sizeof by_code / sizeof by_code[0]; i++)
    if (!strcmp(code, by_code[i].code))
      return by_code[i].hint;
  const char *msg = hipobj_error_message(err);
  switch (hipobj_error_status(err)) {
  case HIPOBJ_E_CONNECT:
    if (strstr(msg, "resolve"))
      return "check the endpoint URL (--endpoint-url, AWS_ENDPOINT_URL) "
             "and the name service";
    if (strstr(msg, "refused"))
      return "is a server listening there? (--endpoint-url, "
             "AWS_ENDPOINT_URL)";
    return "check the endpoint URL and the network";
  case HIPOBJ_E_TLS:
    return "check the server's certificate (--ca-bundle), or use http:// "
           "for a server without TLS";
  case HIPOBJ_E_CONFIG:
    if (strstr(msg, "credential"))
      return "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile "
             "(--profile), or --no-sign-request for a public bucket";
    return NULL;
  default:
    return NULL;
  }
}

int exit_status_of(const struct hipobj_error *err) {
  return hipobj_error_status(err) == HIPOBJ_E_CONFIG ? CLI_EXIT_CONFIG
                                                     : CLI_EXIT_FAIL;
}

/* Where a report goes and whether it is JSON. */
static FILE *report_stream(void) {
  return report_json && !atomic_load(&data_on_out) ? stdout : stderr;
}

/* One report: the line or the JSON object, with the progress line moved
 * out of the way. err (may be NULL) adds the library's fields. */
static void emit(const struct cli *c, const char *subject, const char *text,
                 const struct hipobj_error *err, const char *status_name,
                 int exit_code) {
  const char *hint = err ? error_hint(err) : NULL;
  out_lock();
  progress_clear_locked();
  if (report_json) {
    FILE *f = report_stream();
    json_begin(f, report_op ? report_op : "hipobj");
    if (subject)
      json_str(f, "target", subject);
    json_str(f, "error", text);
    json_str(f, "status", status_name);
    if (err && hipobj_error_http_status(err))
      json_u64(f, "http_status", (uint64_t)hipobj_error_http_status(err));
    if (err && *hipobj_error_s3_code(err))
      json_str(f, "s3_code", hipobj_error_s3_code(err));
    if (err && *hipobj_error_request_id(err))
      json_str(f, "request_id", hipobj_error_request_id(err));
    if (hint)
      json_str(f, "hint", hint);
    json_u64(f, "exit", (uint64_t)exit_code);
    json_end(f);
  } else {
    /* "...: cause; check X", or after a full stop "...: Cause. Check X". */
    char tail[300] = "";
    size_t tl = strlen(text);
    if (hint && tl && text[tl - 1] == '.')
      snprintf(tail, sizeof tail, " %c%s",
               hint[0] - 32 * (hint[0] >= 'a' && hint[0] <= 'z'), hint + 1);
    else if (hint)
      snprintf(tail, sizeof tail, "; %s", hint);
    if (subject)
      cli_print(stderr, "hipobj: %s: %s%s\n", subject, text, tail);
    else
      cli_print(stderr, "hipobj: %s%s\n", text, tail);
  }
  (void)c;
  progress_redraw_locked();
  out_unlock();
}

int report_lib(const struct cli *c, const char *subject,
               const struct hipobj_error *err) {
  char text[1400];
  describe_error(c, err, text, sizeof text);
  int rc = exit_status_of(err);
  emit(c, subject, text, err, hipobj_strerror(hipobj_error_status(err)), rc);
  return rc;
}

int report_errno(const char *subject, int errnum) {
  emit(NULL, subject, strerror(errnum), NULL, "local error", CLI_EXIT_FAIL);
  return CLI_EXIT_FAIL;
}

int report_msg(const char *subject, const char *fmt, ...) {
  char text[1400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  emit(NULL, subject, text, NULL, "failed", CLI_EXIT_FAIL);
  return CLI_EXIT_FAIL;
}

static _Atomic int first_stdout_errno;

void stdout_failed(int errnum) {
  int none = 0;
  atomic_compare_exchange_strong(&first_stdout_errno, &none, errnum);
}

int stdout_first_errno(void) {
  return atomic_load(&first_stdout_errno);
}

int report_stdout_error(int errnum) {
  if (errnum == EPIPE)
    return CLI_EXIT_PIPE;
  return report_errno("stdout", errnum);
}

int report_usage(const char *fmt, ...) {
  char text[1024], full[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (report_op && strcmp(report_op, "hipobj"))
    snprintf(full, sizeof full, "%s (see 'hipobj %s --help')", text, report_op);
  else
    snprintf(full, sizeof full, "%s (see 'hipobj --help')", text);
  emit(NULL, NULL, full, NULL, "usage", CLI_EXIT_USAGE);
  return CLI_EXIT_USAGE;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_write_string(FILE *f, const char *value) {
  const unsigned char *s = (const unsigned char *)(value ? value : "");
  fputc('"', f);
  while (*s) {
    unsigned char ch = *s;
    switch (ch) {
    case '"':
      fputs("\\\"", f);
      break;
    case '\\':
      fputs("\\\\", f);
      break;
    case '\n':
      fputs("\\n", f);
      break;
    case '\r':
      fputs("\\r", f);
      break;
    case '\t':
      fputs("\\t", f);
      break;
    case '\b':
      fputs("\\b", f);
      break;
    case '\f':
      fputs("\\f", f);
      break;
    default:
      if (ch < 0x20 || ch == 0x7F) {
        fprintf(f, "\\u%04x", ch);
      } else {
        /* Invalid UTF-8 becomes U+FFFD, so the output is always valid
         * JSON; C1 controls are escaped like C0 (terminal-safe). */
        size_t n = utf8_len(s);
        if (n == 0) {
          fputs("\\ufffd", f);
          n = 1;
        } else if (is_control(s, n)) {
          fprintf(f, "\\u%04x", s[1]);
        } else {
          fwrite(s, 1, n, f);
        }
        s += n;
        continue;
      }
    }
    s++;
  }
  fputc('"', f);
}

void json_begin(FILE *f, const char *op) {
  fputs("{\"op\":", f);
  json_write_string(f, op);
}

void json_str(FILE *f, const char *name, const char *value) {
  fprintf(f, ",\"%s\":", name);
  json_write_string(f, value);
}

void json_u64(FILE *f, const char *name, uint64_t value) {
  fprintf(f, ",\"%s\":%llu", name, (unsigned long long)value);
}

void json_double(FILE *f, const char *name, double value, int decimals) {
  /* JSON has no NaN or infinity. */
  if (!(value == value) || value > 1e300 || value < -1e300)
    value = 0;
  fprintf(f, ",\"%s\":%.*f", name, decimals, value);
}

void json_end(FILE *f) {
  fputs("}\n", f);
  fflush(f);
}

/* ---- time and sizes ----------------------------------------------------- */

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void fmt_local_time(int64_t t, char *buf, size_t len) {
  time_t tt = (time_t)t;
  struct tm tm;
  if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
    snprintf(buf, len, "%s", "0000-00-00 00:00:00");
}

void fmt_iso_time(int64_t t, char *buf, size_t len) {
  time_t tt = (time_t)t;
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(buf, len, "%s", "");
}

void fmt_bytes(uint64_t n, char *buf, size_t len) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = (double)n;
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
    v /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(buf, len, "%llu B", (unsigned long long)n);
  else
    snprintf(buf, len, "%.1f %s", v, unit[u]);
}

void fmt_rate(double bytes_per_s, char *buf, size_t len) {
  char b[32];
  fmt_bytes(bytes_per_s > 0 && bytes_per_s < 1e19 ? (uint64_t)bytes_per_s : 0,
            b, sizeof b);
  snprintf(buf, len, "%s/s", b);
}
