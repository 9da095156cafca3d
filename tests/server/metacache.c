/* metacache.c - the memory mode's cache of object metadata: without it a
 * GET or HEAD opens and reads the metadata file beside the data every time
 * (a path walk and four system calls: opening an object was a third of
 * the server's busy CPU per serial 4 KiB GET on the 2-core VM, its
 * metadata file most of that, where the server must cost less than the
 * clients it measures). An entry holds the text read together with one
 * data file, named by bucket and object name and pinned to that data
 * file's identity: device, inode, size and change time. Every commit
 * renames into place a file no earlier version of the key used (a fresh
 * file, or an upload's own part linked whole), so the inode changes; the
 * change time, set by the link and the rename, also tells a Complete
 * repeated with the same part. The metadata of a data file is never
 * rewritten without it, so an entry matches only the data file it was
 * read with. tmpfs numbers inodes from a counter instead of reusing freed
 * ones as ext4 does: hence the memory mode only. Fixed in size and 4-way
 * set-associative (direct-mapped, reading the metadata files of the keys
 * that evicted each other was still 13% of a 1000-key listing's CPU); a
 * set's lock guards its entries.
 *
 * An entry may also hold the bytes of a small object (MC_BODY_MAX), pinned
 * the same way: a GET of it then costs a stat(2) of the data file instead
 * of open, fstat, pread and close (a serial 4 KiB GET made seven system
 * calls, four of them these). All kept bytes together stay under
 * MC_BODY_BUDGET; past it entries keep their text only. */
#include "metacache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MC_SETS 4096u /* sets of MC_WAYS entries */
#define MC_WAYS 4u
#define MC_TEXT_MAX 4096u /* longer texts (many-part objects) not kept */
#define MC_LOCKS 64u      /* set i is guarded by lock i % MC_LOCKS */
#define MC_BODY_BUDGET ((size_t)64 << 20) /* bytes of all bodies kept */

struct mc_entry {
  char *name; /* "<bucket>/<object name>", NULL: empty */
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec ctime;
  char *text;
  size_t len;
  char *body; /* the object's bytes, NULL: not kept */
  size_t body_len;
};

struct mc_set {
  struct mc_entry way[MC_WAYS];
  unsigned victim; /* the way the next new entry replaces, round robin */
};

struct metacache {
  pthread_mutex_t locks[MC_LOCKS];
  struct mc_set sets[MC_SETS];
  size_t body_bytes; /* atomic: the bodies' bytes, within MC_BODY_BUDGET */
};

struct metacache *mc_create(void) {
  struct metacache *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  for (unsigned i = 0; i < MC_LOCKS; i++)
    pthread_mutex_init(&c->locks[i], NULL);
  return c;
}

static void entry_clear(struct metacache *c, struct mc_entry *e) {
  if (e->body)
    __atomic_sub_fetch(&c->body_bytes, e->body_len, __ATOMIC_RELAXED);
  free(e->name);
  free(e->text);
  free(e->body);
  memset(e, 0, sizeof *e);
}

void mc_free(struct metacache *c) {
  if (!c)
    return;
  for (unsigned i = 0; i < MC_SETS; i++)
    for (unsigned w = 0; w < MC_WAYS; w++)
      entry_clear(c, &c->sets[i].way[w]);
  for (unsigned i = 0; i < MC_LOCKS; i++)
    pthread_mutex_destroy(&c->locks[i]);
  free(c);
}

/* FNV-1a over "<bucket>/<name>": cheap, and the names are not chosen to
 * collide with each other (a collision only evicts). */
static unsigned set_of(const char *bucket, const char *name) {
  uint32_t h = 2166136261u;
  for (const char *s = bucket; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  h = (h ^ '/') * 16777619u;
  for (const char *s = name; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  return h % MC_SETS;
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

/* The entry of bucket's object name for the data file st, or NULL; the
 * caller holds the set's lock. */
static struct mc_entry *find(struct mc_set *set, const char *bucket,
                             const char *name, const struct stat *st) {
  for (unsigned w = 0; w < MC_WAYS; w++) {
    struct mc_entry *e = &set->way[w];
    if (e->name && same_name(e->name, bucket, name) && same_file(e, st))
      return e;
  }
  return NULL;
}

int mc_get(struct metacache *c, const char *bucket, const char *name,
           const struct stat *st, struct hbuf *out, struct hbuf *body) {
  if (!c)
    return -1;
  unsigned i = set_of(bucket, name);
  int rc = -1;
  pthread_mutex_lock(&c->locks[i % MC_LOCKS]);
  struct mc_entry *e = find(&c->sets[i], bucket, name, st);
  if (e) {
    hbuf_append(out, e->text, e->len);
    rc = 0;
    if (body && e->body) {
      hbuf_append(body, e->body, e->body_len);
      rc = 1;
    }
    if (out->oom || (body && body->oom))
      rc = -1;
  }
  pthread_mutex_unlock(&c->locks[i % MC_LOCKS]);
  return rc;
}

void mc_put_body(struct metacache *c, const char *bucket, const char *name,
                 const struct stat *st, const void *data, size_t len) {
  if (!c || len > MC_BODY_MAX)
    return;
  if (__atomic_add_fetch(&c->body_bytes, len, __ATOMIC_RELAXED) >
      MC_BODY_BUDGET) {
    __atomic_sub_fetch(&c->body_bytes, len, __ATOMIC_RELAXED);
    return;
  }
  char *copy = malloc(len ? len : 1);
  int kept = 0;
  if (copy) {
    memcpy(copy, data, len);
    unsigned i = set_of(bucket, name);
    pthread_mutex_lock(&c->locks[i % MC_LOCKS]);
    struct mc_entry *e = find(&c->sets[i], bucket, name, st);
    if (e && !e->body) { /* else evicted meanwhile, or kept by another GET */
      e->body = copy;
      e->body_len = len;
      kept = 1;
    }
    pthread_mutex_unlock(&c->locks[i % MC_LOCKS]);
  }
  if (!kept) { /* its bytes leave the budget */
    free(copy);
    __atomic_sub_fetch(&c->body_bytes, len, __ATOMIC_RELAXED);
  }
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
  unsigned i = set_of(bucket, name);
  struct mc_set *set = &c->sets[i];
  pthread_mutex_lock(&c->locks[i % MC_LOCKS]);
  /* The object's older entry, else a free way, else the next victim. */
  struct mc_entry *e = NULL;
  for (unsigned w = 0; w < MC_WAYS && !e; w++)
    if (set->way[w].name && same_name(set->way[w].name, bucket, name))
      e = &set->way[w];
  for (unsigned w = 0; w < MC_WAYS && !e; w++)
    if (!set->way[w].name)
      e = &set->way[w];
  if (!e)
    e = &set->way[set->victim++ % MC_WAYS];
  entry_clear(c, e);
  e->name = full;
  e->dev = st->st_dev;
  e->ino = st->st_ino;
  e->size = st->st_size;
  e->ctime = st->st_ctim;
  e->text = copy;
  e->len = len;
  pthread_mutex_unlock(&c->locks[i % MC_LOCKS]);
}
