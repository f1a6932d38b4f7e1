"""Channels: one small interface (`base.Channel`) for every way a message leaves the building, and `build`,
which picks the real providers where they are configured and the local outbox folder otherwise.
"""

from __future__ import annotations

from notifier.delivery.channels.base import EMAIL, SMS, Channel, Message, Receipt
from notifier.delivery.channels.email import SmtpChannel
from notifier.delivery.channels.local import OutboxChannel
from notifier.delivery.channels.sms import TwilioChannel
from notifier.errors import PermanentDeliveryError, TemporaryDeliveryError


def build(settings) -> dict[str, Channel]:
    """The channels this process uses: real providers where configured, else the local outbox folder."""
    channels: dict[str, Channel] = {EMAIL: OutboxChannel(settings.outbox_dir, EMAIL),
                                    SMS: OutboxChannel(settings.outbox_dir, SMS)}
    if settings.email_configured:
        channels[EMAIL] = SmtpChannel(settings.smtp_url, settings.mail_from)
    if settings.sms_configured:
        channels[SMS] = TwilioChannel(
            settings.twilio_account_sid,
            settings.twilio_auth_token,
            from_number=settings.twilio_from_number,
            messaging_service_sid=settings.twilio_messaging_service_sid,
            api_base_url=settings.twilio_api_base_url,
            timeout=settings.twilio_timeout,
            status_callback=f"{settings.base_url}/twilio/status",
            validity_period=settings.sms_validity_seconds,
        )
    return channels


__all__ = ["EMAIL", "SMS", "Channel", "Message", "Receipt", "TemporaryDeliveryError", "PermanentDeliveryError",
           "build"]
