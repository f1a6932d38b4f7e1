"""The notices wing: who hears what, when, and in which words.

From change events to one digest per contact (netting out undone changes), planning outbox rows in batches,
rendering digests and the few other messages (confirmations, manage links) in EN and FR, SMS segments, and
quiet hours and daily summaries.

May import: notifier.delivery, notifier.subscribers, notifier.status and the kernel. No Flask.
"""
