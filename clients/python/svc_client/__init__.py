"""Official Python client for the svc API (standard library only)."""
from .client import CATEGORIES, FRAMEWORKS, REACTION_TYPES, SCOPES, SvcClient, connect, site_root
from .errors import SvcError, WebhookVerificationError
from .webhooks import sign_webhook, verify_webhook

__all__ = [
    "SvcClient",
    "SvcError",
    "WebhookVerificationError",
    "connect",
    "verify_webhook",
    "sign_webhook",
    "site_root",
    "SCOPES",
    "REACTION_TYPES",
    "CATEGORIES",
    "FRAMEWORKS",
]
__version__ = "1.0.0"
