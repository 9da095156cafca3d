/* mini_server.h - a scripted HTTP/1.1 server on 127.0.0.1 for tests that
 * need exact control over answers (errors, short bodies, bad headers) to
 * exercise the real libcurl engine and the retry logic. It answers requests
 * in order from a script and records what it received. */
#ifndef HIPOBJ_TEST_MINI_SERVER_H
#define HIPOBJ_TEST_MINI_SERVER_H

#include <stddef.h>

/* Either `raw` (sent byte for byte: for deliberately broken answers), or
 * `status` + `headers` + `body`, sent with a correct Content-Length. */
struct mini_reply {
  const char *raw;     /* complete HTTP answer: status line, headers, body */
  int close_after;     /* close the connection after sending the answer
                        * (a built answer then says "Connection: close") */
  const char *status;  /* "200 OK" */
  const char *headers; /* extra header lines, each ending in CRLF, or NULL */
  const char *body;    /* NULL: empty */
  unsigned delay_us;   /* answer this long after the request arrived */
};

#define MINI_MAX_REQUESTS 64

struct mini_server;

struct hipobj_client_config;
/* A client configuration for s: its URL, the tests' credentials and
 * region, one attempt, no log; tests change what they need after it. */
void mini_client_config(const struct mini_server *s,
                        struct hipobj_client_config *cfg);

/* Starts on an ephemeral port. Requests beyond the script get a 500. */
struct mini_server *mini_start(const struct mini_reply *script, size_t n);
/* "http://127.0.0.1:PORT" */
const char *mini_url(const struct mini_server *s);
/* Stops the server thread and frees it. */
void mini_stop(struct mini_server *s);
/* Connections accepted so far. */
size_t mini_connections(struct mini_server *s);
/* Requests received so far. */
size_t mini_count(struct mini_server *s);
/* "METHOD /path?query" of request i (stable until mini_stop). */
const char *mini_request_line(struct mini_server *s, size_t i);
/* Value of header `name` in request i, or NULL. */
const char *mini_request_header(struct mini_server *s, size_t i,
                                const char *name);
/* Length of the body of request i. */
size_t mini_request_body_len(struct mini_server *s, size_t i);

#endif
