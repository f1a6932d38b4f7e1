"""The access log (gunicorn's, as the Procfile runs it) never holds a working link token: the paths of manage,
unsubscribe, confirm and staff sign-in links are written with the token masked, and so is a Referer carrying one."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

TOKEN = "WzEyLCJhYmMiXQ.Zx0aBc.abcdefghijklmnopqrstuvwxyz1"
PATHS = [f"/manage/{TOKEN}", f"/unsubscribe/{TOKEN}?lang=fr", f"/confirm/{TOKEN}", f"/staff/signin/{TOKEN}",
         f"/manage/{TOKEN}/leave"]


@pytest.fixture
def web(processes, tmp_path: Path, boards_file: Path):
    env = {"NOTIFIER_DATABASE_URL": f"sqlite:///{tmp_path / 'web.sqlite3'}", "NOTIFIER_BOARDS_FILE": str(boards_file),
           "NOTIFIER_SECRET_KEY": "test-secret-key", "NOTIFIER_INSTANCE_DIR": str(tmp_path / "instance"),
           "NOTIFIER_OUTBOX_DIR": str(tmp_path / "outbox"), "WEB_CONCURRENCY": "1"}
    processes.run("release", env)
    web = processes.start("web", env)
    web.wait_http(f"{web.url}/healthz", timeout=60)
    return web


def _get(url: str, referer: str = "") -> None:
    request = urllib.request.Request(url, headers={"Referer": referer} if referer else {})
    try:
        urllib.request.urlopen(request, timeout=10).close()  # noqa: S310 - loopback
    except urllib.error.HTTPError:
        pass


def test_gunicorns_access_log_masks_link_tokens_in_paths_and_referers(web):
    for path in PATHS:
        _get(web.url + path, referer=f"https://status.example.org/manage/{TOKEN}")
    _get(web.url + "/healthz?after=tokens")
    web.wait_for_log(r"/healthz\?after=tokens", timeout=30)
    log = web.log()
    assert log.count("/manage/***") >= 2 and "/staff/signin/***" in log and "/confirm/***" in log
    assert TOKEN not in log and TOKEN[:14] not in log


def test_the_procfiles_access_logger_masks_tokens_by_itself(capsys):
    """Even before (or without) the app's masking filter: a worker that failed to build the app still logs."""
    from datetime import timedelta
    from types import SimpleNamespace

    from gunicorn.config import Config

    from tests.support.processes import command

    config = Config()
    parsed = config.parser().parse_args(command("web", {})[1:])
    for key, value in vars(parsed).items():
        if key in config.settings and value is not None:
            config.set(key, value)
    logger = config.logger_class(config)
    request = SimpleNamespace(method="GET", path=f"/manage/{TOKEN}", query="lang=fr", version=(1, 1),
                              headers=[("REFERER", f"https://status.example.org/confirm/{TOKEN}")])
    response = SimpleNamespace(status="200 OK", sent=10, headers=[])
    environ = {"REMOTE_ADDR": "127.0.0.1", "RAW_URI": f"/manage/{TOKEN}?lang=fr", "SERVER_PROTOCOL": "HTTP/1.1",
               "REQUEST_METHOD": "GET", "PATH_INFO": f"/manage/{TOKEN}", "QUERY_STRING": "lang=fr",
               "HTTP_REFERER": f"https://status.example.org/confirm/{TOKEN}"}
    logger.access(response, request, environ, timedelta(seconds=0.01))
    out = capsys.readouterr()
    written = out.out + out.err
    assert "/manage/***" in written and "/confirm/***" in written
    assert TOKEN not in written


def test_the_development_servers_request_log_masks_tokens_too(caplog):
    import logging

    from notifier import masking

    record = logging.LogRecord("werkzeug", logging.INFO, __file__, 1, '%s - - [%s] "%s" %s %s',
                               ("127.0.0.1", "23/Nov/2026 10:00:00", f"GET /unsubscribe/{TOKEN} HTTP/1.1", "200", "-"),
                               None)
    masking.MaskingFilter().filter(record)
    assert TOKEN not in record.getMessage() and "/unsubscribe/***" in record.getMessage()
