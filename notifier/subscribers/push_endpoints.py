"""Which push services a subscription's endpoint may point at: the browser supplies the URL, so it is user input.

Only origins on NOTIFIER_PUSH_SERVICES are ever posted to (`https://*.notify.windows.com` allows that host's
subdomains, `http://127.0.0.1:*` any port); the check runs when a subscription is stored and again before each
send, so a list narrowed later stops the requests at once. Nothing but scheme, host and port is compared: no
credentials, no fragment, and an `https` origin never matches an `http` endpoint.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from notifier.errors import NotifierError

MAX_ENDPOINT = 2048  # the longest endpoint accepted: real ones are 150 to 500 characters


class EndpointError(NotifierError):
    """The endpoint is not an allowed push service's URL; the message says why (never echoing the URL)."""


def origin(endpoint: str) -> str:
    """scheme://host[:port] of `endpoint`, as VAPID's `aud` claim names it (no default port)."""
    parts = urlsplit(endpoint)
    default = {"https": 443, "http": 80}.get(parts.scheme)
    port = parts.port
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


def check(endpoint: object, allowed: Iterable[str]) -> None:
    """Raise `EndpointError` unless `endpoint` is an absolute URL on one of the `allowed` origins."""
    if not isinstance(endpoint, str) or not endpoint or len(endpoint) > MAX_ENDPOINT:
        raise EndpointError("not a URL of acceptable length")
    try:
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError:
        raise EndpointError("not a URL") from None
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.username or parts.password:
        raise EndpointError("not an absolute http(s) URL without credentials")
    if parts.fragment or any(c.isspace() for c in endpoint):
        raise EndpointError("not a push service URL")
    host = parts.hostname.lower()
    port = port or (443 if parts.scheme == "https" else 80)
    if not any(_matches(rule, parts.scheme, host, port) for rule in allowed):
        raise EndpointError("not an allowed push service")


def _matches(rule: str, scheme: str, host: str, port: int) -> bool:
    wanted = urlsplit(rule.replace(":*", ""))
    if wanted.scheme != scheme or not wanted.hostname:
        return False
    if rule.endswith(":*"):
        port_ok = True
    else:
        port_ok = (wanted.port or (443 if wanted.scheme == "https" else 80)) == port
    name = wanted.hostname.lower()
    if name.startswith("*."):
        return port_ok and host.endswith(name[1:]) and len(host) > len(name) - 1
    return port_ok and host == name
