/* hipobj_help.c - the commands of the `hipobj` tool with their help
 * texts (`hipobj --help`, `hipobj CMD --help`, `hipobj help CMD`), and the
 * "did you mean" of a mistyped command or option (an edit distance of at
 * most 2, or a unique prefix). The texts here, hipobj(1) and the README
 * say the same; the exit statuses are those of hipobj_cli.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj_bench.h"
#include "hipobj_cli.h"

#define EXIT_TEXT                                                              \
  "Exit status: 0 success; 1 the operation failed (with many files: at\n"      \
  "least one); 2 bad command line; 3 unusable configuration (no\n"             \
  "credentials, a bad endpoint URL); 130 (SIGINT) or 143 (SIGTERM) when\n"     \
  "interrupted, after cancelling what ran; 141 when stdout's reader left.\n"

static const char cp_help[] =
    "usage: hipobj cp SRC DST [--recursive] [OPTIONS]\n"
    "\n"
    "Copies between local files and S3, or inside S3. SRC and DST are\n"
    "s3://bucket/key, a local path, or - (stdin as SRC, stdout as DST).\n"
    "  cp FILE s3://b/key        upload (s3://b/ or s3://b/dir/: the\n"
    "                            file's name is appended)\n"
    "  cp s3://b/key FILE|DIR/   download (a temp file renamed when\n"
    "                            complete, dated with the object's time)\n"
    "  cp s3://b/a s3://b2/c     server-side copy (no data through here)\n"
    "  cp - s3://b/key           upload stdin; cp s3://b/key - to stdout\n"
    "  cp -r DIR s3://b/prefix/  a tree, both ways and S3 to S3\n"
    "\n"
    "Options:\n"
    "  -r, --recursive        copy everything under DIR or the prefix\n"
    "  --exclude GLOB         leave out paths (relative to SRC) matching\n"
    "  --include GLOB         ... take them back in (the last match wins)\n"
    "  --dryrun               print what would be copied, copy nothing\n"
    "  --jobs N               files in flight (default 8, at most 64)\n"
    "  --range A-B            download bytes A to B only (B may be left\n"
    "                         out: to the end; 'bytes=A-B' also works)\n"
    "  --content-type T       Content-Type of uploads and copies\n"
    "  --keep-failed-upload   keep a failed multipart upload, print its id\n"
    "  --gpu [cuda:|hip:]N    move the data through GPU N's memory\n"
    "  --part-size, --concurrency, --integrity, --rdma: see hipobj --help\n";

static const char sync_help[] =
    "usage: hipobj sync SRC DST [--delete] [OPTIONS]\n"
    "\n"
    "Makes DST hold what SRC holds: a local directory and an S3 prefix,\n"
    "either way, or two prefixes. A file is copied when DST lacks it,\n"
    "its size differs, or it is newer in SRC (a file's mtime against the\n"
    "object's LastModified; downloads are dated with the object's).\n"
    "\n"
    "Options:\n"
    "  --delete               delete what only DST has (filters apply)\n"
    "  --size-only            compare sizes only, not times\n"
    "  --exclude GLOB, --include GLOB, --dryrun, --jobs N, --content-type T\n"
    "                         as for cp\n";

static const char mv_help[] =
    "usage: hipobj mv SRC DST [--recursive] [OPTIONS]\n"
    "\n"
    "cp, then deletes the source (a local file or an object) once its copy\n"
    "is complete. Options as for cp (--recursive, --exclude, --include,\n"
    "--dryrun, --jobs).\n";

static const char ls_help[] =
    "usage: hipobj ls [s3://bucket[/prefix]] [OPTIONS]\n"
    "\n"
    "Without an argument: the buckets of the account. With one: the\n"
    "objects and common prefixes (PRE) under the prefix.\n"
    "\n"
    "Options:\n"
    "  -r, --recursive        every key under the prefix, not one level\n"
    "  --human-readable       sizes as 1.5 MiB instead of bytes\n"
    "  --summarize            end with the number of objects and bytes\n";

static const char rm_help[] =
    "usage: hipobj rm s3://bucket/key\n"
    "       hipobj rm --recursive s3://bucket[/prefix] [OPTIONS]\n"
    "\n"
    "Deletes an object, or every object under a prefix.\n"
    "\n"
    "Options:\n"
    "  -r, --recursive        every key under the prefix\n"
    "  --exclude GLOB, --include GLOB, --dryrun, --jobs N  as for cp\n";

static const char mb_help[] =
    "usage: hipobj mb s3://bucket\n"
    "\n"
    "Makes a bucket. Its name must follow S3's rules: 3 to 63 lower-case\n"
    "letters, digits, dots and dashes, starting and ending with a letter or\n"
    "digit, no '..', not an IP address.\n";

static const char rb_help[] = "usage: hipobj rb s3://bucket\n"
                              "\n"
                              "Removes an empty bucket.\n";

static const char stat_help[] =
    "usage: hipobj stat s3://bucket/key\n"
    "\n"
    "Size, ETag, last modified time and content type of an object.\n";

static const char presign_help[] =
    "usage: hipobj presign s3://bucket/key [--expires-in SECONDS]\n"
    "\n"
    "Prints a URL that fetches the object without credentials (curl URL)\n"
    "until it expires: SigV4 in the query string, made here, no request.\n"
    "\n"
    "Options:\n"
    "  --expires-in SECONDS   validity, 1 to 604800 (7 days); default 3600\n";

static const char mpu_help[] =
    "usage: hipobj mpu ls s3://bucket[/prefix]\n"
    "       hipobj mpu abort s3://bucket/key UPLOAD_ID\n"
    "\n"
    "Multipart uploads started and neither completed nor aborted: their\n"
    "parts cost storage. ls lists them (time, upload id, key), abort\n"
    "deletes one with its parts.\n";

static const char info_help[] =
    "usage: hipobj info\n"
    "\n"
    "GPU platforms (runtime found or why not, devices, PCIe bus ids,\n"
    "dma-buf export) and RDMA support of this machine.\n";

static const char help_help[] = "usage: hipobj help [COMMAND]\n"
                                "\n"
                                "The tool's help, or a command's.\n";

static const struct cli_command commands[] = {
    {"cp", CMD_CP, cmd_cp, "copy files and objects (and trees: -r)", cp_help},
    {"sync", CMD_SYNC, cmd_sync, "make a directory or prefix like another",
     sync_help},
    {"mv", CMD_MV, cmd_mv, "cp, then delete the source", mv_help},
    {"ls", CMD_LS, cmd_ls, "list buckets, or objects under a prefix", ls_help},
    {"rm", CMD_RM, cmd_rm, "delete an object (or a prefix: -r)", rm_help},
    {"mb", CMD_MB, cmd_mb, "make a bucket", mb_help},
    {"rb", CMD_RB, cmd_rb, "remove an empty bucket", rb_help},
    {"stat", CMD_STAT, cmd_stat, "size, ETag, time and type of an object",
     stat_help},
    {"presign", CMD_PRESIGN, cmd_presign, "a URL to fetch an object with",
     presign_help},
    {"mpu", CMD_MPU, cmd_mpu, "list or abort unfinished multipart uploads",
     mpu_help},
    {"info", CMD_INFO, cmd_info, "GPU and RDMA support of this machine",
     info_help},
    {"bench", CMD_BENCH, cmd_bench, "benchmark against the endpoint",
     bench_usage_text},
    {"help", CMD_HELP, cmd_help, "this text, or a command's", help_help},
    {"__complete", CMD_COMPLETE, cmd_complete, NULL, NULL},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const char usage_head[] =
    "usage: hipobj [OPTIONS] COMMAND ARGS...   (like `aws s3`)\n"
    "\n"
    "Commands ('hipobj COMMAND --help' for each):\n";

static const char usage_tail[] =
    "\n"
    "Options (anywhere on the line; --opt=VALUE also works):\n"
    "  --endpoint-url URL    S3 endpoint, e.g. http://127.0.0.1:9000\n"
    "  --region R            signing region\n"
    "  --profile P           profile in ~/.aws/credentials and ~/.aws/config\n"
    "  --no-sign-request     anonymous requests (public buckets)\n"
    "  --part-size SIZE      multipart part / download chunk size (\"8MiB\")\n"
    "  --concurrency N       parallel parts per transfer\n"
    "  --staging-pool SIZE   host memory for staging files and GPU memory\n"
    "  --io-threads N        threads moving HTTP bytes (default: half the\n"
    "                        CPUs, 1 to 8)\n"
    "  --rdma MODE           auto (default: RDMA when possible), off, require\n"
    "  --integrity MODE      how uploads are checked: auto (CRC32C part\n"
    "                        checksums where the server checks them, else\n"
    "                        signed SHA-256), sha256, none (UNSIGNED-PAYLOAD)\n"
    "  --unsigned-payload    the same as --integrity none\n"
    "  --no-verify-ssl       do not verify TLS certificates\n"
    "  --ca-bundle FILE      CA certificates to verify TLS with\n"
    "  --json                one JSON object per result or error on stdout\n"
    "                        (on stderr when stdout carries object data)\n"
    "  -q, --quiet           no progress display, no result lines\n"
    "  --debug               log the library's requests (level debug)\n"
    "  -h, --help            this text (after a command: its help)\n"
    "  --version             versions of the tool and the library\n"
    "\n"
    "Credentials, region and endpoint otherwise come from the environment\n"
    "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,\n"
    "AWS_REGION, AWS_ENDPOINT_URL, AWS_PROFILE) and the AWS config files.\n"
    "Sizes and rates are binary (MiB, MiB/s). Text output shows control\n"
    "characters and bytes that are not UTF-8 as \\xNN (--json for the exact\n"
    "names).\n" EXIT_TEXT "See hipobj(1).\n";

void print_usage(FILE *f) {
  fputs(usage_head, f);
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (commands[i].summary)
      fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fputs(usage_tail, f);
}

void print_command_help(FILE *f, const struct cli_command *cmd) {
  fputs(cmd->help, f);
  if (cmd->id != CMD_BENCH && cmd->id != CMD_HELP)
    fputs("\nThe global options (--endpoint-url, --region, --profile,\n"
          "--no-sign-request, --json, --quiet, ...) apply too: hipobj "
          "--help.\n" EXIT_TEXT,
          f);
}

/* Edit distance of a and b, giving up above 3. */
static unsigned distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64 || (n > m ? n - m : m - n) > 3)
    return 99;
  unsigned row[65];
  for (size_t j = 0; j <= m; j++)
    row[j] = (unsigned)j;
  for (size_t i = 1; i <= n; i++) {
    unsigned diag = row[0];
    row[0] = (unsigned)i;
    for (size_t j = 1; j <= m; j++) {
      unsigned up = row[j];
      unsigned best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      /* A swap of two neighbours counts as one edit ("lsit"). */
      row[j] = best;
      diag = up;
    }
  }
  return row[m];
}

const char *closest_word(const char *word, const char *const *names) {
  const char *best = NULL, *prefixed = NULL;
  unsigned best_d = 3, n_prefixed = 0;
  size_t wl = strlen(word);
  for (size_t i = 0; names[i]; i++) {
    if (wl >= 2 && !strncmp(names[i], word, wl)) {
      prefixed = names[i];
      n_prefixed++;
    }
    unsigned d = distance(word, names[i]);
    /* Two edits only for words long enough not to match anything. */
    if (d < best_d && (d == 1 || wl > 3)) {
      best = names[i];
      best_d = d;
    }
  }
  if (best)
    return best;
  return n_prefixed == 1 ? prefixed : NULL;
}

const struct cli_command *cli_find_command(const char *name, char *hint,
                                           size_t cap) {
  const char *names[N_COMMANDS + 1];
  size_t k = 0;
  if (hint && cap)
    hint[0] = '\0';
  for (size_t i = 0; i < N_COMMANDS; i++) {
    if (!strcmp(commands[i].name, name))
      return &commands[i];
    if (commands[i].summary)
      names[k++] = commands[i].name;
  }
  names[k] = NULL;
  const char *near = closest_word(name, names);
  if (near && hint)
    snprintf(hint, cap, "; did you mean '%s'?", near);
  return NULL;
}

const struct cli_command *cli_command_by_id(enum cli_cmd id) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (commands[i].id == id)
      return &commands[i];
  return NULL;
}

int cmd_help(struct cli *c, int argc, char **argv) {
  (void)c;
  if (argc == 0) {
    print_usage(stdout);
    return 0;
  }
  char hint[64];
  const struct cli_command *cmd = cli_find_command(argv[0], hint, sizeof hint);
  if (!cmd || !cmd->help)
    return report_usage("help: unknown command '%s'%s", argv[0], hint);
  print_command_help(stdout, cmd);
  return 0;
}
