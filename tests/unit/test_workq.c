/* test_workq.c - the work queue's threads (src/base/workq.c): a queue
 * starts a thread for every item that has no idle thread to take it, up to
 * its maximum, so items pushed back to back run side by side.
 *
 * The case pinned here: an idle thread was counted as free for every item
 * pushed before it woke, so two items pushed in a row started one thread
 * between them, and the second waited for the first to end. The scheduler's
 * RDMA parts each hold a worker for a whole session (seconds): parts that
 * arrive in a burst ran one after another. An item that waits for a later
 * one (below) never ends that way; here it gives up after a few seconds and
 * the test fails instead of hanging. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>

#include "src/base/workq.h"

struct meet {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int second_ran;   /* set by the second item */
  int first_saw_it; /* the first item saw it while it was still running */
};

static struct meet m = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,
                        0};

struct item {
  struct hworkq_item it; /* first: run() casts back */
  int first;
};

static void run(struct hworkq_item *wi) {
  struct item *i = (struct item *)wi;
  pthread_mutex_lock(&m.lock);
  if (i->first) {
    /* Waits for the second item, 5 s at most. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    while (!m.second_ran && pthread_cond_timedwait(&m.cond, &m.lock, &ts) == 0)
      ;
    m.first_saw_it = m.second_ran;
  } else {
    m.second_ran = 1;
    pthread_cond_broadcast(&m.cond);
  }
  pthread_mutex_unlock(&m.lock);
}

/* Pushes two items at once, `warm` items having run before (so the queue
 * has that many idle threads). */
static void two_at_once(unsigned warm) {
  struct hworkq *q = hworkq_create(4, run);
  cr_assert_not_null(q);
  struct item w[4] = {{.first = 0}};
  for (unsigned k = 0; k < warm; k++)
    cr_assert_eq(hworkq_push(q, &w[k].it), 0);
  /* Let the warm-up items end, so their threads sit idle. */
  struct timespec pause = {0, 100 * 1000 * 1000};
  nanosleep(&pause, NULL);
  m.second_ran = 0;
  m.first_saw_it = 0;
  uint64_t before = hworkq_threads_started();
  struct item a = {.first = 1}, b = {.first = 0};
  cr_assert_eq(hworkq_push(q, &a.it), 0);
  cr_assert_eq(hworkq_push(q, &b.it), 0);
  hworkq_destroy(q); /* runs both, joins */
  cr_expect(m.first_saw_it,
            "the second item ran only after the first ended (%u idle "
            "threads before, %llu started for the pair)",
            warm, (unsigned long long)(hworkq_threads_started() - before));
}

Test(workq, two_items_pushed_together_run_together_cold) {
  two_at_once(0);
}

Test(workq, two_items_pushed_together_run_together_one_idle) {
  two_at_once(1);
}

/* Never more threads than the maximum, whatever is queued. */
static void noop(struct hworkq_item *wi) {
  (void)wi;
}

Test(workq, threads_capped_at_the_maximum) {
  struct hworkq *q = hworkq_create(3, noop);
  cr_assert_not_null(q);
  struct hworkq_item items[50];
  uint64_t before = hworkq_threads_started();
  for (unsigned k = 0; k < 50; k++)
    cr_assert_eq(hworkq_push(q, &items[k]), 0);
  hworkq_destroy(q);
  cr_expect_leq(hworkq_threads_started() - before, 3);
}
