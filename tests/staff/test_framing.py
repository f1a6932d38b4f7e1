"""The staff console never shows inside another site's frame (a framed console could be clicked through unseen)."""

from __future__ import annotations


def test_the_signed_in_console_cannot_be_framed(console):
    response = console.client.get("/staff/")
    assert response.status_code == 200
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"
