/* poller.c - who runs hipobj-server's HTTP daemon: by default
 * libmicrohttpd's own thread pool (--threads N), with --busy-poll US one
 * daemon per thread in external-epoll mode, each run by a thread of ours
 * that, after it answers a request, keeps checking its daemon for US
 * microseconds before it sleeps.
 *
 * Why: a keep-alive client sends its next request right after reading an
 * answer. A thread asleep in epoll_wait is woken for it by the kernel, and
 * on virtual machines that wake-up of an idle CPU costs tens of
 * microseconds, more than the server's whole work on a small GET (2-vCPU
 * VM, loopback: a TCP ping-pong takes 19 us against a sleeping peer, 5 us
 * against a polling one). A benchmark server should not put that into
 * every client's request rate.
 *
 * Only the answer to the last request in progress opens a polling window:
 * that is a client waiting on one request at a time. While others are in
 * progress (parallel parts, many small requests in flight) the server has
 * work that wakes it anyway, and polling would take CPU the clients need to
 * move their bytes: on the 2-vCPU VM, 64 MiB GETs into memory (8 parts in
 * flight) with windows opened after every answer made 1121-1270 MB/s, 1613
 * without polling. At most half the usable CPUs poll at once.
 *
 * The daemons have no listening socket: an acceptor thread takes each new
 * connection and hands it to the daemon with the fewest (its thread adds
 * it with MHD_add_connection). Daemons sharing the socket instead let the
 * one thread that polls take every connection: a 1 GiB GET into memory in
 * parallel parts, all served by one thread, fell from 16.5 to 4.6 GB/s on
 * the H200 machine. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server.h"
#include "src/base/cpus.h"

/* A connection accepted, waiting for its daemon's thread to take it. */
struct handoff {
  int fd;
  socklen_t len;
  struct sockaddr_storage addr;
  struct handoff *next;
};

struct poller {
  struct srv_http *h;
  struct MHD_Daemon *d;
  int epfd;
  int wake_fd; /* eventfd: connections handed over */
  pthread_mutex_t lock;
  struct handoff *queue; /* under lock */
  atomic_uint load;      /* its connections, as last counted, plus queued */
  pthread_t thread;
  int started;
};

struct srv_http {
  struct server *s;
  struct MHD_Daemon *pool; /* default mode: libmicrohttpd's threads */
  struct poller *p;        /* --busy-poll: one per thread */
  unsigned n;
  int listen_fd;
  pthread_t acceptor;
  int acceptor_started;
  int stop_fd; /* eventfd: readable once stopping */
  uint64_t poll_ns;
  unsigned max_pollers;
  atomic_uint pollers; /* threads polling now */
  /* For the log line at stop: polling windows begun, and the times work
   * was there while polling (each a wake-up spared). */
  atomic_ullong windows, caught;
};

/* Requests begun and not yet ended, all threads. */
static atomic_int in_progress;
/* Set by srv_http_answered() during MHD_run() on this thread when it ended
 * the last request in progress. */
static _Thread_local int answered;

void srv_http_begun(void) {
  atomic_fetch_add(&in_progress, 1);
}

void srv_http_answered(void) {
  if (atomic_fetch_sub(&in_progress, 1) == 1)
    answered = 1;
}

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* May this thread poll? At most max_pollers at once. */
static int poll_slot_take(struct srv_http *h) {
  unsigned n = atomic_load(&h->pollers);
  while (n < h->max_pollers)
    if (atomic_compare_exchange_weak(&h->pollers, &n, n + 1))
      return 1;
  return 0;
}

/* Adds the connections handed to p (on p's thread, as libmicrohttpd
 * wants for a daemon it does not run itself). */
static void take_handoffs(struct poller *p) {
  uint64_t n;
  while (read(p->wake_fd, &n, sizeof n) < 0 && errno == EINTR)
    ;
  pthread_mutex_lock(&p->lock);
  struct handoff *q = p->queue;
  p->queue = NULL;
  pthread_mutex_unlock(&p->lock);
  while (q) {
    struct handoff *next = q->next;
    /* On failure libmicrohttpd has closed the socket. */
    if (MHD_add_connection(p->d, q->fd, (struct sockaddr *)&q->addr, q->len) !=
        MHD_YES)
      srv_log(p->h->s, SLOG_WARN, "could not take a connection: %s",
              strerror(errno));
    free(q);
    q = next;
  }
}

/* Publishes how many connections p's daemon has (read on p's thread). */
static void count_load(struct poller *p) {
  const union MHD_DaemonInfo *di =
      MHD_get_daemon_info(p->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
  unsigned queued = 0;
  pthread_mutex_lock(&p->lock);
  for (struct handoff *q = p->queue; q; q = q->next)
    queued++;
  pthread_mutex_unlock(&p->lock);
  atomic_store(&p->load, (di ? di->num_connections : 0) + queued);
}

static void *poller_main(void *arg) {
  struct poller *p = arg;
  struct srv_http *h = p->h;
  struct pollfd fds[3] = {{.fd = p->epfd, .events = POLLIN},
                          {.fd = h->stop_fd, .events = POLLIN},
                          {.fd = p->wake_fd, .events = POLLIN}};
  uint64_t busy_until = 0;
  int polling = 0; /* holds a poll slot */
  for (;;) {
    /* libmicrohttpd's rule for external polling: never wait past
     * MHD_get_timeout(), and run the daemon after a wait it bounded. */
    MHD_UNSIGNED_LONG_LONG mt = 0;
    int bounded = MHD_get_timeout(p->d, &mt) == MHD_YES;
    int wait = !bounded ? -1 : mt > 60000 ? 60000 : (int)mt;
    if (polling && mono_ns() >= busy_until) {
      atomic_fetch_sub(&h->pollers, 1);
      polling = 0;
    }
    if (polling)
      wait = 0;
    int n = poll(fds, 3, wait);
    if (n < 0 && errno != EINTR)
      break;
    if (n > 0 && fds[1].revents)
      break;
    if (n > 0 && fds[2].revents)
      take_handoffs(p);
    int work = n > 0 || (bounded && mt == 0);
    answered = 0;
    if (work || (bounded && wait != 0)) {
      MHD_run(p->d);
      count_load(p);
    }
    if (work && polling)
      atomic_fetch_add(&h->caught, 1);
    if (answered && (polling || poll_slot_take(h))) {
      if (!polling)
        atomic_fetch_add(&h->windows, 1);
      polling = 1;
      busy_until = mono_ns() + h->poll_ns;
    }
  }
  if (polling)
    atomic_fetch_sub(&h->pollers, 1);
  /* Connections resumed while stopping (delay.c) leave the suspended list
   * here: libmicrohttpd refuses to stop a daemon with suspended ones. */
  MHD_run(p->d);
  return NULL;
}

/* Accepts connections and hands each to the daemon with the fewest (the
 * first such from a rotating start, so equal ones take turns). */
static void *acceptor_main(void *arg) {
  struct srv_http *h = arg;
  struct pollfd fds[2] = {{.fd = h->listen_fd, .events = POLLIN},
                          {.fd = h->stop_fd, .events = POLLIN}};
  unsigned next = 0;
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (fds[1].revents)
      break;
    struct handoff *c = calloc(1, sizeof *c);
    if (!c) {
      usleep(1000); /* out of memory: the connection waits in the backlog */
      continue;
    }
    c->len = sizeof c->addr;
    c->fd = accept4(h->listen_fd, (struct sockaddr *)&c->addr, &c->len,
                    SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c->fd < 0) {
      /* EAGAIN: gone before we took it; EMFILE and the like: retry soon
       * rather than spin on a socket that stays readable. */
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
          errno != ECONNABORTED)
        usleep(1000);
      free(c);
      continue;
    }
    unsigned best = next % h->n, best_load = UINT32_MAX;
    for (unsigned k = 0; k < h->n; k++) {
      unsigned i = (next + k) % h->n;
      unsigned l = atomic_load(&h->p[i].load);
      if (l < best_load) {
        best = i;
        best_load = l;
      }
    }
    next = best + 1;
    srv_log(h->s, SLOG_DEBUG,
            "connection handed to thread %u of %u (it had %u)", best, h->n,
            best_load);
    struct poller *p = &h->p[best];
    pthread_mutex_lock(&p->lock);
    c->next = p->queue;
    p->queue = c;
    pthread_mutex_unlock(&p->lock);
    atomic_fetch_add(&p->load, 1);
    uint64_t one = 1;
    while (write(p->wake_fd, &one, sizeof one) < 0 && errno == EINTR)
      ;
  }
  return NULL;
}

static int start_pollers(struct srv_http *h, int listen_fd) {
  h->listen_fd = listen_fd;
  /* Non-blocking: a connection reset between poll and accept must not
   * block the acceptor. */
  int fl = fcntl(listen_fd, F_GETFL);
  if (fl < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) != 0)
    return -1;
  h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  h->p = calloc(h->n, sizeof *h->p);
  if (h->stop_fd < 0 || !h->p)
    return -1;
  for (unsigned i = 0; i < h->n; i++) {
    struct poller *p = &h->p[i];
    p->h = h;
    p->wake_fd = -1;
    pthread_mutex_init(&p->lock, NULL);
    atomic_init(&p->load, 0);
  }
  for (unsigned i = 0; i < h->n; i++) {
    struct poller *p = &h->p[i];
    p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    p->d = http_start(h->s, -1);
    if (p->wake_fd < 0 || !p->d)
      return -1;
    const union MHD_DaemonInfo *di =
        MHD_get_daemon_info(p->d, MHD_DAEMON_INFO_EPOLL_FD);
    if (!di)
      return -1;
    p->epfd = di->epoll_fd;
  }
  for (unsigned i = 0; i < h->n; i++) {
    if (pthread_create(&h->p[i].thread, NULL, poller_main, &h->p[i]) != 0)
      return -1;
    h->p[i].started = 1;
  }
  if (pthread_create(&h->acceptor, NULL, acceptor_main, h) != 0)
    return -1;
  h->acceptor_started = 1;
  return 0;
}

struct srv_http *srv_http_start(struct server *s, int listen_fd) {
  struct srv_http *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->s = s;
  h->stop_fd = -1;
  h->listen_fd = -1;
  if (!s->busy_poll_us) {
    h->pool = http_start(s, listen_fd);
    if (!h->pool) {
      free(h);
      return NULL;
    }
    return h;
  }
  h->n = s->threads;
  h->poll_ns = (uint64_t)s->busy_poll_us * 1000u;
  unsigned cpus = hcpu_usable();
  h->max_pollers = cpus >= 2 ? cpus / 2 : 1;
  atomic_init(&h->pollers, 0);
  atomic_init(&h->windows, 0);
  atomic_init(&h->caught, 0);
  if (start_pollers(h, listen_fd) != 0) {
    srv_http_stop(h);
    return NULL;
  }
  return h;
}

void srv_http_stop(struct srv_http *h) {
  if (!h)
    return;
  if (h->pool)
    MHD_stop_daemon(h->pool); /* also closes the listening socket */
  if (h->stop_fd >= 0) {
    uint64_t one = 1;
    while (write(h->stop_fd, &one, sizeof one) < 0 && errno == EINTR)
      ;
  }
  if (h->acceptor_started)
    pthread_join(h->acceptor, NULL);
  for (unsigned i = 0; h->p && i < h->n; i++)
    if (h->p[i].started)
      pthread_join(h->p[i].thread, NULL);
  for (unsigned i = 0; h->p && i < h->n; i++) {
    struct poller *p = &h->p[i];
    if (p->d)
      MHD_stop_daemon(p->d);
    for (struct handoff *q = p->queue, *next; q; q = next) {
      next = q->next;
      close(q->fd);
      free(q);
    }
    if (p->wake_fd >= 0)
      close(p->wake_fd);
    pthread_mutex_destroy(&p->lock);
  }
  if (h->p)
    srv_log(h->s, SLOG_INFO,
            "busy polling: %llu windows of up to %u us, work came %llu times "
            "while polling",
            (unsigned long long)atomic_load(&h->windows), h->s->busy_poll_us,
            (unsigned long long)atomic_load(&h->caught));
  if (h->listen_fd >= 0)
    close(h->listen_fd);
  if (h->stop_fd >= 0)
    close(h->stop_fd);
  free(h->p);
  free(h);
}
