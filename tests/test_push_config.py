"""Web Push settings: the key as PEM text or a file, the subject it needs, the allowed push services."""

from __future__ import annotations

import pytest

from notifier.config import PUSH_SERVICES, Settings
from notifier.errors import ConfigError


def settings(tmp_path, **env) -> Settings:
    return Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path), **env})


def test_push_is_off_without_a_key(tmp_path):
    assert not settings(tmp_path).push_configured


def test_the_key_may_be_pem_text_with_escaped_line_breaks(tmp_path, vapid_key):
    one_line = vapid_key.strip().replace("\n", "\\n")
    found = settings(tmp_path, NOTIFIER_VAPID_PRIVATE_KEY=one_line, NOTIFIER_VAPID_SUBJECT="mailto:ops@example.org")
    assert found.push_configured and found.vapid_private_key == vapid_key.strip() + "\n"


def test_the_key_may_be_a_path_to_a_pem_file(tmp_path, vapid_key):
    path = tmp_path / "vapid.pem"
    path.write_text(vapid_key)
    found = settings(tmp_path, NOTIFIER_VAPID_PRIVATE_KEY=str(path), NOTIFIER_VAPID_SUBJECT="https://board.example")
    assert found.vapid_private_key.startswith("-----BEGIN PRIVATE KEY-----")


@pytest.mark.parametrize("subject", ["", "admin", "mailto:", "http://board.example"])
def test_a_key_without_a_usable_subject_stops_start_up(tmp_path, vapid_key, subject):
    with pytest.raises(ConfigError, match="NOTIFIER_VAPID_SUBJECT"):
        settings(tmp_path, NOTIFIER_VAPID_PRIVATE_KEY=vapid_key, NOTIFIER_VAPID_SUBJECT=subject)


@pytest.mark.parametrize("key", ["/no/such/file.pem",
                                 "-----BEGIN PRIVATE KEY-----\nnonsense\n-----END PRIVATE KEY-----"])
def test_an_unreadable_key_stops_start_up_naming_the_variable(tmp_path, key):
    with pytest.raises(ConfigError, match="NOTIFIER_VAPID_PRIVATE_KEY"):
        settings(tmp_path, NOTIFIER_VAPID_PRIVATE_KEY=key, NOTIFIER_VAPID_SUBJECT="mailto:ops@example.org")


def test_the_key_never_reaches_a_log_line(tmp_path, vapid_key):
    from notifier.config import log_secrets

    found = settings(tmp_path, NOTIFIER_VAPID_PRIVATE_KEY=vapid_key, NOTIFIER_VAPID_SUBJECT="mailto:ops@example.org")
    assert found.vapid_private_key in log_secrets(found)


def test_the_default_services_are_the_browsers_and_development_adds_loopback(tmp_path):
    assert settings(tmp_path).push_services == PUSH_SERVICES
    assert "http://127.0.0.1:*" in settings(tmp_path, NOTIFIER_DEBUG="1").push_services


def test_a_service_that_is_not_an_origin_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="NOTIFIER_PUSH_SERVICES"):
        settings(tmp_path, NOTIFIER_PUSH_SERVICES="https://fcm.googleapis.com/fcm/send")


def test_development_uses_the_key_make_run_wrote(tmp_path, vapid_key):
    (tmp_path / "vapid_private.pem").write_text(vapid_key)
    assert settings(tmp_path, NOTIFIER_DEBUG="1").push_configured
    assert not settings(tmp_path).push_configured  # never in production


def test_the_push_rate_defaults_to_200_a_second(tmp_path):
    assert settings(tmp_path).push_per_second == 200
