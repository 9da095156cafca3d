/* delay.c - delayed answers for the delay:MS fault, and the pauses of the
 * drip:BPS fault. The connection is suspended (so no libmicrohttpd worker
 * thread sleeps and other clients on that thread go on being served) and
 * resumed by this thread when its time has come. Stopping resumes
 * everything still waiting, and whatever is added after that at once; the
 * delayer is freed only once the daemon has stopped, since a resumed
 * dripping answer may still add itself until then. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "server.h"

struct pending {
  struct MHD_Connection *conn;
  double due;
  struct pending *next;
};

struct delayer {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  struct pending *list;
  int stop;
};

static void *run(void *arg) {
  struct delayer *d = arg;
  pthread_mutex_lock(&d->lock);
  for (;;) {
    double now = srv_now(), next = now + 3600;
    struct pending **pp = &d->list;
    while (*pp) {
      struct pending *p = *pp;
      if (d->stop || p->due <= now) {
        *pp = p->next;
        MHD_resume_connection(p->conn);
        free(p);
      } else {
        if (p->due < next)
          next = p->due;
        pp = &p->next;
      }
    }
    if (d->stop)
      break;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double wait = next - now;
    ts.tv_sec += (time_t)wait;
    ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&d->cond, &d->lock, &ts);
  }
  pthread_mutex_unlock(&d->lock);
  return NULL;
}

struct delayer *delayer_start(void) {
  struct delayer *d = calloc(1, sizeof *d);
  if (!d)
    return NULL;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&d->cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&d->lock, NULL);
  if (pthread_create(&d->thread, NULL, run, d) != 0) {
    free(d);
    return NULL;
  }
  return d;
}

void delayer_stop(struct delayer *d) {
  if (!d)
    return;
  pthread_mutex_lock(&d->lock);
  d->stop = 1;
  pthread_cond_signal(&d->cond);
  pthread_mutex_unlock(&d->lock);
  pthread_join(d->thread, NULL);
}

void delayer_free(struct delayer *d) {
  if (!d)
    return;
  pthread_mutex_destroy(&d->lock);
  pthread_cond_destroy(&d->cond);
  free(d);
}

void delayer_add(struct delayer *d, struct MHD_Connection *c, unsigned ms) {
  struct pending *p = malloc(sizeof *p);
  if (!p) {
    MHD_resume_connection(c);
    return;
  }
  p->conn = c;
  p->due = srv_now() + ms / 1000.0;
  pthread_mutex_lock(&d->lock);
  if (d->stop) {
    pthread_mutex_unlock(&d->lock);
    free(p);
    MHD_resume_connection(c);
    return;
  }
  p->next = d->list;
  d->list = p;
  pthread_cond_signal(&d->cond);
  pthread_mutex_unlock(&d->lock);
}
