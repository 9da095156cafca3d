/* metacache.h - the memory mode's cache of object metadata text, pinned to
 * the data file it was read with (metacache.c says why that is safe). */
#ifndef HIPOBJ_SERVER_METACACHE_H
#define HIPOBJ_SERVER_METACACHE_H

#include <stddef.h>
#include <sys/stat.h>

#include "src/base/buf.h"

struct metacache;

struct metacache *mc_create(void);
void mc_free(struct metacache *c);
/* Appends to out the text kept for bucket's object name whose data file
 * is st (fstat of the open data file): 0, or -1 when none is (c NULL). */
int mc_get(struct metacache *c, const char *bucket, const char *name,
           const struct stat *st, struct hbuf *out);
/* Keeps text as the metadata of the data file st (c NULL: nothing). */
void mc_put(struct metacache *c, const char *bucket, const char *name,
            const struct stat *st, const char *text, size_t len);

#endif
