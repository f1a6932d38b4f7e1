"""One channel's sending in one process: a claimer keeps a small queue filled, sender threads empty it.

The queue holds about a second of this process's sending, so the time between building a message (the composer
checks then that it is still true) and handing it to the provider stays short, and a confirmation asked for during
a fan-out waits behind at most that second. Sender threads never die: every failure is one row's (see
`sending.send_one`). The claimer never waits on a full queue: it claims only what fits. While the channel is
paused nothing is claimed, and one process at a time probes it with one real send.
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import rowcount, utcnow
from notifier.delivery import express, health
from notifier.delivery.channels import Channel
from notifier.delivery.claims import claim, hand_back
from notifier.delivery.outbox import Failure, OutboxRow, RowStatus
from notifier.delivery.pacing import Pacer
from notifier.delivery.reconcile import ChannelFactory, Counts, reconcile
from notifier.delivery.senders import Registration
from notifier.delivery.sending import PAUSED, SENT, Composer, ComposerFactory, Job, Recorder, limits, release, send_one
from notifier.status.history import latest_event_id

log = logging.getLogger(__name__)

IDLE_POLL = 0.5  # seconds between looks at the outbox when nothing is due
RECONCILE_EVERY = 15.0
REBUILD_COMPOSER_EVERY = 60.0
NEWEST_EVENT_EVERY = 0.1  # seconds between looks at the newest change event, for the check before each send


class Pipeline:
    """Sends one channel's due rows until idle (`until_idle`) or until `stop` is set."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings, name: str, compose: ComposerFactory,
                 factory: ChannelFactory, registration: Registration, pacer: Pacer, stats: Counts) -> None:
        self.sessions, self.settings, self.name = sessions, settings, name
        self.compose, self.factory, self.registration = compose, factory, registration
        self.pacer, self.stats = pacer, stats
        concurrency, rate = limits(settings, name)
        self.threads = max(1, min(concurrency, math.ceil(rate)))
        self.jobs: queue.Queue[Job | None] = queue.Queue()
        self.sent_times: deque[float] = deque(maxlen=10_000)
        self.paused = False
        self._paused_read = 0.0
        self._newest, self._newest_read = 0, 0.0
        self.built_through: dict[int, int] = {}  # row id -> the newest change event when its job was built
        self.unsettled: list[int] = []  # claimed rows a sending thread could not settle: handed back for reconciling
        self.woken = threading.Event()  # set when this process just planned rows: look now, not at the next poll

    def run(self, stop: threading.Event, until_idle: bool, now: datetime | None = None) -> None:
        """Reconcile, then claim and send; returns when idle (`until_idle`) or stopped."""
        alone = self.registration.start(self.name)
        try:
            self._run(stop, until_idle, now, alone)
        finally:
            self.registration.finish(self.name)

    def _run(self, stop: threading.Event, until_idle: bool, now: datetime | None, alone: bool) -> None:
        if alone:  # a sibling drain of this process (same token) may have rows in flight: never hand those back
            with self.sessions() as session, session.begin():
                left = hand_back(session, self.name, self.registration.token)
            if left:
                log.warning("%s: %d message(s) claimed before the sending loop failed will be reconciled", self.name,
                            left)
        recorder = Recorder(self.sessions)
        senders = [threading.Thread(target=self._send_loop, args=(stop, recorder), name=f"send-{self.name}-{i}",
                                    daemon=True) for i in range(self.threads)]
        for thread in senders:
            thread.start()
        try:
            self._claim_loop(stop, until_idle, now)
        finally:
            for _ in senders:
                self.jobs.put(None)
            for thread in senders:
                thread.join()
            recorder.close()

    # --- claiming ------------------------------------------------------------------------------------------------

    def _claim_loop(self, stop: threading.Event, until_idle: bool, fixed_now: datetime | None) -> None:
        builder, built_at, reconciled_at = None, 0.0, 0.0
        token = self.registration.token
        while not stop.is_set():
            if time.monotonic() - reconciled_at >= RECONCILE_EVERY:
                self._safely(self._hand_back_unsettled, token)
                self._safely(reconcile, self.sessions, self.settings, self.name, fixed_now or utcnow(),
                             self.factory, self.stats, self.compose)
                reconciled_at = time.monotonic()
            if not self.registration.may_send():
                if until_idle:
                    return
                stop.wait(1.0)
                continue
            if self._is_paused():
                if until_idle:
                    return
                self._safely(self._probe, token)
                stop.wait(1.0)
                continue
            room = self._target() - self.jobs.qsize()
            if room <= 0:
                self._safely(self._newest_event)  # for the senders' check at their slot, which reads no database
                stop.wait(0.02)
                continue
            with self.sessions() as session, session.begin():
                ids = claim(session, self.name, fixed_now or utcnow(), room, token)
            if not ids:
                if until_idle:
                    return
                builder = None  # an idle moment: the next batch is built with fresh board names
                self.woken.wait(IDLE_POLL)
                self.woken.clear()
                continue
            if builder is None or time.monotonic() - built_at > REBUILD_COMPOSER_EVERY:
                builder, built_at = self.compose(self.sessions, self.settings), time.monotonic()
            newest = self._newest_event(fresh=True)
            for job in self._build(builder, ids, token):
                self.built_through[job.row_id] = newest
                self.jobs.put(job)

    def _hand_back_unsettled(self, token: str) -> None:
        """Rows whose sending thread failed to write the outcome: uncertain, so reconciliation settles them."""
        ids = list(self.unsettled)
        if ids:
            with self.sessions() as session, session.begin():
                hand_back(session, self.name, token, ids)
            del self.unsettled[:len(ids)]

    def _target(self) -> int:
        """Jobs to keep queued: about one second of what this process has been sending, at least one per thread (the
        threads hold one each besides: more would only be more built messages a correction may overtake)."""
        now = time.monotonic()
        while self.sent_times and self.sent_times[0] < now - 2.0:
            self.sent_times.popleft()
        return max(self.threads, math.ceil(len(self.sent_times) / 2.0))

    def _build(self, builder: Composer, ids: list[int], token: str) -> list[Job]:
        """Jobs for claimed rows; a row that cannot be built fails alone, with the reason."""
        with self.sessions() as session:
            fixed = express.jobs(session, ids)
        rest = [i for i in ids if i not in {job.row_id for job in fixed}]
        jobs, broken = list(fixed), {}
        gone: list[int] = []
        try:
            built, gone = builder.build(rest) if rest else ([], [])
            jobs += built
        except Exception:  # find the row(s) at fault, one by one
            for row_id in rest:
                try:
                    built, lost = builder.build([row_id])
                    jobs += built
                    gone += lost
                except Exception as error:
                    log.exception("%s: outbox row %s cannot be built; it fails alone", self.name, row_id)
                    broken[row_id] = f"could not build the message: {type(error).__name__}: {error}"
        with self.sessions() as session, session.begin():
            if gone:
                session.execute(update(OutboxRow).where(OutboxRow.id.in_(gone), OutboxRow.claim == token)
                                .values(status=RowStatus.CANCELLED.value, last_error="contact no longer active"))
            for row_id, reason in broken.items():
                session.execute(update(OutboxRow).where(OutboxRow.id == row_id, OutboxRow.claim == token)
                                .values(status=RowStatus.FAILED.value, failure=Failure.MESSAGE.value,
                                        last_error=reason[:500]))
            settled = {job.row_id for job in jobs} | set(gone) | set(broken)
            missing = [i for i in ids if i not in settled]  # the composer returned nothing (or put them back)
            empty = rowcount(session.execute(
                update(OutboxRow).where(OutboxRow.id.in_(missing), OutboxRow.claim == token,
                                        OutboxRow.status == RowStatus.SENDING.value)
                .values(status=RowStatus.CANCELLED.value, last_error="nothing to send"))) if missing else 0
        self.stats.add("cancelled", self.name, len(gone) + (empty or 0))
        self.stats.add("failed", self.name, len(broken))
        return jobs

    def _newest_event(self, fresh: bool = False, look: bool = True) -> int:
        """The newest change event id, read at most every NEWEST_EVENT_EVERY seconds (unless `fresh`); without
        `look`, the last one read (the claim loop keeps it fresh)."""
        if fresh or look and time.monotonic() - self._newest_read >= NEWEST_EVENT_EVERY:
            try:
                with self.sessions() as session:
                    self._newest, self._newest_read = latest_event_id(session), time.monotonic()
            except Exception:
                log.warning("%s: could not read the newest change event", self.name, exc_info=True)
        return self._newest

    def _still_true(self, job: Job, token: str, look: bool = True) -> Job | None:
        """The job to send now: rebuilt when a change was recorded since it was built (the composer leaves out,
        and settles, a message a correction overtook); None when nothing is to be sent any more. Without `look`
        it compares with the newest change already read, so it costs nothing unless a change came."""
        built = self.built_through.get(job.row_id)
        if built is None or not job.message.reference.startswith("digest-"):
            return job
        newest = self._newest_event(look=look)
        if newest <= built:
            return job
        rebuilt = self._build(self.compose(self.sessions, self.settings), [job.row_id], token)
        if not rebuilt:
            self.built_through.pop(job.row_id, None)
            return None
        self.built_through[job.row_id] = newest
        return rebuilt[0]

    def _young(self, job: Job) -> bool:
        """Whether the job's claim is well inside its lease (NOTIFIER_CLAIM_LEASE): past the lease, another process
        may take the row for a dead one's and send it too, so an older claim is renewed before its send."""
        lease = self.settings.claim_lease_seconds
        return job.claimed_at is not None and utcnow() - job.claimed_at < timedelta(seconds=lease / 2)

    def _held(self, job: Job, token: str) -> Job | None:
        """The job with its claim renewed if it has grown old waiting for a slot (a slowed rate, a stalled
        provider); None, and nothing sent, when the row is no longer this process's to send."""
        if self._young(job):
            return job
        now = utcnow()
        with self.sessions() as session, session.begin():
            renewed = rowcount(session.execute(
                update(OutboxRow).where(OutboxRow.id == job.row_id, OutboxRow.claim == token,
                                        OutboxRow.status == RowStatus.SENDING.value)
                .values(claimed_at=now).execution_options(synchronize_session=False)))
        if renewed:
            return replace(job, claimed_at=now)
        self.built_through.pop(job.row_id, None)
        log.warning("%s: row %s was taken back while it waited for its turn (its claim outlived the lease); "
                    "not sent here", self.name, job.row_id)
        return None

    def _is_paused(self) -> bool:
        if time.monotonic() - self._paused_read >= 1.0:
            try:
                self.paused = self.name in health.paused_channels(self.sessions)
                self._paused_read = time.monotonic()
            except Exception:
                log.warning("%s: could not read the channel's health", self.name, exc_info=True)
        return self.paused

    def _probe(self, token: str) -> None:
        """While paused, one process at a time tries one real send of the oldest due row; through: resume."""
        if not health.take_probe(self.sessions, self.name):
            return
        with self.sessions() as session, session.begin():
            ids = claim(session, self.name, utcnow(), 1, token)
        if not ids:
            health.resume(self.sessions, self.name, "nothing waiting; the next send will tell")
            self.paused = False
            return
        jobs = self._build(self.compose(self.sessions, self.settings), ids, token)
        channel: Channel = self.factory(self.name)
        recorder = Recorder(self.sessions)
        try:
            for job in jobs:
                self.pacer.acquire(weight=channel.units(job.message))
                outcome = send_one(self.sessions, self.settings, channel, job, token, recorder, self.pacer.pushback)
                if outcome == PAUSED:  # still refused: the next probe tries another row
                    with self.sessions() as session, session.begin():
                        session.execute(update(OutboxRow).where(OutboxRow.id == job.row_id).values(
                            due_at=utcnow() + timedelta(seconds=health.PROBE_SECONDS)))
                    log.error("%s: still refused by the provider; channel stays paused", self.name)
                    return
            health.resume(self.sessions, self.name, "a probe went through")
            self.paused = False
        finally:
            recorder.close()

    # --- sending -------------------------------------------------------------------------------------------------

    def _send_loop(self, stop: threading.Event, recorder: Recorder) -> None:
        channel: Channel | None = None
        session_manager = None
        try:
            while (job := self.jobs.get()) is not None:
                try:
                    if channel is None:
                        channel = self.factory(self.name)
                        channel.warm()
                        session_manager = channel.session()
                        session_manager.__enter__()
                    self._send(stop, channel, job, recorder)
                except Exception:  # never let one job end this thread
                    log.exception("%s: sending row %s failed unexpectedly", self.name, job.row_id)
                    self.unsettled.append(job.row_id)  # its outcome may be unwritten (database unreachable)
        finally:
            if session_manager is not None:
                try:
                    session_manager.__exit__(None, None, None)
                except Exception:
                    log.warning("%s: closing the provider session failed", self.name, exc_info=True)

    def _send(self, stop: threading.Event, channel: Channel, job: Job, recorder: Recorder) -> None:
        token = self.registration.token
        # Checked before it takes a slot (a job a correction overtook while queued uses none: at a long code's one
        # text a second, a queue of stale jobs would otherwise leave seconds unused), and again once its slot comes,
        # then against the clock: nothing between the slot and the provider may read the database or run late.
        fresh = self._still_true(job, token)
        while fresh is not None:
            fresh = self._held(fresh, token)
            if fresh is None:
                return
            slot = None if self.paused or not self.registration.may_send() else self.pacer.acquire(
                stop, weight=channel.units(fresh.message))
            if slot is None:
                self.built_through.pop(fresh.row_id, None)
                if self.registration.may_send():
                    release(self.sessions, [fresh.row_id], token)
                return
            fresh = self._still_true(fresh, token, look=False)
            # Late (a rebuild, a busy machine, a claim grown old), it leaves its slot unused and waits for another.
            if fresh is not None and self.pacer.on_time(slot) and self._young(fresh):
                break
        if fresh is None:  # overtaken while it waited: the composer settled it
            return
        self.built_through.pop(fresh.row_id, None)
        outcome = send_one(self.sessions, self.settings, channel, fresh, token, recorder, self.pacer.pushback)
        if outcome == SENT:
            self.sent_times.append(time.monotonic())
        elif outcome == PAUSED:
            self.paused, self._paused_read = True, time.monotonic()
        self.stats.add({"sent": "sent", "retrying": "retrying", "failed": "failed", "paused": "paused",
                        "uncertain": "uncertain"}[outcome], self.name)

    def _safely(self, step: Callable[..., object], *args: object) -> None:
        try:
            step(*args)
        except Exception:
            log.exception("%s: %s failed; trying again shortly", self.name, getattr(step, "__name__", "a step"))

