/* workq.h - a queue of work items and the threads that take them: started
 * one at a time as work arrives and finds no idle thread (up to a maximum),
 * stopped together once the queue is drained. A client's scheduler workers
 * (sched.c), payload hashing threads (runner.c) and file threads
 * (mem_file.c) are such queues. Items are embedded in the caller's
 * objects. */
#ifndef HIPOBJ_WORKQ_H
#define HIPOBJ_WORKQ_H

#include <stdint.h>

struct hworkq_item {
  struct hworkq_item *next;
};

struct hworkq;

/* run is called for each item, on one of the threads, outside the lock.
 * NULL when out of memory. */
struct hworkq *hworkq_create(unsigned max_threads,
                             void (*run)(struct hworkq_item *it));
/* Queues it (any thread). Returns -1, without queueing it, when no thread
 * runs and none could be started. */
int hworkq_push(struct hworkq *q, struct hworkq_item *it);
/* Lets the threads run what is queued, then joins them and frees q. No push
 * may follow or run concurrently. NULL is allowed. */
void hworkq_destroy(struct hworkq *q);
/* Threads started by every queue of the process so far (a test counts
 * them around transfers: the library's threads are made per client, never
 * per transfer or per part). */
uint64_t hworkq_threads_started(void);

#endif
