/* mem_file.h - files as a memory kind (mem_file.c): the checks of a
 * descriptor for a direction, the client's file threads, and the copy side
 * of staged file transfers (copy.h: hcopy_file_ops). */
#ifndef HIPOBJ_MEM_FILE_H
#define HIPOBJ_MEM_FILE_H

#include <stddef.h>
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

/* A part's window of a file, mapped whole (tmpfs, where the mapped
 * choice holds): the HTTP path copies a GET's body straight into it or
 * sends a PUT's body from it, without staging chunks. */
struct hfile_window {
  char *ptr;  /* byte 0 of the window */
  size_t len; /* its bytes */
  char *map;  /* the mapping (page-aligned) */
  size_t map_len;
  int writable; /* mapped for a GET */
};

/* Largest window mapped at once: bounds the address space and resident
 * pages a part pins; larger parts go through staging chunks. */
#define HFILE_WINDOW_MAX ((size_t)64 << 20)

/* Whether fd's parts should move through mapped windows in direction dir:
 * a regular file on tmpfs, the mapped choice (enough CPUs and, for
 * writes, MADV_POPULATE_WRITE; or HIPOBJ_FILE_MAP=1), and a descriptor the
 * mapping can use. */
int hfile_window_wanted(int fd, enum hmem_dir dir);
/* Maps [at, at+n) of fd (n > 0) for dir; for HMEM_WRITE the range's pages
 * are in place first (faulted in by MADV_POPULATE_WRITE, else fallocate),
 * so a full file system is this error rather than SIGBUS later. 0, or -1
 * with the cause. */
int hfile_window_map(int fd, uint64_t at, size_t n, enum hmem_dir dir,
                     struct hfile_window *w, char why[HFILE_WHY]);
/* Unmaps (nothing when not mapped); written: the bytes copied into a GET's
 * window, counted by hfile_mapped_bytes(); a PUT's window counts whole in
 * hfile_mapped_read_bytes(). */
void hfile_window_unmap(struct hfile_window *w, uint64_t written);

/* Bytes this process has written into files through mappings (tmpfs): lets
 * tests tell the mapped path from pwrite. */
uint64_t hfile_mapped_bytes(void);
/* Bytes of PUT windows mapped for reading (tmpfs): the same for PUTs. */
uint64_t hfile_mapped_read_bytes(void);

#endif
