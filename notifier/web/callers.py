"""Who is asking: the socket's peer (what ProxyFix found before it applied a proxy's headers), and whether a
request comes from this machine itself, not relayed by a proxy on it."""

from __future__ import annotations

import hmac
import ipaddress

from flask import request

# Headers a proxy adds when it relays someone else's request (nginx's X-Real-IP included).
FORWARDING_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host", "X-Forwarded-Proto")


def socket_peer() -> str | None:
    """The address of the socket's other end, whatever NOTIFIER_TRUSTED_PROXIES made of the forwarded headers."""
    original = request.environ.get("werkzeug.proxy_fix.orig", {}).get("REMOTE_ADDR")
    return original or request.environ.get("REMOTE_ADDR")


def is_loopback(address: str | None) -> bool:
    """True for 127.0.0.0/8 and ::1; False for anything else, an unparsable address included."""
    try:
        return ipaddress.ip_address(address or "").is_loopback
    except ValueError:
        return False


def from_this_machine() -> bool:
    """The socket's peer is loopback and no proxy says it relays someone else (anyone may add these headers,
    which only ever take the answer away, never give it)."""
    return is_loopback(socket_peer()) and not any(name in request.headers for name in FORWARDING_HEADERS)


def bears(token: str | None) -> bool:
    """The request carries `Authorization: Bearer <token>` (compared in constant time); never true without one."""
    if not token:
        return False
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())
