"""Draining the outbox: the sending loop, and one drain until nothing is due (for `tick`, `worker --once`, tests).

Sending runs beside the clock's cycle, never inside it: a cycle records changes and plans rows, and returns; the
sending loop (a thread of the clock process by default, and every `python -m notifier worker`) claims due rows
continuously, each channel in its own pipeline, under the sender's shared rate. A process registers as a sender
before it claims anything (see `senders`); without NOTIFIER_REDIS_URL only one process may.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.delivery import channels as channel_module
from notifier.delivery import pacing, senders
from notifier.delivery.channels import Channel
from notifier.delivery.outbox import OutboxRow, RowStatus
from notifier.delivery.pacing import Pacer
from notifier.delivery.pipeline import Pipeline
from notifier.delivery.sending import ComposerFactory, limits

log = logging.getLogger(__name__)
ChannelFactory = Callable[[str], Channel]
CHANNELS = (channel_module.EMAIL, channel_module.SMS, channel_module.WEBHOOK, channel_module.PUSH)


@dataclass
class DrainStats:
    """What a drain did, per channel."""

    sent: dict[str, int] = field(default_factory=dict)
    retrying: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    cancelled: dict[str, int] = field(default_factory=dict)
    reconciled: dict[str, int] = field(default_factory=dict)
    paused: dict[str, int] = field(default_factory=dict)
    uncertain: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, kind: str, channel: str, number: int = 1) -> None:
        if number:
            with self.lock:
                counts = getattr(self, kind)
                counts[channel] = counts.get(channel, 0) + number

    def total(self, kind: str) -> int:
        return sum(getattr(self, kind).values())


def pacer(settings: Settings, channel: str) -> Pacer:
    """This process's pacer for `channel`."""
    return pacing.shared(channel, limits(settings, channel)[1], settings.redis_url)


def _factory(settings: Settings, factory: ChannelFactory | None,
             sessions: sessionmaker[Session] | None = None) -> ChannelFactory:
    return factory or (lambda name: channel_module.build(settings, sessions)[name])


def drain(
    sessions: sessionmaker[Session],
    settings: Settings,
    compose: ComposerFactory,
    now: datetime | None = None,
    factory: ChannelFactory | None = None,
    only: tuple[str, ...] = CHANNELS,
    kind: str = "drain",
) -> DrainStats:
    """Send every due row until none is left (rows due by `now`, if given); raises `senders.SenderRefused`."""
    stats = DrainStats()
    registration = senders.acquire(sessions, kind, shared_limiter=bool(settings.redis_url))
    stop = threading.Event()
    try:
        pipelines = [Pipeline(sessions, settings, name, compose, _factory(settings, factory, sessions), registration,
                              pacer(settings, name), stats) for name in only]
        threads = [threading.Thread(target=p.run, args=(stop, True, now), name=f"drain-{p.name}") for p in pipelines]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        senders.release(sessions, registration)
    if stats.total("sent") or stats.total("failed") or stats.total("retrying") or stats.total("paused"):
        log.info("outbox drained: sent %s, retrying %s, failed %s, cancelled %s, reconciled %s, paused %s",
                 stats.sent, stats.retrying, stats.failed, stats.cancelled, stats.reconciled, stats.paused)
    return stats


class SendingLoop:
    """Sends continuously until stopped: each of `channels`' pipeline (every channel's by default) in threads of
    this process."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings, compose: ComposerFactory, kind: str,
                 factory: ChannelFactory | None = None, channels: tuple[str, ...] = CHANNELS) -> None:
        self.sessions, self.settings, self.compose, self.kind = sessions, settings, compose, kind
        self.channels = channels
        self.factory = _factory(settings, factory, sessions)
        self.stop_event = threading.Event()
        self.stats = DrainStats()
        self.threads: list[threading.Thread] = []
        self.pipelines: list[Pipeline] = []
        self.registration: senders.Registration | None = None

    def wake(self) -> None:
        """Rows were just planned in this process: every pipeline looks at the outbox now."""
        for pipeline in self.pipelines:
            pipeline.woken.set()

    def start(self) -> None:
        """Register as a sender (raises `senders.SenderRefused`) and start sending in background threads."""
        self.registration = senders.acquire(self.sessions, self.kind, shared_limiter=bool(self.settings.redis_url))
        for name in self.channels:
            pipeline = Pipeline(self.sessions, self.settings, name, self.compose, self.factory, self.registration,
                                pacer(self.settings, name), self.stats)
            self.pipelines.append(pipeline)
            thread = threading.Thread(target=self._run, args=(pipeline,), name=f"sending-{name}", daemon=True)
            thread.start()
            self.threads.append(thread)
        log.info("sending loop started (%s): %s; texts at %.2f/s, emails at %.2f/s%s", self.kind,
                 "every channel" if set(self.channels) == set(CHANNELS) else "only " + ", ".join(self.channels),
                 self.settings.sms_per_second, self.settings.email_per_second,
                 ", rate shared through Redis" if self.settings.redis_url else "")

    def start_when_possible(self, every: float = 30.0) -> None:
        """Start now if this process may send, else try again every `every` seconds in the background (a clock
        restarted on another host waits for its predecessor's registration to go stale instead of failing)."""
        try:
            self.start()
            return
        except senders.SenderRefused as refused:
            log.error("not sending from this process for now: %s", refused)

        def retry() -> None:
            while not self.stop_event.wait(every):
                try:
                    self.start()
                    return
                except senders.SenderRefused:
                    continue
                except Exception:
                    log.exception("could not start the sending loop; trying again in %.0f s", every)

        threading.Thread(target=retry, name="sending-start", daemon=True).start()

    def _run(self, pipeline: Pipeline) -> None:
        while not self.stop_event.is_set():
            try:
                pipeline.run(self.stop_event, until_idle=False)
            except Exception:  # keep sending: a database outage ends one run, not the loop
                log.exception("%s: sending loop failed; starting again in 5 s", pipeline.name)
                self.stop_event.wait(5)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop claiming, give back what is queued, and wait for the threads."""
        self.stop_event.set()
        self.wake()
        for thread in self.threads:
            thread.join(timeout)
        if self.registration is not None:
            senders.release(self.sessions, self.registration)
            self.registration = None


def pending_count(session: Session, channel: str) -> int:
    """Rows of `channel` still waiting (for progress lines and `status`)."""
    query = select(func.count()).where(OutboxRow.channel == channel, OutboxRow.status == RowStatus.PENDING.value)
    return session.scalar(query) or 0
