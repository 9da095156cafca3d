/* hipobj_util.c - helpers of the `hipobj` tool: location parsing, the one
 * error line, terminal-safe text and JSON output, time formatting, signal
 * handling and reserving a download's space. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

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

/* ---- error lines -------------------------------------------------------- */

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

int report_lib(const struct cli *c, const char *subject,
               const struct hipobj_error *err) {
  char text[1400];
  describe_error(c, err, text, sizeof text);
  if (subject)
    cli_print(stderr, "hipobj: %s: %s\n", subject, text);
  else
    cli_print(stderr, "hipobj: %s\n", text);
  return CLI_EXIT_FAIL;
}

int report_errno(const char *subject, int errnum) {
  cli_print(stderr, "hipobj: %s: %s\n", subject, strerror(errnum));
  return CLI_EXIT_FAIL;
}

int report_msg(const char *subject, const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  cli_print(stderr, "hipobj: %s: %s\n", subject, text);
  return CLI_EXIT_FAIL;
}

int report_stdout_error(int errnum) {
  if (errnum == EPIPE)
    return CLI_EXIT_PIPE;
  return report_errno("stdout", errnum);
}

int report_usage(const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  cli_print(stderr, "hipobj: %s (see 'hipobj --help')\n", text);
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

/* ---- signals ------------------------------------------------------------ */

volatile sig_atomic_t cli_interrupted;
static char temp_path[4096];
static volatile sig_atomic_t temp_set;
static volatile sig_atomic_t soft_mode;
/* The self-pipe: a soft interruption (and a finished transfer,
 * hipobj_wait.c) writes a byte, which wakes the main thread in poll(). */
static int wake_pipe[2] = {-1, -1};

void signals_wake(void) {
  if (wake_pipe[1] >= 0) {
    ssize_t w = write(wake_pipe[1], "w", 1); /* full: already woken */
    (void)w;
  }
}

int signals_wake_fd(void) {
  return wake_pipe[0];
}

/* Only async-signal-safe calls here: unlink, write, signal, raise. The
 * library is never called from here: the main thread, woken through the
 * pipe, cancels what runs. */
static void on_signal(int sig) {
  int saved = errno;
  cli_interrupted = sig;
  if (temp_set)
    unlink(temp_path);
  if (soft_mode) {
    soft_mode = 0; /* a second signal ends the process */
    signals_wake();
    errno = saved;
    return;
  }
  if (isatty(STDERR_FILENO)) {
    static const char erase[] = "\r\033[K";
    ssize_t w = write(STDERR_FILENO, erase, sizeof erase - 1);
    (void)w;
  }
  signal(sig, SIG_DFL);
  raise(sig); /* delivered when the handler returns: dies by the signal */
  errno = saved;
}

void signals_install(void) {
  if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    wake_pipe[0] = wake_pipe[1] = -1; /* then waits cannot be interrupted */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* No SA_RESTART: a blocking read of stdin must return EINTR so a soft
   * interruption is noticed. */
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* Write errors on stdout and sockets come back as EPIPE instead of
   * killing the process mid-cleanup. */
  signal(SIGPIPE, SIG_IGN);
}

void signals_set_temp(const char *path) {
  temp_set = 0;
  if (path && strlen(path) < sizeof temp_path) {
    memcpy(temp_path, path, strlen(path) + 1);
    temp_set = 1;
  }
}

void signals_set_soft(int on) {
  soft_mode = on ? 1 : 0;
}

/* ---- space for a download ----------------------------------------------- */

/* Makes a full disk fail at once rather than after most of the object has
 * come, without reserving anything: the size comes from the server (a
 * HEAD or the first answer), and a hostile or broken one that announces 3
 * GiB must not make the tool allocate 3 GiB before a byte arrives. So the
 * file system's free space is compared with the size, and the library's
 * writes take their blocks as the bytes land (a disk that fills meanwhile
 * is "file write failed: pwrite: No space left on device"). Returns 0 or
 * an errno (ENOSPC). */
int reserve_space(int fd, size_t size) {
  struct statvfs sv;
  if (fstatvfs(fd, &sv) == 0 && sv.f_blocks > 0 &&
      (uint64_t)sv.f_bavail * sv.f_frsize < size)
    return ENOSPC;
  return 0;
}
