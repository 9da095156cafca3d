/* mini_server.c - scripted HTTP/1.1 test server (see mini_server.h). One
 * thread, one connection at a time, which is all the tests need. */
#include "mini_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hipobj.h"

struct mini_req {
  char *head; /* request line + headers, NUL-terminated */
  size_t body_len;
};

struct mini_server {
  int lfd;
  int stop_pipe[2];
  pthread_t thread;
  pthread_mutex_t lock;
  const struct mini_reply *script;
  size_t n_script;
  struct mini_req reqs[MINI_MAX_REQUESTS];
  size_t n_reqs;
  size_t n_conns;
  char url[64];
  char line_buf[MINI_MAX_REQUESTS][512];
};

static const struct mini_reply fallback = {
    "HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n"
    "Content-Length: 0\r\n\r\n",
    1};

static int wait_readable(struct mini_server *s, int fd) {
  struct pollfd p[2] = {{fd, POLLIN, 0}, {s->stop_pipe[0], POLLIN, 0}};
  if (poll(p, 2, 10000) <= 0 || p[1].revents)
    return -1;
  return 0;
}

/* Reads one request; returns 0, or -1 when the peer closed or we stop. */
static int read_request(struct mini_server *s, int fd, struct mini_req *out) {
  size_t cap = 8192, len = 0;
  char *buf = malloc(cap);
  char *end = NULL;
  while (!end) {
    if (len + 1 >= cap) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
    if (wait_readable(s, fd) != 0)
      goto fail;
    ssize_t n = read(fd, buf + len, cap - len - 1);
    if (n <= 0)
      goto fail;
    len += (size_t)n;
    buf[len] = '\0';
    end = strstr(buf, "\r\n\r\n");
  }
  size_t head_len = (size_t)(end - buf) + 4;
  size_t clen = 0;
  const char *cl = strcasestr(buf, "\r\ncontent-length:");
  if (cl && cl < end)
    clen = strtoul(cl + 17, NULL, 10);
  size_t have = len - head_len;
  /* libcurl waits up to a second for this before sending a large body. */
  const char *ex = strcasestr(buf, "\r\nexpect: 100-continue");
  if (ex && ex < end && have < clen) {
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    if (write(fd, cont, sizeof cont - 1) != (ssize_t)(sizeof cont - 1))
      goto fail;
  }
  while (have < clen) {
    char tmp[65536];
    if (wait_readable(s, fd) != 0)
      goto fail;
    size_t want = clen - have < sizeof tmp ? clen - have : sizeof tmp;
    ssize_t n = read(fd, tmp, want);
    if (n <= 0)
      goto fail;
    have += (size_t)n;
  }
  buf[head_len] = '\0';
  out->head = buf;
  out->body_len = clen;
  return 0;
fail:
  free(buf);
  return -1;
}

static void *serve(void *arg) {
  struct mini_server *s = arg;
  for (;;) {
    if (wait_readable(s, s->lfd) != 0)
      break;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
      continue;
    pthread_mutex_lock(&s->lock);
    s->n_conns++;
    pthread_mutex_unlock(&s->lock);
    for (;;) {
      struct mini_req rq;
      if (read_request(s, fd, &rq) != 0)
        break;
      pthread_mutex_lock(&s->lock);
      size_t i = s->n_reqs;
      if (i < MINI_MAX_REQUESTS)
        s->reqs[s->n_reqs++] = rq;
      else
        free(rq.head);
      pthread_mutex_unlock(&s->lock);
      const struct mini_reply *r = i < s->n_script ? &s->script[i] : &fallback;
      char *built = NULL;
      if (!r->raw) {
        const char *b = r->body ? r->body : "";
        /* A server that closes after the answer says so: else a client
         * may reuse the connection before the close reaches it. */
        if (asprintf(&built, "HTTP/1.1 %s\r\n%s%sContent-Length: %zu\r\n\r\n%s",
                     r->status, r->headers ? r->headers : "",
                     r->close_after ? "Connection: close\r\n" : "", strlen(b),
                     b) < 0)
          abort();
      }
      const char *p = r->raw ? r->raw : built;
      size_t left = strlen(p);
      if (r->delay_us) {
        struct timespec ts = {(time_t)(r->delay_us / 1000000),
                              (long)(r->delay_us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
          ;
      }
      while (left) {
        /* A client may hang up mid-answer: no SIGPIPE for that. */
        ssize_t n = send(fd, p, left, MSG_NOSIGNAL);
        if (n <= 0)
          break;
        p += n;
        left -= (size_t)n;
      }
      free(built);
      if (r->close_after)
        break;
    }
    close(fd);
  }
  return NULL;
}

struct mini_server *mini_start(const struct mini_reply *script, size_t n) {
  struct mini_server *s = calloc(1, sizeof *s);
  s->script = script;
  s->n_script = n;
  pthread_mutex_init(&s->lock, NULL);
  s->lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(s->lfd, 16) != 0 ||
      getsockname(s->lfd, (struct sockaddr *)&a, &alen) != 0 ||
      pipe(s->stop_pipe) != 0) {
    perror("mini_server");
    abort();
  }
  snprintf(s->url, sizeof s->url, "http://127.0.0.1:%u", ntohs(a.sin_port));
  pthread_create(&s->thread, NULL, serve, s);
  return s;
}

const char *mini_url(const struct mini_server *s) {
  return s->url;
}

void mini_stop(struct mini_server *s) {
  if (write(s->stop_pipe[1], "x", 1) != 1)
    abort();
  pthread_join(s->thread, NULL);
  close(s->lfd);
  close(s->stop_pipe[0]);
  close(s->stop_pipe[1]);
  for (size_t i = 0; i < s->n_reqs; i++)
    free(s->reqs[i].head);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

size_t mini_connections(struct mini_server *s) {
  pthread_mutex_lock(&s->lock);
  size_t n = s->n_conns;
  pthread_mutex_unlock(&s->lock);
  return n;
}

size_t mini_count(struct mini_server *s) {
  pthread_mutex_lock(&s->lock);
  size_t n = s->n_reqs;
  pthread_mutex_unlock(&s->lock);
  return n;
}

const char *mini_request_line(struct mini_server *s, size_t i) {
  if (i >= mini_count(s))
    return NULL;
  const char *h = s->reqs[i].head;
  size_t n = strcspn(h, " ");
  const char *path = h + n + 1;
  size_t m = strcspn(path, " ");
  snprintf(s->line_buf[i], sizeof s->line_buf[i], "%.*s %.*s", (int)n, h,
           (int)m, path);
  return s->line_buf[i];
}

const char *mini_request_header(struct mini_server *s, size_t i,
                                const char *name) {
  if (i >= mini_count(s))
    return NULL;
  static __thread char value[512];
  char pat[128];
  snprintf(pat, sizeof pat, "\r\n%s:", name);
  const char *p = strcasestr(s->reqs[i].head, pat);
  if (!p)
    return NULL;
  p += strlen(pat);
  while (*p == ' ')
    p++;
  size_t n = strcspn(p, "\r\n");
  snprintf(value, sizeof value, "%.*s", (int)n, p);
  return value;
}

size_t mini_request_body_len(struct mini_server *s, size_t i) {
  return i < mini_count(s) ? s->reqs[i].body_len : 0;
}

void mini_client_config(const struct mini_server *s,
                        struct hipobj_client_config *cfg) {
  *cfg = (struct hipobj_client_config)HIPOBJ_CLIENT_CONFIG_INIT;
  cfg->endpoint_url = s->url;
  cfg->access_key_id = "AKIDTEST";
  cfg->secret_access_key = "SECRET-never-printed";
  cfg->region = "us-east-1";
  cfg->max_attempts = 1;
  cfg->log_level = HIPOBJ_LOG_NONE;
}
