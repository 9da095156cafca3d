/* hipobj_sys.c - what the `hipobj` tool asks of the system: signal
 * handling (temp files removed on a fatal signal, soft interruption that
 * wakes the main thread through a self-pipe) and checking that a
 * download's file system can hold it before its bytes come. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "hipobj_cli.h"

/* ---- signals ------------------------------------------------------------ */

volatile sig_atomic_t cli_interrupted;
/* One slot per download in flight (and one for a single cp): the handler
 * reads a path only while its flag is set, and a slot's path is written
 * only while its flag is clear. */
#define TEMP_SLOTS (CLI_MAX_JOBS + 1)
static char temp_path[TEMP_SLOTS][4096];
static volatile sig_atomic_t temp_set[TEMP_SLOTS];
static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t soft_mode;
/* The self-pipe: a soft interruption (and a finished transfer,
 * hipobj_wait.c) writes a byte, which wakes the main thread in poll(). */
static int wake_pipe[2] = {-1, -1};

void signals_wake(void) {
  if (wake_pipe[1] >= 0) {
    ssize_t w = write(wake_pipe[1], "w", 1); /* full: already woken */
    (void)w;
  }
}

int signals_wake_fd(void) {
  return wake_pipe[0];
}

/* Only async-signal-safe calls here: unlink, write, signal, raise. The
 * library is never called from here: the main thread, woken through the
 * pipe, cancels what runs. */
static void on_signal(int sig) {
  int saved = errno;
  cli_interrupted = sig;
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (temp_set[i])
      unlink(temp_path[i]);
  if (soft_mode) {
    soft_mode = 0; /* a second signal ends the process */
    signals_wake();
    errno = saved;
    return;
  }
  if (isatty(STDERR_FILENO)) {
    static const char erase[] = "\r\033[K";
    ssize_t w = write(STDERR_FILENO, erase, sizeof erase - 1);
    (void)w;
  }
  signal(sig, SIG_DFL);
  raise(sig); /* delivered when the handler returns: dies by the signal */
  errno = saved;
}

static mode_t process_umask = 022;

void umask_read(void) {
  process_umask = umask(0);
  umask(process_umask);
}

mode_t umask_value(void) {
  return process_umask;
}

void signals_install(void) {
  if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    wake_pipe[0] = wake_pipe[1] = -1; /* then waits cannot be interrupted */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* No SA_RESTART: a blocking read of stdin must return EINTR so a soft
   * interruption is noticed. */
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* Write errors on stdout and sockets come back as EPIPE instead of
   * killing the process mid-cleanup. */
  signal(SIGPIPE, SIG_IGN);
}

int signals_add_temp(const char *path) {
  size_t n = strlen(path);
  if (n >= sizeof temp_path[0])
    return -1;
  pthread_mutex_lock(&temp_lock);
  int slot = -1;
  for (int i = 0; i < TEMP_SLOTS && slot < 0; i++)
    if (!temp_set[i])
      slot = i;
  if (slot >= 0) {
    memcpy(temp_path[slot], path, n + 1);
    temp_set[slot] = 1;
  }
  pthread_mutex_unlock(&temp_lock);
  return slot;
}

void signals_drop_temp(int slot) {
  if (slot < 0 || slot >= TEMP_SLOTS)
    return;
  pthread_mutex_lock(&temp_lock);
  temp_set[slot] = 0;
  pthread_mutex_unlock(&temp_lock);
}

void signals_set_soft(int on) {
  soft_mode = on ? 1 : 0;
}

/* ---- space for a download ----------------------------------------------- */

/* Makes a full disk fail at once rather than after most of the object has
 * come, without reserving anything: the size comes from the server (the
 * first answer), and a hostile or broken one that announces 3 GiB must
 * not make the tool allocate 3 GiB before a byte arrives. So the file
 * system's free space is compared with the size, and the library's writes
 * take their blocks as the bytes land (a disk that fills meanwhile is
 * "file write failed: pwrite: No space left on device"). Returns 0 or an
 * errno (ENOSPC). */
int reserve_space(int fd, size_t size) {
  struct statvfs sv;
  if (fstatvfs(fd, &sv) == 0 && sv.f_blocks > 0 &&
      (uint64_t)sv.f_bavail * sv.f_frsize < size)
    return ENOSPC;
  return 0;
}
