/* answerer.c - an "answering machine" for client benchmarks: every request
 * on a connection gets the same stored HTTP answer at once, so a client's
 * serial requests cost the client, the loopback and (unless --poll) one
 * wake-up of the answering thread, and no server work. With get_loop.c it
 * measures what a serial small GET costs hipobj itself
 * (tests/bench/README.md, "What a serial GET costs the client").
 * A benchmark tool, not a test; loopback only.
 *
 *   answerer ANSWER_FILE PORT [--poll]
 *     ANSWER_FILE  a whole answer, status line to body (`curl -i` of a GET
 *                  from hipobj-server: the client checks its headers)
 *     --poll       each connection's thread polls for the next request
 *                  (MSG_DONTWAIT in a loop) instead of sleeping in recv()
 *
 * Requests are recognised by their blank line; bodies are not expected
 * (GETs only). One thread per connection. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQ_MAX 65536

static char *answer;
static size_t answer_len;
static int poll_for_requests;

/* Reads more of the connection into b (n bytes held); 0 at its end. */
static ssize_t read_more(int fd, char *b, size_t n) {
  for (;;) {
    ssize_t r =
        recv(fd, b + n, REQ_MAX - 1 - n, poll_for_requests ? MSG_DONTWAIT : 0);
    if (r >= 0)
      return r;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return -1;
  }
}

static void *serve(void *arg) {
  int fd = (int)(intptr_t)arg, one = 1;
  char *b = malloc(REQ_MAX);
  size_t n = 0;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  while (b) {
    ssize_t r = read_more(fd, b, n);
    if (r <= 0)
      break;
    n += (size_t)r;
    b[n] = '\0';
    char *end;
    while ((end = strstr(b, "\r\n\r\n")) != NULL) {
      if (send(fd, answer, answer_len, MSG_NOSIGNAL) != (ssize_t)answer_len)
        goto out;
      size_t used = (size_t)(end + 4 - b);
      memmove(b, b + used, n - used + 1);
      n -= used;
    }
    if (n == REQ_MAX - 1) /* a request head this long: not a client of ours */
      break;
  }
out:
  close(fd);
  free(b);
  return NULL;
}

static int load(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "answerer: %s: %s\n", path, strerror(errno));
    return -1;
  }
  long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (len > 0 && fseek(f, 0, SEEK_SET) == 0 && (answer = malloc((size_t)len)))
    answer_len = fread(answer, 1, (size_t)len, f);
  fclose(f);
  if (len <= 0 || answer_len != (size_t)len ||
      strncmp(answer, "HTTP/1.1 ", 9) != 0) {
    fprintf(stderr, "answerer: %s: not a stored HTTP/1.1 answer\n", path);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--poll"))) {
    fprintf(stderr, "usage: answerer ANSWER_FILE PORT [--poll]\n");
    return 2;
  }
  poll_for_requests = argc == 4;
  if (load(argv[1]) != 0)
    return 1;
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)atoi(argv[2])),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (ls < 0 ||
      setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 64) != 0) {
    perror("answerer: listening socket");
    return 1;
  }
  for (;;) {
    int fd = accept(ls, NULL, NULL);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      perror("answerer: accept");
      return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, serve, (void *)(intptr_t)fd) != 0) {
      close(fd);
      continue;
    }
    pthread_detach(t);
  }
}
