/* faults.c - fault injection for hipobj-server: the rule language (from
 * --faults and the admin endpoint), matching rules against requests, and
 * POST/GET/DELETE /.hipobj-admin/faults.
 *
 * A SPEC is rules separated by ';'; a rule is fields separated by ',':
 *   op=NAME        operation (GetObject, PutObject, UploadPart, ... or *)
 *   nth=N          fire on the Nth matching request (1-based) ...
 *   count=K        ... and the K-1 after it (default 1 with nth; without
 *                  nth: at most K times, default unlimited)
 *   prob=P         fire with probability P (0..1) when nth is not given
 *   action=...     status:CODE[:S3Code] | delay:MS | drop | close:N |
 *                  short[:N] | corrupt[:OFFSET] | badxml | crash |
 *                  (corrupt: of the request body for uploads)
 *                  crash-after | rdma-decline | rdma-fail | partial[:N] |
 *                  endless[:CODE] | drip:BPS | repeat-token[:N]
 * Every rule counts the requests of its operation on its own. Delays of all
 * firing rules add up; of the other actions the first firing rule wins. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "server.h"

struct rule {
  int op; /* -1: any */
  uint64_t nth;
  uint64_t count; /* 0: default */
  double prob;
  struct fault_hit act;
  uint64_t seen, fired;
  uint64_t sent; /* answer body bytes (endless), for the tests' bounds */
  char *text;
};

struct faults {
  pthread_mutex_t lock;
  struct rule *rules;
  size_t n;
  uint64_t rng;
};

static const char help_text[] =
    "  SPEC: rules separated by ';', each rule fields separated by ',':\n"
    "    op=NAME       GetObject, HeadObject, PutObject, UploadPart,\n"
    "                  CreateMultipartUpload, CompleteMultipartUpload,\n"
    "                  AbortMultipartUpload, ListParts, ListObjectsV2,\n"
    "                  ListObjects, ListMultipartUploads, ListBuckets,\n"
    "                  CopyObject, UploadPartCopy, DeleteObject,\n"
    "                  DeleteObjects, CreateBucket,\n"
    "                  DeleteBucket, HeadBucket, RdmaPrepare, RdmaReady,\n"
    "                  RdmaCancel, or * (default: every operation)\n"
    "    nth=N         fire on the Nth matching request (counting from 1)\n"
    "    count=K       with nth: fire on K requests from the Nth on\n"
    "                  (default 1); without nth: fire at most K times\n"
    "                  (default: no limit)\n"
    "    prob=P        without nth: fire with probability P (default 1)\n"
    "    action=A      what happens (required):\n"
    "      status:CODE[:S3CODE]  answer an S3 error (503 -> SlowDown,\n"
    "                            500 -> InternalError by default)\n"
    "      delay:MS      answer MS milliseconds late (combines with others)\n"
    "      drop          close the connection without answering\n"
    "      close:N       close the connection after N body bytes (of the\n"
    "                    request body for uploads, else of the answer)\n"
    "      short[:N]     send N (default 1) fewer body bytes than the\n"
    "                    Content-Length, then close\n"
    "      corrupt[:OFF] flip the byte at OFF (default: the middle) of the\n"
    "                    request body for PutObject and UploadPart (as it\n"
    "                    arrives, before any check), else of the answer\n"
    "      badxml        cut an XML answer (List*, Initiate, Complete) in\n"
    "                    half\n"
    "      crash         _exit(70) when the request arrives\n"
    "      crash-after   _exit(70) after the operation, before the answer\n"
    "      rdma-decline  decline RDMA (op=RdmaPrepare: 501)\n"
    "      rdma-fail     lose the session's QP: on RdmaReady it is destroyed\n"
    "                    in the data phase, on RdmaPrepare it goes to ERROR\n"
    "                    before the answer (no WRITE of it can land)\n"
    "      rdma-no-mp    answer PREPARE/READY (op=RdmaPrepare, RdmaReady)\n"
    "                    without X-Amz-Rdma-Capabilities: mp\n"
    "      rdma-ignore-part  (op=RdmaReady) store an RDMA part as the whole\n"
    "                    object, ignoring its partNumber/uploadId, and record\n"
    "                    an empty part in its place (a server that ignores\n"
    "                    the part query)\n"
    "      partial[:N]   a GetObject answered 206 (Range, partNumber)\n"
    "                    carries N bytes (default: half) fewer at the end,\n"
    "                    its Content-Range and Content-Length saying so;\n"
    "                    the connection stays usable\n"
    "      endless[:CODE] answer an S3 error (default 500) whose XML body\n"
    "                    never ends, until the client disconnects; the\n"
    "                    bytes sent show as sent=N in the admin GET\n"
    "      drip:BPS      send the answer body at BPS bytes per second\n"
    "                    (headers and first byte at once); the connection\n"
    "                    is suspended in between, blocking no thread\n"
    "      repeat-token[:N] listings never end: ListObjectsV2 (v1) is\n"
    "                    truncated with the continuation-token (marker) it\n"
    "                    was sent as the next one, a fixed one on the first\n"
    "                    page; with N > 1 the next of a cycle of N fixed\n"
    "                    ones. ListParts: NextPartNumberMarker = the marker\n"
    "  Example: --faults 'op=GetObject,nth=1,action=status:503;"
    "op=PutObject,prob=0.1,action=delay:200'\n";

const char *faults_help(void) {
  return help_text;
}

struct faults *faults_new(void) {
  struct faults *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  pthread_mutex_init(&f->lock, NULL);
  if (getrandom(&f->rng, sizeof f->rng, 0) != sizeof f->rng || !f->rng)
    f->rng = 0x9e3779b97f4a7c15ull;
  return f;
}

static void clear_rules(struct rule *rules, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(rules[i].text);
  free(rules);
}

void faults_free(struct faults *f) {
  if (!f)
    return;
  clear_rules(f->rules, f->n);
  pthread_mutex_destroy(&f->lock);
  free(f);
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  if (!*s || *s == '-')
    return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end)
    return -1;
  *out = v;
  return 0;
}

static int parse_action(const char *v, struct fault_hit *a, struct hbuf *why) {
  memset(a, 0, sizeof *a);
  const char *colon = strchr(v, ':');
  size_t nlen = colon ? (size_t)(colon - v) : strlen(v);
  const char *arg = colon ? colon + 1 : NULL;
  static const struct {
    const char *name;
    enum fault_action act;
    int needs_arg; /* 1 required, 0 optional, -1 none */
  } acts[] = {
      {"status", FA_STATUS, 1},
      {"delay", FA_DELAY, 1},
      {"drop", FA_DROP, -1},
      {"close", FA_CLOSE, 1},
      {"short", FA_SHORT, 0},
      {"corrupt", FA_CORRUPT, 0},
      {"badxml", FA_BADXML, -1},
      {"crash", FA_CRASH, -1},
      {"crash-after", FA_CRASH_AFTER, -1},
      {"rdma-decline", FA_RDMA_DECLINE, -1},
      {"rdma-fail", FA_RDMA_FAIL, -1},
      {"partial", FA_PARTIAL, 0},
      {"endless", FA_ENDLESS, 0},
      {"drip", FA_DRIP, 1},
      {"repeat-token", FA_REPEAT_TOKEN, 0},
      {"rdma-no-mp", FA_RDMA_NO_MP, -1},
      {"rdma-ignore-part", FA_RDMA_IGNORE_PART, -1},
  };
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) {
    if (strlen(acts[i].name) != nlen || strncmp(acts[i].name, v, nlen))
      continue;
    a->action = acts[i].act;
    if (acts[i].needs_arg == 1 && !arg) {
      hbuf_printf(why, "action %s needs an argument (%s:N)", acts[i].name,
                  acts[i].name);
      return -1;
    }
    if (acts[i].needs_arg == -1 && arg) {
      hbuf_printf(why, "action %s takes no argument", acts[i].name);
      return -1;
    }
    if (a->action == FA_ENDLESS)
      a->status = 500;
    if (!arg)
      return 0;
    if (a->action == FA_STATUS) {
      char num[8] = "";
      const char *c2 = strchr(arg, ':');
      size_t l = c2 ? (size_t)(c2 - arg) : strlen(arg);
      uint64_t st = 0;
      if (l < sizeof num) {
        memcpy(num, arg, l);
        num[l] = '\0';
      }
      if (parse_u64(num, &st) != 0 || st < 400 || st > 599) {
        hbuf_printf(why, "status:%s: the code must be 400..599", arg);
        return -1;
      }
      a->status = (int)st;
      if (c2)
        snprintf(a->code, sizeof a->code, "%s", c2 + 1);
      return 0;
    }
    if (parse_u64(arg, &a->arg) != 0) {
      hbuf_printf(why, "%s: '%s' is not a number", acts[i].name, arg);
      return -1;
    }
    a->has_arg = 1;
    if (a->action == FA_ENDLESS) {
      if (a->arg < 400 || a->arg > 599) {
        hbuf_printf(why, "endless:%s: the code must be 400..599", arg);
        return -1;
      }
      a->status = (int)a->arg;
    }
    if (a->action == FA_DRIP && (a->arg < 1 || a->arg > 1000000000)) {
      hbuf_printf(why, "drip:%s: 1 to 1000000000 bytes per second", arg);
      return -1;
    }
    if (a->action == FA_REPEAT_TOKEN && (a->arg < 1 || a->arg > 100000)) {
      hbuf_printf(why, "repeat-token:%s: a cycle of 1 to 100000 tokens", arg);
      return -1;
    }
    if (a->action == FA_DELAY) {
      if (a->arg > 600000) {
        hbuf_printf(why, "delay:%s: at most 600000 ms", arg);
        return -1;
      }
      a->delay_ms = (unsigned)a->arg;
    }
    return 0;
  }
  hbuf_printf(why, "unknown action '%s'", v);
  return -1;
}

static int parse_rule(char *text, struct rule *r, struct hbuf *why) {
  memset(r, 0, sizeof *r);
  r->op = -1;
  r->prob = 1.0;
  int have_action = 0, have_count = 0;
  char *save = NULL;
  for (char *f = strtok_r(text, ",", &save); f;
       f = strtok_r(NULL, ",", &save)) {
    while (*f == ' ')
      f++;
    char *eq = strchr(f, '=');
    if (!eq) {
      hbuf_printf(why, "'%s' is not name=value", f);
      return -1;
    }
    *eq = '\0';
    char *v = eq + 1;
    size_t vl = strlen(v);
    while (vl && v[vl - 1] == ' ')
      v[--vl] = '\0';
    if (!strcmp(f, "op")) {
      if (!strcmp(v, "*") || !strcasecmp(v, "any")) {
        r->op = -1;
      } else if ((r->op = srv_op_from_name(v)) < 0) {
        hbuf_printf(why, "unknown operation '%s'", v);
        return -1;
      }
    } else if (!strcmp(f, "nth")) {
      if (parse_u64(v, &r->nth) != 0 || r->nth == 0) {
        hbuf_printf(why, "nth=%s: must be 1 or more", v);
        return -1;
      }
    } else if (!strcmp(f, "count")) {
      if (parse_u64(v, &r->count) != 0 || r->count == 0) {
        hbuf_printf(why, "count=%s: must be 1 or more", v);
        return -1;
      }
      have_count = 1;
    } else if (!strcmp(f, "prob")) {
      char *end;
      r->prob = strtod(v, &end);
      if (!*v || *end || r->prob < 0 || r->prob > 1) {
        hbuf_printf(why, "prob=%s: must be 0..1", v);
        return -1;
      }
    } else if (!strcmp(f, "action")) {
      if (parse_action(v, &r->act, why) != 0)
        return -1;
      have_action = 1;
    } else {
      hbuf_printf(why, "unknown field '%s' (op, nth, count, prob, action)", f);
      return -1;
    }
  }
  if (!have_action) {
    hbuf_puts(why, "a rule needs action=...");
    return -1;
  }
  if (r->nth && !have_count)
    r->count = 1;
  return 0;
}

int faults_set(struct faults *f, const char *spec, int append,
               struct hbuf *why) {
  char *copy = strdup(spec ? spec : "");
  if (!copy) {
    hbuf_puts(why, "out of memory");
    return -1;
  }
  struct rule *rules = NULL;
  size_t n = 0;
  int rc = 0;
  char *save = NULL;
  for (char *t = strtok_r(copy, ";\n", &save); t;
       t = strtok_r(NULL, ";\n", &save)) {
    while (*t == ' ' || *t == '\t' || *t == '\r')
      t++;
    size_t tl = strlen(t);
    while (tl && (t[tl - 1] == ' ' || t[tl - 1] == '\r' || t[tl - 1] == '\t'))
      t[--tl] = '\0';
    if (!*t)
      continue;
    struct rule *nr = realloc(rules, (n + 1) * sizeof *nr);
    if (nr)
      rules = nr;
    char *text = nr ? strdup(t) : NULL;
    if (!text) {
      hbuf_puts(why, "out of memory");
      rc = -1;
      break;
    }
    if (parse_rule(t, &rules[n], why) != 0) {
      hbuf_printf(why, " (in rule '%s')", text);
      free(text);
      rc = -1;
      break;
    }
    /* Ids outlive replaced rules: bytes still streaming under an old
     * rule never count for a new one. */
    static uint64_t next_id;
    rules[n].act.rule_id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    rules[n++].text = text;
  }
  free(copy);
  if (rc != 0) {
    clear_rules(rules, n);
    return -1;
  }
  pthread_mutex_lock(&f->lock);
  if (append) {
    struct rule *all = realloc(f->rules, (f->n + n) * sizeof *all);
    if (all) {
      if (n)
        memcpy(all + f->n, rules, n * sizeof *rules);
      f->rules = all;
      f->n += n;
      free(rules);
      rules = NULL;
      n = 0;
    } else {
      rc = -1;
      hbuf_puts(why, "out of memory");
    }
  } else {
    struct rule *old = f->rules;
    size_t old_n = f->n;
    f->rules = rules;
    f->n = n;
    rules = old;
    n = old_n;
  }
  pthread_mutex_unlock(&f->lock);
  clear_rules(rules, n);
  return rc;
}

void faults_describe(struct faults *f, struct hbuf *out) {
  pthread_mutex_lock(&f->lock);
  for (size_t i = 0; i < f->n; i++) {
    const struct rule *ru = &f->rules[i];
    hbuf_printf(out, "%s  # seen=%llu fired=%llu", ru->text,
                (unsigned long long)ru->seen, (unsigned long long)ru->fired);
    if (ru->act.action == FA_ENDLESS)
      hbuf_printf(out, " sent=%llu", (unsigned long long)ru->sent);
    hbuf_putc(out, '\n');
  }
  pthread_mutex_unlock(&f->lock);
}

void faults_add_sent(struct faults *f, uint64_t rule_id, uint64_t n) {
  pthread_mutex_lock(&f->lock);
  for (size_t i = 0; i < f->n; i++)
    if (f->rules[i].act.rule_id == rule_id)
      f->rules[i].sent += n;
  pthread_mutex_unlock(&f->lock);
}

static double next_random(struct faults *f) {
  /* xorshift64*: plenty for "fail one request in ten". */
  f->rng ^= f->rng >> 12;
  f->rng ^= f->rng << 25;
  f->rng ^= f->rng >> 27;
  return (double)((f->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

void faults_evaluate(struct faults *f, struct req *r) {
  pthread_mutex_lock(&f->lock);
  for (size_t i = 0; i < f->n; i++) {
    struct rule *ru = &f->rules[i];
    if (ru->op >= 0 && ru->op != (int)r->op)
      continue;
    ru->seen++;
    int fire;
    if (ru->nth)
      fire = ru->seen >= ru->nth && ru->seen < ru->nth + ru->count;
    else
      fire = (!ru->count || ru->fired < ru->count) &&
             (ru->prob >= 1.0 || next_random(f) < ru->prob);
    if (!fire)
      continue;
    ru->fired++;
    srv_log(r->srv, SLOG_INFO, "%s: fault rule '%s' fires on %s", r->id,
            ru->text, srv_op_name(r->op));
    if (ru->act.action == FA_DELAY)
      r->fault.delay_ms += ru->act.delay_ms;
    else if (r->fault.action == FA_NONE) {
      unsigned d = r->fault.delay_ms;
      r->fault = ru->act;
      r->fault.delay_ms = d;
    }
  }
  pthread_mutex_unlock(&f->lock);
}

static enum MHD_Result describe_answer(struct req *r, int http) {
  struct hbuf b = HBUF_INIT;
  faults_describe(r->srv->faults, &b);
  struct MHD_Response *resp = srv_body_mem(r, b.data ? b.data : "", b.len);
  hbuf_free(&b);
  if (resp)
    MHD_add_response_header(resp, "Content-Type", "text/plain");
  return srv_queue(r, http, resp);
}

enum MHD_Result faults_admin(struct req *r) {
  if (!auth_is_loopback(r))
    return srv_error(r, 403, "AccessDenied",
                     "The admin endpoint answers loopback clients only.");
  if (!strcmp(r->method, "GET"))
    return describe_answer(r, 200);
  if (!strcmp(r->method, "DELETE")) {
    struct hbuf why = HBUF_INIT;
    faults_set(r->srv->faults, "", 0, &why);
    hbuf_free(&why);
    srv_log(r->srv, SLOG_INFO, "%s: faults cleared", r->id);
    return srv_empty(r, 204);
  }
  if (!strcmp(r->method, "POST") || !strcmp(r->method, "PUT")) {
    struct hbuf why = HBUF_INIT;
    if (faults_set(r->srv->faults, hbuf_str(&r->mem),
                   req_has_param(r, "append"), &why) != 0) {
      enum MHD_Result res = srv_error(r, 400, "InvalidArgument",
                                      "bad fault SPEC: %s", hbuf_str(&why));
      hbuf_free(&why);
      return res;
    }
    hbuf_free(&why);
    srv_log(r->srv, SLOG_INFO, "%s: faults set: %s", r->id, hbuf_str(&r->mem));
    return describe_answer(r, 200);
  }
  return srv_error(r, 405, "MethodNotAllowed",
                   "Use GET, POST (SPEC in the body) or DELETE.");
}
