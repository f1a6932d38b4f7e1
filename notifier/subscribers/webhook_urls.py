"""Which URLs a webhook may be sent to: http(s) only, and, in production, https to public addresses only.

Staff type these URLs, and the server then makes requests to them: a URL naming a loopback, private, link-local
(the cloud metadata service at 169.254.169.254), multicast or otherwise reserved address would let anyone with a
staff account probe the network behind the server (SSRF). The check runs when an endpoint is added and again before
each delivery, on every address the host name resolves to (a name may point somewhere else later), and a delivery
connects to the address that was checked (`destination`), never to what the name resolves to a moment later (DNS
rebinding). IPv6 addresses that carry an IPv4 one (IPv4-mapped `::ffff:0:0/96`, 6to4 `2002::/16`, NAT64
`64:ff9b::/96` and `64:ff9b:1::/48`) are judged by the IPv4 address they carry. Private targets are allowed in
debug mode and with NOTIFIER_WEBHOOKS_ALLOW_PRIVATE=1 (tests, `make run`, a receiver on the LAN).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Destination:
    """Where one delivery goes: the URL as stored, its host name (for Host, TLS SNI and the certificate) and port,
    and the checked address to connect to."""

    url: str
    host: str
    port: int
    address: str


def destination(url: str, allow_private: bool) -> Destination:
    """`url` checked and resolved once: the address a delivery must connect to; raises `WebhookError`."""
    url = check(url, allow_private, resolve=False)
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    found = addresses(host, port)
    if not allow_private:
        for address in found:
            if not public(address):
                raise WebhookError(f"{host} resolves to a private or reserved address ({address})")
    return Destination(url=url, host=host, port=port, address=found[0])


def addresses(host: str, port: int) -> list[str]:
    """Every address `host` resolves to; raises `WebhookError` when it does not resolve."""
    try:
        found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as error:
        raise WebhookError(f"{host} does not resolve ({error})") from None
    return sorted({str(info[4][0]) for info in found})  # the address; typeshed widens it for AF_CAN's sockets


def public(address: str) -> bool:
    """True for a globally routable unicast address (an IPv6 address carrying an IPv4 one is judged by it, and
    by every IPv4 address it may carry)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    candidates: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        carried = _carried_ipv4(ip)
        if carried:
            candidates = list(carried)
    return all(_routable(candidate) for candidate in candidates)


NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215 local-use prefix, any length up to /96
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d (:: and ::1 are judged as they are)


def _carried_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 one may carry; empty when it carries none."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in NAT64:
        return [low]
    if ip in NAT64_LOCAL:
        # The operator picks the prefix length: /96 puts the IPv4 address last; /48 puts its first half in bits
        # 48-63 and its second in bits 72-87 (RFC 6052 section 2.2). Both readings must be public.
        value = int(ip)
        split = ipaddress.IPv4Address((((value >> 64) & 0xFFFF) << 16) | ((value >> 40) & 0xFFFF))
        return [low, split]
    if ip in IPV4_COMPATIBLE and int(ip) > 1:
        return [low]
    return []


def _routable(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not (ip.is_multicast or ip.is_loopback or ip.is_link_local or ip.is_private
                                 or ip.is_reserved or ip.is_unspecified)
