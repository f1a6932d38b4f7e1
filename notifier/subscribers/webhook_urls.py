"""Which URLs a webhook may be sent to: http(s) only, and, in production, https to public addresses only.

Staff type these URLs, and the server then makes requests to them: a URL naming a loopback, private, link-local
(the cloud metadata service at 169.254.169.254), multicast or otherwise reserved address would let anyone with a
staff account probe the network behind the server (SSRF). The check runs when an endpoint is added and again before
each delivery, on every address the host name resolves to (a name may point somewhere else later). Private targets
are allowed in debug mode and with NOTIFIER_WEBHOOKS_ALLOW_PRIVATE=1 (tests, `make run`, a receiver on the LAN).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from notifier.subscribers.webhooks import WebhookError


def check(url: str, allow_private: bool, resolve: bool = True) -> str:
    """`url` if a webhook may be sent there; raises `WebhookError` saying why not."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise WebhookError(f"not a valid URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookError("the URL must start with https:// (or http:// in development) and name a host")
    if parts.username or parts.password:
        raise WebhookError("the URL must not contain a user name or password")
    if len(url) > 2000 or any(c.isspace() or ord(c) < 32 for c in url):
        raise WebhookError("the URL is too long or contains spaces")
    if allow_private:
        return url
    if parts.scheme != "https":
        raise WebhookError("the URL must start with https://")
    if resolve:
        for address in addresses(parts.hostname, port or 443):
            if not public(address):
                raise WebhookError(f"{parts.hostname} resolves to a private or reserved address ({address})")
    return url


def addresses(host: str, port: int) -> list[str]:
    """Every address `host` resolves to; raises `WebhookError` when it does not resolve."""
    try:
        found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as error:
        raise WebhookError(f"{host} does not resolve ({error})") from None
    return sorted({info[4][0] for info in found})


def public(address: str) -> bool:
    """True for a globally routable unicast address (IPv4-mapped IPv6 addresses are judged as IPv4)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not (ip.is_multicast or ip.is_loopback or ip.is_link_local or ip.is_private
                                 or ip.is_reserved or ip.is_unspecified)
