/* hipobj_cli.h - shared declarations of the `hipobj` command-line tool:
 * parsed options, locations (s3://bucket/key, local path, "-"), error
 * reporting, JSON output and the progress display. Internal to the tool. */
#ifndef HIPOBJ_CLI_H
#define HIPOBJ_CLI_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "hipobj.h"

/* Exit statuses: 0 success, 1 the operation failed, 2 bad command line,
 * 128 + the signal when interrupted (as a shell reports a death by it:
 * 130 for SIGINT, 143 for SIGTERM). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };
#define CLI_EXIT_INTERRUPTED (cli_interrupted ? 128 + cli_interrupted : 130)
#define CLI_EXIT_PIPE 141

/* Everything the command line sets, plus the live client. */
struct cli {
  /* Options; NULL/0 means "as the library resolves it". */
  const char *endpoint_url;
  const char *region;
  const char *profile;
  const char *content_type;
  const char *ca_bundle;
  uint64_t part_size;           /* 0: library default (8 MiB) */
  unsigned concurrency;         /* 0: library default */
  size_t staging_pool;          /* --staging-pool; 0: library default */
  unsigned io_threads;          /* --io-threads; 0: library default */
  enum hipobj_rdma_policy rdma; /* --rdma; 0: library default */
  int no_verify_ssl;
  enum hipobj_integrity integrity; /* --integrity, --unsigned-payload */
  int keep_failed_upload; /* --keep-failed-upload: cp keeps and names it */
  int json;
  int quiet;
  int debug;
  int recursive;
  int stderr_tty; /* progress is drawn only on a terminal */
  /* --gpu [cuda:|hip:]N: cp moves the data through that GPU's memory. */
  int use_gpu;
  int gpu_device;
  int gpu_kind_given; /* 0: the first platform with device N */
  enum hipobj_mem_kind gpu_kind;

  struct hipobj_client *client;
  struct hipobj_error *err;
};

/* Where a cp/ls/... argument points. */
enum loc_kind { LOC_LOCAL, LOC_S3, LOC_STDIO };

struct location {
  enum loc_kind kind;
  const char *arg; /* the argument as typed (borrowed from argv) */
  char *bucket;    /* LOC_S3: owned */
  char *key;       /* LOC_S3: owned, "" when none */
};

/* hipobj_util.c ----------------------------------------------------------- */

/* Parses "s3://bucket[/key]", "-" or a local path. Returns 0, or -1 after
 * printing a usage error. */
int loc_parse(const char *arg, struct location *out);
void loc_free(struct location *loc);
/* "s3://bucket/key" for display; caller frees. NULL on allocation failure. */
char *s3_url(const char *bucket, const char *key);
/* Makes a download of size bytes into fd fail at once when the file system
 * cannot hold it. Returns 0 or an errno. */
int reserve_space(int fd, size_t size);

/* Terminal-safe text: every control character (C0, DEL, C1) and every byte
 * that is not UTF-8 in text from outside the tool (keys, server messages,
 * paths) becomes \xNN. cli_escape writes at most cap - 1 bytes and a NUL
 * and returns the length; cli_print formats, escapes all but a final
 * newline, and writes to f. Every line the tool prints goes through them
 * (JSON has its own escaping, json_*). */
size_t cli_escape(const char *text, char *out, size_t cap);
void cli_print(FILE *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The cause of a library failure as text: the S3 code, HTTP status and
 * message ("NoSuchKey (404): The specified key does not exist."). */
void describe_error(const struct cli *c, const struct hipobj_error *err,
                    char *buf, size_t len);
/* One error line on stderr: "hipobj: SUBJECT: CAUSE" (SUBJECT may be NULL).
 * Returns CLI_EXIT_FAIL. */
int report_lib(const struct cli *c, const char *subject,
               const struct hipobj_error *err);
/* "hipobj: SUBJECT: strerror(errnum)". Returns CLI_EXIT_FAIL. */
int report_errno(const char *subject, int errnum);
/* "hipobj: SUBJECT: printf-text". Returns CLI_EXIT_FAIL. */
int report_msg(const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A failed write to stdout: a reader that went away (EPIPE) ends the tool
 * quietly, as SIGPIPE would (status 141); anything else is reported.
 * Returns the exit status. */
int report_stdout_error(int errnum);
/* A usage error with a hint to --help. Returns CLI_EXIT_USAGE. */
int report_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* JSON output, one object per line. json_begin() opens "{\"op\":OP", the
 * json_* field writers append ",\"name\":value", json_end() closes the
 * object and flushes. */
void json_begin(FILE *f, const char *op);
void json_str(FILE *f, const char *name, const char *value);
void json_u64(FILE *f, const char *name, uint64_t value);
void json_double(FILE *f, const char *name, double value, int decimals);
void json_end(FILE *f);

/* Time helpers. */
double now_seconds(void); /* monotonic clock */
/* Formats a Unix time as "YYYY-MM-DD HH:MM:SS" local time (like aws s3 ls). */
void fmt_local_time(int64_t t, char *buf, size_t len);
/* Formats a Unix time as ISO 8601 UTC "YYYY-MM-DDTHH:MM:SSZ". */
void fmt_iso_time(int64_t t, char *buf, size_t len);
/* Human size, e.g. "12.3 MiB". */
void fmt_bytes(uint64_t n, char *buf, size_t len);

/* Signals. SIGINT/SIGTERM/SIGHUP remove the registered temp file (so a
 * killed download leaves nothing behind) and then end the process; while
 * "soft" interruption is on, the first one only sets cli_interrupted and
 * wakes the main thread (signals_wake_fd() becomes readable) so the
 * current step can clean up (cancel the transfer, abort a multipart
 * upload); a second one ends the process. */
extern volatile sig_atomic_t cli_interrupted;
void signals_install(void);
void signals_set_temp(const char *path); /* NULL to clear */
void signals_set_soft(int on);
int signals_wake_fd(void); /* -1 when the pipe could not be made */
void signals_wake(void);   /* async-signal-safe; any thread */

/* hipobj_wait.c ------------------------------------------------------------ */

struct progress;

/* GET and PUT through the asynchronous API, waited for on the main thread
 * in poll(): the library's progress callback feeds p, and a soft
 * interruption cancels the transfer (in-flight requests stop; a multipart
 * upload is aborted unless opts keep it, its id then in res->upload_id).
 * Soft interruption is on while they run. Return the transfer's status
 * (HIPOBJ_E_CANCELLED when interrupted), the cause in c->err. */
int xfer_get(struct cli *c, struct progress *p, const char *bucket,
             const char *key, const struct hipobj_mem *mem,
             const struct hipobj_get_opts *go, struct hipobj_xfer_result *res);
int xfer_put(struct cli *c, struct progress *p, const char *bucket,
             const char *key, const struct hipobj_mem *mem,
             const struct hipobj_put_opts *po, struct hipobj_xfer_result *res);

/* hipobj_progress.c -------------------------------------------------------- */

/* One-line progress display on stderr. Without a byte counter it shows a
 * spinner and the elapsed time; as soon as progress_add() is called (today
 * between stream chunks; later from the library's progress callback) it
 * shows bytes, percentage, rate and ETA. All drawing happens under one
 * mutex, which the library's log lines also take so they never tear the
 * progress line. */
struct progress {
  int enabled;
  char label[256]; /* shown after the numbers, escaped (cli_escape) */
  uint64_t total;  /* 0: unknown */
  atomic_uint_fast64_t done;
  atomic_int counting; /* set by the first progress_add() */
  double start;
  int stop;
  int drawn; /* a line is on the screen */
  unsigned spin;
  pthread_t thread;
  int thread_started;
  pthread_cond_t cond;
};

/* Starts the display if enabled (stderr is a terminal, not --quiet). */
void progress_begin(struct progress *p, const struct cli *c, const char *label,
                    uint64_t total);
/* Adds bytes moved; safe from any thread (suits a library callback). */
void progress_add(struct progress *p, uint64_t bytes);
/* Sets the absolute count (and the total when non-zero); any thread. */
void progress_set(struct progress *p, uint64_t done, uint64_t total);
/* A hipobj_progress_fn feeding p (user = p). */
void progress_from_library(void *user, uint64_t done, uint64_t total);
/* Stops the display and erases it. With ok, prints the summary line
 * "N bytes in S s (R MB/s)". */
void progress_end(struct progress *p, int ok, uint64_t bytes, double seconds);
/* Log callback for hipobj_client_config.log_fn. */
void progress_log_line(void *user, enum hipobj_log_level level,
                       const char *line);

/* hipobj.c ------------------------------------------------------------------
 */

/* Creates c->client from the options (once). Returns 0 or the exit status
 * after reporting the failure. Commands call it after checking their
 * arguments so that usage errors come first. */
int cli_connect(struct cli *c);
/* HeadObject with a precise error: a HEAD answer has no body, so on a bare
 * 404 a one-byte GET asks the server whether the key or the bucket is
 * missing. Returns 0, or the exit status after reporting. */
int cli_head(struct cli *c, const struct location *loc,
             struct hipobj_object_info *info);

/* Commands ------------------------------------------------------------------
 */

int cmd_cp(struct cli *c, int argc, char **argv);   /* hipobj_cp.c */
int cmd_ls(struct cli *c, int argc, char **argv);   /* hipobj_cmds.c */
int cmd_rm(struct cli *c, int argc, char **argv);   /* hipobj_cmds.c */
int cmd_mb(struct cli *c, int argc, char **argv);   /* hipobj_cmds.c */
int cmd_rb(struct cli *c, int argc, char **argv);   /* hipobj_cmds.c */
int cmd_stat(struct cli *c, int argc, char **argv); /* hipobj_cmds.c */
int cmd_info(struct cli *c, int argc, char **argv); /* hipobj_info.c */

/* hipobj_info.c: --gpu. Parses "N", "cuda:N" or "hip:N" (0 or a usage exit
 * status), and picks the platform when none was named (0, or the exit
 * status after reporting why no GPU N can be used). */
int cli_gpu_parse(struct cli *c, const char *value);
int cli_gpu_resolve(struct cli *c);

#endif
