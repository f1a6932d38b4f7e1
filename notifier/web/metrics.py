"""GET /metrics: Prometheus' text format, for the on-call person's graphs and alerts (docs/operating.md).

Two kinds of figures: the shared ones, read from the database (`delivery.figures`, kept CACHE_SECONDS so frequent
scrapes cost one read), and this process's own (`notifier.telemetry.metrics`: request latency by route, provider latency
and push-backs), added up over every gunicorn worker in multiprocess mode.

Guarded: with NOTIFIER_METRICS_TOKEN set, only `Authorization: Bearer <token>` (compared in constant time) gets
through; without it, only a request from this machine that came through no proxy (the socket's own peer, with no
X-Forwarded-* or Forwarded header: a local reverse proxy would otherwise make every visitor look local).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

from flask import Blueprint, Flask, Response, current_app, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from notifier.db import utcnow
from notifier.delivery import figures
from notifier.delivery.outbox import RowStatus
from notifier.telemetry import metrics
from notifier.web.callers import bears, from_this_machine
from notifier.web.services import services

bp = Blueprint("metrics", __name__)
log = logging.getLogger(__name__)

CACHE_SECONDS = 5.0
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})  # any other: "other"


@bp.get("/metrics")
def scrape() -> Response:
    """Every figure in Prometheus' text format, to whoever may read it."""
    if not _allowed():
        headers = {"WWW-Authenticate": "Bearer"} if services().settings.metrics_token else {}
        return Response("metrics: not allowed\n", status=401 if headers else 403, headers=headers,
                        mimetype="text/plain")
    registry = CollectorRegistry(auto_describe=False)
    keep = current_app.config.get("METRICS_CACHE_SECONDS", CACHE_SECONDS)
    registry.register(current_app.extensions["notifier.metrics"].get(services().sessions, keep))
    if metrics.multiprocess():
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_Registry(metrics.PROCESS))
    response = Response(generate_latest(registry), mimetype=None, content_type=CONTENT_TYPE_LATEST)
    response.headers["Cache-Control"] = "no-store"
    return response


def _allowed() -> bool:
    """With a token, only its bearer; without one, only this machine through no proxy."""
    token = services().settings.metrics_token
    return bears(token) if token else from_this_machine()


def install(app: Flask) -> None:
    """Time every request by its route's rule (never its URL: links carry tokens); keep the database's figures."""
    app.extensions["notifier.metrics"] = _Cache()

    @app.before_request
    def _start() -> None:
        g.metrics_started = time.perf_counter()

    @app.after_request
    def _observe(response: Response) -> Response:
        started = g.get("metrics_started")
        if started is not None:
            rule = request.url_rule.rule if request.url_rule is not None else "unmatched"
            method = request.method if request.method in METHODS else "other"  # a client picks it: bound the labels
            metrics.REQUEST_SECONDS.labels(rule, method).observe(time.perf_counter() - started)
        return response


class _Registry:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        yield from self.registry.collect()


class _Cache:
    """The database's figures of one app, read at most once every `keep` seconds (one lock: one read at a time)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.at: float = float("-inf")
        self.families: list[Metric] = []

    def get(self, sessions: sessionmaker[Session], keep: float) -> _Fixed:
        with self.lock:
            if time.monotonic() - self.at >= keep:
                try:
                    with sessions() as session:
                        self.families = [*_families(figures.read(session, utcnow())), _database_up(1)]
                except SQLAlchemyError as error:  # still serve this process's figures, and say why the rest is missing
                    log.warning("metrics: the database did not answer (%s)", type(error).__name__)
                    self.families = [_database_up(0)]
                self.at = time.monotonic()
            return _Fixed(self.families)


class _Fixed:
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        yield from self.families


def _database_up(value: int) -> Metric:
    return GaugeMetricFamily("notifier_database_up", "1 when the database answered the last read of the shared figures",
                             value=value)


def _families(read: figures.Figures) -> Iterator[Metric]:
    outbox = GaugeMetricFamily("notifier_outbox_messages", "Outbox rows by channel and state",
                               labels=["channel", "state"])
    for (channel, state), count in sorted(read.outbox.items()):
        outbox.add_metric([channel, state], count)
    yield outbox
    oldest = GaugeMetricFamily("notifier_outbox_oldest_due_seconds",
                               "Age of the oldest message due and not yet sent, by channel (0 when none)",
                               labels=["channel"])
    for channel, seconds in sorted(read.oldest_due_seconds.items()):
        oldest.add_metric([channel], seconds)
    yield oldest
    sent = CounterMetricFamily("notifier_sent", "Messages a provider accepted, ever", labels=["channel"])
    failed = CounterMetricFamily("notifier_failed", "Messages given up, ever, by reason", labels=["channel", "reason"])
    for (channel, status, reason), count in sorted(read.settled.items()):
        if status == RowStatus.SENT.value:
            sent.add_metric([channel], count)
        else:
            failed.add_metric([channel, reason], count)
    yield sent
    yield failed
    paused = GaugeMetricFamily("notifier_channel_paused", "1 while the provider refuses our account on a channel",
                               labels=["channel"])
    for channel, is_paused in sorted(read.paused.items()):
        paused.add_metric([channel], 1 if is_paused else 0)
    yield paused
    contacts = GaugeMetricFamily("notifier_subscribers", "Contacts by channel and state", labels=["channel", "state"])
    for (channel, state), count in sorted(read.contacts.items()):
        contacts.add_metric([channel, state], count)
    yield contacts
    if read.last_cycle_age_seconds is not None:
        yield GaugeMetricFamily("notifier_last_cycle_age_seconds", "Seconds since the clock last started a cycle",
                                value=read.last_cycle_age_seconds)
