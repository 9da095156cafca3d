/* global.c - library version and the reference-counted global init of the
 * dependencies (libcurl, libxml2) that need it. */
#include <pthread.h>

#include "../s3/http.h"
#include "hipobj.h"

#define STR2(x) #x
#define STR(x) STR2(x)

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned global_refs;

const char *hipobj_version(void) {
  return STR(HIPOBJ_VERSION_MAJOR) "." STR(HIPOBJ_VERSION_MINOR) "." STR(
      HIPOBJ_VERSION_PATCH);
}

int hipobj_global_init(void) {
  int rc = HIPOBJ_OK;
  pthread_mutex_lock(&global_lock);
  if (global_refs == 0 && s3_global_init() != 0)
    rc = HIPOBJ_E_INTERNAL;
  if (rc == HIPOBJ_OK)
    global_refs++;
  pthread_mutex_unlock(&global_lock);
  return rc;
}

void hipobj_global_cleanup(void) {
  pthread_mutex_lock(&global_lock);
  if (global_refs > 0 && --global_refs == 0)
    s3_global_cleanup();
  pthread_mutex_unlock(&global_lock);
}
