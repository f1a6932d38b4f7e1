"""Channels: one small interface (`base.Channel`) for every way a message leaves the building, and `build`,
which picks the real providers where they are configured and the local outbox folder otherwise.
"""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.delivery.channels.base import EMAIL, PUSH, SMS, WEBHOOK, Channel, Message, Receipt
from notifier.delivery.channels.email import SmtpChannel
from notifier.delivery.channels.local import OutboxChannel
from notifier.delivery.channels.push import PushChannel
from notifier.delivery.channels.sms import TwilioChannel
from notifier.delivery.channels.webhook import WebhookChannel
from notifier.errors import PermanentDeliveryError, TemporaryDeliveryError


def build(settings: Settings, sessions: sessionmaker[Session] | None = None) -> dict[str, Channel]:
    """The channels this process uses: real providers where configured (push with a VAPID key), else the local
    outbox folder; webhooks always go out over HTTP (reading their endpoints through `sessions`, or a connection
    of their own), and push reads its subscriptions the same way."""
    channels: dict[str, Channel] = {
        EMAIL: OutboxChannel(settings.outbox_dir, EMAIL), SMS: OutboxChannel(settings.outbox_dir, SMS),
        WEBHOOK: WebhookChannel(sessions, settings.webhooks_allow_private, settings.webhook_timeout,
                                database_url=settings.database_url),
        PUSH: OutboxChannel(settings.outbox_dir, PUSH),
    }
    if settings.push_configured:
        channels[PUSH] = PushChannel(sessions, settings.vapid_private_key or "", settings.vapid_subject,
                                     settings.push_services, settings.push_timeout, database_url=settings.database_url)
    if settings.email_configured:
        channels[EMAIL] = SmtpChannel(settings.smtp_url or "", settings.mail_from)  # set: email_configured
    if settings.sms_configured:
        channels[SMS] = TwilioChannel(
            settings.twilio_account_sid or "",  # set, as sms_configured says
            settings.twilio_auth_token or "",
            from_number=settings.twilio_from_number,
            messaging_service_sid=settings.twilio_messaging_service_sid,
            api_base_url=settings.twilio_api_base_url,
            timeout=settings.twilio_timeout,
            status_callback=f"{settings.base_url}/twilio/status",
            validity_period=settings.sms_validity_seconds,
        )
    return channels


__all__ = ["EMAIL", "PUSH", "SMS", "WEBHOOK", "Channel", "Message", "Receipt", "TemporaryDeliveryError",
           "PermanentDeliveryError", "build"]
