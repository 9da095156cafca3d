#!/bin/bash
# make-certs.sh - regenerates the TLS test material of tests/server/test_tls.c
# (committed, so the tests need no openssl command): a throw-away CA, a
# server certificate for 127.0.0.1 and localhost, and one for another name
# only (the hostname-mismatch case). EC P-256, valid for 100 years. The CA
# key is not kept: nothing else is ever signed with it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
days=36500
openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/ca.key"
openssl req -x509 -new -key "$tmp/ca.key" -sha256 -days $days \
  -subj "/CN=hipObject test CA" -out ca.pem \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
leaf() { # NAME SAN
  openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/$1.key"
  openssl pkcs8 -topk8 -nocrypt -in "$tmp/$1.key" -out "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=hipObject test $1" -out "$tmp/$1.csr"
  printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' \
    "$2" >"$tmp/$1.ext"
  openssl x509 -req -in "$tmp/$1.csr" -CA ca.pem -CAkey "$tmp/ca.key" -CAserial "$tmp/ca.srl" -CAcreateserial \
    -days $days -sha256 -extfile "$tmp/$1.ext" -out "$1.pem"
}
leaf server "IP:127.0.0.1,DNS:localhost"
leaf wrong-name "DNS:not-this-host.invalid"
echo "make-certs.sh: wrote ca.pem, server.pem/.key, wrong-name.pem/.key"
