/* fuzz_xmlw.c - hipobj-server's XML writer (tests/server/xmlw.c).
 * Properties: whatever the text, the document written is well-formed
 * (libxml2 reads it); text that xml_text_ok() accepts reads back exactly;
 * a key written URL-encoded reads back, once decoded, exactly.
 *
 * Input: the text. */
#include "fuzz.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "src/base/uri.h"
#include "tests/server/server.h"

/* Parses the document; the text of the first child of the root. */
static char *read_back(const struct hbuf *b, int *ok) {
  xmlDocPtr d =
      xmlReadMemory(b->data, (int)b->len, NULL, NULL,
                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  *ok = d != NULL;
  char *text = NULL;
  if (d) {
    xmlNodePtr root = xmlDocGetRootElement(d);
    xmlNodePtr el = root ? root->children : NULL;
    xmlChar *c = el ? xmlNodeGetContent(el) : NULL;
    text = strdup(c ? (const char *)c : "");
    xmlFree(c);
    xmlFreeDoc(d);
  }
  return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s)
    return 0;
  memcpy(s, data, size);
  s[size] = '\0'; /* the writer takes C strings: up to the first NUL */
  for (int url = 0; url < 2; url++) {
    struct hbuf b = HBUF_INIT;
    xml_begin(&b, "R");
    xml_el_key(&b, "Key", s, url);
    xml_end(&b, "R");
    int ok;
    char *back = read_back(&b, &ok);
    FUZZ_CHECK(ok, "not well-formed: %s", hbuf_str(&b));
    if (url) {
      struct hbuf dec = HBUF_INIT;
      FUZZ_CHECK(huri_decode(&dec, back, strlen(back)) == 0 &&
                     !strcmp(hbuf_str(&dec), s),
                 "URL-encoded key changed");
      hbuf_free(&dec);
    } else if (xml_text_ok(s)) {
      FUZZ_CHECK(!strcmp(back, s), "text changed: %s", hbuf_str(&b));
    }
    free(back);
    hbuf_free(&b);
  }
  free(s);
  return 0;
}
