/* metacache.c - the memory mode's cache of object metadata: without it a
 * GET or HEAD opens and reads the metadata file beside the data every time
 * (a path walk and four system calls, a third of the server's CPU per
 * serial 4 KiB GET on the 2-core VM, where the server must cost less than
 * the clients it measures). An entry holds the text read together with one
 * data file, named by bucket and object name and pinned to that data
 * file's identity: device, inode, size and change time. Every commit
 * renames into place a file no earlier version of the key used (a fresh
 * file, or an upload's own part linked whole), so the inode changes; the
 * change time, set by the link and the rename, also tells a Complete
 * repeated with the same part. The metadata of a data file is never
 * rewritten without it, so an entry matches only the data file it was
 * read with. tmpfs numbers inodes from a counter instead of reusing freed
 * ones as ext4 does: hence the memory mode only. Direct-mapped and fixed
 * in size; a slot's lock guards its entry. */
#include "metacache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MC_SLOTS 4096u    /* entries */
#define MC_TEXT_MAX 4096u /* longer texts (many-part objects) not kept */
#define MC_LOCKS 64u      /* slot i is guarded by lock i % MC_LOCKS */

struct mc_entry {
  char *name; /* "<bucket>/<object name>", NULL: empty */
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec ctime;
  char *text;
  size_t len;
};

struct metacache {
  pthread_mutex_t locks[MC_LOCKS];
  struct mc_entry slots[MC_SLOTS];
};

struct metacache *mc_create(void) {
  struct metacache *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  for (unsigned i = 0; i < MC_LOCKS; i++)
    pthread_mutex_init(&c->locks[i], NULL);
  return c;
}

static void entry_clear(struct mc_entry *e) {
  free(e->name);
  free(e->text);
  memset(e, 0, sizeof *e);
}

void mc_free(struct metacache *c) {
  if (!c)
    return;
  for (unsigned i = 0; i < MC_SLOTS; i++)
    entry_clear(&c->slots[i]);
  for (unsigned i = 0; i < MC_LOCKS; i++)
    pthread_mutex_destroy(&c->locks[i]);
  free(c);
}

/* FNV-1a over "<bucket>/<name>": cheap, and the names are not chosen to
 * collide with each other (a collision only evicts). */
static unsigned slot_of(const char *bucket, const char *name) {
  uint32_t h = 2166136261u;
  for (const char *s = bucket; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  h = (h ^ '/') * 16777619u;
  for (const char *s = name; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  return h % MC_SLOTS;
}

static int same_name(const char *full, const char *bucket, const char *name) {
  size_t bl = strlen(bucket);
  return !strncmp(full, bucket, bl) && full[bl] == '/' &&
         !strcmp(full + bl + 1, name);
}

static int same_file(const struct mc_entry *e, const struct stat *st) {
  return e->dev == st->st_dev && e->ino == st->st_ino &&
         e->size == st->st_size && e->ctime.tv_sec == st->st_ctim.tv_sec &&
         e->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

int mc_get(struct metacache *c, const char *bucket, const char *name,
           const struct stat *st, struct hbuf *out) {
  if (!c)
    return -1;
  unsigned i = slot_of(bucket, name);
  struct mc_entry *e = &c->slots[i];
  int rc = -1;
  pthread_mutex_lock(&c->locks[i % MC_LOCKS]);
  if (e->name && same_name(e->name, bucket, name) && same_file(e, st)) {
    hbuf_append(out, e->text, e->len);
    rc = out->oom ? -1 : 0;
  }
  pthread_mutex_unlock(&c->locks[i % MC_LOCKS]);
  return rc;
}

void mc_put(struct metacache *c, const char *bucket, const char *name,
            const struct stat *st, const char *text, size_t len) {
  if (!c || len > MC_TEXT_MAX)
    return;
  size_t bl = strlen(bucket), nl = strlen(name);
  char *full = malloc(bl + 1 + nl + 1);
  char *copy = malloc(len + 1);
  if (!full || !copy) {
    free(full);
    free(copy);
    return; /* not kept: the next read opens the file again */
  }
  memcpy(full, bucket, bl);
  full[bl] = '/';
  memcpy(full + bl + 1, name, nl + 1);
  memcpy(copy, text, len);
  copy[len] = '\0';
  unsigned i = slot_of(bucket, name);
  struct mc_entry *e = &c->slots[i];
  pthread_mutex_lock(&c->locks[i % MC_LOCKS]);
  entry_clear(e);
  e->name = full;
  e->dev = st->st_dev;
  e->ino = st->st_ino;
  e->size = st->st_size;
  e->ctime = st->st_ctim;
  e->text = copy;
  e->len = len;
  pthread_mutex_unlock(&c->locks[i % MC_LOCKS]);
}
