/* hipobj_progress.c - the one-line progress display of the `hipobj` tool.
 *
 * A ticker thread redraws the line a few times a second. The library has no
 * progress callback yet, so during one blocking call the line shows a
 * spinner and the elapsed time; whoever knows how many bytes moved (the
 * stream loops today, a library callback later) calls progress_add() and the
 * line turns into a bar with bytes, rate and ETA. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "hipobj_cli.h"

#define TICK_MS 200

/* Serialises everything written to the terminal's stderr while a display
 * is up: the ticker, the library's log lines and the final erase. */
static pthread_mutex_t draw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct progress *active; /* under draw_lock */

static unsigned term_width(void) {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
    return ws.ws_col;
  return 80;
}

static void fmt_duration(double secs, char *buf, size_t len) {
  if (secs < 0 || secs > 359999)
    secs = 0;
  unsigned s = (unsigned)secs;
  if (s >= 3600)
    snprintf(buf, len, "%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
  else
    snprintf(buf, len, "%u:%02u", s / 60, s % 60);
}

/* Called with draw_lock held. */
static void draw(struct progress *p) {
  double elapsed = now_seconds() - p->start;
  char line[512], el[32];
  fmt_duration(elapsed, el, sizeof el);
  if (atomic_load(&p->counting)) {
    uint64_t done = atomic_load(&p->done);
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    char d[32];
    fmt_bytes(done, d, sizeof d);
    if (p->total) {
      uint64_t capped = done < p->total ? done : p->total;
      unsigned pct = (unsigned)(capped * 100 / p->total);
      char bar[21], t[32], eta[32] = "-:--";
      size_t fill = (size_t)(capped * 20 / p->total);
      for (size_t i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
      bar[20] = '\0';
      fmt_bytes(p->total, t, sizeof t);
      if (rate > 0)
        fmt_duration((double)(p->total - capped) / rate, eta, sizeof eta);
      snprintf(line, sizeof line, "[%s] %3u%%  %s / %s  %.1f MB/s  ETA %s  %s",
               bar, pct, d, t, rate / 1e6, eta, p->label);
    } else {
      snprintf(line, sizeof line, "%s  %.1f MB/s  %s  %s", d, rate / 1e6, el,
               p->label);
    }
  } else {
    static const char spin[] = "|/-\\";
    char t[32] = "";
    if (p->total)
      fmt_bytes(p->total, t, sizeof t);
    snprintf(line, sizeof line, "%c %s  %s%s%s", spin[p->spin++ % 4], el, t,
             *t ? "  " : "", p->label);
  }
  /* Never wrap: a wrapped line cannot be erased with \r. */
  size_t width = term_width() - 1;
  if (strlen(line) > width)
    line[width] = '\0';
  fprintf(stderr, "\r%s\033[K", line);
  fflush(stderr);
  p->drawn = 1;
}

static void *ticker(void *arg) {
  struct progress *p = arg;
  pthread_mutex_lock(&draw_lock);
  while (!p->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += TICK_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    /* Waiting first keeps short operations from flashing a line. */
    pthread_cond_timedwait(&p->cond, &draw_lock, &ts);
    if (!p->stop)
      draw(p);
  }
  pthread_mutex_unlock(&draw_lock);
  return NULL;
}

void progress_begin(struct progress *p, const struct cli *c, const char *label,
                    uint64_t total) {
  memset(p, 0, sizeof *p);
  atomic_init(&p->done, 0);
  atomic_init(&p->counting, 0);
  cli_escape(label, p->label, sizeof p->label);
  p->total = total;
  p->start = now_seconds();
  if (!c->stderr_tty || c->quiet)
    return;
  pthread_condattr_t attr;
  if (pthread_condattr_init(&attr) != 0)
    return;
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(&p->cond, &attr);
  pthread_condattr_destroy(&attr);
  if (rc != 0)
    return;
  /* Signals belong to the main thread (it cleans up temp files and
   * multipart uploads), so the ticker blocks them all. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  rc = pthread_create(&p->thread, NULL, ticker, p);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    /* No display is not worth failing the transfer for. */
    pthread_cond_destroy(&p->cond);
    return;
  }
  p->thread_started = 1;
  p->enabled = 1;
  pthread_mutex_lock(&draw_lock);
  active = p;
  pthread_mutex_unlock(&draw_lock);
}

void progress_add(struct progress *p, uint64_t bytes) {
  atomic_fetch_add(&p->done, bytes);
  atomic_store(&p->counting, 1);
}

void progress_set(struct progress *p, uint64_t done, uint64_t total) {
  if (total)
    p->total = total;
  atomic_store(&p->done, done);
  atomic_store(&p->counting, 1);
}

/* hipobj_progress_fn: the library reports on its I/O thread; only atomics
 * are touched here, the drawing thread does the rest. */
void progress_from_library(void *user, uint64_t done, uint64_t total) {
  progress_set(user, done, total);
}

void progress_end(struct progress *p, int ok, uint64_t bytes, double seconds) {
  if (!p->enabled)
    return;
  pthread_mutex_lock(&draw_lock);
  p->stop = 1;
  pthread_cond_signal(&p->cond);
  pthread_mutex_unlock(&draw_lock);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->cond);
  p->enabled = 0;

  pthread_mutex_lock(&draw_lock);
  active = NULL;
  if (p->drawn)
    fputs("\r\033[K", stderr);
  if (ok)
    fprintf(stderr, "%llu bytes in %.2f s (%.2f MB/s)\n",
            (unsigned long long)bytes, seconds,
            seconds > 0 ? (double)bytes / seconds / 1e6 : 0.0);
  fflush(stderr);
  pthread_mutex_unlock(&draw_lock);
}

void progress_log_line(void *user, enum hipobj_log_level level,
                       const char *line) {
  (void)user;
  static const char *const tag[] = {"", "error", "warn", "info", "debug"};
  const char *t =
      (unsigned)level < sizeof tag / sizeof tag[0] ? tag[level] : "";
  pthread_mutex_lock(&draw_lock);
  /* Erase the progress line, print the log line, redraw below it. */
  if (active && active->drawn)
    fputs("\r\033[K", stderr);
  cli_print(stderr, "hipobj[%s]: %s\n", t, line);
  if (active && active->drawn)
    draw(active);
  fflush(stderr);
  pthread_mutex_unlock(&draw_lock);
}
