/* test_sigv4.c - SigV4 stages against published vectors, the header
 * canonicalisation rules, and a
 * cross-check against an independent signer (curl's --aws-sigv4).
 *
 * Sources of the expected values:
 * - AWS S3 API reference, "Signature Calculations for the Authorization
 *   Header: Transferring Payload in a Single Chunk (AWS Signature Version
 *   4)", examples GET Object, PUT Object, GET Bucket Lifecycle and Get Bucket
 *   (List Objects): canonical requests, strings to sign, signatures.
 * - docs/rdma-wire-protocol.md section 3.3 (PREPARE vector).
 * The crypto primitives under the signer: test_crypto.c. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "s3/crypto.h"
#include "s3/sigv4.h"
#include "src/base/codec.h"
#include "src/base/uri.h"

extern char **environ;

#define AK "AKIAIOSFODNN7EXAMPLE"
#define SK "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define AWS_DATE "20130524T000000Z"
#define AWS_HOST "examplebucket.s3.amazonaws.com"

/* ------------------------------------------------------------------------ */
/* AWS's published S3 examples                                              */
/* ------------------------------------------------------------------------ */

struct stage_want {
  const char *creq;
  const char *signed_headers;
  const char *sts;
  const char *signature;
};

/* Runs every stage and compares each with the published text. */
static void check_stages(const struct s3_sigv4_input *in,
                         const struct stage_want *w) {
  struct hbuf creq = HBUF_INIT, sh = HBUF_INIT, sts = HBUF_INIT,
              auth = HBUF_INIT, want_auth = HBUF_INIT;
  cr_assert_eq(s3_sigv4_canonical_request(in, &creq, &sh), 0);
  cr_expect_str_eq(hbuf_str(&creq), w->creq);
  cr_expect_str_eq(hbuf_str(&sh), w->signed_headers);
  cr_assert_eq(s3_sigv4_string_to_sign(in->amz_date, in->region, in->service,
                                       hbuf_str(&creq), &sts),
               0);
  cr_expect_str_eq(hbuf_str(&sts), w->sts);
  char sig[S3_SHA256_HEX_LEN + 1];
  s3_sigv4_signature(in->secret_key, in->amz_date, in->region, in->service,
                     hbuf_str(&sts), sig);
  cr_expect_str_eq(sig, w->signature);
  cr_assert_eq(s3_sigv4_authorization(in, &auth), 0);
  /* AWS prints the parts joined by "," alone; hipObject writes ", " as the
   * SDKs and curl do. Both forms are accepted by S3. */
  hbuf_printf(&want_auth,
              "AWS4-HMAC-SHA256 Credential=%s/%.8s/%s/%s/aws4_request, "
              "SignedHeaders=%s, Signature=%s",
              in->access_key, in->amz_date, in->region, in->service,
              w->signed_headers, w->signature);
  cr_expect_str_eq(hbuf_str(&auth), hbuf_str(&want_auth));
  /* Through a signing key cache: derived (miss), then reused (hit). */
  struct s3_sigv4_key_cache kc;
  s3_sigv4_key_cache_init(&kc);
  struct s3_sigv4_input cached = *in;
  cached.key_cache = &kc;
  for (int i = 0; i < 2; i++) {
    struct hbuf a = HBUF_INIT;
    cr_assert_eq(s3_sigv4_authorization(&cached, &a), 0);
    cr_expect_str_eq(hbuf_str(&a), hbuf_str(&want_auth), "pass %d", i);
    hbuf_free(&a);
  }
  s3_sigv4_key_cache_destroy(&kc);
  hbuf_free(&creq);
  hbuf_free(&sh);
  hbuf_free(&sts);
  hbuf_free(&auth);
  hbuf_free(&want_auth);
}

static struct s3_sigv4_input aws_input(const char *method, const char *uri,
                                       const char *query,
                                       const struct s3_header *h, size_t n,
                                       const char *payload_hash) {
  struct s3_sigv4_input in = {0};
  in.method = method;
  in.canonical_uri = uri;
  in.canonical_query = query;
  in.headers = h;
  in.n_headers = n;
  in.payload_hash = payload_hash;
  in.amz_date = AWS_DATE;
  in.region = "us-east-1";
  in.service = "s3";
  in.access_key = AK;
  in.secret_key = SK;
  return in;
}

Test(sigv4_aws, get_object) {
  /* Headers in request order, names as the example writes them. */
  struct s3_header h[] = {{"Host", AWS_HOST},
                          {"Range", "bytes=0-9"},
                          {"x-amz-content-sha256", S3_EMPTY_SHA256},
                          {"x-amz-date", AWS_DATE}};
  struct s3_sigv4_input in =
      aws_input("GET", "/test.txt", "", h, 4, S3_EMPTY_SHA256);
  struct stage_want w = {
      "GET\n/test.txt\n\n"
      "host:examplebucket.s3.amazonaws.com\n"
      "range:bytes=0-9\n"
      "x-amz-content-sha256:"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
      "x-amz-date:20130524T000000Z\n\n"
      "host;range;x-amz-content-sha256;x-amz-date\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "host;range;x-amz-content-sha256;x-amz-date",
      "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
      "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
      "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"};
  check_stages(&in, &w);
}

Test(sigv4_aws, put_object) {
  const char *body = "Welcome to Amazon S3.";
  char hash[S3_SHA256_HEX_LEN + 1];
  s3_sha256_hex(body, strlen(body), hash);
  struct hbuf uri = HBUF_INIT;
  cr_assert_eq(huri_encode(&uri, "/test$file.text", 15, 1), 0);
  /* Deliberately out of order and mixed case: canonicalisation sorts. */
  struct s3_header h[] = {{"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                          {"X-Amz-Date", AWS_DATE},
                          {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                          {"x-amz-content-sha256", hash},
                          {"Host", AWS_HOST}};
  struct s3_sigv4_input in = aws_input("PUT", hbuf_str(&uri), "", h, 5, hash);
  struct stage_want w = {
      "PUT\n/test%24file.text\n\n"
      "date:Fri, 24 May 2013 00:00:00 GMT\n"
      "host:examplebucket.s3.amazonaws.com\n"
      "x-amz-content-sha256:"
      "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
      "x-amz-date:20130524T000000Z\n"
      "x-amz-storage-class:REDUCED_REDUNDANCY\n\n"
      "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
      "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
      "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
      "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
      "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
      "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"};
  check_stages(&in, &w);
  hbuf_free(&uri);
}

static const char *const bucket_creq_tail =
    "host:examplebucket.s3.amazonaws.com\n"
    "x-amz-content-sha256:"
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
    "x-amz-date:20130524T000000Z\n\n"
    "host;x-amz-content-sha256;x-amz-date\n"
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

Test(sigv4_aws, get_bucket_lifecycle) {
  struct hparam q[] = {{"lifecycle", NULL}};
  struct hbuf query = HBUF_INIT, creq = HBUF_INIT;
  cr_assert_eq(huri_canonical_query(&query, q, 1), 0);
  struct s3_header h[] = {{"Host", AWS_HOST},
                          {"x-amz-content-sha256", S3_EMPTY_SHA256},
                          {"x-amz-date", AWS_DATE}};
  struct s3_sigv4_input in =
      aws_input("GET", "/", hbuf_str(&query), h, 3, S3_EMPTY_SHA256);
  hbuf_printf(&creq, "GET\n/\nlifecycle=\n%s", bucket_creq_tail);
  struct stage_want w = {
      hbuf_str(&creq), "host;x-amz-content-sha256;x-amz-date",
      "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
      "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
      "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"};
  check_stages(&in, &w);
  hbuf_free(&query);
  hbuf_free(&creq);
}

Test(sigv4_aws, list_objects) {
  struct hparam q[] = {{"prefix", "J"}, {"max-keys", "2"}};
  struct hbuf query = HBUF_INIT, creq = HBUF_INIT;
  cr_assert_eq(huri_canonical_query(&query, q, 2), 0);
  struct s3_header h[] = {{"x-amz-date", AWS_DATE},
                          {"Host", AWS_HOST},
                          {"x-amz-content-sha256", S3_EMPTY_SHA256}};
  struct s3_sigv4_input in =
      aws_input("GET", "/", hbuf_str(&query), h, 3, S3_EMPTY_SHA256);
  hbuf_printf(&creq, "GET\n/\nmax-keys=2&prefix=J\n%s", bucket_creq_tail);
  struct stage_want w = {
      hbuf_str(&creq), "host;x-amz-content-sha256;x-amz-date",
      "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
      "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
      "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"};
  check_stages(&in, &w);
  hbuf_free(&query);
  hbuf_free(&creq);
}

/* ------------------------------------------------------------------------ */
/* hipobj-rc-v2 PREPARE vector (rdma-wire-protocol.md section 3.3)          */
/* ------------------------------------------------------------------------ */

#define RC2_TOKEN                                                              \
  "012301000000000000000000000000ffffc0a8640a00000000000000000000000000000000" \
  "00000000010000"

static void prepare_vector(const char *payload_hash, const char *want_sig,
                           const char *want_creq_sha) {
  /* Mixed spellings as peers send them; the target is already encoded. */
  struct s3_header h[] = {{"Host", "10.0.0.1:7070"},
                          {"Content-Length", "0"},
                          {"X-Amz-Date", "20260820T120000Z"},
                          {"x-amz-content-sha256", payload_hash},
                          {"X-Amz-Rdma-Protocol", "hipobj-rc-v2"},
                          {"X-Amz-Rdma-Token", RC2_TOKEN},
                          {"X-Amz-Rdma-Psn", "00ff10"},
                          {"X-Amz-Rdma-Cookie", "1a2b3c4d"},
                          {"X-Amz-Rdma-Op", "GET"},
                          {"X-Amz-Rdma-Target", "/bucket/dir/obj%201.bin"},
                          {"X-Amz-Rdma-Size", "4096"},
                          {"X-Amz-Rdma-Offset", "1048576"}};
  struct s3_sigv4_input in = {0};
  in.method = "POST";
  in.canonical_uri = "/.hipobj-rc/prepare";
  in.canonical_query = "";
  in.headers = h;
  in.n_headers = sizeof h / sizeof h[0];
  in.payload_hash = payload_hash;
  in.amz_date = "20260820T120000Z";
  in.region = "us-east-1";
  in.service = "s3";
  in.access_key = AK;
  in.secret_key = SK;

  struct hbuf creq = HBUF_INIT, sh = HBUF_INIT, auth = HBUF_INIT;
  cr_assert_eq(s3_sigv4_canonical_request(&in, &creq, &sh), 0);
  cr_expect_str_eq(hbuf_str(&sh),
                   "content-length;host;x-amz-content-sha256;x-amz-date;"
                   "x-amz-rdma-cookie;x-amz-rdma-offset;x-amz-rdma-op;"
                   "x-amz-rdma-protocol;x-amz-rdma-psn;x-amz-rdma-size;"
                   "x-amz-rdma-target;x-amz-rdma-token");
  if (want_creq_sha) {
    char hex[S3_SHA256_HEX_LEN + 1];
    s3_sha256_hex(creq.data, creq.len, hex);
    cr_expect_str_eq(hex, want_creq_sha);
  }
  cr_assert_eq(s3_sigv4_authorization(&in, &auth), 0);
  const char *sig = strstr(hbuf_str(&auth), "Signature=");
  cr_assert_not_null(sig);
  cr_expect_str_eq(sig + 10, want_sig);
  hbuf_free(&creq);
  hbuf_free(&sh);
  hbuf_free(&auth);
}

Test(sigv4_rdma, prepare_empty_sha256) {
  prepare_vector(
      S3_EMPTY_SHA256,
      "8eb679efa760942ee04e1d23eeb9714b67006c55d8491d1d6777eb01ffc0edbe",
      "19bcf6d5647507b011eb482519b472a9f7b8d7b5028a90afb5cacd4793370e6f");
}

Test(sigv4_rdma, prepare_unsigned_payload) {
  /* The document gives only the signature for this variant. */
  prepare_vector(
      S3_UNSIGNED_PAYLOAD,
      "5ad49adb23fa238fc5fa21f52a36ba7a2c2d4c7766b455f081b39121cdfb5106", NULL);
}

/* ------------------------------------------------------------------------ */
/* Canonicalisation rules                                                   */
/* ------------------------------------------------------------------------ */

static struct s3_sigv4_input plain_input(const struct s3_header *h, size_t n) {
  return aws_input("GET", "/b/k", "", h, n, S3_UNSIGNED_PAYLOAD);
}

Test(sigv4_rules, lowercase_trim_fold_sort_join) {
  struct s3_header h[] = {{"X-Amz-Meta-B", "  two   words\t\there  "},
                          {"Host", "h.example"},
                          {"x-amz-meta-a", "1"},
                          {"X-AMZ-META-A", " 2 "},
                          {"x-amz-meta-empty", "   "},
                          {"x-amz-meta-a", "3"}};
  struct s3_sigv4_input in = plain_input(h, 6);
  struct hbuf creq = HBUF_INIT, sh = HBUF_INIT;
  cr_assert_eq(s3_sigv4_canonical_request(&in, &creq, &sh), 0);
  /* Duplicates joined with ',' in the order given; no spaces added. */
  cr_expect_str_eq(hbuf_str(&creq), "GET\n/b/k\n\n"
                                    "host:h.example\n"
                                    "x-amz-meta-a:1,2,3\n"
                                    "x-amz-meta-b:two words here\n"
                                    "x-amz-meta-empty:\n\n"
                                    "host;x-amz-meta-a;x-amz-meta-b;"
                                    "x-amz-meta-empty\n"
                                    "UNSIGNED-PAYLOAD");
  cr_expect_str_eq(hbuf_str(&sh),
                   "host;x-amz-meta-a;x-amz-meta-b;x-amz-meta-empty");
  hbuf_free(&creq);
  hbuf_free(&sh);
}

Test(sigv4_rules, path_never_normalised) {
  struct s3_header h[] = {{"host", "h"}};
  struct s3_sigv4_input in =
      aws_input("GET", "/b/./a//c/../d%2Fe", "", h, 1, S3_EMPTY_SHA256);
  struct hbuf creq = HBUF_INIT, sh = HBUF_INIT;
  cr_assert_eq(s3_sigv4_canonical_request(&in, &creq, &sh), 0);
  cr_expect(strncmp(hbuf_str(&creq), "GET\n/b/./a//c/../d%2Fe\n\n", 24) == 0,
            "got: %s", hbuf_str(&creq));
  hbuf_free(&creq);
  hbuf_free(&sh);
}

Test(sigv4_rules, rejects_bad_headers_and_leaves_buffers) {
  struct s3_header bad_name[] = {{"host", "h"}, {"bad name", "v"}};
  struct s3_header colon[] = {{"x:y", "v"}};
  struct s3_header crlf[] = {{"x-amz-meta-a", "v\r\nx-evil: 1"}};
  struct s3_header empty[] = {{"", "v"}};
  const struct s3_header *sets[] = {bad_name, colon, crlf, empty};
  size_t counts[] = {2, 1, 1, 1};
  for (size_t i = 0; i < 4; i++) {
    struct s3_sigv4_input in = plain_input(sets[i], counts[i]);
    struct hbuf creq = HBUF_INIT, sh = HBUF_INIT, auth = HBUF_INIT;
    hbuf_puts(&creq, "pre");
    hbuf_puts(&sh, "pre");
    hbuf_puts(&auth, "pre");
    cr_expect_eq(s3_sigv4_canonical_request(&in, &creq, &sh), -1, "set %zu", i);
    cr_expect_str_eq(hbuf_str(&creq), "pre");
    cr_expect_str_eq(hbuf_str(&sh), "pre");
    cr_expect_eq(s3_sigv4_authorization(&in, &auth), -1);
    cr_expect_str_eq(hbuf_str(&auth), "pre");
    hbuf_free(&creq);
    hbuf_free(&sh);
    hbuf_free(&auth);
  }
}

Test(sigv4_rules, rejects_bad_date_and_scope) {
  struct hbuf sts = HBUF_INIT;
  cr_expect_eq(
      s3_sigv4_string_to_sign("2013-05-24", "us-east-1", "s3", "x", &sts), -1);
  cr_expect_eq(
      s3_sigv4_string_to_sign("20130524T000000", "us-east-1", "s3", "x", &sts),
      -1);
  cr_expect_eq(s3_sigv4_string_to_sign(AWS_DATE, "", "s3", "x", &sts), -1);
  cr_expect_eq(s3_sigv4_string_to_sign(AWS_DATE, "us/east", "s3", "x", &sts),
               -1);
  cr_expect_eq(s3_sigv4_string_to_sign(AWS_DATE, "us-east-1", NULL, "x", &sts),
               -1);
  cr_expect_str_eq(hbuf_str(&sts), "");
  char sig[S3_SHA256_HEX_LEN + 1] = "x";
  s3_sigv4_signature(SK, "bad", "us-east-1", "s3", "x", sig);
  cr_expect_str_eq(sig, "");
  hbuf_free(&sts);
}

Test(sigv4_rules, amz_date) {
  char d[17];
  s3_sigv4_amz_date(1369353600, d); /* date -u -d @1369353600 */
  cr_expect_str_eq(d, "20130524T000000Z");
  s3_sigv4_amz_date(1787227200, d); /* 2026-08-20 12:00:00 UTC */
  cr_expect_str_eq(d, "20260820T120000Z");
  s3_sigv4_amz_date(0, d);
  cr_expect_str_eq(d, "19700101T000000Z");
}

/* ------------------------------------------------------------------------ */
/* Cross-check with curl's independent SigV4 signer                         */
/* ------------------------------------------------------------------------ */

struct capture_srv {
  int fd;
  int port;
  char req[16384];
  size_t len;
  int ok;
};

static int srv_open(struct capture_srv *s) {
  struct sockaddr_in a = {0};
  socklen_t alen = sizeof a;
  s->fd = socket(AF_INET, SOCK_STREAM, 0);
  if (s->fd < 0)
    return -1;
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(s->fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(s->fd, 1) != 0 ||
      getsockname(s->fd, (struct sockaddr *)&a, &alen) != 0) {
    close(s->fd);
    return -1;
  }
  s->port = ntohs(a.sin_port);
  return 0;
}

/* Accepts one connection, keeps the raw request (head and body) and answers
 * an empty 200. Bounded by poll timeouts so a broken curl cannot hang it. */
static void *srv_run(void *arg) {
  struct capture_srv *s = arg;
  struct pollfd p = {s->fd, POLLIN, 0};
  if (poll(&p, 1, 15000) != 1)
    return NULL;
  int c = accept(s->fd, NULL, NULL);
  if (c < 0)
    return NULL;
  size_t want = 0;
  for (;;) {
    struct pollfd pc = {c, POLLIN, 0};
    if (s->len >= sizeof s->req - 1 || poll(&pc, 1, 15000) != 1)
      break;
    ssize_t n = recv(c, s->req + s->len, sizeof s->req - 1 - s->len, 0);
    if (n <= 0)
      break;
    s->len += (size_t)n;
    s->req[s->len] = '\0';
    char *end = strstr(s->req, "\r\n\r\n");
    if (end && !want) {
      size_t body = 0;
      for (char *h = strstr(s->req, "\r\n"); h && h < end;
           h = strstr(h + 2, "\r\n"))
        if (strncasecmp(h + 2, "Content-Length:", 15) == 0)
          body = strtoul(h + 17, NULL, 10);
      want = (size_t)(end + 4 - s->req) + body;
    }
    if (want && s->len >= want) {
      s->ok = 1;
      break;
    }
  }
  const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  if (send(c, resp, strlen(resp), MSG_NOSIGNAL) < 0)
    s->ok = 0;
  close(c);
  return NULL;
}

/* Runs curl; returns its exit status, or -1 when it cannot be started. */
static int run_curl(char *const argv[]) {
  if (access("/usr/bin/curl", X_OK) != 0)
    return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, "/usr/bin/curl", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return -1;
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

struct raw_header {
  char name[64];
  char value[512];
};

/* Splits the captured head into request line and headers. */
static size_t parse_request(char *req, char **method, char **target,
                            struct raw_header *h, size_t max) {
  char *end = strstr(req, "\r\n\r\n");
  cr_assert_not_null(end, "no end of headers in the captured request");
  end[2] = '\0';
  char *line = req, *nl = strstr(line, "\r\n");
  *nl = '\0';
  *method = line;
  char *sp = strchr(line, ' ');
  cr_assert_not_null(sp);
  *sp = '\0';
  *target = sp + 1;
  sp = strchr(*target, ' ');
  cr_assert_not_null(sp);
  *sp = '\0';
  size_t n = 0;
  for (line = nl + 2; *line && (nl = strstr(line, "\r\n")); line = nl + 2) {
    *nl = '\0';
    char *colon = strchr(line, ':');
    cr_assert_not_null(colon, "bad header line %s", line);
    cr_assert_lt(n, max);
    *colon = '\0';
    snprintf(h[n].name, sizeof h[n].name, "%s", line);
    /* The raw value, spaces kept: the signer must trim and fold them. */
    snprintf(h[n].value, sizeof h[n].value, "%s", colon + 1);
    n++;
  }
  return n;
}

static const char *find_header(const struct raw_header *h, size_t n,
                               const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(h[i].name, name) == 0)
      return h[i].value;
  return NULL;
}

/* Sends one request through curl and checks that s3_sigv4_authorization,
 * fed the request curl actually sent, produces curl's Authorization value
 * byte for byte. */
static void curl_case(const char *method, const char *path, const char *query,
                      const char *body, char *const *extra, size_t n_extra) {
  struct capture_srv srv = {0};
  cr_assert_eq(srv_open(&srv), 0, "listen: %s", strerror(errno));
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, srv_run, &srv), 0);

  char url[1024];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s%s%s", srv.port, path,
           *query ? "?" : "", query);
  char *argv[40];
  size_t a = 0;
  argv[a++] = "curl";
  argv[a++] = "-q"; /* no ~/.curlrc */
  argv[a++] = "-sS";
  argv[a++] = "--noproxy";
  argv[a++] = "*";
  argv[a++] = "--max-time";
  argv[a++] = "15";
  argv[a++] = "--aws-sigv4";
  argv[a++] = "aws:amz:us-east-1:s3";
  argv[a++] = "--user";
  argv[a++] = AK ":" SK;
  argv[a++] = "-H";
  argv[a++] = "x-amz-date: 20260101T000000Z";
  for (size_t i = 0; i < n_extra; i++) {
    argv[a++] = "-H";
    argv[a++] = extra[i];
  }
  argv[a++] = "-X";
  argv[a++] = (char *)method;
  if (body) {
    argv[a++] = "--data-binary";
    argv[a++] = (char *)body;
  }
  argv[a++] = url;
  argv[a] = NULL;

  int rc = run_curl(argv);
  if (rc != 0) {
    /* Unblock the listener before leaving. */
    shutdown(srv.fd, SHUT_RDWR);
    pthread_join(th, NULL);
    close(srv.fd);
    if (rc == -1)
      cr_skip("curl is not installed at /usr/bin/curl");
    if (rc == 2)
      cr_skip("this curl does not support --aws-sigv4 (needs 7.75+)");
    cr_assert_fail("curl exited with status %d", rc);
  }
  pthread_join(th, NULL);
  close(srv.fd);
  cr_assert(srv.ok, "the listener did not capture a whole request");

  char *m, *target;
  struct raw_header h[32];
  size_t n = parse_request(srv.req, &m, &target, h, 32);
  cr_expect_str_eq(m, method);
  /* curl must have sent the path and query untouched. */
  char *q = strchr(target, '?');
  if (q)
    *q++ = '\0';
  cr_expect_str_eq(target, path);
  cr_expect_str_eq(q ? q : "", query);

  const char *auth = find_header(h, n, "authorization");
  cr_assert_not_null(auth, "curl sent no Authorization header");
  while (*auth == ' ')
    auth++;
  const char *shp = strstr(auth, "SignedHeaders=");
  cr_assert_not_null(shp);
  char signed_names[512];
  snprintf(signed_names, sizeof signed_names, "%s", shp + 14);
  *strchrnul(signed_names, ',') = '\0';

  /* Every line of every signed header, as a server would collect them.
   * curl 7.88 sends x-amz-date twice when it is given with -H (its own
   * copy of the same line) and signs one: exact duplicate lines are taken
   * once, distinct values would still be joined. */
  struct s3_header sh[32];
  size_t ns = 0;
  char names_copy[512], *save = NULL;
  snprintf(names_copy, sizeof names_copy, "%s", signed_names);
  for (char *nm = strtok_r(names_copy, ";", &save); nm;
       nm = strtok_r(NULL, ";", &save)) {
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
      if (strcasecmp(h[i].name, nm) != 0)
        continue;
      int dup = 0;
      for (size_t j = 0; j < ns; j++)
        dup |= strcasecmp(sh[j].name, h[i].name) == 0 &&
               strcmp(sh[j].value, h[i].value) == 0;
      if (!dup)
        sh[ns++] = (struct s3_header){h[i].name, h[i].value};
      found++;
    }
    cr_assert_gt(found, 0, "signed header %s not in the request", nm);
  }

  const char *date = find_header(h, n, "x-amz-date");
  const char *ph = find_header(h, n, "x-amz-content-sha256");
  cr_assert_not_null(date);
  cr_assert_not_null(ph, "the test passes x-amz-content-sha256 to curl");
  while (*date == ' ')
    date++;
  while (*ph == ' ')
    ph++;
  struct s3_sigv4_input in = {0};
  in.method = method;
  in.canonical_uri = path;
  in.canonical_query = query;
  in.headers = sh;
  in.n_headers = ns;
  in.payload_hash = ph;
  in.amz_date = date;
  in.region = "us-east-1";
  in.service = "s3";
  in.access_key = AK;
  in.secret_key = SK;
  struct hbuf mine = HBUF_INIT, creq = HBUF_INIT, mysh = HBUF_INIT;
  cr_assert_eq(s3_sigv4_canonical_request(&in, &creq, &mysh), 0);
  cr_expect_str_eq(hbuf_str(&mysh), signed_names);
  cr_assert_eq(s3_sigv4_authorization(&in, &mine), 0);
  cr_expect_str_eq(hbuf_str(&mine), auth, "canonical request was:\n%s",
                   hbuf_str(&creq));
  hbuf_free(&mine);
  hbuf_free(&creq);
  hbuf_free(&mysh);
}

Test(sigv4_curl, put_special_path_and_folded_header) {
  struct hbuf path = HBUF_INIT, query = HBUF_INIT;
  hbuf_puts(&path, "/bucket/");
  const char *key = "dir/a b+c~d$e/\xc3\xbc(1)*.txt";
  cr_assert_eq(huri_encode(&path, key, strlen(key), 1), 0);
  cr_assert_str_eq(hbuf_str(&path),
                   "/bucket/dir/a%20b%2Bc~d%24e/%C3%BC%281%29%2A.txt");
  struct hparam qp[] = {{"uploadId", "x y/z"}, {"partNumber", "7"}};
  cr_assert_eq(huri_canonical_query(&query, qp, 2), 0);
  cr_assert_str_eq(hbuf_str(&query), "partNumber=7&uploadId=x%20y%2Fz");

  const char *body = "hello, world";
  char hash[S3_SHA256_HEX_LEN + 1], hdr[128];
  s3_sha256_hex(body, strlen(body), hash);
  snprintf(hdr, sizeof hdr, "x-amz-content-sha256: %s", hash);
  char *extra[] = {hdr, "X-Amz-Meta-Note:   two   spaced\t words  ",
                   "Content-Type: application/octet-stream"};
  curl_case("PUT", hbuf_str(&path), hbuf_str(&query), body, extra, 3);
  hbuf_free(&path);
  hbuf_free(&query);
}

Test(sigv4_curl, get_unsigned_payload_with_range) {
  char *extra[] = {"x-amz-content-sha256: UNSIGNED-PAYLOAD",
                   "Range: bytes=0-9"};
  curl_case("GET", "/bucket/%7Etilde%20key~", "", NULL, extra, 2);
}

/* The cached signing key follows the date, region and secret. */
Test(sigv4_rules, key_cache_follows_date_region_secret) {
  struct s3_header h[] = {{"host", "h"},
                          {"x-amz-content-sha256", S3_EMPTY_SHA256},
                          {"x-amz-date", "20240101T000000Z"}};
  struct s3_sigv4_input in = {.method = "GET",
                              .canonical_uri = "/b/k",
                              .canonical_query = "",
                              .headers = h,
                              .n_headers = 3,
                              .payload_hash = S3_EMPTY_SHA256,
                              .region = "us-east-1",
                              .service = "s3",
                              .access_key = "AK"};
  static const struct {
    const char *date, *region, *secret;
  } steps[] = {{"20240101T000000Z", "us-east-1", "s1"},
               {"20240101T235959Z", "us-east-1", "s1"},
               {"20240102T000000Z", "us-east-1", "s1"},
               {"20240102T000000Z", "eu-west-3", "s1"},
               {"20240102T000000Z", "eu-west-3", "another secret"},
               {"20240101T000000Z", "us-east-1", "s1"}};
  struct s3_sigv4_key_cache kc;
  s3_sigv4_key_cache_init(&kc);
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    in.amz_date = steps[i].date;
    in.region = steps[i].region;
    in.secret_key = steps[i].secret;
    struct hbuf plain = HBUF_INIT, cached = HBUF_INIT;
    in.key_cache = NULL;
    cr_assert_eq(s3_sigv4_authorization(&in, &plain), 0);
    in.key_cache = &kc;
    cr_assert_eq(s3_sigv4_authorization(&in, &cached), 0);
    cr_expect_str_eq(hbuf_str(&cached), hbuf_str(&plain), "step %zu", i);
    hbuf_free(&plain);
    hbuf_free(&cached);
  }
  s3_sigv4_key_cache_destroy(&kc);
}
