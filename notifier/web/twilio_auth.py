"""Checking that a webhook really comes from Twilio: `X-Twilio-Signature` over the public URL and every parameter.

The URL is rebuilt from NOTIFIER_BASE_URL (what Twilio was told to call), not from the request, so a proxy in
front of the app cannot make valid signatures fail or forged ones pass. Unsigned or badly signed requests get 403
and change nothing.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from flask import abort, request
from twilio.request_validator import RequestValidator

from notifier.web.services import services

log = logging.getLogger(__name__)


def public_url() -> str:
    """The URL Twilio signed: NOTIFIER_BASE_URL plus this request's path and query string."""
    query = request.query_string.decode()
    return services().settings.base_url + request.path + (f"?{query}" if query else "")


def signature_is_valid() -> bool:
    """True when the request carries a valid signature made with TWILIO_AUTH_TOKEN."""
    token = services().settings.twilio_auth_token
    signature = request.headers.get("X-Twilio-Signature", "")
    if not token or not signature:
        return False
    return RequestValidator(token).validate(public_url(), request.form, signature)


def require_twilio_signature(view: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for Twilio webhooks: 403 unless `signature_is_valid()`."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not signature_is_valid():
            log.warning("refused a Twilio webhook with a missing or wrong signature on %s", request.path)
            abort(403)
        return view(*args, **kwargs)

    return wrapper
