/* xmlw.c - the XML writer of hipobj-server's answers (S3 documents built
 * into an hbuf) and the two date formats S3 uses. Every document the
 * server sends is built here: no other file writes markup, so what is
 * escaped is decided in one place.
 *
 * Escaping: the five XML specials are escaped, and TAB, LF and CR are
 * written as character references (a parser would otherwise normalise CR
 * away). Every other character that XML 1.0 cannot carry (the other
 * control characters, U+FFFE, U+FFFF, and bytes that are not UTF-8) is
 * written as U+FFFD: the document is always well-formed. S3 writes such
 * characters as references like &#x1;, which no XML 1.0 parser accepts;
 * so this server refuses keys that hold them (xml_text_ok) and needs
 * encoding-type=url to echo such a listing parameter, and the replacement
 * only ever shows in diagnostics (the <Key> of an error, say). */
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

void xml_begin_bare(struct hbuf *b, const char *root) {
  hbuf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%s>", root);
}

void xml_end(struct hbuf *b, const char *root) {
  hbuf_printf(b, "</%s>", root);
}

void xml_open(struct hbuf *b, const char *name) {
  hbuf_printf(b, "<%s>", name);
}

void xml_close(struct hbuf *b, const char *name) {
  hbuf_printf(b, "</%s>", name);
}

/* Length of the UTF-8 sequence at s holding an XML 1.0 Char, 0 when the
 * bytes there are not one (invalid UTF-8, a control character other than
 * TAB, LF and CR, a surrogate, U+FFFE or U+FFFF). */
static size_t xml_char_len(const unsigned char *s) {
  unsigned char c = s[0];
  if (c < 0x80)
    return c >= 0x20 || c == 0x09 || c == 0x0a || c == 0x0d ? 1 : 0;
  size_t n;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0; /* also stops at the NUL */
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
    return 0;
  return n;
}

int xml_text_ok(const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    size_t n = xml_char_len(p);
    if (!n)
      return 0;
    p += n;
  }
  return 1;
}

void xml_esc(struct hbuf *b, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    size_t n = xml_char_len(p);
    switch (n ? *p : 0) {
    case 0:
      hbuf_puts(b, "\xef\xbf\xbd"); /* U+FFFD for the byte */
      n = 1;
      break;
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
    case '\t':
    case '\n':
    case '\r':
      hbuf_printf(b, "&#x%X;", *p);
      break;
    default:
      hbuf_append(b, p, n);
    }
    p += n;
  }
}

void xml_el(struct hbuf *b, const char *name, const char *text) {
  xml_open(b, name);
  xml_esc(b, text ? text : "");
  xml_close(b, name);
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
  xml_open(b, name);
  huri_encode(b, text ? text : "", text ? strlen(text) : 0, 1);
  xml_close(b, name);
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
