"""The log scanner finds whole phone numbers, addresses, link tokens, account SIDs and named secrets, and lets
masked forms and ordinary log noise through."""

from __future__ import annotations

import pytest
from itsdangerous import URLSafeTimedSerializer

from notifier.masking import mask_email, mask_phone
from tests.support.pii import offending_lines, scan

TOKEN = URLSafeTimedSerializer("secret", salt="notifier-manage").dumps(7)


@pytest.mark.parametrize("line", [
    "sent to +16135550123",
    "sent to 613-555-0123 at 8:00",
    "sent to (613) 555-0123",
    "sent to 613.555.0123",
    "sent to 6135550123",
    "sent to 1-613-555-0123",
    "to=+447700900123",
])
def test_whole_phone_numbers_are_found(line):
    assert offending_lines(line) == [line]


@pytest.mark.parametrize("line", [
    "sent to parent@example.org",
    "To: Parent Name <p.name+school@mail.example.ca>",
])
def test_email_addresses_are_found(line):
    assert [f.kind for f in scan(line)] == ["email"]


@pytest.mark.parametrize("path", ["/manage/", "/unsubscribe/", "/confirm/", "/staff/signin/"])
def test_tokens_in_signed_link_paths_are_found(path):
    line = f'"GET {path}{TOKEN} HTTP/1.1" 200'
    assert offending_lines(line) == [line]


def test_a_bare_signed_token_is_found():
    assert [f.kind for f in scan(f"loaded token {TOKEN}")] == ["signed token"]


def test_a_twilio_account_sid_and_a_named_secret_are_found():
    line = "Client(AC" + "7" * 32 + ", test-auth-token)"
    assert {f.kind for f in scan(line, secrets=["test-auth-token"])} == {"Twilio account SID", "secret"}


@pytest.mark.parametrize("line", [
    f"sent to {mask_phone('+16135550123')}",
    f"sent to {mask_email('parent@example.org')}",
    "sending 1234567890 messages took 1700000000 seconds",  # neither is a North American number
    "2026-11-23 08:00:01,123 INFO notifier.delivery.sending: drained 500 rows in 1.234 s",
    "GET /manage/*** 200",
    "message SM" + "0123456789abcdef" * 2 + " delivered",
    "127.0.0.1 - - [23/Nov/2026:08:00:00 +0000] \"GET /healthz HTTP/1.1\" 200 2",
    "notifier.delivery.channels.email_SmtpChannel_session_opened ok",
])
def test_masked_forms_and_ordinary_log_lines_pass(line):
    assert offending_lines(line) == []


def test_allowed_addresses_are_not_reported():
    assert offending_lines("from status@example.org", allowed=["status@example.org"]) == []


def test_only_offending_lines_come_back_once_each_in_order():
    text = "start\nto +16135550123 and parent@example.org\nfine\nto 416-555-0199\n"
    assert offending_lines(text) == ["to +16135550123 and parent@example.org", "to 416-555-0199"]
