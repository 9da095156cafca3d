/* harness.c - process control and raw HTTP for the hipobj-server tests
 * (see harness.h). Requests are signed with the library's own s3/ signer,
 * compiled into the test. */
#include "harness.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "s3/sigv4.h"
#include "src/base/codec.h"
#include "src/base/uri.h"

double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void srv_start(struct server_proc *s, const char *root,
               const char *const *extra) {
  if (!root) {
    memset(s, 0, sizeof *s);
    snprintf(s->base, sizeof s->base, "/tmp/hipobj-server-test-XXXXXX");
    cr_assert_not_null(mkdtemp(s->base), "mkdtemp: %s", strerror(errno));
    snprintf(s->root, sizeof s->root, "%s/root", s->base);
  }
  char log[320];
  snprintf(log, sizeof log, "%s/server.log", s->base);
  const char *argv[40] = {HIPOBJ_SERVER_BIN,
                          "--root",
                          s->root,
                          "--listen",
                          "127.0.0.1:0",
                          "--access-key",
                          T_AK,
                          "--secret-key",
                          T_SK,
                          "--region",
                          T_REGION,
                          "--log-level",
                          "debug"};
  int argc = 13;
  for (int i = 0; extra && extra[i] && argc < 38; i++)
    argv[argc++] = extra[i];
  /* HIPOBJ_TEST_SERVER_ARGS: words added to every server's command line
   * (a whole suite against another mode, e.g. --busy-poll). */
  char more[256] = "";
  const char *env = getenv("HIPOBJ_TEST_SERVER_ARGS");
  if (env)
    snprintf(more, sizeof more, "%s", env);
  for (char *save = NULL, *w = strtok_r(more, " ", &save); w && argc < 38;
       w = strtok_r(NULL, " ", &save))
    argv[argc++] = w;
  argv[argc] = NULL;
  int pfd[2];
  cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
  if (pid == 0) {
    /* The server dies with the test process, whatever happens to it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(pfd[1], 1);
    if (lfd >= 0)
      dup2(lfd, 2);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(pfd[1]);
  s->pid = pid;
  char line[256] = "";
  size_t n = 0;
  double deadline = mono_now() + 15;
  while (n < sizeof line - 1 && !strchr(line, '\n') && mono_now() < deadline) {
    struct pollfd p = {pfd[0], POLLIN, 0};
    if (poll(&p, 1, 200) <= 0)
      continue;
    ssize_t k = read(pfd[0], line + n, sizeof line - 1 - n);
    if (k <= 0)
      break;
    n += (size_t)k;
    line[n] = '\0';
  }
  close(pfd[0]);
  const char *u = strstr(line, "listening on ");
  cr_assert_not_null(u, "hipobj-server did not start (see %s): '%s'", log,
                     line);
  snprintf(s->url, sizeof s->url, "%.*s", (int)strcspn(u + 13, "\r\n"), u + 13);
}

int srv_wait(struct server_proc *s, double timeout_s, int *status) {
  if (s->pid <= 0)
    return 1;
  double deadline = mono_now() + timeout_s;
  do {
    pid_t p = waitpid(s->pid, status, WNOHANG);
    if (p == s->pid || (p < 0 && errno == ECHILD)) {
      s->pid = 0;
      return 1;
    }
    usleep(10000);
  } while (mono_now() < deadline);
  return 0;
}

void srv_signal(struct server_proc *s, int sig) {
  if (s->pid <= 0)
    return;
  int st;
  kill(s->pid, sig);
  if (!srv_wait(s, 10, &st)) {
    kill(s->pid, SIGKILL);
    srv_wait(s, 10, &st);
  }
}

static int rm_entry(const char *p, const struct stat *st, int f,
                    struct FTW *w) {
  (void)st;
  (void)f;
  (void)w;
  remove(p);
  return 0;
}

void srv_cleanup(struct server_proc *s) {
  srv_signal(s, SIGTERM);
  const char *keep = getenv("HIPOBJ_TEST_KEEP");
  if (s->base[0] && !(keep && *keep == '1'))
    nftw(s->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

struct hipobj_client *mk_client(const char *url, const char *ak, const char *sk,
                                unsigned max_attempts) {
  return mk_client_io(url, ak, sk, max_attempts, 0);
}

void client_config(struct hipobj_client_config *cfg, const char *url,
                   const char *ak, const char *sk, unsigned max_attempts,
                   unsigned io_threads) {
  *cfg = (struct hipobj_client_config)HIPOBJ_CLIENT_CONFIG_INIT;
  cfg->io_threads = io_threads;
  cfg->endpoint_url = url;
  cfg->region = T_REGION;
  cfg->access_key_id = ak ? ak : T_AK;
  cfg->secret_access_key = sk ? sk : T_SK;
  cfg->max_attempts = max_attempts ? max_attempts : 4;
  cfg->retry_base_ms = 5;
  cfg->part_size = 5u << 20;
  cfg->stall_timeout_ms = 10000;
  /* Connecting includes the TLS handshake, which a server traced by
   * valgrind on two busy cores has been seen to take longer than 3 s:
   * no test here is about connect timeouts. */
  cfg->connect_timeout_ms = 15000;
  cfg->log_level = HIPOBJ_LOG_NONE;
}

struct hipobj_client *mk_client_io(const char *url, const char *ak,
                                   const char *sk, unsigned max_attempts,
                                   unsigned io_threads) {
  struct hipobj_client_config cfg;
  client_config(&cfg, url, ak, sk, max_attempts, io_threads);
  struct hipobj_client *c = NULL;
  struct hipobj_error *err;
  hipobj_error_create(&err);
  int rc = hipobj_client_create(&cfg, &c, err);
  cr_assert_eq(rc, HIPOBJ_OK, "client: %s", hipobj_error_message(err));
  hipobj_error_free(err);
  return c;
}

/* ---- raw HTTP ----------------------------------------------------------- */

static void host_port(const char *url, char *host, size_t hsz, int *port) {
  const char *h = strstr(url, "://");
  h = h ? h + 3 : url;
  snprintf(host, hsz, "%.*s", (int)strcspn(h, "/"), h);
  const char *c = strrchr(host, ':');
  *port = c ? atoi(c + 1) : 80;
}

static void split_hdr(const char *line, char *name, size_t nsz,
                      const char **value) {
  size_t n = strcspn(line, ":");
  snprintf(name, nsz, "%.*s", (int)n, line);
  const char *v = line + n + (line[n] == ':');
  while (*v == ' ')
    v++;
  *value = v;
}

static int send_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    c += k;
    n -= (size_t)k;
  }
  return 0;
}

static int connect_to(const char *url, char *host, size_t hsz) {
  int port;
  host_port(url, host, hsz, &port);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  struct timeval tv = {15, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Sends one request; close: ask the server to close after answering. */
static int send_request(int fd, const char *host, const char *method,
                        const char *target, struct hbuf *hdrs, const void *body,
                        size_t len, int close) {
  struct hbuf req = HBUF_INIT;
  hbuf_printf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\n%s", method, target, host,
              close ? "Connection: close\r\n" : "");
  hbuf_append(&req, hdrs->data ? hdrs->data : "", hdrs->len);
  /* A test that frames the body itself (several Content-Length headers,
   * Transfer-Encoding) says so in its headers. */
  if (!strcasestr(hbuf_str(hdrs), "content-length:") &&
      !strcasestr(hbuf_str(hdrs), "transfer-encoding:"))
    hbuf_printf(&req, "Content-Length: %zu\r\n", len);
  hbuf_puts(&req, "\r\n");
  /* A server that answers early may close before taking the whole body:
   * send errors are ignored and the answer is read anyway. */
  int rc = send_all(fd, req.data, req.len);
  if (rc == 0 && len)
    send_all(fd, body, len);
  hbuf_free(&req);
  return rc;
}

/* Reads until the server closes, or max_body bytes past the first header
 * block (0: no limit; a body that never ends must be cut somewhere). */
static void read_all(int fd, struct hbuf *in, size_t max_body) {
  char buf[65536];
  for (;;) {
    if (max_body) {
      const char *end = strstr(hbuf_str(in), "\r\n\r\n");
      if (end && in->len - (size_t)(end + 4 - in->data) >= max_body)
        break;
    }
    ssize_t k = recv(fd, buf, sizeof buf, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    hbuf_append(in, buf, (size_t)k);
  }
}

/* Parses one answer at *p (*left bytes). by_length: the body stops at its
 * Content-Length and *p moves past it (more answers follow), else the
 * body is everything up to the close (a short body shows as such). */
static void parse_answer(const char **p, size_t *left, int by_length,
                         struct http_resp *out) {
  const char *all = *p;
  const char *end = *left ? strstr(all, "\r\n\r\n") : NULL;
  if (*left < 12 || strncmp(all, "HTTP/1.", 7) || !end)
    return; /* closed without an answer: status 0 */
  out->status = atoi(all + 9);
  out->head = strndup(all, (size_t)(end - all) + 2);
  size_t avail = *left - (size_t)(end + 4 - all);
  char cl[32];
  out->len = avail;
  if (by_length && *resp_hdr(out, "Content-Length", cl, sizeof cl) &&
      strtoull(cl, NULL, 10) < avail)
    out->len = (size_t)strtoull(cl, NULL, 10);
  out->body = malloc(out->len + 1);
  memcpy(out->body, end + 4, out->len);
  out->body[out->len] = '\0';
  *p = end + 4 + out->len;
  *left = avail - out->len;
}

static int transfer(const char *url, const char *method, const char *target,
                    const char *host_hdr, struct hbuf *hdrs, const void *body,
                    size_t len, size_t max_body, struct http_resp *out) {
  memset(out, 0, sizeof *out);
  char host[128];
  int fd = connect_to(url, host, sizeof host);
  if (fd < 0)
    return -1;
  send_request(fd, host_hdr ? host_hdr : host, method, target, hdrs, body, len,
               1);
  struct hbuf in = HBUF_INIT;
  read_all(fd, &in, max_body);
  close(fd);
  const char *p = hbuf_str(&in);
  size_t left = in.len;
  parse_answer(&p, &left, 0, out);
  hbuf_free(&in);
  return 0;
}

void resp_free(struct http_resp *r) {
  free(r->head);
  free(r->body);
  memset(r, 0, sizeof *r);
}

const char *resp_hdr(const struct http_resp *r, const char *name, char *buf,
                     size_t n) {
  buf[0] = '\0';
  for (const char *p = r->head ? strstr(r->head, "\r\n") : NULL; p && p[2];
       p = strstr(p + 2, "\r\n")) {
    const char *line = p + 2;
    size_t nl = strlen(name);
    if (!strncasecmp(line, name, nl) && line[nl] == ':') {
      const char *v = line + nl + 1;
      while (*v == ' ')
        v++;
      snprintf(buf, n, "%.*s", (int)strcspn(v, "\r\n"), v);
      break;
    }
  }
  return buf;
}

int upload_open(const char *url) {
  struct sreq q = {.method = "GET", .target = "/" T_BUCKET "?uploads"};
  struct http_resp r;
  cr_assert_eq(http_send(url, &q, &r), 0);
  cr_assert_eq(r.status, 200, "ListMultipartUploads: HTTP %d", r.status);
  int open = xml_text(&r, "UploadId")[0] != '\0';
  if (open)
    cr_log_info("open upload(s): %s", r.body);
  resp_free(&r);
  return open;
}

const char *xml_text(const struct http_resp *r, const char *el) {
  static __thread char out[2048];
  char open[80], close_[80];
  snprintf(open, sizeof open, "<%s>", el);
  snprintf(close_, sizeof close_, "</%s>", el);
  out[0] = '\0';
  const char *a = r->body ? strstr(r->body, open) : NULL;
  const char *b = a ? strstr(a, close_) : NULL;
  if (a && b)
    snprintf(out, sizeof out, "%.*s", (int)(b - a - strlen(open)),
             a + strlen(open));
  return out;
}

void expect_s3_error(struct http_resp *r, int status, const char *code,
                     const char *msg_part) {
  cr_assert_eq(r->status, status, "status %d, body %s", r->status, r->body);
  cr_assert_str_eq(xml_text(r, "Code"), code, "body %s", r->body);
  if (msg_part)
    cr_assert_not_null(strstr(xml_text(r, "Message"), msg_part),
                       "message \"%s\" lacks \"%s\"", xml_text(r, "Message"),
                       msg_part);
  resp_free(r);
}

/* Canonical query of a raw query string (decoded, then re-encoded). */
static void canonical_query(const char *q, struct hbuf *out) {
  struct hparam p[64] = {{NULL, NULL}};
  char *names[64], *values[64];
  size_t n = 0;
  while (q && *q && n < 64) {
    size_t k = strcspn(q, "&");
    const char *eq = memchr(q, '=', k);
    size_t nl = eq ? (size_t)(eq - q) : k;
    struct hbuf a = HBUF_INIT, b = HBUF_INIT;
    huri_decode(&a, q, nl);
    if (eq)
      huri_decode(&b, eq + 1, k - nl - 1);
    names[n] = hbuf_steal(&a);
    values[n] = hbuf_steal(&b);
    p[n].name = names[n];
    p[n].value = values[n];
    n++;
    q += k + (q[k] == '&');
  }
  huri_canonical_query(out, p, n);
  for (size_t i = 0; i < n; i++) {
    free(names[i]);
    free(values[i]);
  }
}

void sign_headers(const char *url, const char *method, const char *target,
                  const char *const *hdrs, const char *payload_hash,
                  time_t when, char *authz, size_t authz_sz, char seed[65]) {
  char host[128], amz[17], name[64][64];
  int port;
  host_port(url, host, sizeof host, &port);
  s3_sigv4_amz_date(when, amz);
  struct s3_header h[64];
  size_t n = 0;
  h[n++] = (struct s3_header){"host", host};
  h[n++] = (struct s3_header){"x-amz-date", amz};
  h[n++] = (struct s3_header){"x-amz-content-sha256", payload_hash};
  for (size_t i = 0; hdrs && hdrs[i] && n < 64; i++) {
    split_hdr(hdrs[i], name[n], sizeof name[n], &h[n].value);
    h[n].name = name[n];
    n++;
  }
  size_t plen = strcspn(target, "?");
  char *path = strndup(target, plen);
  struct hbuf q = HBUF_INIT, creq = HBUF_INIT, sh = HBUF_INIT, sts = HBUF_INIT;
  canonical_query(target[plen] ? target + plen + 1 : "", &q);
  struct s3_sigv4_input in = {method, path,         hbuf_str(&q), h,
                              n,      payload_hash, amz,          T_REGION,
                              "s3",   NULL,         NULL};
  s3_sigv4_canonical_request(&in, &creq, &sh);
  s3_sigv4_string_to_sign(amz, T_REGION, "s3", hbuf_str(&creq), &sts);
  s3_sigv4_signature(T_SK, amz, T_REGION, "s3", hbuf_str(&sts), seed);
  snprintf(authz, authz_sz,
           "AWS4-HMAC-SHA256 Credential=%s/%.8s/%s/s3/aws4_request, "
           "SignedHeaders=%s, Signature=%s",
           T_AK, amz, T_REGION, hbuf_str(&sh), seed);
  free(path);
  hbuf_free(&q);
  hbuf_free(&creq);
  hbuf_free(&sh);
  hbuf_free(&sts);
}

void chunk_sig(time_t when, const char *prev, const void *data, size_t len,
               char out[65]) {
  char amz[17], hash[65];
  s3_sigv4_amz_date(when, amz);
  s3_sha256_hex(data, len, hash);
  struct hbuf sts = HBUF_INIT;
  hbuf_printf(&sts,
              "AWS4-HMAC-SHA256-PAYLOAD\n%s\n%.8s/%s/s3/aws4_request\n%s\n%s\n"
              "%s",
              amz, amz, T_REGION, prev, S3_EMPTY_SHA256, hash);
  s3_sigv4_signature(T_SK, amz, T_REGION, "s3", hbuf_str(&sts), out);
  hbuf_free(&sts);
}

/* The header lines of q, signed unless q->anonymous. */
static void request_headers(const char *url, const struct sreq *q,
                            struct hbuf *hdrs) {
  time_t when = q->when ? q->when : time(NULL);
  char amz[17], payload[65], host[128], name[64][64];
  int port;
  host_port(url, host, sizeof host, &port);
  if (q->host)
    snprintf(host, sizeof host, "%s", q->host);
  s3_sigv4_amz_date(when, amz);
  if (q->payload_hash)
    snprintf(payload, sizeof payload, "%s", q->payload_hash);
  else
    s3_sha256_hex(q->body ? q->body : "", q->len, payload);
  for (size_t i = 0; q->hdrs && q->hdrs[i]; i++)
    hbuf_printf(hdrs, "%s\r\n", q->hdrs[i]);
  for (size_t i = 0; q->unsigned_hdrs && q->unsigned_hdrs[i]; i++)
    hbuf_printf(hdrs, "%s\r\n", q->unsigned_hdrs[i]);
  if (!q->anonymous) {
    struct s3_header h[64];
    size_t n = 0;
    h[n++] = (struct s3_header){"host", host};
    h[n++] = (struct s3_header){"x-amz-date", amz};
    h[n++] = (struct s3_header){"x-amz-content-sha256", payload};
    for (size_t i = 0; q->hdrs && q->hdrs[i] && n < 64; i++) {
      split_hdr(q->hdrs[i], name[n], sizeof name[n], &h[n].value);
      h[n].name = name[n];
      n++;
    }
    size_t plen = strcspn(q->target, "?");
    char *path = strndup(q->target, plen);
    struct hbuf qs = HBUF_INIT, auth = HBUF_INIT;
    canonical_query(q->target[plen] ? q->target + plen + 1 : "", &qs);
    struct s3_sigv4_input in = {q->method,
                                path,
                                hbuf_str(&qs),
                                h,
                                n,
                                payload,
                                amz,
                                T_REGION,
                                "s3",
                                q->ak ? q->ak : T_AK,
                                q->sk ? q->sk : T_SK};
    s3_sigv4_authorization(&in, &auth);
    hbuf_printf(hdrs,
                "x-amz-date: %s\r\nx-amz-content-sha256: %s\r\n"
                "Authorization: %s\r\n",
                amz, payload, hbuf_str(&auth));
    free(path);
    hbuf_free(&qs);
    hbuf_free(&auth);
  }
}

int http_send(const char *url, const struct sreq *q, struct http_resp *out) {
  struct hbuf hdrs = HBUF_INIT;
  request_headers(url, q, &hdrs);
  int rc = transfer(url, q->method, q->target, q->host, &hdrs, q->body, q->len,
                    q->max_body, out);
  hbuf_free(&hdrs);
  return rc;
}

int http_send_pair(const char *url, const struct sreq *q1,
                   const struct sreq *q2, struct http_resp *out1,
                   struct http_resp *out2) {
  memset(out1, 0, sizeof *out1);
  memset(out2, 0, sizeof *out2);
  char host[128];
  int fd = connect_to(url, host, sizeof host);
  if (fd < 0)
    return -1;
  struct hbuf h1 = HBUF_INIT, h2 = HBUF_INIT, in = HBUF_INIT;
  request_headers(url, q1, &h1);
  request_headers(url, q2, &h2);
  /* The second request waits for the first answer: sent at once, it would
   * be pipelined, and a server may read it before its first body is out. */
  send_request(fd, host, q1->method, q1->target, &h1, q1->body, q1->len, 0);
  char buf[65536];
  const char *end = NULL;
  size_t need = SIZE_MAX;
  while (in.len < need) {
    ssize_t k = recv(fd, buf, sizeof buf, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    hbuf_append(&in, buf, (size_t)k);
    if (!end && (end = strstr(hbuf_str(&in), "\r\n\r\n")) != NULL) {
      struct http_resp tmp = {.head =
                                  strndup(in.data, (size_t)(end - in.data))};
      char cl[32];
      need = (size_t)(end + 4 - in.data) +
             (size_t)strtoull(resp_hdr(&tmp, "Content-Length", cl, sizeof cl),
                              NULL, 10);
      free(tmp.head);
    }
  }
  const char *p = hbuf_str(&in);
  size_t left = in.len;
  parse_answer(&p, &left, 1, out1);
  if (out1->status && left == 0) {
    send_request(fd, host, q2->method, q2->target, &h2, q2->body, q2->len, 1);
    hbuf_reset(&in);
    read_all(fd, &in, 0);
    p = hbuf_str(&in);
    left = in.len;
    parse_answer(&p, &left, 0, out2);
  }
  close(fd);
  hbuf_free(&h1);
  hbuf_free(&h2);
  hbuf_free(&in);
  return 0;
}

char *presign(const char *url, const char *method, const char *path,
              long expires, time_t when, const char *ak, const char *sk) {
  char amz[17], host[128], cred[200], exp[32];
  int port;
  host_port(url, host, sizeof host, &port);
  s3_sigv4_amz_date(when, amz);
  snprintf(cred, sizeof cred, "%s/%.8s/%s/s3/aws4_request", ak ? ak : T_AK, amz,
           T_REGION);
  snprintf(exp, sizeof exp, "%ld", expires);
  struct hparam p[] = {{"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
                       {"X-Amz-Credential", cred},
                       {"X-Amz-Date", amz},
                       {"X-Amz-Expires", exp},
                       {"X-Amz-SignedHeaders", "host"}};
  struct hbuf q = HBUF_INIT, creq = HBUF_INIT, sh = HBUF_INIT, sts = HBUF_INIT,
              out = HBUF_INIT;
  huri_canonical_query(&q, p, 5);
  struct s3_header h[] = {{"host", host}};
  struct s3_sigv4_input in = {
      method, path,     hbuf_str(&q), h,    1,   S3_UNSIGNED_PAYLOAD,
      amz,    T_REGION, "s3",         NULL, NULL};
  char sig[65];
  s3_sigv4_canonical_request(&in, &creq, &sh);
  s3_sigv4_string_to_sign(amz, T_REGION, "s3", hbuf_str(&creq), &sts);
  s3_sigv4_signature(sk ? sk : T_SK, amz, T_REGION, "s3", hbuf_str(&sts), sig);
  hbuf_printf(&out, "%s?%s&X-Amz-Signature=%s", path, hbuf_str(&q), sig);
  hbuf_free(&q);
  hbuf_free(&creq);
  hbuf_free(&sh);
  hbuf_free(&sts);
  return hbuf_steal(&out);
}

void fill_pattern(void *buf, size_t n, unsigned seed) {
  uint32_t x = seed * 2654435761u + 1;
  unsigned char *p = buf;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (unsigned char)x;
  }
}

char *put_pattern(struct hipobj_client *c, const char *key, size_t n,
                  unsigned seed) {
  char *data = malloc(n ? n : 1);
  cr_assert_not_null(data);
  fill_pattern(data, n, seed);
  struct hipobj_error *e = NULL;
  cr_assert_eq(hipobj_error_create(&e), HIPOBJ_OK);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  int st = hipobj_s3_put(c, T_BUCKET, key, &src, NULL, NULL, e);
  cr_assert_eq(st, HIPOBJ_OK, "PUT %s: %s", key, hipobj_error_message(e));
  hipobj_error_free(e);
  return data;
}

void flip_stored(const struct server_proc *s, const char *key, uint64_t at) {
  char path[600];
  snprintf(path, sizeof path, "%s/" T_BUCKET "/k%s", s->root, key);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  cr_assert(fd >= 0, "open %s", path);
  unsigned char b;
  cr_assert_eq(pread(fd, &b, 1, (off_t)at), 1, "%s: no byte %llu", path,
               (unsigned long long)at);
  b ^= 0x20;
  cr_assert_eq(pwrite(fd, &b, 1, (off_t)at), 1);
  close(fd);
}

void file_equals(int fd, uint64_t off, const void *want, size_t n) {
  char *got = malloc(n ? n : 1);
  cr_assert_not_null(got);
  cr_assert_eq(pread(fd, got, n, (off_t)off), (ssize_t)n, "pread at %llu",
               (unsigned long long)off);
  cr_assert_eq(memcmp(got, want, n), 0, "file bytes at %llu differ",
               (unsigned long long)off);
  free(got);
}

void md5_etag(const void *data, size_t n, char out[40]) {
  uint8_t d[16];
  char hex[33];
  s3_md5(data, n, d);
  hhex_encode(d, 16, hex);
  snprintf(out, 40, "\"%s\"", hex);
}

/* Reflected CRCs, one bit at a time: slow, short, and independent of the
 * table and carry-less-multiply code under test. */
uint32_t ref_crc32c(uint32_t crc, const void *data, size_t n) {
  const uint8_t *p = data;
  crc = ~crc;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t ref_crc32(uint32_t crc, const void *data, size_t n) {
  const uint8_t *p = data;
  crc = ~crc;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint64_t ref_crc64nvme(uint64_t crc, const void *data, size_t n) {
  const uint8_t *p = data;
  crc = ~crc;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0x9A6C9329AC4BC9B5ull & (0ull - (crc & 1u)));
  }
  return ~crc;
}

void ref_b64(uint64_t v, int bytes, char out[16]) {
  uint8_t be[8];
  for (int i = 0; i < bytes; i++)
    be[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
  hb64_encode(be, (size_t)bytes, out);
}
