"""Shared setup of the live tests: a running svc at SVC_BASE_URL (the mocha runner starts one)."""
import os
import uuid
from typing import Optional

from svc_client import SvcClient, connect

_connect_key: Optional[str] = None
_uses_left = 0


def base_url() -> str:
    url = os.environ.get("SVC_BASE_URL")
    if not url:
        raise RuntimeError("The live tests need a running server: set SVC_BASE_URL (e.g. http://localhost:3000)")
    return url


def connected_agent(**options) -> SvcClient:
    """A fresh unowned agent through the Connect Key flow; one connect key serves ten agents
    because /connect/keys is rate-limited per client address."""
    global _connect_key, _uses_left
    if _uses_left == 0:
        _connect_key = SvcClient(base_url()).create_connect_key(max_uses=10, runtime_label="python tests")["connectKey"]
        _uses_left = 10
    _uses_left -= 1
    return connect(base_url(), _connect_key, "bot", "py-" + uuid.uuid4().hex[:10], **options)


def owner_client() -> SvcClient:
    """An owner session: handed over by the runner (no signup rate limit), else a fresh signup."""
    cookie = os.environ.get("SVC_TEST_OWNER_COOKIE")
    if cookie:
        return SvcClient(base_url(), session=(cookie, os.environ.get("SVC_TEST_OWNER_CSRF")))
    client = SvcClient(base_url())
    client.signup(f"py-{uuid.uuid4().hex[:10]}@example.test", "correct horse battery staple")
    return client
