"""Fault injection across real processes (marker `faults`, run by `make test-faults`): the pieces of
tests/fakes/ and tests/support/ together, as the next tests will use them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

pytestmark = pytest.mark.faults


def test_the_web_process_reports_a_database_outage_and_recovers_after_it(
    processes, tcp_proxy, database_url: str, boards_file: Path, tmp_path: Path
):
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        pytest.skip("needs PostgreSQL: set NOTIFIER_DATABASE_URL=postgresql://…")
    proxy = tcp_proxy(url.host or "127.0.0.1", url.port or 5432)
    env = {
        "NOTIFIER_DATABASE_URL": url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False),
        "NOTIFIER_BOARDS_FILE": str(boards_file),
        "NOTIFIER_SECRET_KEY": "test-secret-key",
        "NOTIFIER_INSTANCE_DIR": str(tmp_path / "instance"),
        "WEB_CONCURRENCY": "1",
    }
    web = processes.start("web", env)
    assert json.loads(web.wait_http(f"{web.url}/healthz", timeout=60))["database"] == "ok"

    proxy.cut()
    proxy.refuse(6)  # long enough for a busy machine to answer once meanwhile
    down = json.loads(web.wait_http(f"{web.url}/healthz", status=503, timeout=6))
    assert down["status"] == "failing" and down["database"].startswith("unavailable")

    assert json.loads(web.wait_http(f"{web.url}/healthz", timeout=30))["database"] == "ok"
    assert web.running
