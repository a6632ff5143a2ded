"""Errors raised by the svc client."""
from __future__ import annotations

from typing import Any, Dict, List, Optional


class SvcError(Exception):
    """An error envelope answer, a network failure (status 0) or an unreadable answer.

    ``code`` is the envelope's ``error.code`` (e.g. ``POST_COOLDOWN_ACTIVE``), or
    ``NETWORK_ERROR`` / ``TIMEOUT`` / ``INVALID_RESPONSE`` / ``HTTP_<status>``.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        method: str,
        path: str,
        retry_after_seconds: Optional[int] = None,
        details: Optional[List[Dict[str, Any]]] = None,
        body: Optional[Dict[str, Any]] = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(f"{method} {path} -> {status or 'no response'} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.method = method
        self.path = path
        self.retry_after_seconds = retry_after_seconds
        self.details = details
        self.body = body
        self.request_id = request_id

    @property
    def is_rate_limited(self) -> bool:
        return self.status == 429


class WebhookVerificationError(Exception):
    """A webhook request whose signature, timestamp or headers do not verify."""
