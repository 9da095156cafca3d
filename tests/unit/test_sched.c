/* test_sched.c - the scheduler's ring of jobs (src/sched.c), driven by
 * jobs whose plans move no bytes (they only wait or say DONE), so every
 * interleaving below is forced, not hoped for: no thread races another.
 *
 * The case pinned here lost a job for good: a job started (hsched_start)
 * while the pumping thread gave the ring's only other job its last turn
 * was left linked to nothing, and never got another turn. Seen from
 * Python as an asynchronous GET whose answer had arrived and whose future
 * never ended (1 in about 200 thousand GETs, 16 in flight). */
#include <criterion/criterion.h>
#include <string.h>

#include "src/client_int.h"
#include "src/engine.h"

/* A job that says WAIT on its first `waits` turns, then DONE; on the turn
 * listed in start_at it first starts `other` (as another thread would,
 * while this job's turn runs outside the scheduler's lock). */
struct fake {
  struct hjob job;
  unsigned turns, waits;
  unsigned start_at; /* 0: never */
  struct hjob *other;
};

static enum hnext fake_next(struct hjob *j, struct hpart *p, int *step) {
  (void)p;
  (void)step;
  struct fake *f = j->plan;
  f->turns++;
  if (f->start_at && f->turns == f->start_at)
    hsched_start(j->c->sched, f->other);
  return f->turns <= f->waits ? HNEXT_WAIT : HNEXT_DONE;
}

static void fake_finished(struct hjob *j, struct hpart *p, int step, int rc,
                          const struct hipobj_error *err) {
  (void)j, (void)p, (void)step, (void)rc, (void)err;
}

static void fake_result(struct hjob *j, struct hipobj_xfer_result *res) {
  (void)j, (void)res;
}

static void fake_free(struct hjob *j) {
  (void)j;
}

static const struct hjob_ops fake_ops = {fake_next, NULL, fake_finished,
                                         fake_result, fake_free};

static struct hipobj_client *cli;
static char buf[16];
static struct hipobj_mem mem;
static struct hxctl ctl;

static void init(void) {
  hipobj_global_init();
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = "http://127.0.0.1:9"; /* never reached */
  cfg.access_key_id = "AKIDTEST";
  cfg.secret_access_key = "SECRET";
  cfg.log_level = HIPOBJ_LOG_NONE;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, NULL), HIPOBJ_OK);
  mem = hipobj_mem_host(buf, sizeof buf);
  memset(&ctl, 0, sizeof ctl);
  ctl.client = cli;
}

static void fini(void) {
  hipobj_client_free(cli);
  hipobj_global_cleanup();
}

TestSuite(sched, .init = init, .fini = fini, .timeout = 30);

static void fake_init(struct fake *f, unsigned waits) {
  memset(f, 0, sizeof *f);
  cr_assert_eq(hjob_init(&f->job, cli, "Fake", "b", "k", &mem, &ctl,
                         HIPOBJ_RDMA_OFF, 1, NULL),
               HIPOBJ_OK);
  f->job.ops = &fake_ops;
  f->job.plan = f;
  f->waits = waits;
}

Test(sched, a_job_started_during_the_last_turn_of_the_only_other) {
  struct fake a, b;
  fake_init(&a, 1); /* turn 1 (its start): WAIT; turn 2: DONE */
  fake_init(&b, 1); /* turn 1 (its start): WAIT; turn 2: DONE */
  a.start_at = 2;   /* b starts while a's last turn runs */
  a.other = &b.job;
  /* a's first turn is taken here and a goes into the ring, alone; the
   * pump then gives it its last turn, during which b starts (its first
   * turn, then the ring) and finds the pump busy. */
  hsched_start(cli->sched, &a.job);
  cr_assert(a.job.finished, "a: %u turns", a.turns);
  cr_assert(b.job.finished,
            "b never had the turn that ends it (%u turns): the ring lost it",
            b.turns);
  cr_assert_eq(b.turns, 2);
  hjob_destroy(&a.job);
  hjob_destroy(&b.job);
}

Test(sched, jobs_started_during_turns_of_a_longer_ring) {
  /* The same with two more jobs in the ring, waiting (for parts that
   * would end later): they get their turns once they can go on. */
  struct fake a, b, c, d;
  fake_init(&c, 1000);
  fake_init(&d, 1000);
  hsched_start(cli->sched, &c.job);
  hsched_start(cli->sched, &d.job);
  fake_init(&a, 1);
  fake_init(&b, 1);
  a.start_at = 2;
  a.other = &b.job;
  hsched_start(cli->sched, &a.job);
  cr_assert(a.job.finished && b.job.finished, "a %u, b %u turns", a.turns,
            b.turns);
  cr_assert(!c.job.finished && !d.job.finished);
  c.waits = d.waits = 0; /* as when their parts end: a pump */
  hsched_pump(cli->sched);
  cr_assert(c.job.finished && d.job.finished, "c %u, d %u turns", c.turns,
            d.turns);
  hjob_destroy(&a.job);
  hjob_destroy(&b.job);
  hjob_destroy(&c.job);
  hjob_destroy(&d.job);
}
