/* http_here.c - transfers run on the thread that waits for them (see
 * s3_http_here_begin in http.h), and how that thread waits: it polls the
 * connection for a while before it sleeps.
 *
 * Why poll: a thread asleep in poll(2) is woken by the kernel when the
 * answer arrives, and that wake-up costs as much as a fast server's whole
 * answer. Serial 4 KiB GETs from hipobj-server on the same machine
 * (waits measured by the prototype of this loop, 5000 each): on a 2-vCPU
 * VM a sleeping wait took 102 us on average, a polled one 47 us (6128 ->
 * 10128 requests/s); on the 16-core H200 machine 51-62 us against 38-55.
 * The price is the CPU of the polling thread, which would otherwise
 * sleep; so it is bounded three ways:
 *   - polling lasts at most cap_us per wait (busy_poll_us);
 *   - it happens only while at least three in four of the recent polled
 *     waits were answered while polling: a server that answers slower (a
 *     remote one) is not polled for, except every PROBE-th wait, which
 *     keeps that share current;
 *   - at most max_pollers threads of a client poll at once (half the
 *     CPUs it may use), so threads polling side by side do not take the
 *     CPUs their server (or the application) needs.
 * Only transfers run here poll: the workers' many transfers share a multi
 * handle whose poll(2) is woken by any of them. */
#include <stdlib.h>
#include <time.h>

#include "http_int.h"

#define PROBE 32u
#define HIT_SHARE_ONE 1024u /* hit_share of a client whose polls all hit */

/* This thread's arming and the transfer it keeps (s3_http_here_begin). */
static __thread int here_armed;
static __thread struct s3_http_xfer *here_kept;
static __thread struct s3_http *here_kept_h;

int http_here_keep(struct s3_http *h, struct s3_http_xfer *x) {
  if (!here_armed || here_kept)
    return 0;
  here_kept = x;
  here_kept_h = h;
  return 1;
}

int s3_http_here_begin(void) {
  int was = here_armed;
  here_armed = 1;
  return was;
}

static uint64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* How long this wait may poll: 0, or the cap (and then the caller is one
 * of the pollers until poll_end). */
unsigned http_poll_begin(struct busy_poll *b) {
  if (!b->cap_us)
    return 0;
  unsigned hits = __atomic_load_n(&b->hit_share, __ATOMIC_RELAXED);
  if (hits < HIT_SHARE_ONE * 3 / 4 &&
      __atomic_add_fetch(&b->skipped, 1, __ATOMIC_RELAXED) % PROBE)
    return 0;
  if (__atomic_add_fetch(&b->pollers, 1, __ATOMIC_RELAXED) > b->max_pollers) {
    __atomic_sub_fetch(&b->pollers, 1, __ATOMIC_RELAXED);
    return 0;
  }
  return b->cap_us;
}

/* A polled wait ended, answered while polling or not: the moving share
 * of hits moves an eighth of the way. Racing updates from other threads
 * may lose one; it is an estimate. */
void http_poll_end(struct busy_poll *b, int answered) {
  __atomic_sub_fetch(&b->pollers, 1, __ATOMIC_RELAXED);
  int share = (int)__atomic_load_n(&b->hit_share, __ATOMIC_RELAXED);
  share += ((answered ? (int)HIT_SHARE_ONE : 0) - share) / 8;
  __atomic_store_n(&b->hit_share, (unsigned)share, __ATOMIC_RELAXED);
  __atomic_add_fetch(&b->waits, 1, __ATOMIC_RELAXED);
  if (answered)
    __atomic_add_fetch(&b->answered, 1, __ATOMIC_RELAXED);
}

/* Until curl has something to do: polls (without sleeping) for up to the
 * budget, then sleeps in curl_multi_poll as curl_easy_perform would. */
static void wait_for_curl(struct busy_poll *b, CURLM *m) {
  unsigned budget = http_poll_begin(b);
  if (budget) {
    uint64_t t0 = mono_us();
    int n = 0;
    do {
      if (curl_multi_wait(m, NULL, 0, 0, &n) != CURLM_OK)
        break;
    } while (!n && mono_us() - t0 < budget);
    if (!n)
      curl_multi_poll(m, NULL, 0, 1000, NULL);
    http_poll_end(b, n > 0);
    return;
  }
  curl_multi_poll(m, NULL, 0, 1000, NULL);
}

/* curl_easy_perform, on the handle's own multi handle: that keeps the
 * wait in our hands, and skips the poll(2) curl_easy_perform makes before
 * the request is even sent. */
static CURLcode perform(struct busy_poll *b, CURLM *m, CURL *e) {
  if (curl_multi_add_handle(m, e) != CURLM_OK)
    return CURLE_FAILED_INIT;
  CURLcode code;
  for (;;) {
    int running = 0, left;
    if (curl_multi_perform(m, &running) != CURLM_OK) {
      code = CURLE_FAILED_INIT;
      break;
    }
    CURLMsg *msg = curl_multi_info_read(m, &left);
    if (msg && msg->msg == CURLMSG_DONE) {
      code = msg->data.result;
      break;
    }
    wait_for_curl(b, m);
  }
  curl_multi_remove_handle(m, e);
  return code;
}

/* One kept transfer, on this thread, from start to `done`. */
static void run_here(struct s3_http *h, struct s3_http_xfer *x) {
  struct worker *w = &h->here;
  for (uint64_t now; (now = http_mono_ms()) < x->priv_not_before_ms;) {
    uint64_t ms = x->priv_not_before_ms - now;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL); /* woken early by a signal: the loop sleeps on */
  }
  __atomic_add_fetch(&w->load, 1, __ATOMIC_RELAXED);
  if (http_wire_run(w, x))
    return;
  struct xfer_priv *p = http_begin(w, x);
  if (p)
    http_finish(w, x, perform(&h->bp, p->multi, p->easy));
}

void s3_http_here_run(int previous) {
  struct s3_http_xfer *x;
  while ((x = here_kept) != NULL) {
    struct s3_http *xh = here_kept_h;
    here_kept = NULL;
    run_here(xh, x);
  }
  here_armed = previous;
}

void http_here_report(const struct s3_http *h) {
  const struct busy_poll *b = &h->bp;
  if (b->waits)
    HLOG_DBG(h->cfg.log,
             "busy polling: %llu waits polled for up to %u us, %llu "
             "answered while polling",
             (unsigned long long)b->waits, b->cap_us,
             (unsigned long long)b->answered);
}
