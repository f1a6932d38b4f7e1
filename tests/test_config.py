"""A malformed setting stops start-up with a message naming it, in the app factory and on the command line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from notifier.config import ROOT, Settings
from notifier.errors import ConfigError

SID = "AC" + "1" * 32

MALFORMED = [
    ({"NOTIFIER_DATABASE_URL": "mysql://db/notifier"}, "NOTIFIER_DATABASE_URL"),
    ({"NOTIFIER_DATABASE_URL": "notifier.sqlite3"}, "NOTIFIER_DATABASE_URL"),
    ({"NOTIFIER_BASE_URL": "status.example.org"}, "NOTIFIER_BASE_URL"),
    ({"NOTIFIER_BASE_URL": "ftp://status.example.org"}, "NOTIFIER_BASE_URL"),
    ({"NOTIFIER_CHECK_INTERVAL": "soon"}, "NOTIFIER_CHECK_INTERVAL"),
    ({"NOTIFIER_CHECK_INTERVAL": "0"}, "NOTIFIER_CHECK_INTERVAL"),
    ({"NOTIFIER_SMTP_URL": "mail.example.org"}, "NOTIFIER_SMTP_URL"),
    ({"NOTIFIER_SMTP_URL": "smtp://mail.example.org:port"}, "NOTIFIER_SMTP_URL"),
    ({"NOTIFIER_DEBUG": "maybe"}, "NOTIFIER_DEBUG"),
    ({"NOTIFIER_DAILY_DIGEST_AT": "6h30"}, "NOTIFIER_DAILY_DIGEST_AT"),
    ({"NOTIFIER_DAILY_DIGEST_AT": "25:00"}, "NOTIFIER_DAILY_DIGEST_AT"),
    ({"NOTIFIER_SMS_QUIET_HOURS": "21:00"}, "NOTIFIER_SMS_QUIET_HOURS"),
    ({"NOTIFIER_SMS_VALIDITY": "40000"}, "NOTIFIER_SMS_VALIDITY"),
    ({"NOTIFIER_SMS_PER_SECOND": "fast"}, "NOTIFIER_SMS_PER_SECOND"),
    ({"NOTIFIER_SMS_PRICE": "0.0083"}, "NOTIFIER_SMS_PRICE"),
    ({"NOTIFIER_SMS_PRICE": "0,0083 USD"}, "NOTIFIER_SMS_PRICE"),
    ({"NOTIFIER_SMS_PRICE": "-1 USD"}, "NOTIFIER_SMS_PRICE"),
    ({"NOTIFIER_SMS_PRICE": "0.0083 dollars"}, "NOTIFIER_SMS_PRICE"),
    ({"TWILIO_TIMEOUT": "0"}, "TWILIO_TIMEOUT"),
    ({"NOTIFIER_CLAIM_LEASE": "30", "TWILIO_TIMEOUT": "20"}, "NOTIFIER_CLAIM_LEASE"),
    ({"TWILIO_API_BASE_URL": "localhost:8099"}, "TWILIO_API_BASE_URL"),
    ({"TWILIO_ACCOUNT_SID": SID}, "TWILIO_AUTH_TOKEN"),
    ({"TWILIO_AUTH_TOKEN": "token"}, "TWILIO_ACCOUNT_SID"),
    ({"TWILIO_ACCOUNT_SID": "AC123", "TWILIO_AUTH_TOKEN": "token", "TWILIO_FROM_NUMBER": "+16135550100"},
     "TWILIO_ACCOUNT_SID"),
    ({"TWILIO_ACCOUNT_SID": SID, "TWILIO_AUTH_TOKEN": "token"}, "TWILIO_FROM_NUMBER"),
    ({"TWILIO_ACCOUNT_SID": SID, "TWILIO_AUTH_TOKEN": "token", "TWILIO_FROM_NUMBER": "613-555-0100"},
     "TWILIO_FROM_NUMBER"),
    ({"NOTIFIER_REDIS_URL": "127.0.0.1:6379"}, "NOTIFIER_REDIS_URL"),
    ({"NOTIFIER_REDIS_URL": "redis://127.0.0.1:6379/zero"}, "NOTIFIER_REDIS_URL"),
    ({"NOTIFIER_CLOCK_SENDS": "sometimes"}, "NOTIFIER_CLOCK_SENDS"),
    ({"NOTIFIER_TRUSTED_PROXIES": "yes"}, "NOTIFIER_TRUSTED_PROXIES"),
    ({"NOTIFIER_TRUSTED_PROXIES": "1.5"}, "NOTIFIER_TRUSTED_PROXIES"),
    ({"NOTIFIER_TRUSTED_PROXIES": "-1"}, "NOTIFIER_TRUSTED_PROXIES"),
]


def ids(case) -> str:
    return ",".join(f"{k}={v}" for k, v in case[0].items())


@pytest.mark.parametrize("case", MALFORMED, ids=ids)
def test_a_malformed_setting_is_refused_with_its_name(case, tmp_path):
    setting, name = case
    with pytest.raises(ConfigError, match=name):
        Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path), **setting})


@pytest.mark.parametrize("case", MALFORMED[:4], ids=ids)
def test_the_app_factory_refuses_to_start_with_a_malformed_setting(case, env):
    from notifier import create_app

    setting, name = case
    with pytest.raises(ConfigError, match=name):
        create_app({**env, **setting})


def test_the_text_price_is_an_amount_per_segment_and_its_currency(tmp_path):
    from decimal import Decimal

    settings = Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path), "NOTIFIER_SMS_PRICE": " 0.0083 usd "})
    assert settings.sms_price == (Decimal("0.0083"), "USD")
    with pytest.raises(ConfigError, match="such as 0.0083 USD"):
        Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path), "NOTIFIER_SMS_PRICE": "0.0083"})


def test_the_defaults_need_no_settings_at_all(tmp_path):
    settings = Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path)})
    assert settings.boards_file == ROOT / "boards.yaml"
    assert settings.database_url == f"sqlite:///{tmp_path / 'notifier.sqlite3'}"
    assert settings.base_url == "http://localhost:5000"
    assert settings.secret_key and (tmp_path / "secret_key").exists()


def test_a_postgres_url_from_a_hosting_platform_gets_a_driver(tmp_path):
    settings = Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path),
                                  "NOTIFIER_DATABASE_URL": "postgres://u:p@db.example.org/notifier"})
    assert settings.database_url == "postgresql+psycopg://u:p@db.example.org/notifier"


def test_a_refused_database_url_does_not_print_its_password(tmp_path):
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path), "NOTIFIER_DATABASE_URL": "mysql://u:hunter2@db/x"})
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize("command", [["web", "--port", "1"], ["check"], ["tick"], ["db", "upgrade"]])
def test_commands_print_the_bad_setting_cleanly_and_exit_non_zero(command, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFIER_", "TWILIO_"))}
    env.update(NOTIFIER_INSTANCE_DIR=str(tmp_path), NOTIFIER_BASE_URL="status.example.org")
    result = subprocess.run([sys.executable, "-m", "notifier", *command], capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=60)
    assert result.returncode != 0
    assert "configuration: NOTIFIER_BASE_URL='status.example.org': expected an http:// or https:// URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_clock_sends_by_default_and_redis_is_optional(tmp_path):
    settings = Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path)})
    assert settings.clock_sends and settings.redis_url is None
    given = Settings.from_env({"NOTIFIER_INSTANCE_DIR": str(tmp_path), "NOTIFIER_REDIS_URL": "redis://127.0.0.1:6379/0",
                               "NOTIFIER_CLOCK_SENDS": "0"})
    assert given.redis_url == "redis://127.0.0.1:6379/0" and not given.clock_sends


def test_the_health_token_is_a_secret_no_log_line_may_hold(tmp_path):
    from notifier.config import log_secrets

    settings = Settings.from_env({"NOTIFIER_HEALTH_TOKEN": " monitor-token-1234 ", "NOTIFIER_SECRET_KEY": "k",
                                  "NOTIFIER_INSTANCE_DIR": str(tmp_path)})
    assert settings.health_token == "monitor-token-1234"
    assert "monitor-token-1234" in log_secrets(settings)
