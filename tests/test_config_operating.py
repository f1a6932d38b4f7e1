"""The operating settings: metrics, log format and retention, refused when malformed or below the law's year."""

from __future__ import annotations

import pytest

from notifier.config import Settings, log_secrets
from notifier.errors import ConfigError

BASE = {"NOTIFIER_SECRET_KEY": "k" * 16}


def settings(**env: str) -> Settings:
    return Settings.from_env({**BASE, **env})


def test_retention_is_400_days_unless_set():
    assert settings().retention_days == 400


def test_retention_below_a_year_is_refused_in_production():
    with pytest.raises(ConfigError, match="NOTIFIER_RETENTION_DAYS"):
        settings(NOTIFIER_RETENTION_DAYS="30")


def test_retention_below_a_year_is_allowed_in_development():
    assert settings(NOTIFIER_RETENTION_DAYS="30", NOTIFIER_DEBUG="1").retention_days == 30


@pytest.mark.parametrize("value", ["forever", "1.5", "-1"])
def test_a_malformed_retention_names_its_variable(value):
    with pytest.raises(ConfigError, match="NOTIFIER_RETENTION_DAYS"):
        settings(NOTIFIER_RETENTION_DAYS=value, NOTIFIER_DEBUG="1")


def test_a_metrics_port_alone_listens_on_loopback():
    assert settings(NOTIFIER_METRICS_PORT="9101").metrics_address == ("127.0.0.1", 9101)


def test_a_metrics_port_may_name_its_host():
    assert settings(NOTIFIER_METRICS_PORT="0.0.0.0:9101").metrics_address == ("0.0.0.0", 9101)  # noqa: S104


@pytest.mark.parametrize("value", ["metrics", "70000", "host:"])
def test_a_malformed_metrics_port_names_its_variable(value):
    with pytest.raises(ConfigError, match="NOTIFIER_METRICS_PORT"):
        settings(NOTIFIER_METRICS_PORT=value)


def test_the_log_format_is_text_or_json():
    assert settings().log_format == "text"
    assert settings(NOTIFIER_LOG_FORMAT="JSON").log_format == "json"
    with pytest.raises(ConfigError, match="NOTIFIER_LOG_FORMAT"):
        settings(NOTIFIER_LOG_FORMAT="xml")


def test_the_metrics_token_never_reaches_a_log():
    assert "scrape-token-1234" in log_secrets(settings(NOTIFIER_METRICS_TOKEN="scrape-token-1234"))
