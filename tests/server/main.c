/* main.c - hipobj-server: a small S3 server serving objects from a
 * directory, the reference endpoint of hipObject's demo and the peer of its
 * reliability tests (it can inject faults on command).
 *
 * This file: options, credentials, the listening socket, startup (one line
 * with the URL on stdout once ready), logging, and a clean stop on SIGINT
 * or SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hipobj.h"
#include "metacache.h"
#include "s3/sigv4.h"
#include "server.h"
#include "storage.h"

static const char usage_text[] =
    "Usage: hipobj-server --root DIR [options]\n"
    "       hipobj-server --storage memory [--memory-cap SIZE] [options]\n"
    "\n"
    "A small S3 server: buckets are the sub-directories of DIR, objects are\n"
    "files in them. Requests must be signed with AWS Signature Version 4\n"
    "(Authorization header or presigned URL). Path-style addressing only\n"
    "(http://host:port/bucket/key). Prints one line,\n"
    "  hipobj-server: listening on http://HOST:PORT (https:// with TLS)\n"
    "on stdout when ready; stops cleanly on SIGINT or SIGTERM.\n"
    "\n"
    "Options:\n"
    "  --root DIR            directory holding the buckets (created if\n"
    "                        missing; one server per directory)\n"
    "  --listen HOST:PORT    address to listen on (default 127.0.0.1:9000;\n"
    "                        [::1]:PORT for IPv6; port 0 picks a free port,\n"
    "                        printed on the ready line)\n"
    "  --access-key KEY      access key id; repeat --access-key/--secret-key\n"
    "  --secret-key SECRET   pairs for several users (default: the\n"
    "                        AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY\n"
    "                        environment, which keeps the secret out of ps)\n"
    "  --region REGION       region of the credential scope (default:\n"
    "                        AWS_REGION, AWS_DEFAULT_REGION, else us-east-1)\n"
    "  --storage disk|memory disk (default): --root on any filesystem,\n"
    "                        every object fsynced, MD5 ETags. memory: the\n"
    "                        objects in RAM (--root on tmpfs; without\n"
    "                        --root a fresh directory in /dev/shm, removed\n"
    "                        at exit), nothing fsynced, and ETags made of\n"
    "                        the CRC-64/NVME and size (\"<32 hex>-1\",\n"
    "                        parts too) unless Content-MD5 was sent: a\n"
    "                        server cheap enough to measure clients on.\n"
    "                        Signatures, payload hashes and checksums are\n"
    "                        checked in both\n"
    "  --memory-cap SIZE     memory mode: the most bytes the store may hold\n"
    "                        (default: half of the tmpfs's free space at\n"
    "                        start); past it 507 InsufficientStorage\n"
    "  --threads N           worker threads (default 4)\n"
    "  --conn-memory SIZE    memory of each connection's HTTP parser and\n"
    "                        read buffer (default 256KiB, 4KiB..16MiB):\n"
    "                        larger reads PUT bodies in fewer pieces, but\n"
    "                        libmicrohttpd zeroes all of it for every\n"
    "                        request, which small requests pay for\n"
    "  --busy-poll US        after the answer to the last request in\n"
    "                        progress, its thread keeps checking for the\n"
    "                        next for US microseconds (0..10000; default\n"
    "                        0: it sleeps at once): spares keep-alive\n"
    "                        clients the wake-up of a sleeping thread (tens\n"
    "                        of us on VMs) at the cost of a busy CPU; at\n"
    "                        most half the CPUs poll at once\n"
    "  --complete-threads N  threads that copy the parts of one\n"
    "                        CompleteMultipartUpload into the object, 1..16\n"
    "                        (default in memory mode: 8 with 16 or more\n"
    "                        CPUs, 4 with 8 or more, else 1; 1 on disk:\n"
    "                        one file's writes take turns)\n"
    "  --tls-cert FILE       serve HTTPS with this PEM certificate (chain)\n"
    "  --tls-key FILE        and this PEM private key (both or neither)\n"
    "  --min-part-size SIZE  smallest non-final multipart part (default\n"
    "                        5MiB, as S3; smaller only for experiments)\n"
    "  --max-put-size SIZE   largest PutObject or part (default 5GiB, as\n"
    "                        S3; smaller only for tests of the limit)\n"
    "  --rdma auto|off       RDMA server role of hipobj-rc-v2 (default off:\n"
    "                        control requests get 501 and\n"
    "                        X-Amz-Rdma-Protocol-Status: unsupported; auto:\n"
    "                        served on the chosen device, declined with the\n"
    "                        same 501 when no device works)\n"
    "  --rdma-device NAME    RDMA device (and :PORT) for --rdma auto\n"
    "  --faults SPEC         inject faults (see below; off by default)\n"
    "  --log-level LEVEL     error, warn, info (default: one line per\n"
    "                        request) or debug (adds signing details)\n"
    "  --help                this text\n"
    "  --version             the version\n"
    "\n"
    "Fault injection (also at runtime: POST /.hipobj-admin/faults with the\n"
    "SPEC as body replaces the rules, ?append adds to them, GET shows them\n"
    "with counters, DELETE clears them; loopback clients with a valid\n"
    "signature only):\n";

static void usage(FILE *f) {
  fputs(usage_text, f);
  fputs(faults_help(), f);
}

static int g_log_level = SLOG_INFO;

void srv_log(const struct server *s, int level, const char *fmt, ...) {
  int max = s ? s->log_level : g_log_level;
  if (level > max)
    return;
  static const char *const names[] = {"error", "warn", "info", "debug"};
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  char when[32];
  strftime(when, sizeof when, "%H:%M:%S", &tm);
  va_list ap;
  va_start(ap, fmt);
  flockfile(stderr);
  fprintf(stderr, "%s.%03ld " SRV_NAME " %s: ", when, ts.tv_nsec / 1000000,
          names[level]);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  funlockfile(stderr);
  va_end(ap);
}

double srv_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs(SRV_NAME ": ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

/* Binds HOST:PORT ("[v6]:PORT", ":PORT" or "PORT" too; the host defaults
 * to 127.0.0.1). Returns the listening socket; url gets the printable URL
 * with the real port. */
static int bind_listen(const char *spec, int tls, char *url, size_t urlsz) {
  char host[256] = "127.0.0.1", port[16];
  const char *colon = strrchr(spec, ':');
  if (spec[0] == '[') {
    const char *close = strchr(spec, ']');
    if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host)
      die("--listen %s: expected [IPV6]:PORT", spec);
    memcpy(host, spec + 1, (size_t)(close - spec - 1));
    host[close - spec - 1] = '\0';
    colon = close + 1;
  } else if (colon) {
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof host)
      die("--listen %s: host name too long", spec);
    if (hl) {
      memcpy(host, spec, hl);
      host[hl] = '\0';
    }
  }
  snprintf(port, sizeof port, "%s", colon ? colon + 1 : spec);
  char *end;
  long pn = strtol(port, &end, 10);
  if (!*port || *end || pn < 0 || pn > 65535)
    die("--listen %s: bad port '%s'", spec, port);
  struct addrinfo hints, *ai = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  int gai = getaddrinfo(host, port, &hints, &ai);
  if (gai != 0)
    die("--listen %s: %s", spec, gai_strerror(gai));
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0)
    die("cannot listen on %s: %s", spec, strerror(errno));
  int v6 = ai->ai_family == AF_INET6;
  freeaddrinfo(ai);
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  char nhost[NI_MAXHOST], nport[NI_MAXSERV];
  if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
      getnameinfo((struct sockaddr *)&ss, sl, nhost, sizeof nhost, nport,
                  sizeof nport, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    die("cannot read the listening address: %s", strerror(errno));
  snprintf(url, urlsz, v6 ? "%s://[%s]:%s" : "%s://%s:%s",
           tls ? "https" : "http", nhost, nport);
  return fd;
}

/* A PEM file, whole, NUL-terminated (libmicrohttpd takes PEM text). */
static char *read_pem(const char *opt, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die("%s %s: %s", opt, path, strerror(errno));
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (cap - len < 4096) {
      cap = cap ? cap * 2 : 8192;
      if (cap > (1u << 20))
        die("%s %s: larger than 1 MiB, not a PEM file", opt, path);
      if (!(buf = realloc(buf, cap)))
        die("out of memory");
    }
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (n == 0)
      break;
  }
  int bad = ferror(f);
  fclose(f);
  buf[len] = '\0';
  if (bad || !strstr(buf, "-----BEGIN "))
    die("%s %s: %s", opt, path, bad ? "read error" : "not a PEM file");
  return buf;
}

static int parse_level(const char *v) {
  static const char *const names[] = {"error", "warn", "info", "debug"};
  for (int i = 0; i < 4; i++)
    if (!strcasecmp(v, names[i]))
      return i;
  die("--log-level %s: expected error, warn, info or debug", v);
  return SLOG_INFO;
}

int main(int argc, char **argv) {
  static struct server srv;
  const char *listen_spec = "127.0.0.1:9000", *faults_spec = NULL;
  const char *tls_cert = NULL, *tls_key = NULL;
  const char *keys[16], *secrets[16];
  int n_keys = 0, n_secrets = 0, cap_given = 0;
  srv.threads = 4;
  srv.conn_memory = SRV_CONN_MEMORY;
  srv.min_part_size = 5u << 20;
  srv.max_put = SRV_MAX_PUT;
  srv.log_level = SLOG_INFO;
  static const struct option opts[] = {
      {"root", required_argument, NULL, 'r'},
      {"listen", required_argument, NULL, 'l'},
      {"access-key", required_argument, NULL, 'a'},
      {"secret-key", required_argument, NULL, 's'},
      {"region", required_argument, NULL, 'g'},
      {"threads", required_argument, NULL, 't'},
      {"conn-memory", required_argument, NULL, 'P'},
      {"busy-poll", required_argument, NULL, 'B'},
      {"complete-threads", required_argument, NULL, 'T'},
      {"min-part-size", required_argument, NULL, 'm'},
      {"max-put-size", required_argument, NULL, 'M'},
      {"rdma", required_argument, NULL, 'R'},
      {"rdma-device", required_argument, NULL, 'D'},
      {"faults", required_argument, NULL, 'f'},
      {"log-level", required_argument, NULL, 'L'},
      {"tls-cert", required_argument, NULL, 'C'},
      {"tls-key", required_argument, NULL, 'K'},
      {"storage", required_argument, NULL, 'S'},
      {"memory-cap", required_argument, NULL, 'c'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'r':
      srv.root = realpath(optarg, NULL);
      if (!srv.root)
        srv.root = strdup(optarg); /* created by st_startup */
      break;
    case 'l':
      listen_spec = optarg;
      break;
    case 'a':
      if (n_keys == 16)
        die("at most 16 --access-key options");
      keys[n_keys++] = optarg;
      break;
    case 's':
      if (n_secrets == 16)
        die("at most 16 --secret-key options");
      secrets[n_secrets++] = optarg;
      break;
    case 'g':
      srv.region = optarg;
      break;
    case 't': {
      char *end;
      long t = strtol(optarg, &end, 10);
      if (*end || t < 1 || t > 256)
        die("--threads %s: expected 1..256", optarg);
      srv.threads = (unsigned)t;
      break;
    }
    case 'B': {
      char *end;
      long us = strtol(optarg, &end, 10);
      if (*end || end == optarg || us < 0 || us > 10000)
        die("--busy-poll %s: expected microseconds, 0..10000", optarg);
      srv.busy_poll_us = (unsigned)us;
      break;
    }
    case 'T': {
      char *end;
      long t = strtol(optarg, &end, 10);
      if (*end || t < 1 || t > ST_ASSEMBLE_MAX)
        die("--complete-threads %s: expected 1..%d", optarg, ST_ASSEMBLE_MAX);
      srv.complete_threads = (unsigned)t;
      break;
    }
    case 'P':
      if (hipobj_parse_size(optarg, &srv.conn_memory) != HIPOBJ_OK ||
          srv.conn_memory < 4096 || srv.conn_memory > ((uint64_t)16 << 20))
        die("--conn-memory %s: expected a size from 4KiB to 16MiB", optarg);
      break;
    case 'm':
      if (hipobj_parse_size(optarg, &srv.min_part_size) != HIPOBJ_OK)
        die("--min-part-size %s: expected a size such as 5MiB", optarg);
      break;
    case 'M':
      if (hipobj_parse_size(optarg, &srv.max_put) != HIPOBJ_OK ||
          srv.max_put == 0 || srv.max_put > SRV_MAX_PUT)
        die("--max-put-size %s: expected a size from 1 to 5GiB", optarg);
      break;
    case 'R':
      if (!strcmp(optarg, "auto"))
        srv.rdma_auto = 1;
      else if (strcmp(optarg, "off"))
        die("--rdma %s: expected auto or off", optarg);
      break;
    case 'D':
      srv.rdma_device = optarg;
      break;
    case 'f':
      faults_spec = optarg;
      break;
    case 'L':
      srv.log_level = g_log_level = parse_level(optarg);
      break;
    case 'C':
      tls_cert = optarg;
      break;
    case 'K':
      tls_key = optarg;
      break;
    case 'S':
      if (!strcmp(optarg, "memory"))
        srv.memory = 1;
      else if (strcmp(optarg, "disk"))
        die("--storage %s: expected disk or memory", optarg);
      break;
    case 'c':
      if (hipobj_parse_size(optarg, &srv.mem_cap) != HIPOBJ_OK ||
          srv.mem_cap == 0)
        die("--memory-cap %s: expected a size such as 4GiB", optarg);
      cap_given = 1;
      break;
    case 'h':
      usage(stdout);
      return 0;
    case 'V':
      printf(SRV_NAME " %s\n", hipobj_version());
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind < argc)
    die("unexpected argument '%s' (see --help)", argv[optind]);
  if (cap_given && !srv.memory)
    die("--memory-cap needs --storage memory");
  if (!srv.complete_threads) { /* parallel copies pay on tmpfs with CPUs */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    srv.complete_threads = !srv.memory ? 1 : cpus >= 16 ? 8 : cpus >= 8 ? 4 : 1;
  }
  if (!srv.root && !srv.memory)
    die("--root DIR is required (see --help)");
  if (!tls_cert != !tls_key)
    die("give both --tls-cert and --tls-key, or neither");
  if (tls_cert && !MHD_is_feature_supported(MHD_FEATURE_TLS))
    die("--tls-cert: this libmicrohttpd was built without TLS support");
  if (tls_cert) {
    srv.tls_cert_pem = read_pem("--tls-cert", tls_cert);
    srv.tls_key_pem = read_pem("--tls-key", tls_key);
  }
  if (n_keys != n_secrets)
    die("give as many --secret-key as --access-key options");
  if (n_keys == 0) {
    const char *ak = getenv("AWS_ACCESS_KEY_ID");
    const char *sk = getenv("AWS_SECRET_ACCESS_KEY");
    if (!ak || !*ak || !sk || !*sk)
      die("no credentials: give --access-key KEY --secret-key SECRET, or set "
          "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
    keys[0] = ak;
    secrets[0] = sk;
    n_keys = 1;
  }
  srv.creds = calloc((size_t)n_keys, sizeof *srv.creds);
  struct s3_sigv4_key_cache *caches = calloc((size_t)n_keys, sizeof *caches);
  if (!srv.creds || !caches)
    die("out of memory");
  for (int i = 0; i < n_keys; i++) {
    if (!*keys[i] || !*secrets[i] || strpbrk(keys[i], "/, ;="))
      die("access key '%s' is empty or has '/', ',', ';', '=' or spaces",
          keys[i]);
    srv.creds[i].access_key = keys[i];
    srv.creds[i].secret_key = secrets[i];
    s3_sigv4_key_cache_init(&caches[i]);
    srv.creds[i].key_cache = &caches[i];
  }
  srv.n_creds = (size_t)n_keys;
  if (!srv.region)
    srv.region = getenv("AWS_REGION");
  if (!srv.region || !*srv.region)
    srv.region = getenv("AWS_DEFAULT_REGION");
  if (!srv.region || !*srv.region)
    srv.region = "us-east-1";
  srv.faults = faults_new();
  if (!srv.faults)
    die("out of memory");
  struct hbuf why = HBUF_INIT;
  if (faults_spec && faults_set(srv.faults, faults_spec, 0, &why) != 0)
    die("--faults: %s", hbuf_str(&why));
  /* Last before the storage starts: nothing dies between the memory
   * mode's making of a root and the teardown that removes it. */
  if (srv.memory && mem_setup(&srv, &why) != 0)
    die("%s", hbuf_str(&why));
  if (st_startup(&srv, &why) != 0 ||
      (srv.memory && mem_startup(&srv, cap_given, &why) != 0)) {
    if (srv.memory)
      mem_teardown(&srv);
    die("%s", hbuf_str(&why));
  }
  hbuf_free(&why);
  if (srv.memory && !(srv.meta_cache = mc_create()))
    die("out of memory");

  /* Signals: handled by sigwait() in this thread only; every thread
   * started from here on inherits the blocked mask. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  char url[300];
  int lfd = bind_listen(listen_spec, tls_cert != NULL, url, sizeof url);
  srv.delayer = delayer_start();
  if (!srv.delayer)
    die("cannot start the delay thread");
  struct srv_http *d = srv_http_start(&srv, lfd);
  if (!d)
    die("cannot start the HTTP daemon on %s", listen_spec);
  srv_log(&srv, SLOG_INFO,
          "root %s, region %s, %zu credential(s), %u threads%s%s", srv.root,
          srv.region, srv.n_creds, srv.threads, faults_spec ? ", faults: " : "",
          faults_spec ? faults_spec : "");
  if (srv.memory)
    srv_log(&srv, SLOG_INFO,
            "storage: memory (tmpfs, no fsync, CRC-64/NVME ETags), cap %llu "
            "bytes, %llu in use",
            (unsigned long long)srv.mem_cap, (unsigned long long)mem_used());
  if (srv.rdma_auto || srv.rdma_device)
    srv_log(&srv, SLOG_INFO, "RDMA: hipobj-rc-v2 server role on (device %s)",
            srv.rdma_device ? srv.rdma_device : "auto");
  printf(SRV_NAME ": listening on %s\n", url);
  fflush(stdout);

  int sig = 0;
  while (sigwait(&set, &sig) != 0)
    ;
  srv_log(&srv, SLOG_INFO, "signal %d: stopping", sig);
  srv.stopping = 1;
  /* Suspended connections first: the daemon must not stop with any. */
  delayer_stop(srv.delayer);
  srv_http_stop(d); /* also closes the listening socket */
  delayer_free(srv.delayer);
  faults_free(srv.faults);
  if (srv.memory)
    mem_teardown(&srv);
  mc_free(srv.meta_cache);
  for (size_t i = 0; i < srv.n_creds; i++)
    s3_sigv4_key_cache_destroy(&caches[i]);
  free(caches);
  free(srv.creds);
  free(srv.root);
  free(srv.tls_cert_pem);
  free(srv.tls_key_pem);
  return 0;
}
