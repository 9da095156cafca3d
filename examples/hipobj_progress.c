/* hipobj_progress.c - the one-line progress display of the `hipobj` tool.
 *
 * A ticker thread redraws the line a few times a second from counters that
 * the library's progress callbacks (any thread) move: a bar with bytes,
 * rate and ETA, the files done of many, and "completing" once every byte
 * has moved while the operation still runs (a multipart upload's
 * CompleteMultipartUpload can take the server seconds, which a bar at
 * 100% would hide). Sizes and rates are both binary units (MiB, MiB/s).
 * Every write to the terminal goes under the tool's output lock. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "hipobj_cli.h"

#define TICK_MS 200

static struct progress *active; /* under the output lock */

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

/* Called with the output lock held. */
static void draw(struct progress *p) {
  static const char spin[] = "|/-\\";
  double elapsed = now_seconds() - p->start;
  char line[600], el[32], files[48] = "";
  fmt_duration(elapsed, el, sizeof el);
  unsigned ft = atomic_load(&p->files_total);
  if (ft)
    snprintf(files, sizeof files, "%u/%u files  ", atomic_load(&p->files_done),
             ft);
  uint64_t total = atomic_load(&p->total);
  if (atomic_load(&p->counting)) {
    uint64_t done = atomic_load(&p->done);
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    char d[32], r[32];
    fmt_bytes(done, d, sizeof d);
    fmt_rate(rate, r, sizeof r);
    if (total) {
      uint64_t capped = done < total ? done : total;
      unsigned pct = (unsigned)(capped * 100 / total);
      char bar[21], t[32], eta[48] = "ETA -:--";
      size_t fill = (size_t)(capped * 20 / total);
      for (size_t i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
      bar[20] = '\0';
      fmt_bytes(total, t, sizeof t);
      if (capped == total)
        /* Every byte is there; the server still works (Complete). */
        snprintf(eta, sizeof eta, "completing %c", spin[p->spin++ % 4]);
      else if (rate > 0) {
        char e[32];
        fmt_duration((double)(total - capped) / rate, e, sizeof e);
        snprintf(eta, sizeof eta, "ETA %s", e);
      }
      snprintf(line, sizeof line, "[%s] %3u%%  %s / %s  %s%s  %s  %s", bar, pct,
               d, t, files, r, eta, p->label);
    } else {
      snprintf(line, sizeof line, "%s  %s%s  %s  %s", d, files, r, el,
               p->label);
    }
  } else {
    char t[32] = "";
    if (total)
      fmt_bytes(total, t, sizeof t);
    snprintf(line, sizeof line, "%c %s  %s%s%s%s", spin[p->spin++ % 4], el,
             files, t, *t ? "  " : "", p->label);
  }
  /* Never wrap: a wrapped line cannot be erased with \r. */
  size_t width = term_width() - 1;
  if (strlen(line) > width)
    line[width] = '\0';
  fprintf(stderr, "\r%s\033[K", line);
  fflush(stderr);
  p->drawn = 1;
}

void progress_clear_locked(void) {
  if (active && active->drawn) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
}

void progress_redraw_locked(void) {
  if (active && active->drawn)
    draw(active);
}

/* The ticker sleeps on its own mutex and takes the output lock only to
 * draw, so nothing waits on a condition with the (recursive) output lock
 * held. */
static pthread_mutex_t tick_lock = PTHREAD_MUTEX_INITIALIZER;

static void *ticker(void *arg) {
  struct progress *p = arg;
  pthread_mutex_lock(&tick_lock);
  while (!p->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += TICK_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    /* Waiting first keeps short operations from flashing a line. */
    pthread_cond_timedwait(&p->cond, &tick_lock, &ts);
    if (p->stop)
      break;
    pthread_mutex_unlock(&tick_lock);
    out_lock();
    draw(p);
    out_unlock();
    pthread_mutex_lock(&tick_lock);
  }
  pthread_mutex_unlock(&tick_lock);
  return NULL;
}

void progress_begin(struct progress *p, const struct cli *c, const char *label,
                    uint64_t total) {
  memset(p, 0, sizeof *p);
  atomic_init(&p->done, 0);
  atomic_init(&p->total, total);
  atomic_init(&p->counting, 0);
  atomic_init(&p->files_done, 0);
  atomic_init(&p->files_total, 0);
  cli_escape(label, p->label, sizeof p->label);
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
  out_lock();
  active = p;
  out_unlock();
}

void progress_add(struct progress *p, uint64_t bytes) {
  if (!p)
    return;
  atomic_fetch_add(&p->done, bytes);
  atomic_store(&p->counting, 1);
}

void progress_add_total(struct progress *p, uint64_t bytes) {
  if (p)
    atomic_fetch_add(&p->total, bytes);
}

void progress_set_total(struct progress *p, uint64_t total) {
  if (p)
    atomic_store(&p->total, total);
}

void progress_end(struct progress *p, int ok, uint64_t bytes, double seconds) {
  if (!p->enabled)
    return;
  pthread_mutex_lock(&tick_lock);
  p->stop = 1;
  pthread_cond_signal(&p->cond);
  pthread_mutex_unlock(&tick_lock);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->cond);
  p->enabled = 0;

  out_lock();
  if (p->drawn)
    fputs("\r\033[K", stderr);
  active = NULL;
  if (ok) {
    char b[32], r[32];
    fmt_bytes(bytes, b, sizeof b);
    fmt_rate(seconds > 0 ? (double)bytes / seconds : 0, r, sizeof r);
    fprintf(stderr, "%s in %.2f s (%s)\n", b, seconds, r);
  }
  fflush(stderr);
  out_unlock();
}

void progress_log_line(void *user, enum hipobj_log_level level,
                       const char *line) {
  (void)user;
  static const char *const tag[] = {"", "error", "warn", "info", "debug"};
  const char *t =
      (unsigned)level < sizeof tag / sizeof tag[0] ? tag[level] : "";
  out_lock();
  /* Erase the progress line, print the log line, redraw below it. */
  progress_clear_locked();
  cli_print(stderr, "hipobj[%s]: %s\n", t, line);
  progress_redraw_locked();
  fflush(stderr);
  out_unlock();
}
