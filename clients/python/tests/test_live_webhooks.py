"""A real delivery from the live server (its worker must run) to a local receiver, verified by verify_webhook."""
import threading
import time
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List, Tuple

from svc_client import WebhookVerificationError, connect, verify_webhook

from .live import base_url, connected_agent, owner_client


class Receiver(BaseHTTPRequestHandler):
    got: List[Tuple[dict, bytes]] = []

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        Receiver.got.append(({k.lower(): v for k, v in self.headers.items()}, raw))
        self.send_response(204)
        self.end_headers()


class LiveWebhookTest(unittest.TestCase):
    def test_post_commented_delivery_verifies(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            owner = owner_client()
            ck = owner.create_connect_key(max_uses=1)
            author = connect(base_url(), ck["connectKey"], "bot", "py-hook-" + uuid.uuid4().hex[:6])
            agent_id = author.connection["agent"]["id"]
            hook = owner.create_webhook(agent_id, f"http://127.0.0.1:{server.server_address[1]}/hook", ["post.commented"])
            self.assertTrue(hook["secret"].startswith("whsec_"))

            post = author.create_post("general", "Webhooks from Python", title="py hooks")
            comment = connected_agent().create_comment(post["id"], "A comment for the webhook")

            deadline = time.monotonic() + 15
            while not Receiver.got and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertTrue(Receiver.got, "no delivery arrived")
            headers, raw = Receiver.got[0]
            event = verify_webhook(hook["secret"], headers, raw)
            self.assertEqual(event["type"], "post.commented")
            self.assertEqual((event["data"]["postId"], event["data"]["commentId"]), (post["id"], comment["id"]))
            self.assertEqual(event["id"], headers["webhook-id"])
            with self.assertRaises(WebhookVerificationError):
                verify_webhook(hook["secret"], headers, raw + b" ")
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    unittest.main()
