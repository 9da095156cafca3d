/* log.c - leveled logging: user callback or stderr, one line at a time. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static enum hipobj_log_level level_from_env(void) {
  const char *v = getenv("HIPOBJ_LOG");
  if (!v || !*v)
    return HIPOBJ_LOG_WARN;
  static const struct {
    const char *name;
    enum hipobj_log_level level;
  } names[] = {{"error", HIPOBJ_LOG_ERROR}, {"warn", HIPOBJ_LOG_WARN},
               {"info", HIPOBJ_LOG_INFO},   {"debug", HIPOBJ_LOG_DEBUG},
               {"none", HIPOBJ_LOG_NONE},   {"off", HIPOBJ_LOG_NONE}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(v, names[i].name))
      return names[i].level;
  return HIPOBJ_LOG_WARN;
}

void hlog_init(struct hlog *log, enum hipobj_log_level level, hipobj_log_fn fn,
               void *user) {
  log->level = level == HIPOBJ_LOG_DEFAULT ? level_from_env() : level;
  log->fn = fn;
  log->user = user;
}

void hlog(const struct hlog *log, enum hipobj_log_level level, const char *fmt,
          ...) {
  if (!log || log->level == HIPOBJ_LOG_NONE || level > log->level)
    return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (log->fn) {
    log->fn(log->user, level, line);
    return;
  }
  static const char *const tag[] = {"", "error", "warn", "info", "debug"};
  /* One fprintf per line keeps lines from different threads whole. */
  fprintf(stderr, "hipobj[%s]: %s\n", level < HIPOBJ_LOG_NONE ? tag[level] : "",
          line);
}
