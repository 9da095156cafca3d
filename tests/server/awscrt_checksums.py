#!/usr/bin/python3
"""awscrt_checksums.py - uploads with checksums through aws-c-s3 (Debian's
python3-awscrt) to hipobj-server, for checksum-interop.sh.

    awscrt_checksums.py --endpoint http://127.0.0.1 --bucket B --dir DIR

DIR holds small.bin and big.bin (above the 8 MiB part size). Each upload is
read back with a GET through the engine and compared byte for byte.

* A PutObject of small.bin carrying x-amz-checksum-crc32c, then one with
  x-amz-checksum-crc32, computed by awscrt.checksums: the server must echo
  the value (it checked it).
* big.bin with an x-amz-checksum-crc32c header: aws-c-s3 splits it into a
  multipart upload; awscrt 0.16 refuses the request itself (a whole-object
  checksum header on a multipart upload), which is reported, not failed.
* Where the installed awscrt has S3ChecksumConfig (0.17 on; Debian 12 has
  0.16, without it), the engine's own checksums: CRC32 in a trailer and
  CRC32C in a header, on small.bin and big.bin. Otherwise reported.
* big.bin without a checksum, the engine's plain multipart path.

Prints one line per step ("ok: ...", "note: ..."); exits 1 at the first
failure. Credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. awscrt
0.16 connects to port 80 whatever the endpoint says.
"""
import argparse
import base64
import filecmp
import os
import sys
import urllib.parse

from awscrt import auth, checksums, http, io, s3


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def b64(crc):
    return base64.b64encode(crc.to_bytes(4, "big")).decode()


class Engine:
    def __init__(self, endpoint, bucket):
        self.host = urllib.parse.urlsplit(endpoint).hostname
        self.bucket = bucket
        elg = io.EventLoopGroup()
        self.client = s3.S3Client(
            bootstrap=io.ClientBootstrap(elg, io.DefaultHostResolver(elg)),
            region="us-east-1",
            credential_provider=auth.AwsCredentialsProvider.new_static(
                os.environ["AWS_ACCESS_KEY_ID"],
                os.environ["AWS_SECRET_ACCESS_KEY"]),
            tls_mode=s3.S3RequestTlsMode.DISABLED, part_size=8 << 20)

    def run(self, method, key, headers, **kwargs):
        """One request through the engine, waited for until torn down;
        the headers of its answers (the last one first)."""
        seen = []
        req = self.client.make_request(
            request=http.HttpRequest(method, f"/{self.bucket}/{key}",
                                     http.HttpHeaders(headers)),
            on_headers=lambda status_code, headers, **kw:
                seen.insert(0, dict((k.lower(), v) for k, v in headers)),
            **kwargs)
        try:
            req.finished_future.result(120)
        except Exception as e:  # AwsCrtError, with the S3 error body
            fail(f"{method} {key}: {e}")
        # A received file is complete only once the request is torn down.
        done = req.shutdown_event
        del req
        if not done.wait(60):
            fail(f"{method} {key}: the request did not shut down")
        return seen

    def create_bucket(self):
        req = self.client.make_request(
            request=http.HttpRequest("PUT", f"/{self.bucket}", http.HttpHeaders(
                [("Host", self.host), ("Content-Length", "0")])),
            type=s3.S3RequestType.DEFAULT)
        try:
            req.finished_future.result(60)
        except Exception as e:
            fail(f"CreateBucket {self.bucket}: {e}")

    def put(self, key, path, headers=(), **kwargs):
        h = [("Host", self.host),
             ("Content-Length", str(os.path.getsize(path))),
             ("Content-Type", "application/octet-stream")] + list(headers)
        return self.run("PUT", key, h, type=s3.S3RequestType.PUT_OBJECT,
                        send_filepath=path, **kwargs)

    def get_same(self, key, path):
        back = path + ".back"
        self.run("GET", key, [("Host", self.host)],
                 type=s3.S3RequestType.GET_OBJECT, recv_filepath=back)
        if not filecmp.cmp(path, back, shallow=False):
            fail(f"{key}: what came back differs from what was sent")
        os.unlink(back)


def header_checksums(e, small):
    data = open(small, "rb").read()
    for name, crc in (("crc32c", checksums.crc32c(data)),
                      ("crc32", checksums.crc32(data))):
        hdr = f"x-amz-checksum-{name}"
        seen = e.put(f"small-{name}", small, [(hdr, b64(crc))])
        if seen[0].get(hdr) != b64(crc):
            fail(f"PutObject with {hdr}: {b64(crc)} was not echoed "
                 f"(answer headers: {seen[0]})")
        e.get_same(f"small-{name}", small)
        print(f"ok: awscrt PutObject with {hdr} (header), echoed, read back")


def multipart_header(e, big):
    crc = 0
    with open(big, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = checksums.crc32c(chunk, crc)
    try:
        e.put("big-crc32c", big, [("x-amz-checksum-crc32c", b64(crc))])
    except RuntimeError as err:  # refused before anything is sent
        print(f"note: awscrt refuses a {os.path.getsize(big)}-byte PUT with "
              f"an x-amz-checksum-crc32c header (a multipart upload): {err}")
        return
    e.get_same("big-crc32c", big)
    print("ok: awscrt multipart PUT with x-amz-checksum-crc32c, read back")


def engine_checksums(e, small, big):
    if not hasattr(s3, "S3ChecksumConfig"):
        print("note: this awscrt has no S3ChecksumConfig (added in 0.17): "
              "its CRC32 trailers and CRC32C headers are not reachable")
        return
    cases = (("crc32-trailer", s3.S3ChecksumAlgorithm.CRC32,
              s3.S3ChecksumLocation.TRAILER),
             ("crc32c-header", s3.S3ChecksumAlgorithm.CRC32C,
              s3.S3ChecksumLocation.HEADER))
    for what, alg, where in cases:
        for path in (small, big):
            key = f"engine-{what}-{os.path.basename(path)}"
            cfg = s3.S3ChecksumConfig(algorithm=alg, location=where)
            e.put(key, path, checksum_config=cfg)
            e.get_same(key, path)
            print(f"ok: awscrt {what} ({os.path.getsize(path)} bytes), "
                  f"read back")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    small = os.path.join(a.dir, "small.bin")
    big = os.path.join(a.dir, "big.bin")
    e = Engine(a.endpoint, a.bucket)
    e.create_bucket()
    header_checksums(e, small)
    multipart_header(e, big)
    engine_checksums(e, small, big)
    e.put("big-plain", big)
    e.get_same("big-plain", big)
    print("ok: awscrt multipart PUT without a checksum, read back")


if __name__ == "__main__":
    main()
