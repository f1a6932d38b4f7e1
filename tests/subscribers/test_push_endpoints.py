"""Which push services an endpoint may point at (the browser supplies it: an allow-list stops SSRF)."""

from __future__ import annotations

import pytest

from notifier.config import PUSH_SERVICES
from notifier.subscribers.push_endpoints import EndpointError, check, origin


@pytest.mark.parametrize("endpoint", [
    "https://fcm.googleapis.com/fcm/send/abc:APA91b",
    "https://updates.push.services.mozilla.com/wpush/v2/gAAAAA",
    "https://web.push.apple.com/QGuQyavXutnMH",
    "https://wns2-by3p.notify.windows.com/w/?token=BQYAAA",
])
def test_the_browsers_push_services_are_allowed(endpoint):
    try:
        check(endpoint, PUSH_SERVICES)
    except EndpointError as error:
        pytest.fail(f"refused: {error}")


@pytest.mark.parametrize("endpoint", [
    "http://fcm.googleapis.com/fcm/send/abc",  # not https
    "https://fcm.googleapis.com:8443/fcm/send/abc",  # another port
    "https://fcm.googleapis.com.evil.example/x",
    "https://notify.windows.com.evil.example/x",
    "https://evil.example/?https://fcm.googleapis.com",
    "https://user:pw@fcm.googleapis.com/x",
    "https://169.254.169.254/latest/meta-data",
    "file:///etc/passwd",
    "https://fcm.googleapis.com/" + "a" * 3000,
    "",
    None,
])
def test_anything_else_is_refused(endpoint):
    with pytest.raises(EndpointError):
        check(endpoint, PUSH_SERVICES)


def test_a_port_wildcard_allows_any_port_on_that_host_only():
    check("http://127.0.0.1:8123/push/x", ("http://127.0.0.1:*",))
    with pytest.raises(EndpointError):
        check("http://127.0.0.2:8123/push/x", ("http://127.0.0.1:*",))


def test_the_origin_is_what_vapid_names_as_audience():
    assert origin("https://fcm.googleapis.com/fcm/send/x") == "https://fcm.googleapis.com"
    assert origin("http://127.0.0.1:8123/push/x") == "http://127.0.0.1:8123"
