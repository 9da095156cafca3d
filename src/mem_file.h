/* mem_file.h - files as a memory kind (mem_file.c): the checks of a
 * descriptor for a direction, the client's file threads, and the copy side
 * of staged file transfers (copy.h: hcopy_file_ops). */
#ifndef HIPOBJ_MEM_FILE_H
#define HIPOBJ_MEM_FILE_H

#include <stdint.h>

#define HFILE_WHY 512

/* The direction a transfer moves a descriptor's bytes in. */
enum hmem_dir {
  HMEM_ANY = 0,   /* not known yet: only what holds for both */
  HMEM_READ = 1,  /* a PUT source: for a file, readable and inside it */
  HMEM_WRITE = 2, /* a GET target: for a file, writable */
};

/* Validates an open file for file memory: a seekable file opened for dir,
 * and for HMEM_READ [off, off+len) inside it. 0, or -1 with the cause. */
int hfile_check(int fd, uint64_t off, uint64_t len, enum hmem_dir dir,
                char why[HFILE_WHY]);

/* A client's file threads: at most max_threads, started as copies arrive.
 * NULL when out of memory. Destroy only once no stream is left. */
struct hfileq *hfileq_create(unsigned max_threads);
void hfileq_destroy(struct hfileq *fq);

/* Bytes this process has written into files through mappings (tmpfs): lets
 * tests tell the mapped path from pwrite. */
uint64_t hfile_mapped_bytes(void);

#endif
