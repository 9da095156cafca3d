/* log.h - leveled logging to a user callback or stderr. Callers must never
 * pass secrets (keys, signatures, tokens) in log text. */
#ifndef HIPOBJ_LOG_H
#define HIPOBJ_LOG_H

#include "hipobj.h"

struct hlog {
  enum hipobj_log_level level; /* lines above this level are dropped */
  hipobj_log_fn fn;            /* NULL: stderr */
  void *user;
};

/* Resolves HIPOBJ_LOG_DEFAULT from the HIPOBJ_LOG environment variable
 * ("error", "warn", "info", "debug", "none"). */
void hlog_init(struct hlog *log, enum hipobj_log_level level, hipobj_log_fn fn,
               void *user);
void hlog(const struct hlog *log, enum hipobj_log_level level, const char *fmt,
          ...) __attribute__((format(printf, 3, 4)));

#define HLOG_ERR(l, ...) hlog((l), HIPOBJ_LOG_ERROR, __VA_ARGS__)
#define HLOG_WARN(l, ...) hlog((l), HIPOBJ_LOG_WARN, __VA_ARGS__)
#define HLOG_INFO(l, ...) hlog((l), HIPOBJ_LOG_INFO, __VA_ARGS__)
#define HLOG_DBG(l, ...) hlog((l), HIPOBJ_LOG_DEBUG, __VA_ARGS__)

#endif
