"""The delivery wing: the durable outbox and getting each message out exactly once.

The outbox tables, claiming due rows, sending them under the sender's rate, recording each outcome, reconciling
what a dead process left in flight, and the channels (SMTP, Twilio, the local outbox folder) behind one
interface. What a message says is not decided here: the caller passes a composer that turns rows into messages.

May import: notifier.subscribers, notifier.status and the kernel. No Flask.
"""
