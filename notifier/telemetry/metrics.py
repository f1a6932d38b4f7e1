"""Figures of this process for Prometheus: request latency by route, provider latency and push-backs by channel.

The shared figures (outbox depth, totals, pauses) are read from the database by the web process's /metrics
(`notifier.web.metrics`), since any process may have sent. These are each process's own: under gunicorn they live
in PROMETHEUS_MULTIPROC_DIR (prometheus_client's multiprocess mode, see `notifier.web.gunicorn_conf`) and /metrics
adds up every worker's; `clock` and `worker` serve theirs on NOTIFIER_METRICS_PORT (`serve`).

Labels never carry an address, a token or an id: a route is its rule (`/manage/<token>`), never its URL.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import REGISTRY, Metric

log = logging.getLogger(__name__)

# This process's figures; in multiprocess mode the values are also written to PROMETHEUS_MULTIPROC_DIR.
PROCESS = CollectorRegistry(auto_describe=True)
REQUEST_SECONDS = Histogram("notifier_request_duration_seconds", "Time to answer a web request, by route",
                            ["route", "method"], registry=PROCESS,
                            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
PROVIDER_SECONDS = Histogram("notifier_provider_duration_seconds", "Time a provider took to take or refuse a message",
                             ["channel", "outcome"], registry=PROCESS,
                             buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
PUSHBACKS = Counter("notifier_provider_pushbacks_total",
                    "Refusals from a provider, by kind: temporary (retried), account (the channel pauses)",
                    ["channel", "kind"], registry=PROCESS)


def multiprocess() -> bool:
    """True when this process writes its figures to PROMETHEUS_MULTIPROC_DIR (gunicorn's workers)."""
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def serve(address: tuple[str, int] | None, role: str) -> None:
    """Serve this process's figures (and its CPU and memory) on `address` in a thread, if one is given."""
    if address is None:
        return
    registry = CollectorRegistry(auto_describe=True)
    registry.register(_Both(PROCESS, REGISTRY))
    host, port = address
    start_http_server(port, addr=host, registry=registry)
    log.info("%s serves its metrics on http://%s:%d/metrics", role, host, port)


class _Both:
    """Two registries' figures as one collector (this process's and the library's process and platform figures)."""

    def __init__(self, *registries: CollectorRegistry) -> None:
        self.registries = registries

    def collect(self) -> Iterator[Metric]:
        for registry in self.registries:
            yield from registry.collect()
