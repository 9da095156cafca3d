#!/bin/bash
# cli-escape.sh - what a server sends never reaches the terminal raw
# (issue "Integrity and safety", item 5): `hipobj` against a fake S3 server
# (python3, below) whose listing holds keys with ESC sequences, BEL, a C1
# CSI, LF and a byte that is not UTF-8, whose error messages carry
# terminal escapes (in XML, and in a body that is not XML), and whose
# Content-Type does. Every byte of the text output must be printable UTF-8
# (control characters shown as \xNN), and the JSON output must be valid
# JSON giving the exact keys back.
#
# Usage: cli-escape.sh path/to/hipobj
set -euo pipefail

CLI=${1:?usage: cli-escape.sh HIPOBJ}
WORK=$(mktemp -d /tmp/hipobj-cli-escape-XXXXXX)
FAKE_PID=
cleanup() {
  if [ -n "$FAKE_PID" ]; then kill "$FAKE_PID" 2>/dev/null || true; fi
  if [ "${HIPOBJ_TEST_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
step() { echo "== $*"; }

command -v python3 >/dev/null || {
  echo "SKIP: python3 is needed for the fake server"
  exit 77
}

cat >"$WORK/fake.py" <<'PY'
# A fake S3 endpoint: fixed answers, no authentication.
import http.server, sys

LISTING = (b'<?xml version="1.0" encoding="UTF-8"?>'
           b'<ListBucketResult><Name>esc</Name><EncodingType>url</EncodingType>'
           b'<IsTruncated>false</IsTruncated>'
           b'<Contents><Key>a%1B%5B31mred%1B%5B0m</Key><Size>1</Size>'
           b'<ETag>"e"</ETag><LastModified>2024-01-01T00:00:00.000Z</LastModified></Contents>'
           b'<Contents><Key>b%C2%9B2Jx</Key><Size>2</Size>'
           b'<ETag>"e"</ETag><LastModified>2024-01-01T00:00:00.000Z</LastModified></Contents>'
           b'<Contents><Key>c%FFd%07</Key><Size>3</Size>'
           b'<ETag>"e"</ETag><LastModified>2024-01-01T00:00:00.000Z</LastModified></Contents>'
           b'<Contents><Key>d%0Aline%0D</Key><Size>4</Size>'
           b'<ETag>"e"</ETag><LastModified>2024-01-01T00:00:00.000Z</LastModified></Contents>'
           b'<CommonPrefixes><Prefix>p%1B%5D0%3Btitle%07/</Prefix></CommonPrefixes>'
           b'</ListBucketResult>')

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, code, body, ctype="application/xml", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith(("/esc?", "/esc/?")):
            self.answer(200, LISTING)
        elif self.path.startswith("/esc/xmlmsg"):
            # XML 1.0 carries C1 controls: U+009B is a CSI.
            self.answer(403, "<Error><Code>AccessDenied</Code><Message>"
                        "denied \u009b2J\u009b31m</Message></Error>"
                        .encode("utf-8"))
        else:
            self.answer(404, b"")

    def do_DELETE(self):
        # Not XML: the client keeps the first line of the body as it is.
        self.answer(403, b"no\x1b]0;pwned\x07 way\x1b[2J\x9b\xff",
                    ctype="text/plain")

    def do_HEAD(self):
        self.answer(200, b"", ctype="text/\x1b[31mred",
                    extra=[("ETag", '"e"')])

srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
PY

python3 "$WORK/fake.py" >"$WORK/port" &
FAKE_PID=$!
for _ in $(seq 100); do
  [ -s "$WORK/port" ] && break
  sleep 0.1
done
PORT=$(cat "$WORK/port")
[ -n "$PORT" ] || fail "the fake server did not start"
export AWS_ACCESS_KEY_ID=AKIDESC AWS_SECRET_ACCESS_KEY=escape-secret
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL
H=("$CLI" --endpoint-url "http://127.0.0.1:$PORT" --region us-east-1)

# Fails unless every byte of the file is printable UTF-8 or a newline.
printable() {
  python3 - "$1" <<'PY' || fail "$2: raw control bytes or bad UTF-8: $(cat -A "$1")"
import sys
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8")  # raises on bytes that are not UTF-8
bad = [c for c in text if c != "\n" and (ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0)]
sys.exit(1 if bad else 0)
PY
}

run() {
  rc=0
  timeout 60 "${H[@]}" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -ne 124 ] || fail "hipobj $* did not end within 60 s"
}

step "ls: keys and prefixes with control characters"
run ls s3://esc/
[ "$rc" -eq 0 ] || fail "ls: $(cat "$WORK/err")"
printable "$WORK/out" "ls output"
grep -qF 'a\x1b[31mred\x1b[0m' "$WORK/out" || fail "ESC not shown: $(cat "$WORK/out")"
grep -qF 'b\xc2\x9b2Jx' "$WORK/out" || fail "C1 CSI not shown"
grep -qF 'c\xffd\x07' "$WORK/out" || fail "bad byte or BEL not shown"
grep -qF 'd\x0aline\x0d' "$WORK/out" || fail "LF in a key not shown"
grep -qF 'p\x1b]0;title\x07/' "$WORK/out" || fail "prefix not shown"
[ "$(wc -l <"$WORK/out")" -eq 5 ] || fail "not one line per entry"

step "ls --json: valid JSON, the exact keys"
run --json ls s3://esc/
[ "$rc" -eq 0 ] || fail "ls --json: $(cat "$WORK/err")"
printable "$WORK/out" "ls --json output"
python3 - "$WORK/out" <<'PY' || fail "JSON: $(cat "$WORK/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
keys = [r.get("key") for r in rows if "key" in r]
want = ["a\x1b[31mred\x1b[0m", "b\u009b2Jx", "c\ufffdd\x07", "d\nline\r"]
assert keys == want, keys
assert [r["prefix"] for r in rows if "prefix" in r] == ["p\x1b]0;title\x07/"]
PY

step "rm: an error body that is not XML"
run rm s3://esc/k
[ "$rc" -ne 0 ] || fail "rm succeeded"
printable "$WORK/err" "rm error"
grep -qF 'no\x1b]0;pwned\x07 way\x1b[2J' "$WORK/err" ||
  fail "the message is not shown escaped: $(cat "$WORK/err")"

step "cp: an XML error message with C1 controls"
run cp s3://esc/xmlmsg "$WORK/dl"
[ "$rc" -ne 0 ] || fail "cp succeeded"
printable "$WORK/err" "cp error"
grep -qF 'denied \xc2\x9b2J' "$WORK/err" || fail "not shown: $(cat "$WORK/err")"

step "stat: a Content-Type with an escape"
run stat s3://esc/k
[ "$rc" -eq 0 ] || fail "stat: $(cat "$WORK/err")"
printable "$WORK/out" "stat output"
grep -qF 'text/\x1b[31mred' "$WORK/out" || fail "not shown: $(cat "$WORK/out")"
echo "PASS"
