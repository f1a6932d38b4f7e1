"""/metrics under gunicorn (the Procfile's web line): every worker's request figures, added up, whichever answers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from notifier.config import ROOT
from tests.conftest import free_port
from tests.test_procfile import clean_env, procfile


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback
        return response.read().decode()


def test_metrics_add_up_the_requests_of_every_gunicorn_worker(tmp_path):
    port = free_port()
    env = clean_env(tmp_path, PORT=str(port), WEB_HOST="127.0.0.1", WEB_CONCURRENCY="2", NOTIFIER_DEBUG="1",
                    PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"),
                    PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    subprocess.run([sys.executable, "-m", "notifier", "db", "upgrade"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=120)
    web = [str(Path(sys.executable).parent / "gunicorn"), *procfile()["web"][1:]]
    web[web.index("--bind") + 1] = f"127.0.0.1:{port}"
    log = (tmp_path / "gunicorn.log").open("w")
    server = subprocess.Popen(web, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _get(f"http://127.0.0.1:{port}/healthz")
                break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "gunicorn.log").read_text()
                time.sleep(0.3)
        for _ in range(8):
            _get(f"http://127.0.0.1:{port}/boards/tdsb")
        counts = []
        for _ in range(4):  # whichever worker answers, the sum is the same
            text = _get(f"http://127.0.0.1:{port}/metrics")
            counts.append(sum(sample.value for family in text_string_to_metric_families(text)
                              for sample in family.samples
                              if sample.name == "notifier_request_duration_seconds_count"
                              and sample.labels.get("route") == "/boards/<board_id>"))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
    assert counts == [8, 8, 8, 8]
    assert list((tmp_path / "metrics").glob("histogram_*.db"))
