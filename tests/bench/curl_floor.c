/* curl_floor.c - what a serial GET costs below hipObject: the same URL
 * fetched again and again by libcurl alone (one kept easy handle,
 * curl_easy_perform) and by a plain socket loop writing fixed request
 * bytes and reading the answer by its Content-Length. Against
 * answerer.c (which answers at once) the rates are the floors of a
 * libcurl client and of any HTTP client on this machine; get_loop.c gives
 * hipObject's for comparison (tests/bench/README.md, "What a serial GET
 * costs the client"). A benchmark, not a test.
 *
 *   curl_floor MODE URL [N]   1 untimed and 3 timed rounds of N GETs
 *                             (default 10000); prints requests/s per round
 *     plain    libcurl, fixed signature-shaped headers (no signing)
 *     sig      libcurl signing each request (CURLOPT_AWS_SIGV4, as the
 *              curl tool), credentials from AWS_ACCESS_KEY_ID and
 *              AWS_SECRET_ACCESS_KEY
 *     raw      a blocking socket: send, recv until the answer is whole
 *     rawspin  the same, polling the socket without sleeping
 * URL: http://IPV4:PORT/PATH (raw modes); anything libcurl takes else. */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEADERS                                                                \
  "x-amz-content-sha256: "                                                     \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\r\n"       \
  "x-amz-date: 20261204T000000Z\r\n"                                           \
  "Authorization: AWS4-HMAC-SHA256 "                                           \
  "Credential=AK/20261204/us-east-1/s3/aws4_request, "                         \
  "SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature="             \
  "0000000000000000000000000000000000000000000000000000000000000000\r\n"

static char buf[1 << 20];
static size_t got;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void report(const char *mode, int round, int n, double t0) {
  if (round)
    printf("curl_floor %s: round %d: %.0f requests/s\n", mode, round,
           n / (now_s() - t0));
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud) {
  (void)ud;
  size_t len = size * nmemb;
  if (got + len <= sizeof buf)
    memcpy(buf + got, p, len);
  got += len;
  return len;
}

/* One answer whole: its header block, then Content-Length body bytes. */
static int read_answer(int fd, int spin) {
  size_t have = 0, need = 0;
  for (;;) {
    ssize_t r =
        recv(fd, buf + have, sizeof buf - 1 - have, spin ? MSG_DONTWAIT : 0);
    if (r < 0 && spin)
      continue;
    if (r <= 0)
      return -1;
    have += (size_t)r;
    buf[have] = '\0';
    if (!need) {
      char *end = strstr(buf, "\r\n\r\n");
      if (!end)
        continue;
      char *cl = strcasestr(buf, "\r\ncontent-length:");
      need = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 17, NULL, 10) : 0);
    }
    if (have >= need)
      return have == need ? 0 : -1;
  }
}

static int raw(const char *mode, const char *url, int n) {
  char host[64], path[512];
  int port;
  if (sscanf(url, "http://%63[0-9.]:%d%511s", host, &port, path) != 3) {
    fprintf(stderr, "curl_floor: %s wants http://IPV4:PORT/PATH\n", mode);
    return 2;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port)};
  if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
      connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    perror("curl_floor: connect");
    return 1;
  }
  char req[2048];
  int len =
      snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n%s\r\n",
               path, host, port, HEADERS);
  int spin = !strcmp(mode, "rawspin");
  for (int round = 0; round < 4; round++) {
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
      if (send(fd, req, (size_t)len, MSG_NOSIGNAL) != len ||
          read_answer(fd, spin) != 0) {
        fprintf(stderr, "curl_floor: GET %d failed\n", i);
        close(fd);
        return 1;
      }
    }
    report(mode, round, n, t0);
  }
  close(fd);
  return 0;
}

static int with_curl(const char *mode, const char *url, int n) {
  CURL *h = curl_easy_init();
  struct curl_slist *hd = NULL;
  char userpwd[512];
  if (!h)
    return 1;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  if (!strcmp(mode, "sig")) {
    const char *ak = getenv("AWS_ACCESS_KEY_ID"),
               *sk = getenv("AWS_SECRET_ACCESS_KEY");
    snprintf(userpwd, sizeof userpwd, "%s:%s", ak ? ak : "", sk ? sk : "");
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
    curl_easy_setopt(h, CURLOPT_USERPWD, userpwd);
    hd = curl_slist_append(hd, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  } else {
    /* The same headers as the raw modes, one line each. */
    char lines[] = HEADERS;
    for (char *l = strtok(lines, "\r\n"); l; l = strtok(NULL, "\r\n"))
      hd = curl_slist_append(hd, l);
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
  int rc = 0;
  for (int round = 0; round < 4 && !rc; round++) {
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
      got = 0;
      CURLcode c = curl_easy_perform(h);
      if (c != CURLE_OK) {
        fprintf(stderr, "curl_floor: %s\n", curl_easy_strerror(c));
        rc = 1;
        break;
      }
    }
    if (!rc)
      report(mode, round, n, t0);
  }
  curl_slist_free_all(hd);
  curl_easy_cleanup(h);
  return rc;
}

int main(int argc, char **argv) {
  int n = argc > 3 ? atoi(argv[3]) : 10000;
  if (argc < 3 || argc > 4 || n < 1) {
    fprintf(stderr, "usage: curl_floor plain|sig|raw|rawspin URL [N]\n");
    return 2;
  }
  const char *mode = argv[1];
  if (!strcmp(mode, "raw") || !strcmp(mode, "rawspin"))
    return raw(mode, argv[2], n);
  if (strcmp(mode, "plain") != 0 && strcmp(mode, "sig") != 0) {
    fprintf(stderr, "curl_floor: unknown mode '%s'\n", mode);
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = with_curl(mode, argv[2], n);
  curl_global_cleanup();
  return rc;
}
