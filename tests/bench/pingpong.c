/* pingpong.c - the loopback round trip of this machine, the floor under
 * every serial small request: a parent and a child process bounce 64 bytes
 * over TCP on 127.0.0.1, each end either sleeping in recv() until data
 * comes or polling for it (MSG_DONTWAIT in a loop). The gap between
 * "client polls, server sleeps" and "both poll" is what a server thread's
 * wake-up costs a client (tests/bench/README.md, "The server's wake-up").
 * A benchmark, not a test.
 *
 *   pingpong [N [CLIENT_CPU SERVER_CPU]]
 *     N round trips per mode after 1000 unmeasured (20000); each end pinned
 *     to the CPU given (on a virtual machine the cost of a wake-up depends
 *     on which two virtual CPUs, that is which host cores, take part). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG 64
#define WARMUP 1000

static int cpu_client = -1, cpu_server = -1; /* -1: not pinned */

/* Pins the calling process to cpu (when one was given). */
static int pin(int cpu) {
  if (cpu < 0)
    return 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) == 0)
    return 0;
  fprintf(stderr, "pingpong: cannot run on CPU %d: %s\n", cpu, strerror(errno));
  return -1;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* Reads exactly MSG bytes; 0 at end of stream, -1 on error. */
static int recv_msg(int fd, char *b, int poll_for_it) {
  size_t got = 0;
  while (got < MSG) {
    ssize_t r = recv(fd, b + got, MSG - got, poll_for_it ? MSG_DONTWAIT : 0);
    if (r > 0)
      got += (size_t)r;
    else if (r == 0)
      return 0;
    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return -1;
  }
  return 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One mode: returns 0, or -1 after saying what failed. */
static int run(const char *name, int client_polls, int server_polls, int n) {
  int one = 1, ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(ls, 1) != 0 || getsockname(ls, (struct sockaddr *)&a, &al) != 0) {
    perror("pingpong: listening socket");
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("pingpong: fork");
    return -1;
  }
  if (pid == 0) { /* the server: echoes until the client closes */
    char b[MSG];
    if (pin(cpu_server) != 0)
      _exit(1);
    int s = accept(ls, NULL, NULL);
    if (s < 0)
      _exit(1);
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    while (recv_msg(s, b, server_polls) == 1)
      if (send(s, b, MSG, MSG_NOSIGNAL) != MSG)
        _exit(1);
    _exit(0);
  }
  close(ls);
  int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  double *rtt = malloc((size_t)n * sizeof *rtt);
  int rc = -1;
  char b[MSG] = {0};
  if (c < 0 || !rtt || connect(c, (struct sockaddr *)&a, sizeof a) != 0) {
    perror("pingpong: client socket");
    goto out;
  }
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  for (int i = 0; i < WARMUP + n; i++) {
    double t0 = now_us();
    if (send(c, b, MSG, MSG_NOSIGNAL) != MSG ||
        recv_msg(c, b, client_polls) != 1) {
      fprintf(stderr, "pingpong: the echo failed\n");
      goto out;
    }
    if (i >= WARMUP)
      rtt[i - WARMUP] = now_us() - t0;
  }
  qsort(rtt, (size_t)n, sizeof *rtt, cmp_double);
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += rtt[i];
  printf("%-34s mean %6.1f us  p50 %6.1f  p90 %6.1f  p99 %6.1f\n", name,
         sum / n, rtt[n / 2], rtt[n * 9 / 10], rtt[n * 99 / 100]);
  rc = 0;
out:
  if (c >= 0)
    close(c);
  int st;
  waitpid(pid, &st, 0);
  free(rtt);
  return rc;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  if (n < 100 || (argc != 2 && argc != 4 && argc != 1)) {
    fprintf(stderr, "usage: pingpong [N >= 100 [CLIENT_CPU SERVER_CPU]]\n");
    return 2;
  }
  if (argc == 4) {
    cpu_client = atoi(argv[2]), cpu_server = atoi(argv[3]);
    if (cpu_client < 0 || cpu_server < 0 || cpu_client >= CPU_SETSIZE ||
        cpu_server >= CPU_SETSIZE) {
      fprintf(stderr, "pingpong: CPUs are numbers from 0\n");
      return 2;
    }
    printf("client on CPU %d, server on CPU %d\n", cpu_client, cpu_server);
  }
  if (pin(cpu_client) != 0)
    return 1;
  int rc = 0;
  rc |= run("both sleep", 0, 0, n);
  rc |= run("client polls, server sleeps", 1, 0, n);
  rc |= run("both poll", 1, 1, n);
  return rc ? 1 : 0;
}
