"""The subscribers wing: families, their addresses, what they follow, and the proof that they asked for it.

Tables and the contact lifecycle (pending, active, opted out, invalid), address parsing, consent evidence,
sign-up with double opt-in, the manage page's changes, texted keywords, imports of boards' lists, abuse limits,
browsers' Web Push subscriptions and the push services they may point at.

May import: notifier.status and the kernel. No Flask.
"""
