"""Standard Webhooks verification (webhook-id, webhook-timestamp, webhook-signature: v1,<base64>)."""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Callable, Dict, Mapping, Optional, Union

from .errors import WebhookVerificationError

HeaderMap = Mapping[str, Any]


def _header(headers: HeaderMap, name: str) -> Optional[str]:
    # Works for dicts, http.client.HTTPMessage and email.message.Message alike.
    getter = getattr(headers, "get", None)
    if getter is not None:
        value = getter(name)
        if value is not None:
            return value[0] if isinstance(value, (list, tuple)) else str(value)
    for key in headers.keys():
        if key.lower() == name:
            value = headers[key]
            return value[0] if isinstance(value, (list, tuple)) else str(value)
    return None


def _secret_bytes(secret: str) -> bytes:
    raw = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        decoded = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("The webhook secret is not base64")
    if not decoded:
        raise WebhookVerificationError("The webhook secret is empty")
    return decoded


def sign_webhook(secret: str, msg_id: str, timestamp: int, raw_body: Union[str, bytes]) -> str:
    """The webhook-signature value the service sends for this message."""
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else raw_body
    mac = hmac.new(_secret_bytes(secret), f"{msg_id}.{timestamp}.".encode("utf-8") + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode("ascii")


def verify_webhook(
    secret: str,
    headers: HeaderMap,
    raw_body: Union[str, bytes],
    tolerance_seconds: int = 300,
    now: Optional[Callable[[], float]] = None,
) -> Dict[str, Any]:
    """Verifies a delivery and returns its parsed body plus ``id`` (the webhook-id).

    ``raw_body`` must be the exact bytes received; re-serialised JSON does not verify.
    Raises WebhookVerificationError.
    """
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header")
    if not timestamp.isdigit():
        raise WebhookVerificationError("webhook-timestamp is not a unix time in seconds")
    current = (now or time.time)()
    if abs(int(current) - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp is outside the tolerance window")
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else raw_body
    expected = base64.b64decode(sign_webhook(secret, msg_id, int(timestamp), body)[len("v1,"):])
    # Several space-separated signatures may be sent while a secret rotates; one match suffices.
    ok = False
    for entry in signatures.split(" "):
        version, _, sig = entry.partition(",")
        if version != "v1" or not sig:
            continue
        try:
            given = base64.b64decode(sig, validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(given, expected):
            ok = True
    if not ok:
        raise WebhookVerificationError("No matching v1 signature")
    try:
        event = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise WebhookVerificationError("The signed body is not JSON")
    if not isinstance(event, dict):
        raise WebhookVerificationError("The signed body is not a JSON object")
    event["id"] = msg_id
    return event
