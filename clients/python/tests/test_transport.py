"""Retry and idempotency behaviour against a scripted local HTTP server (no svc needed)."""
import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List, Tuple

from svc_client import SvcClient, SvcError


class Scripted(BaseHTTPRequestHandler):
    script: List[Tuple[int, dict, dict]] = []
    seen: List[dict] = []

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        Scripted.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
        status, headers, payload = Scripted.script.pop(0)
        raw = json.dumps(payload).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = _answer
    do_POST = _answer


def limited(seconds: int) -> Tuple[int, dict, dict]:
    return 429, {"Retry-After": str(seconds)}, {"error": {"code": "POST_COOLDOWN_ACTIVE", "message": "wait", "retryAfterSeconds": seconds}}


class TransportTest(unittest.TestCase):
    server: ThreadingHTTPServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.base = f"http://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self) -> None:
        Scripted.seen = []
        self.waits: List[float] = []

    def client(self, **kw) -> SvcClient:
        return SvcClient(self.base, api_key="svc_live_test", sleep=self.waits.append, **kw)

    def test_waits_retry_after_and_reuses_the_idempotency_key(self) -> None:
        Scripted.script = [limited(2), limited(1), (201, {}, {"data": {"id": "p1", "score": 0, "community": {"slug": "general"}}})]
        post = self.client().create_post("general", "hello", title="t")
        self.assertEqual(post["id"], "p1")
        self.assertEqual([round(w) for w in self.waits], [2, 1])
        keys = {s["headers"]["Idempotency-Key"] for s in Scripted.seen}
        self.assertEqual(len(keys), 1)
        self.assertEqual(Scripted.seen[0]["headers"]["Authorization"], "Bearer svc_live_test")
        self.assertEqual(json.loads(Scripted.seen[0]["body"]), {"communitySlug": "general", "body": "hello", "title": "t"})

    def test_bounded_retries_then_a_typed_error(self) -> None:
        Scripted.script = [limited(1), limited(1)]
        with self.assertRaises(SvcError) as cm:
            self.client(max_retries=1).create_post("general", "x")
        err = cm.exception
        self.assertEqual((err.status, err.code, err.retry_after_seconds), (429, "POST_COOLDOWN_ACTIVE", 1))
        self.assertEqual(len(self.waits), 1)

    def test_a_wait_longer_than_allowed_is_raised_at_once(self) -> None:
        Scripted.script = [limited(30)]
        with self.assertRaises(SvcError) as cm:
            self.client(max_retry_after_seconds=10).create_post("general", "x")
        self.assertEqual(cm.exception.retry_after_seconds, 30)
        self.assertEqual(self.waits, [])

    def test_reads_send_no_idempotency_key_and_4xx_is_not_retried(self) -> None:
        Scripted.script = [(404, {}, {"error": {"code": "NOT_FOUND", "message": "Post not found"}})]
        with self.assertRaises(SvcError) as cm:
            self.client().get_post("nope")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "NOT_FOUND"))
        self.assertNotIn("Idempotency-Key", Scripted.seen[0]["headers"])
        self.assertEqual(self.waits, [])

    def test_network_errors_back_off_then_raise(self) -> None:
        client = SvcClient("http://127.0.0.1:9", max_retries=2, sleep=self.waits.append, timeout=2)
        with self.assertRaises(SvcError) as cm:
            client.health()
        self.assertEqual((cm.exception.status, cm.exception.code), (0, "NETWORK_ERROR"))
        self.assertEqual(self.waits, [0.5, 1.0])


if __name__ == "__main__":
    unittest.main()
