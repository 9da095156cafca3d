/* xmlw.c - the XML writers of hipobj-server's answers (S3 documents built
 * into an hbuf) and the two date formats S3 uses.
 *
 * Escaping: the five XML specials are escaped; control characters, which
 * XML 1.0 cannot carry literally, are written as character references, as
 * S3 does (keys may contain them). Use encoding-type=url to get such keys
 * through strict parsers. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server.h"
#include "src/base/uri.h"

void xml_begin(struct hbuf *b, const char *root) {
  hbuf_printf(
      b,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%s xmlns=\"" SRV_XMLNS
      "\">",
      root);
}

void xml_end(struct hbuf *b, const char *root) {
  hbuf_printf(b, "</%s>", root);
}

void xml_esc(struct hbuf *b, const char *s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '&':
      hbuf_puts(b, "&amp;");
      break;
    case '<':
      hbuf_puts(b, "&lt;");
      break;
    case '>':
      hbuf_puts(b, "&gt;");
      break;
    case '"':
      hbuf_puts(b, "&quot;");
      break;
    case '\'':
      hbuf_puts(b, "&apos;");
      break;
    default:
      if (c < 0x20 || c == 0x7f)
        hbuf_printf(b, "&#x%X;", c);
      else
        hbuf_putc(b, (char)c);
    }
  }
}

void xml_el(struct hbuf *b, const char *name, const char *text) {
  hbuf_printf(b, "<%s>", name);
  xml_esc(b, text ? text : "");
  hbuf_printf(b, "</%s>", name);
}

void xml_el_u64(struct hbuf *b, const char *name, uint64_t v) {
  hbuf_printf(b, "<%s>%llu</%s>", name, (unsigned long long)v, name);
}

/* Keys and prefixes: with encoding-type=url they are percent-encoded ('/'
 * kept), which also makes any byte safe in the document. */
void xml_el_key(struct hbuf *b, const char *name, const char *text,
                int url_encode) {
  if (!url_encode) {
    xml_el(b, name, text);
    return;
  }
  hbuf_printf(b, "<%s>", name);
  huri_encode(b, text ? text : "", text ? strlen(text) : 0, 1);
  hbuf_printf(b, "</%s>", name);
}

/* RFC 7231 IMF-fixdate. The C locale is never changed, so %a/%b are the
 * English names HTTP requires. */
void srv_http_date(int64_t sec, char out[40]) {
  time_t t = (time_t)sec;
  struct tm tm;
  out[0] = '\0';
  if (gmtime_r(&t, &tm))
    strftime(out, 40, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* ISO 8601 with milliseconds, as S3 writes LastModified. */
void srv_iso8601(int64_t ms, char out[32]) {
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  out[0] = '\0';
  if (gmtime_r(&t, &tm)) {
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%s.%03dZ", base, (int)(ms % 1000));
  }
}
