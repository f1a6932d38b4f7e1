"""The clock's and a worker's own figures, on NOTIFIER_METRICS_PORT."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from notifier.telemetry import metrics
from tests.conftest import free_port


def test_a_process_serves_its_own_figures_on_its_metrics_port():
    port = free_port()
    metrics.PUSHBACKS.labels("sms", "temporary").inc()
    metrics.serve(("127.0.0.1", port), "worker")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:  # noqa: S310
        text = response.read().decode()
    names = {sample.name for family in text_string_to_metric_families(text) for sample in family.samples}
    assert "notifier_provider_pushbacks_total" in names
    assert "process_cpu_seconds_total" in names


def test_no_metrics_port_serves_nothing():
    assert metrics.serve(None, "clock") is None
