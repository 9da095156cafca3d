/* hipobj_cli.h - shared declarations of the `hipobj` command-line tool:
 * parsed options, locations (s3://bucket/key, local path, "-"), error
 * reporting (text or JSON), the progress display, transfers waited for
 * with cancellation, and the many-files engine of cp/sync/mv/rm
 * --recursive. Internal to the tool. */
#ifndef HIPOBJ_CLI_H
#define HIPOBJ_CLI_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "hipobj.h"

/* Exit statuses (documented in `hipobj --help`, hipobj(1) and the README;
 * modelled on aws s3's): 0 success, 1 the operation (or, with many files,
 * at least one of them) failed, 2 bad command line, 3 the configuration
 * is unusable (credentials, endpoint), 128 + the signal when interrupted
 * (130 for SIGINT, 143 for SIGTERM), 141 when a reader of stdout went
 * away. */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAIL = 1,
  CLI_EXIT_USAGE = 2,
  CLI_EXIT_CONFIG = 3,
};
#define CLI_EXIT_INTERRUPTED (cli_interrupted ? 128 + cli_interrupted : 130)
#define CLI_EXIT_PIPE 141

/* The commands, for the options that apply to some of them only. */
enum cli_cmd {
  CMD_CP,
  CMD_SYNC,
  CMD_MV,
  CMD_LS,
  CMD_RM,
  CMD_MB,
  CMD_RB,
  CMD_STAT,
  CMD_PRESIGN,
  CMD_MPU,
  CMD_INFO,
  CMD_BENCH,
  CMD_HELP,
  CMD_COMPLETE, /* __complete: the shell completion's helper */
  CMD_COUNT
};

/* --exclude / --include, in the order given: the last one matching a
 * path decides (aws s3's rule); none matching: included. */
struct filter {
  const char *pattern;
  int include;
};

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
  int no_sign;                     /* --no-sign-request */
  enum hipobj_integrity integrity; /* --integrity, --unsigned-payload */
  int keep_failed_upload; /* --keep-failed-upload: cp keeps and names it */
  int json;
  int quiet;
  int debug;
  int recursive;
  int dryrun;
  int delete_extra;    /* sync --delete */
  int size_only;       /* sync --size-only */
  int human;           /* ls --human-readable */
  int summarize;       /* ls --summarize */
  unsigned jobs;       /* --jobs: files in flight; 0: CLI_DEFAULT_JOBS */
  unsigned expires_in; /* presign --expires-in; 0: 3600 */
  int has_range;       /* cp --range */
  uint64_t range_off, range_len;
  struct filter *filters;
  size_t n_filters;
  int stderr_tty; /* progress is drawn only on a terminal */
  /* --gpu [cuda:|hip:]N: cp moves the data through that GPU's memory. */
  int use_gpu;
  int gpu_device;
  int gpu_kind_given; /* 0: the first platform with device N */
  enum hipobj_mem_kind gpu_kind;

  enum cli_cmd cmd;
  struct hipobj_client *client;
  struct hipobj_error *err;
};

#define CLI_DEFAULT_JOBS 8
#define CLI_MAX_JOBS 64

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
/* The last path component ("c" of "a/b/c"); "" when path ends in '/'. */
const char *last_component(const char *path);
int ends_with_slash(const char *s);

/* Terminal-safe text: every control character (C0, DEL, C1) and every byte
 * that is not UTF-8 in text from outside the tool (keys, server messages,
 * paths) becomes \xNN. cli_escape writes at most cap - 1 bytes and a NUL
 * and returns the length; cli_print formats, escapes all but a final
 * newline, and writes to f. Every line the tool prints goes through them
 * (JSON has its own escaping, json_*). */
size_t cli_escape(const char *text, char *out, size_t cap);
void cli_print(FILE *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Errors. Under --json every report is one JSON object ({"op": the
 * command, "target", "error": the text, "status", and for an S3 answer
 * "http_status", "s3_code", "request_id"; "hint" where the tool knows
 * what to check; "exit": the exit status it implies) on stdout, or on
 * stderr when stdout carries object data; otherwise one line on stderr,
 * "hipobj: SUBJECT: CAUSE[; HINT]". report_setup() tells them which. */
void report_setup(int json, const char *op);
void report_data_on_stdout(int on);
/* The cause of a library failure as text: the S3 code, HTTP status and
 * message ("NoSuchKey (404): The specified key does not exist."). */
void describe_error(const struct cli *c, const struct hipobj_error *err,
                    char *buf, size_t len);
/* What to check for a failure, NULL when the tool knows nothing to add
 * (the secret key for SignatureDoesNotMatch, DNS for an unknown host,
 * ...). */
const char *error_hint(const struct hipobj_error *err);
/* The exit status a library failure gives: CLI_EXIT_CONFIG for
 * HIPOBJ_E_CONFIG, else CLI_EXIT_FAIL. */
int exit_status_of(const struct hipobj_error *err);
/* Report a library failure; returns exit_status_of(err). */
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
/* The errno of the first failed write to stdout that was seen (0: none):
 * by the time main finds ferror(stdout) set, errno says something else. */
void stdout_failed(int errnum);
int stdout_first_errno(void);
/* A usage error with a hint to the command's --help. Returns
 * CLI_EXIT_USAGE. */
int report_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* JSON output, one object per line. json_begin() opens "{\"op\":OP", the
 * json_* field writers append ",\"name\":value", json_end() closes the
 * object and flushes. Callers hold the output lock (out_lock) when other
 * threads may print. */
void json_begin(FILE *f, const char *op);
void json_str(FILE *f, const char *name, const char *value);
void json_u64(FILE *f, const char *name, uint64_t value);
void json_double(FILE *f, const char *name, double value, int decimals);
void json_end(FILE *f);
/* Serialises lines printed by several threads (and the progress line). */
void out_lock(void);
void out_unlock(void);

/* Time helpers. */
double now_seconds(void); /* monotonic clock */
/* Formats a Unix time as "YYYY-MM-DD HH:MM:SS" local time (like aws s3 ls). */
void fmt_local_time(int64_t t, char *buf, size_t len);
/* Formats a Unix time as ISO 8601 UTC "YYYY-MM-DDTHH:MM:SSZ". */
void fmt_iso_time(int64_t t, char *buf, size_t len);
/* Sizes and rates share one unit system, binary: "12.3 MiB", and a rate
 * is fmt_bytes of bytes per second + "/s" ("80.0 MiB/s"). */
void fmt_bytes(uint64_t n, char *buf, size_t len);
void fmt_rate(double bytes_per_s, char *buf, size_t len);
#define CLI_MIB 1048576.0

/* Signals. SIGINT/SIGTERM/SIGHUP remove the registered temp files (so a
 * killed download leaves nothing behind) and then end the process; while
 * "soft" interruption is on, the first one only sets cli_interrupted and
 * wakes the main thread (signals_wake_fd() becomes readable) so the
 * current step can clean up (cancel the transfers, abort a multipart
 * upload); a second one ends the process. */
extern volatile sig_atomic_t cli_interrupted;
void signals_install(void);
/* Registers a temp file to remove on a fatal signal; returns its slot
 * (-1 when all CLI_MAX_JOBS + 1 are taken: then it is not removed). */
int signals_add_temp(const char *path);
void signals_drop_temp(int slot); /* -1 is ignored */
void signals_set_soft(int on);
int signals_wake_fd(void); /* -1 when the pipe could not be made */
void signals_wake(void);   /* async-signal-safe; any thread */

/* The process's umask, read by umask_read() while main() is the only
 * thread: reading a umask means setting it, and a worker that created a
 * directory in between would get it wrong. Downloads give their files
 * 0666 & ~umask_value(), the mode a plain create gives. */
void umask_read(void);
mode_t umask_value(void);

/* hipobj_wait.c ------------------------------------------------------------ */

struct progress;

/* GET and PUT through the asynchronous API. On the main thread they wait
 * in poll() on the self-pipe, cancelling the transfer on a soft
 * interruption (in-flight requests stop; a multipart upload is aborted
 * unless opts keep it, its id then in res->upload_id); soft interruption
 * is on while they run. On a worker of the many-files engine they wait in
 * hipobj_xfer_wait(), and xfers_cancel_all() (the main thread's) cancels
 * them. p (may be NULL) gets the bytes as they move; base is added to
 * the library's counts (a transfer continuing an earlier one). Return
 * the transfer's status (HIPOBJ_E_CANCELLED when interrupted), the cause
 * in err. */
int xfer_get(struct cli *c, struct progress *p, const char *bucket,
             const char *key, const struct hipobj_mem *mem,
             const struct hipobj_get_opts *go, struct hipobj_xfer_result *res,
             struct hipobj_error *err);
/* xfer_get into file memory of unknown extent (mem->fd): the free space
 * is checked (reserve_space) once the first answer tells the size, and the
 * transfer cancelled, *reserve_err set to the errno, when it is short. */
int xfer_get_file(struct cli *c, struct progress *p, const char *bucket,
                  const char *key, const struct hipobj_mem *mem,
                  const struct hipobj_get_opts *go,
                  struct hipobj_xfer_result *res, struct hipobj_error *err,
                  int *reserve_err);
int xfer_put(struct cli *c, struct progress *p, const char *bucket,
             const char *key, const struct hipobj_mem *mem,
             const struct hipobj_put_opts *po, struct hipobj_xfer_result *res,
             struct hipobj_error *err);
/* Cancels every transfer started by a worker (main thread), and sets the
 * token of their blocking calls. */
void xfers_cancel_all(void);
/* The token the workers' blocking calls carry (hipobj_cancel_create), made
 * by xfers_init() in main(); NULL when it could not be made. */
struct hipobj_cancel *xfers_token(void);
void xfers_init(void);
void xfers_cleanup(void);
/* Marks the calling thread as a worker (waits without polling). */
void xfer_thread_is_worker(void);

/* hipobj_progress.c -------------------------------------------------------- */

/* One-line progress display on stderr: bytes, percentage, rate and ETA,
 * with "completing" once every byte has moved but the operation has not
 * ended (CompleteMultipartUpload), and for many files how many are done.
 * All drawing happens under the output lock, which the library's log
 * lines and the result lines of other threads also take so they never
 * tear the progress line. */
struct progress {
  int enabled;
  char label[256]; /* shown after the numbers, escaped (cli_escape) */
  atomic_uint_fast64_t total; /* 0: unknown */
  atomic_uint_fast64_t done;
  atomic_int counting; /* set by the first progress_add() */
  atomic_uint files_done, files_total;
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
/* Adds bytes moved, or to the total; safe from any thread. */
void progress_add(struct progress *p, uint64_t bytes);
void progress_add_total(struct progress *p, uint64_t bytes);
/* Sets the total (0: unknown); any thread. */
void progress_set_total(struct progress *p, uint64_t total);
/* Stops the display and erases it. With ok, prints the summary line
 * "12.0 MiB in 0.52 s (23.1 MiB/s)". */
void progress_end(struct progress *p, int ok, uint64_t bytes, double seconds);
/* Erases the line (if drawn) so that a line can be printed; call with the
 * output lock held, then progress_redraw_locked(). */
void progress_clear_locked(void);
void progress_redraw_locked(void);
/* Log callback for hipobj_client_config.log_fn. */
void progress_log_line(void *user, enum hipobj_log_level level,
                       const char *line);

/* hipobj.c ------------------------------------------------------------------
 */

/* Creates c->client from the options (once). Returns 0 or the exit status
 * after reporting the failure. Commands call it after checking their
 * arguments so that usage errors come first. */
int cli_connect(struct cli *c);
/* HeadObject with a precise error (see cli_explain). Returns 0, or the
 * exit status after reporting. */
int cli_head(struct cli *c, const struct location *loc,
             struct hipobj_object_info *info);
/* A failure without an S3 code (a HEAD's 400/403/404, which have no body)
 * is looked into with a one-byte ranged GET of bucket/key, whose error
 * answer names the code (SignatureDoesNotMatch, NoSuchBucket, ...): err
 * then gets the GET's error. Thread-safe. */
void cli_explain(struct cli *c, const char *bucket, const char *key,
                 struct hipobj_error *err);

/* hipobj_help.c ------------------------------------------------------------ */

struct cli_command {
  const char *name;
  enum cli_cmd id;
  int (*run)(struct cli *c, int argc, char **argv);
  const char *summary; /* one line for the command list */
  const char *help;    /* `hipobj CMD --help` */
};
/* The command named, NULL when there is none; with a near miss, *hint
 * gets "did you mean 'cp'?" (else ""). */
const struct cli_command *cli_find_command(const char *name, char *hint,
                                           size_t cap);
const struct cli_command *cli_command_by_id(enum cli_cmd id);
void print_usage(FILE *f);
void print_command_help(FILE *f, const struct cli_command *cmd);
/* The closest of names[] (NULL-terminated) to word within an edit distance
 * of 2 (or a prefix of it), NULL when none is close. */
const char *closest_word(const char *word, const char *const *names);
int cmd_help(struct cli *c, int argc, char **argv);

/* Commands ------------------------------------------------------------------
 */

int cmd_cp(struct cli *c, int argc, char **argv);       /* hipobj_cp.c */
int cmd_mv(struct cli *c, int argc, char **argv);       /* hipobj_cp.c */
int cmd_sync(struct cli *c, int argc, char **argv);     /* hipobj_sync.c */
int cmd_ls(struct cli *c, int argc, char **argv);       /* hipobj_cmds.c */
int cmd_rm(struct cli *c, int argc, char **argv);       /* hipobj_cmds.c */
int cmd_mb(struct cli *c, int argc, char **argv);       /* hipobj_cmds.c */
int cmd_rb(struct cli *c, int argc, char **argv);       /* hipobj_cmds.c */
int cmd_stat(struct cli *c, int argc, char **argv);     /* hipobj_cmds.c */
int cmd_presign(struct cli *c, int argc, char **argv);  /* hipobj_s3cmds.c */
int cmd_mpu(struct cli *c, int argc, char **argv);      /* hipobj_s3cmds.c */
int cmd_complete(struct cli *c, int argc, char **argv); /* hipobj_s3cmds.c */
int cmd_info(struct cli *c, int argc, char **argv);     /* hipobj_info.c */

/* hipobj_info.c: --gpu. Parses "N", "cuda:N" or "hip:N" (0 or a usage exit
 * status), and picks the platform when none was named (0, or the exit
 * status after reporting why no GPU N can be used). */
int cli_gpu_parse(struct cli *c, const char *value);
int cli_gpu_resolve(struct cli *c);

#endif
