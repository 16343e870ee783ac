"""The client's replicas: a base URL listing several is tried with the
replicas on this machine first (each group in the client's own random order,
so that clients spread), a replica that cannot be reached or answers 503 is
left at once for the next, the client waits only when every replica has
failed, and its first choice is tried again after failback_s."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from timeaware.client import Client, ServerUnavailable, _is_local


class Replica:
    def __init__(self, name, status=200):
        self.name, self.status, self.hits = name, status, 0
        replica = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                replica.hits += 1
                body = json.dumps({"replica": replica.name}).encode()
                self.send_response(replica.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if replica.status == 503:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def replicas():
    made = []

    def make(*args, **kw):
        r = Replica(*args, **kw)
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


def test_an_unreachable_replica_is_left_at_once(replicas, refused_url):
    b = replicas("b")
    c = Client(f"{refused_url},{b.url}", retries=0, backoff_s=5)
    assert c.request("GET", "/x") == {"replica": "b"}  # no backoff wait: 5 s would time the test out
    assert c.request("GET", "/x") == {"replica": "b"}
    assert b.hits == 2


def test_a_503_moves_to_the_next_replica_and_failback_returns(replicas):
    one, two = replicas("one"), replicas("two")
    c = Client(f"{one.url},{two.url}", retries=0, failback_s=0.2)
    first, second = (one, two) if c.base_url.startswith(one.url) else (two, one)
    first.status = 503
    assert c.request("GET", "/x") == {"replica": second.name}
    assert (first.hits, second.hits) == (1, 1)
    assert c.request("GET", "/x") == {"replica": second.name}
    assert first.hits == 1, "the client stays on the replica that answered"
    first.status = 200
    import time

    time.sleep(0.25)
    assert c.request("GET", "/x") == {"replica": first.name}, "the first choice is tried again after failback_s"


def test_clients_spread_over_replicas_of_one_kind(replicas):
    urls = ",".join(replicas(str(i)).url for i in range(4))
    firsts = {Client(urls).base_url.split(",")[0] for _ in range(40)}
    assert len(firsts) > 1, "each client draws its own order"


def test_the_client_waits_only_when_every_replica_failed(replicas):
    import time

    # 502 (retried for a GET) carries no Retry-After: the backoff decides.
    a, b, c3 = replicas("a", status=502), replicas("b", status=502), replicas("c", status=502)
    c = Client(f"{a.url},{b.url},{c3.url}", retries=1, backoff_s=0.2, max_retry_wait_s=0.2)
    t0 = time.monotonic()
    with pytest.raises(ServerUnavailable):
        c.request("GET", "/x")
    waited = time.monotonic() - t0
    assert (a.hits, b.hits, c3.hits) == (2, 2, 2), "two rounds over the three replicas"
    assert 0.1 <= waited < 2, "one backoff wait between the rounds, none between replicas"


def test_a_post_that_may_have_arrived_stays_on_its_replica():
    """A POST whose connection drops after it was sent is not sent to another
    replica: a timer created twice would leave an orphan behind."""
    import socket as so

    hits = {"drop": 0, "other": 0}
    lsock = so.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)

    def dropper():
        while True:
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            conn.recv(65536)
            hits["drop"] += 1
            conn.close()

    threading.Thread(target=dropper, daemon=True).start()
    other = Replica("other")
    try:
        c = Client(f"http://127.0.0.1:{lsock.getsockname()[1]},{other.url}", retries=0)
        c._endpoints.sort(key=lambda e: e.url != f"http://127.0.0.1:{lsock.getsockname()[1]}")
        with pytest.raises(ServerUnavailable):
            c.request("POST", "/v1/timers", {"rollout_id": "r1"})
        assert other.hits == 0
        assert hits["drop"] >= 1
    finally:
        lsock.close()
        other.close()


def test_every_replica_down_raises_naming_the_last(replicas, refused_urls):
    urls = refused_urls(2)
    c = Client(",".join(urls), retries=1, backoff_s=0.01)
    with pytest.raises(ServerUnavailable, match="cannot connect to http://127.0.0.1"):
        c.request("GET", "/x")


def test_local_replicas_come_first():
    assert _is_local("127.0.0.1") and _is_local("localhost")
    assert not _is_local("192.0.2.1")  # TEST-NET-1: never this machine
    c = Client("http://192.0.2.1:8080,http://127.0.0.1:9", retries=0)
    assert c.base_url == "http://127.0.0.1:9,http://192.0.2.1:8080"
    with pytest.raises(ValueError, match="names no URL"):
        Client(" , ")
    with pytest.raises(ValueError, match="is not an http"):
        Client("http://127.0.0.1:1,ftp://x")
