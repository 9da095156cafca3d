/* workq.c - work items taken by a growing set of threads (workq.h). */
#include "workq.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct hworkq {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  struct hworkq_item *head, *tail;
  void (*run)(struct hworkq_item *it);
  int stop;
  unsigned n, n_idle, max;
  unsigned queued; /* items on the list, not yet taken by a thread */
  pthread_t th[];  /* max of them */
};

static void *workq_main(void *arg) {
  struct hworkq *q = arg;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    while (!q->head && !q->stop)
      pthread_cond_wait(&q->cond, &q->lock);
    if (!q->head)
      break; /* stopping, and nothing left */
    struct hworkq_item *it = q->head;
    q->head = it->next;
    if (!q->head)
      q->tail = NULL;
    q->queued--;
    q->n_idle--;
    pthread_mutex_unlock(&q->lock);
    q->run(it);
    pthread_mutex_lock(&q->lock);
    q->n_idle++;
  }
  pthread_mutex_unlock(&q->lock);
  return NULL;
}

/* Every thread any queue started, ever (tests: no thread per transfer). */
static uint64_t threads_started;

uint64_t hworkq_threads_started(void) {
  return __atomic_load_n(&threads_started, __ATOMIC_RELAXED);
}

struct hworkq *hworkq_create(unsigned max_threads,
                             void (*run)(struct hworkq_item *it)) {
  if (max_threads == 0)
    max_threads = 1;
  struct hworkq *q = calloc(1, sizeof *q + max_threads * sizeof(pthread_t));
  if (!q)
    return NULL;
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->cond, NULL);
  q->run = run;
  q->max = max_threads;
  return q;
}

int hworkq_push(struct hworkq *q, struct hworkq_item *it) {
  it->next = NULL;
  pthread_mutex_lock(&q->lock);
  /* A thread per waiting item, up to the maximum; beyond it items wait.
   * An idle thread that has not yet woken for an item already queued is
   * not free for this one: counting it so made items pushed back to back
   * share one thread and run one after another. */
  if (q->queued >= q->n_idle && q->n < q->max &&
      pthread_create(&q->th[q->n], NULL, workq_main, q) == 0) {
    __atomic_add_fetch(&threads_started, 1, __ATOMIC_RELAXED);
    q->n++;
    q->n_idle++;
  }
  if (q->n == 0) {
    pthread_mutex_unlock(&q->lock);
    return -1;
  }
  if (q->tail)
    q->tail->next = it;
  else
    q->head = it;
  q->tail = it;
  q->queued++;
  pthread_cond_signal(&q->cond);
  pthread_mutex_unlock(&q->lock);
  return 0;
}

void hworkq_destroy(struct hworkq *q) {
  if (!q)
    return;
  pthread_mutex_lock(&q->lock);
  q->stop = 1;
  pthread_cond_broadcast(&q->cond);
  pthread_mutex_unlock(&q->lock);
  for (unsigned i = 0; i < q->n; i++)
    pthread_join(q->th[i], NULL);
  pthread_cond_destroy(&q->cond);
  pthread_mutex_destroy(&q->lock);
  free(q);
}
