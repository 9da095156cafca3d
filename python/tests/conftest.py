"""Fixtures of the hipobj package's tests: a hipobj-server on a free
loopback port in a temp dir (tests/server/README.md), clients of it, and a
fresh bucket per test.

The server binary: HIPOBJ_TEST_SERVER (meson's test() sets it), else
build/tests/server/hipobj-server of this checkout. The package: whatever
`import hipobj` finds (meson sets PYTHONPATH to the build's python/)."""

import os
import pathlib
import shutil
import subprocess
import tempfile
import uuid

import pytest

import hipobj

ACCESS_KEY = "HIPOBJPYTESTKEY00001"
SECRET_KEY = "hipobjPyTestSecret0000000000000000000001"
REGION = "us-east-1"
ROOT = pathlib.Path(__file__).resolve().parents[2]


def server_binary():
    path = os.environ.get("HIPOBJ_TEST_SERVER")
    if path:
        return path
    path = ROOT / "build" / "tests" / "server" / "hipobj-server"
    if not path.exists():
        pytest.skip("no hipobj-server: build it (ninja -C build) or set "
                    "HIPOBJ_TEST_SERVER")
    return str(path)


class Server:
    """A running hipobj-server: endpoint, root (its directory)."""

    def __init__(self, *extra):
        self.dir = tempfile.mkdtemp(prefix="hipobj-pytest-")
        self.root = pathlib.Path(self.dir) / "root"
        self.root.mkdir()
        self.log = open(pathlib.Path(self.dir) / "server.log", "wb")
        self.proc = subprocess.Popen(
            [server_binary(), "--root", str(self.root), "--listen",
             "127.0.0.1:0", "--access-key", ACCESS_KEY, "--secret-key",
             SECRET_KEY, "--region", REGION, *extra],
            stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        if "listening on " not in line:
            self.stop()
            raise RuntimeError(f"hipobj-server did not start: {line!r}")
        self.endpoint = line.split("listening on ", 1)[1].split()[0]

    def client(self, **config):
        config.setdefault("access_key_id", ACCESS_KEY)
        config.setdefault("secret_access_key", SECRET_KEY)
        return hipobj.Client(endpoint=self.endpoint, region=REGION, **config)

    def uploads(self, bucket):
        """Multipart uploads the server holds for bucket (its directory)."""
        d = self.root / bucket / ".hipobj" / "uploads"
        return sorted(p.name for p in d.iterdir()) if d.exists() else []

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def server():
    s = Server()
    yield s
    s.stop()


@pytest.fixture
def make_server():
    """make_server(*options): a server of the test's own, e.g. with
    "--faults", "op=GetObject,action=delay:5000"."""
    made = []

    def make(*extra):
        s = Server(*extra)
        made.append(s)
        return s

    yield make
    for s in made:
        s.stop()


@pytest.fixture
def client(server):
    with server.client() as c:
        yield c


def new_bucket(c):
    name = "pyt-" + uuid.uuid4().hex[:20]
    c.create_bucket(name)
    return name


@pytest.fixture
def bucket(client):
    return new_bucket(client)
